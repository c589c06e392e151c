"""The workloads: the five routable calc::ml:: algorithms with their examples' settings, and
seeded data of any row count (the same rows on every side of a comparison)."""
import random

from maned.tensor import Tensor

HEAD = "mnd::quantmax=100;\nmnd::quantmin=-100;\nmnd::quantres=2;\n"
BLOCKS = {  # the examples' hyperparameters (examples/*.mnd), rows: left to the data
    "linear_regression": "iters: 400, lr: 5, features: 2",
    "logistic_regression": "iters: 300, lr: 10, features: 2",
    "svm": "iters: 200, lr: 5, l2: 10, features: 2",
    "xgboost": "rounds: 4, depth: 2, bins: 4, eta: 30, l2: 100, min_child_hess: 75, "
               "features: 2",
    "hmm": "states: 2, symbols: 3, steps: 8, iters: 3",
}
ALGORITHMS = tuple(BLOCKS)
STEPS = 8  # hmm sequence length


def script(algo: str, aliases: tuple[str, ...] = (), extra: str = "",
           returns: str = "model, loss") -> str:
    """The definition, routed to `aliases` (Bark VMs unless `devices` text says otherwise)
    when there are any; `extra` is added to its block (a sweep, a budget)."""
    params = "O" if algo == "hmm" else "X, y"
    inputs = "in::O = [[0]];\n" if algo == "hmm" else "in::X = [[0, 0]];\nin::y = [[0]];\n"
    route = f" @device({', '.join(aliases)})" if aliases else ""
    block = BLOCKS[algo] + (f", {extra}" if extra else "")
    returns = returns.replace("loss", "score") if algo == "hmm" else returns
    return (HEAD + inputs + f"calc::ml::{algo} fit({params}){route} {{\n    {block}\n}} "
            f"return {returns};\n")


def vm_devices(aliases) -> str:
    return "".join(f'device::{a} {{ host = "local"; }}\n' for a in aliases)


def inputs(algo: str, rows: int, seed: int = 20261201) -> dict[str, Tensor]:
    """Seeded data in the scale-2 range: a noisy plane (regression), two clusters (the
    classifiers, labels as each algorithm takes them), or symbol sequences (hmm)."""
    rng = random.Random(seed)
    if algo == "hmm":
        return {"O": Tensor((rows, STEPS), tuple(100 * rng.randrange(3)
                                                  for _ in range(rows * STEPS)))}
    x, y = [], []
    for i in range(rows):
        side = i % 2
        a, b = rng.randint(0, 400) + 400 * side, rng.randint(0, 400) + 400 * side
        x += [a, b]
        if algo == "linear_regression":
            y.append((3 * a + b) // 4 + rng.randint(-20, 20))
        else:
            y.append({"svm": 200 * side - 100}.get(algo, 100 * side))
    return {"X": Tensor((rows, 2), tuple(x)), "y": Tensor((rows, 1), tuple(y))}


def checked_run(source: str, inputs: dict, targets: set[str] | None = None, rounds=None,
                **kwargs) -> list:
    """maned.run, refusing to be timed as a success unless it was one: exit 0, its round
    jobs (all `rounds` of them, when given) on `targets` (default: wherever they ran).
    Returns those round jobs' records."""
    import maned

    report = maned.run(source=source, inputs=inputs, **kwargs)
    if report.exit_code:
        raise RuntimeError("a benchmark run failed: "
                           + "; ".join(d.message for d in report.diagnostics))
    jobs = [j for j in report.jobs if "#r" in j.flow]
    if rounds is not None and len(jobs) != rounds:
        raise RuntimeError(f"a benchmark run made {len(jobs)} rounds, not {rounds}")
    if targets is not None and {j.target for j in jobs} != targets:
        raise RuntimeError(f"a benchmark run's rounds ran on {sorted({j.target for j in jobs})}"
                           f", not {sorted(targets)}")
    return jobs
