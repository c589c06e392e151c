"""Sweeps over real bark-worker processes w1..wN on loopback, honest or lying (issue 37):
a six-configuration linear_regression sweep over them, run by maned-run as a child."""
import signal
import sys
import time
from contextlib import ExitStack

from bark_vm.container import worker_process
from gates import HANG_GUARD_S
from support.processes import MANED_RUN, run, start
from support.scripts import FIT_DATA, HML, device, env

PASSWORD = {"W_PASS": "pw-replicas-5d1e"}
LR = (1, 2, 3, 5, 7, 10)
PASS = "verify: PASS (compared local interpreter vs routed targets)\n"


def sweep(workers, iters: int = 640, timeout: int | None = None) -> str:
    """A 6-configuration linear_regression sweep over w1..wN, 64 steps a round (each
    device's `timeout` given, or the default)."""
    aliases = [w.alias for w in workers]
    wait = {} if timeout is None else {"timeout": timeout}
    blocks = "".join(device(w.alias, host=w.host, port=w.port, user="test",
                            password=env("W_PASS"), **wait) for w in workers)
    returns = ", ".join(f"m{i}, l{i}" for i in range(len(LR)))
    return (HML + FIT_DATA + blocks
            + f"calc::ml::linear_regression fit(X, y) @device({', '.join(aliases)}) {{\n"
            f"    iters: {iters},\n    lr: [{', '.join(map(str, LR))}],\n"
            f"    features: 2, budget: 64\n}} return {returns};\n")


def liar(by: int = 1, start_at: int = 6) -> dict:
    """A worker that adds `by` to one integer of each answer from its `start_at`-th job."""
    return {"command": [sys.executable, "-m", "maned_bench.lying_worker"],
            "env": {"MANED_BENCH_LIE_FROM": str(start_at), "MANED_BENCH_LIE_BY": str(by)}}


def fleet(stack: ExitStack, monkeypatch, *kinds) -> list:
    """Workers w1..wN: each kind None (honest) or a liar()."""
    workers = []
    for k, kind in enumerate(kinds, 1):
        command = None
        if kind is not None:
            command = kind["command"]
            for name, value in kind["env"].items():
                monkeypatch.setenv(name, value)  # read by the worker when it starts
        workers.append(stack.enter_context(worker_process(
            f"w{k}", "test", PASSWORD["W_PASS"], command=command)))
        for name in (kind or {}).get("env", {}):
            monkeypatch.delenv(name)
    return workers


def maned_run(tmp_path, text: str, *args):
    """maned-run on `text` as a child, to its end."""
    script = tmp_path / "sweep.mnd"
    script.write_text(text)
    return run(MANED_RUN, script, *map(str, args), env=PASSWORD, timeout=HANG_GUARD_S)


def rounds(report: dict) -> dict[str, int]:
    """Round jobs workers answered, by alias."""
    out: dict[str, int] = {}
    for job in report["jobs"]:
        if "#r" in job["flow"] and job["outcome"] == "ok" and job["target"] != "local":
            out[job["target"]] = out.get(job["target"], 0) + 1
    return out


def hit_mid_run(tmp_path, text: str, worker, after: int, sig=signal.SIGKILL, *args):
    """maned-run on `text` with `args`, `worker` sent `sig` once its trace shows `after`
    rounds answered by it: (exit code, stdout, stderr)."""
    script, trace = tmp_path / "hit.mnd", tmp_path / "hit.jsonl"
    script.write_text(text)
    proc = start(MANED_RUN, script, "--trace", trace, *map(str, args), env=PASSWORD)
    deadline = time.monotonic() + HANG_GUARD_S
    mark = f'"target": "{worker.alias}"'
    while time.monotonic() < deadline and proc.poll() is None:
        lines = trace.read_text().splitlines() if trace.exists() else []
        if sum(mark in ln and '"event": "end"' in ln for ln in lines) >= after:
            break
        time.sleep(0.01)
    assert proc.poll() is None, "the run ended before the fault"
    worker.handle.send_signal(sig)
    out, err = proc.communicate(timeout=HANG_GUARD_S)
    return proc.returncode, out, err
