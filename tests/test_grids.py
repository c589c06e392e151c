"""Grids (issue 38, point 1; docs/models.md, "Sweeps and grids"): several list-valued
hyperparameters sweep their product, the keys in the order written and the last varying
fastest, configuration i on alias i mod N as for one list; each configuration trains what
the same values give in a single-list sweep, byte for byte; maned-lint says a grid is this
implementation's extension (W021); a grid larger than its return list is refused before a
configuration is built."""
import json
import math
import re

import pytest
from hypothesis import given, strategies as st

from maned.ml.hyper import configurations
from support.scripts import FIT_DATA, HML

VMS = 'device::vm1 { host = "local"; }\ndevice::vm2 { host = "local"; }\n'
ITERS, RATES = (3, 10, 40), (2, 5, 10)


def fit(hypers: str, n: int, route: str = " @device(vm1, vm2)") -> str:
    returns = ", ".join(f"m{i}, l{i}" for i in range(n))
    return HML + FIT_DATA + VMS + (
        f"calc::ml::linear_regression fit(X, y){route} {{\n    {hypers},\n    features: 2\n"
        f"}} return {returns};\n")


@pytest.mark.parametrize("hypers, order", [
    ([("lr", (1, 2)), ("l2", (0, 1))], [(1, 0), (1, 1), (2, 0), (2, 1)]),
    ([("l2", (0, 1)), ("lr", (1, 2))], [(0, 1), (0, 2), (1, 1), (1, 2)]),  # as written
    ([("lr", (1, 2, 3)), ("l2", 0)], [(1, 0), (2, 0), (3, 0)]),  # one list: as upstream
])
def test_a_grid_is_its_lists_product_the_last_varying_fastest(hypers, order):
    configs = configurations("linear_regression", hypers + [("features", 2)], 2, True)
    keys = [k for k, _ in hypers]
    assert [tuple(c[k] for k in keys) for c in configs] == order


@given(st.lists(st.integers(1, 4), min_size=1, max_size=3))
def test_configuration_i_holds_the_mixed_radix_digits_of_i(lengths):
    """Lists of these lengths over iters, lr, l2: configuration i's index into each list is
    a digit of i in the mixed radix of the lengths, the last list the least significant."""
    keys = ("iters", "lr", "l2")[:len(lengths)]
    hypers = [(k, tuple(range(1, n + 1))) for k, n in zip(keys, lengths)]
    configs = configurations("linear_regression", hypers + [("features", 2)], 2, False)
    assert len(configs) == len(set(map(str, configs))) == math.prod(lengths)
    for i, config in enumerate(configs):
        rest, digits = i, []
        for n in reversed(lengths):
            rest, digit = divmod(rest, n)
            digits.append(digit + 1)
        assert [config[k] for k in keys] == digits[::-1]


def test_a_3x3_grid_on_two_vms_trains_what_three_single_list_sweeps_train(maned_run):
    """Nine configurations over vm1 and vm2 (i mod 2), verified; their models and losses
    are those of the single-list sweeps over lr at each iters value, in grid order."""
    grid = fit(f"iters: [{', '.join(map(str, ITERS))}],\n    lr: [{', '.join(map(str, RATES))}]",
               9)
    code, out, err = maned_run("--verify", "--json", source=grid)
    assert code == 0, err
    report = json.loads(out)
    assert report["verify"]["status"] == "PASS"
    values = {v["name"]: v["values"] for v in report["flows"][0]["outputs"]}
    sweep = report["sweeps"][0]
    assert sweep["keys"] == ["iters", "lr"] and sweep["key"] == "iters"
    assert [c["values"] for c in sweep["configurations"]] == [[i, r] for i in ITERS
                                                              for r in RATES]
    assert [c["devices"] for c in sweep["configurations"]] == [[f"vm{1 + i % 2}"]
                                                               for i in range(9)]
    singles = []
    for iters in ITERS:
        code, out, err = maned_run("--json", source=fit(
            f"iters: {iters},\n    lr: [{', '.join(map(str, RATES))}]", 3))
        assert code == 0, err
        one = {v["name"]: v["values"] for v in json.loads(out)["flows"][0]["outputs"]}
        singles += [(one[f"m{k}"], one[f"l{k}"]) for k in range(3)]
    assert [(values[f"m{k}"], values[f"l{k}"]) for k in range(9)] == singles
    assert len({tuple(m) for m, _ in singles}) == 9  # every configuration trained its own


def test_the_grids_note_names_every_key_and_lint_calls_it_an_extension(maned_run,
                                                                       maned_lint):
    grid = fit("iters: [3, 10],\n    lr: [2, 5]", 4, route="")
    code, _, err = maned_run(source=grid)
    assert code == 0
    assert re.fullmatch(r"note: sweep 'fit' over iters, lr: m0, l0 had iters 3, lr 2 \(loss "
                        r"-?\d+\); m1, l1 had iters 3, lr 5 \(loss -?\d+\); m2, l2 had iters "
                        r"10, lr 2 \(loss -?\d+\); m3, l3 had iters 10, lr 5 \(loss -?\d+\); "
                        r"the lowest loss, -?\d+: m\d \(iters \d+, lr \d+\).*\n", err), err
    _, out, _ = maned_lint(grid)
    assert "warning[W021]: ml definition 'fit' sweeps a grid over iters, lr, an extension " \
           "of this implementation: upstream Maned takes one sweep list" in out
    _, out, _ = maned_lint(fit("iters: 3,\n    lr: [2, 5]", 2, route=""))
    assert "W021" not in out  # one list is upstream's sweep


def test_a_grid_larger_than_its_return_list_is_refused_before_it_is_built(maned_run):
    """Three lists of fifty values name 125,000 configurations: refused from the lists'
    lengths (E022), never expanded."""
    lists = ", ".join(f"{k}: [{', '.join(str(v) for v in range(1, 51))}]"
                      for k in ("iters", "lr", "l2"))
    code, out, err = maned_run(source=fit(lists, 1, route=""))
    assert code == 1 and out == ""
    assert "the return list names 2 value(s); expected 125,000 or 250,000 (125,000 " \
           "configuration(s)) [E022]" in err
