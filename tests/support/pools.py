"""A sweep over a pool (docs/language.md "Pools"): the §6 sweep with six learning rates,
on the pool or on the two local VMs, and which member a run's trace says ran each
configuration."""
import json
from pathlib import Path

from support.scripts import EXAMPLES, sweep_with

POOL = 'device::fleet { pool = true; user = "test"; pass = env("P_POOL"); }'
N_CONFIGS = 6


def six_rate_sweep(pooled: bool) -> str:
    """DESIGN §6's sweep with six learning rates, on the pool or on the two VMs."""
    text = (EXAMPLES / "sweep.mnd").read_text()
    text = text.replace("lr: [2, 5, 10]", "lr: [1, 2, 3, 5, 8, 10]").replace(
        "return m0, l0, m1, l1, m2, l2",
        "return " + ", ".join(f"m{i}, l{i}" for i in range(N_CONFIGS)))
    if pooled:
        text = sweep_with(text, route="fleet", vm1=POOL + "\n", vm2="")
    return text


def configurations_by_target(trace: Path) -> dict[int, set[str]]:
    """Configuration index -> the targets its rounds started on (a --trace file)."""
    seen: dict[int, set[str]] = {}
    for line in trace.read_text().splitlines():
        r = json.loads(line)
        if r["event"] == "start" and "#r" in r["flow"]:
            seen.setdefault(int(r["flow"].split("#c")[1].split("#")[0]), set()).add(
                r["target"])
    return seen
