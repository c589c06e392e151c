"""The suite's set-up: its fixtures are plugins of tests/support/ (a test module imports
helpers from tests/support/, never from this file: tests/test_suite_rules.py holds it), and
every run draws afresh and writes nothing into the checkout."""
import signal
import tempfile

from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

pytest_plugins = ["support.fixtures", "support.worker_fixtures"]

# No example database, and hypothesis's caches in a temporary folder: a run writes nothing
# into the checkout, and each run draws afresh.
settings.register_profile("suite", database=None)
settings.load_profile("suite")
set_hypothesis_home_dir(tempfile.mkdtemp(prefix="maned-hypothesis-"))

# A suite started in the background (`cmd &` in a script) inherits SIGINT ignored, and so
# would every tool it starts, whose Ctrl-C the tests send: they start as from a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
