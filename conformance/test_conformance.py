"""Every case of cases/ on each of its targets: `pass`, or the outcome says why not. The
expected values are the reference's, computed in the same run (and the goldens of spec/)."""
import re

import pytest

from bark_vm.request_handling import WorkerConfig, ops_for
from maned_conformance.cases import all_cases
from maned_conformance.requests import runs_on
from maned_conformance.runner import run_case

CASES = all_cases()
ABI1 = set(ops_for(1))
ABI1_SLOTS = 256
ABI1_STATUS = WorkerConfig(abi=1).status()
# ML rounds at ABI 1: a definition whose `budget:` fits the v1 register file. The rounds of
# xgboost (reshape) and hmm (split) use ops ABI 1 cannot encode: not supported there.
ABI2_ROUNDS = {"xgboost", "hmm"}


def _abi1_expected(case) -> str | None:
    """What the case must give on the `vm_abi1` target, or None when it is not run there."""
    if "vm" not in case.targets:
        return None
    if case.mutation is not None:  # a request case: refused with its ABI-1 code (cdp_for(1))
        return "pass" if runs_on(case, ABI1_STATUS) else None
    ops, algos = case.uses
    if not algos:
        return "pass" if set(ops) <= ABI1 else None
    budget = re.search(r"\bbudget: *(\d+)", case.script)
    if case.refused or not budget or int(budget.group(1)) > ABI1_SLOTS:
        return None
    return "not_supported" if set(algos) & ABI2_ROUNDS else "pass"


# a case file's `local` runs on the exact engine (verified) and on the reference alone
PAIRS = [(case, target, "pass") for case in CASES for target in case.targets] + [
    (case, "reference", "pass") for case in CASES if "local" in case.targets] + [
    (case, "vm_abi1", want) for case in CASES if (want := _abi1_expected(case))]


@pytest.mark.parametrize("case, target, want", [
    pytest.param(c, t, w, id=f"{c.id}@{t}",
                 marks=[pytest.mark.docker] if t == "hardware" else []) for c, t, w in PAIRS])
def test_case(case, target, want, request):
    outcome = run_case(case, request.getfixturevalue(target))
    assert (outcome.status, outcome.detail) == (want, outcome.detail)
    if want == "not_supported":
        assert "cannot be encoded in ABI v1" in outcome.detail
