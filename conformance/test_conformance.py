"""Every case of cases/ on each of its targets: `pass`, or the outcome says why not. The
expected values are the reference's, computed in the same run (and the goldens of spec/)."""
import pytest

from bark_vm.pipeline import ops_for
from maned_conformance.cases import all_cases
from maned_conformance.runner import run_case

CASES = all_cases()
# the vm target once more at ABI 1, for every flow case it routes whose ops ABI 1 has (ML
# rounds are sized for the default ABI 2 budget: at ABI 1 they need budget: <= 256)
ABI1 = set(ops_for(1))
PAIRS = [(case, target) for case in CASES for target in case.targets] + [
    (case, "vm_abi1") for case in CASES if "vm" in case.targets
    and set(case.uses[0]) <= ABI1 and not case.uses[1]]


@pytest.mark.parametrize("case, target", PAIRS,
                         ids=[f"{c.id}@{t}" for c, t in PAIRS])
def test_case(case, target, request):
    outcome = run_case(case, request.getfixturevalue(target))
    assert (outcome.status, outcome.detail) == ("pass", outcome.detail)
