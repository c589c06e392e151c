"""Every case of tests/vectors/*.toml through maned-run: exit code, exact stdout, stderr."""
import re

import pytest

from support.vectors import CASES


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_vector(case, maned_run):
    args, before = case.get("args", []), case.get("args_before", [])
    if "source" in case:
        code, out, err = maned_run(*args, source=case["source"], before=before)
    else:
        code, out, err = maned_run(case["script"], *args, before=before)
    assert out == case["stdout"].lstrip("\n")
    assert code == case["exit"], err
    err_lines = err.splitlines()
    for line in case.get("stderr", []):
        assert line in err_lines
    for text in case.get("stderr_contains", []):
        assert text in err
    for c in case.get("stderr_codes", []):
        assert re.search(rf"\[{c}\]$", err, re.M), err
    if case["exit"] != 0:
        assert err_lines and all(re.search(r"\[[A-Z0-9]+\]$", ln) for ln in err_lines
                                 if not ln.startswith("note:")), err
