"""The fixtures of the test_worker_*.py modules, a plugin (tests/conftest.py's
`pytest_plugins`; a module-scoped fixture is each module's own, so each module has its own
worker): a scratch folder, mnpk-gen's files (made once a session), the module's worker
and a token of it, and `idle`, that worker with every job slot free before and after a
test. A module that defines a fixture of the same name uses its own."""
import pytest

from support.envelopes import mnpk_files
from support.raw_http import login
from support.status import status_of
from support.workers import start_worker

_FILES: dict[str, bytes] = {}  # mnpk-gen's outputs, made by the first module that asks


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    return tmp_path_factory.mktemp("worker_http")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """mnpk-gen outputs: the v1 golden set, the v2 request, the int8 overflow, a 4 KiB one."""
    if not _FILES:
        _FILES.update(mnpk_files(tmp_path_factory.mktemp("mnpk")))
    return dict(_FILES)


@pytest.fixture(scope="module")
def worker(tmp):
    proc = start_worker(tmp)
    yield proc
    assert proc.stop() == 0


@pytest.fixture(scope="module")
def token(worker):
    s, data = login(worker)
    assert s == 200
    return data["token"]


@pytest.fixture
def idle(worker):
    """The module worker with every slot free before and after the test."""
    assert status_of(worker)["jobs_running"] == 0
    yield worker
    assert status_of(worker)["jobs_running"] == 0
