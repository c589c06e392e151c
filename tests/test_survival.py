"""A sweep survives a worker (issue 37, goal 1): six configurations over three real
bark-workers, one killed (SIGKILL) or stopped (SIGSTOP) a quarter into the run. The run
exits 0 and prints the healthy run's bytes, verified; the lost worker's two chains spread
over the other two (configuration i to healthy[i mod 2]), each move one note."""
import re
import signal
from contextlib import ExitStack

import pytest

from support.trio import PASS, fleet, hit_mid_run, maned_run, rounds, sweep

ITERS = 1280  # 184 rounds a configuration: w2 answers 368, a quarter of them is 92


@pytest.mark.parametrize("sig, timeout, cause", [
    (signal.SIGKILL, None, r"(died|connect_failed): .*"),
    (signal.SIGSTOP, 1, r"timeout: .*within the 1 s deadline.*"),
])
def test_one_of_three_workers_lost_a_quarter_in_costs_only_its_share(tmp_path, monkeypatch,
                                                                      sig, timeout, cause):
    import json

    with ExitStack() as stack:
        workers = fleet(stack, monkeypatch, None, None, None)
        text = sweep(workers, ITERS, timeout)
        healthy = maned_run(tmp_path, text, "--json")
        per_worker = rounds(json.loads(healthy.stdout))["w2"]
        code, out, err = hit_mid_run(tmp_path, text, workers[1], per_worker // 4, sig,
                                     "--verify")
        if sig == signal.SIGSTOP:
            workers[1].handle.send_signal(signal.SIGKILL)  # its `with` would wait on it
    plain = maned_run(tmp_path, text.replace("@device(w1, w2, w3) ", ""))
    assert code == 0, err
    assert out == plain.stdout + PASS
    *moves, note = err.splitlines()
    assert note == plain.stderr.rstrip("\n")
    # w2 holds configurations 1 and 4: c1 to healthy[1] = w3, c4 to healthy[0] = w1
    assert sorted(m.split(" at round")[0] for m in moves) == [
        "note: fit#c1 moved from 'w2' to 'w3'", "note: fit#c4 moved from 'w2' to 'w1'"]
    for m in moves:
        assert re.fullmatch(r"note: fit#c[14] moved from 'w2' to 'w[13]' at round \d+: flow "
                            r"'fit#c[14]#r\d+': device 'w2' \(127\.0\.0\.1:\d+\): " + cause,
                            m), m
