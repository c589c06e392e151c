"""What the test modules share, one concept a module. A test module imports from here (or
from the older helpers beside it, which docs/testing.md names by path: gates, bounded,
fuzzing, stub_worker, fault_proxy, load), never from another test module nor from
conftest.py; the fixtures are plugins (conftest.py's `pytest_plugins`), never imported.

processes        console scripts (maned-run, maned-lint, bark-worker, ...) as child processes
workers          a bark-worker on loopback (or in a container) for a test
raw_http         CDP spoken with http.client and raw sockets, no client code of `maned`
status           a worker's GET /api/status, and the fields it has
cli              maned-run and maned-lint in this process, the examples, the preamble placeholders
fixtures         the suite's fixtures (a plugin: workdir, maned_run, maned_lint)
worker_fixtures  the fixtures of the test_worker_*.py modules (a plugin)
background       a call left running on a thread, its outcome collected later
scripts          the quantization preamble, device:: blocks, the §6 sweep with other devices
pools            a sweep over a pool: its six configurations and which member ran which
envelopes        MNPK requests built for a test, and mnpk-gen's files
wire_golden      the byte dumps of spec/wire-golden.md
vectors          the golden vectors of tests/vectors/*.toml
discovery        discovery replies (good and hostile) and whether a responder answers
signals          a signal to one chosen thread; SIGINT back to its default in a child
ml_chain         one Tier A configuration trained locally by dispatch/ml_run's MlRun
"""
