"""What a user of a local run feels, against peers and floors, never against our own
reference (DESIGN §14): `maned-run` on a one-flow script against `python -c 'import
numpy'`; core programs, whole process, against a numpy script doing the same int64-then-wrap
arithmetic on the same integers (its output checked equal once); a local fit on the exact
engine against the same fit on the reference (`--reference`), and against scikit-learn's
float fit when the optional extra is installed; parsing a tensor literal and reading a CSV,
per value. Process sides are timed in the CPU time of the child, with
bytecode caching on, as an installed package has it (PYTHONDONTWRITEBYTECODE would make
every start-up compile our modules, and not numpy's, which pip compiled)."""
import os
import random
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from bark_vm.wire import lut
from maned.io.csvfile import parse_csv
from maned.lang.ast import Quant
from maned.pipeline.intake import compile_script

from . import data
from .figures import Figure, sides_of
from .timing import alternate, ratio

HEAD = "mnd::quantmax=1000;\nmnd::quantmin=-1000;\nmnd::quantres=0;\n"
# examples/hello.mnd's one flow (the examples are not installed with the benchmarks)
HELLO = HEAD + ("in::a = 2;\nin::b = 3;\nin::c = 4;\ncalc::lambda_flow arithmetic(a, b, c) {\n"
                "    a b add c mul sum_then_scale =\n    b c mul a add scale_then_sum =\n"
                "} return sum_then_scale, scale_then_sum;\n")
# name -> (flow body, operand shapes, the numpy peer's arithmetic on int64 arrays a, b at
# scale M = 10^quantres = 1): each the integer rule of docs/ops.md as a numpy user writes it
WRAP = "w = lambda x: ((x + 2**31) % 2**32 - 2**31)"
RDIV = "rdiv = lambda x, d: np.where(x < 0, -1, 1) * ((2 * np.abs(x) + d) // (2 * d))"
SOFTMAX = f"""T = np.array({list(lut.EXP.values)}, dtype=np.int64)
d = rdiv((a - a.max(axis=1, keepdims=True)) * {lut.XSCALE}, 1)
off = np.clip(d - ({lut.EXP.lo}), 0, {lut.EXP.hi - lut.EXP.lo})
k = np.minimum(off // {lut.STEP}, len(T) - 2)
e = T[k] + rdiv((T[k + 1] - T[k]) * (off - k * {lut.STEP}), {lut.STEP})
r = w(rdiv(e, e.sum(axis=1, keepdims=True)))"""
LAYERNORM = """n = a.shape[1]
c = n * a - a.sum(axis=1, keepdims=True)
root = np.array([math.isqrt((n * int(v)) << 20) for v in (c * c).sum(axis=1)])[:, None]
r = w(np.where(root == 0, 0, rdiv(c * (n << 10), np.maximum(root, 1))))"""
PROGRAMS = {
    "matmul": ("a b matmul r =", lambda n: [(n, n), (n, n)], "r = w(a @ b)"),
    "chain7": ("a b add c = c b mul d = d a sub e = e b add k = k a mul g = g b sub h = "
               "h a add r =", lambda n: [(n, n), (n, n)],
               "c = w(a + b); d = w(c * b); e = w(d - a); k = w(e + b); g = w(k * a); "
               "h = w(g - b); r = w(h + a)"),
    "conv2d": ("a b {stride: 1, padding: 1} conv2d r =", lambda n: [(n, n), (3, 3)],
               "p = np.pad(a, 1); v = np.lib.stride_tricks.sliding_window_view(p, (3, 3)); "
               "r = w(np.einsum('ijkl,kl->ij', v, b))[None]"),  # one channel: [1, n, n]
    "softmax": ("a softmax r =", lambda n: [(n, n)], SOFTMAX),
    "layernorm": ("a layernorm r =", lambda n: [(n, n)], LAYERNORM),
}
SIZES = {"smoke": {"matmul": (64,), "chain7": (64,), "softmax": (32,)},
         "full": {"matmul": (64, 128, 256), "chain7": (256,), "conv2d": (128,),
                  "softmax": (256,), "layernorm": (256,)}}
FITS = {"smoke": {"linear_regression": (100,)},
        "full": {a: (10000,) for a in ("linear_regression", "logistic_regression", "xgboost")}}
REPS = {"smoke": 3, "full": 5}
PARSE_N = {"smoke": 64, "full": 256}
CSV_ROWS = {"smoke": 2000, "full": 100000}
PEER = """import math
import numpy as np
{wrap}
{rdiv}
{operands}
{body}
print("flow 'f' outputs:")
print("r : [" + "x".join(map(str, r.shape)) + "] = [" + ", ".join(map(str, r.ravel().tolist()))
      + "]")
"""


def children_cpu() -> float:
    """The CPU seconds of this process's finished children (the clock of a process side)."""
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


CACHING = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _process(*argv: str):
    """A side that runs argv to its end; its output is dropped, a failure raised."""
    def run():
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env=CACHING)
    return run


def maned_run() -> str:
    """This install's maned-run beside the running Python (no PATH lookup)."""
    found = Path(sys.executable).with_name("maned-run")
    return str(found) if found.exists() else "maned-run"


def _literal(shape, values) -> str:
    if len(shape) == 1:
        return "[" + ", ".join(map(str, values)) + "]"
    step = len(values) // shape[0]
    return "[" + ", ".join(_literal(shape[1:], values[i * step:(i + 1) * step])
                           for i in range(shape[0])) + "]"


def program(folder: Path, name: str, n: int) -> tuple[Path, Path]:
    """(the .mnd script, the numpy peer script) of one core program at size n, same data."""
    body, shapes, arithmetic = PROGRAMS[name]
    rng = random.Random(n)
    names = "ab"[:len(shapes(n))]
    values = {x: _literal(s, [rng.randint(-50, 50) for _ in range(s[0] * s[1])])
              for x, s in zip(names, shapes(n))}
    script = folder / f"{name}_{n}.mnd"
    script.write_text(HEAD + "".join(f"in::{x} = {v};\n" for x, v in values.items())
                      + f"calc::lambda_flow f({', '.join(names)}) {{\n    {body}\n}} return r;\n")
    peer = folder / f"{name}_{n}.py"
    operands = "\n".join(f"{x} = np.array({v}, dtype=np.int64)" for x, v in values.items())
    peer.write_text(PEER.format(wrap=WRAP, rdiv=RDIV, operands=operands,
                                body=arithmetic.replace("; ", "\n")))
    ours = subprocess.run([maned_run(), str(script)], capture_output=True, text=True, check=True)
    theirs = subprocess.run([sys.executable, str(peer)], capture_output=True, text=True,
                            check=True)
    if ours.stdout != theirs.stdout:
        raise RuntimeError(f"{name} at n={n}: maned-run and the numpy script differ")
    return script, peer


def measure(scale: str) -> list[Figure]:
    figures, reps = [], REPS[scale]
    with tempfile.TemporaryDirectory(prefix="maned-bench-") as folder:
        hello = Path(folder) / "hello.mnd"
        hello.write_text(HELLO)
        s = alternate({"maned-run": _process(maned_run(), str(hello)),
                       "import numpy": _process(sys.executable, "-c", "import numpy")},
                      reps, clock=children_cpu)
        figures.append(Figure("local/startup/over_numpy_import",
                              ratio(s["maned-run"], s["import numpy"]), "x",
                              "maned-run on a one-flow script (examples/hello.mnd's) / python "
                              "-c 'import numpy' (CPU)", "lower", sides=sides_of(s)))
        for name, sizes in SIZES[scale].items():
            for n in sizes:
                script, peer = program(Path(folder), name, n)
                s = alternate({"maned-run": _process(maned_run(), str(script)),
                               "numpy": _process(sys.executable, str(peer))},
                              reps, clock=children_cpu)
                figures.append(Figure(f"local/core/{name}/{n}/over_numpy",
                                      ratio(s["maned-run"], s["numpy"]), "x",
                                      f"{name} {n}x{n}, whole process: maned-run / a numpy "
                                      "script of the same integer arithmetic (CPU)", "lower",
                                      sides=sides_of(s)))
    for algo, sizes in FITS[scale].items():
        source = data.script(algo)
        for rows in sizes:
            inputs = data.inputs(algo, rows)
            s = alternate({"engine": lambda: data.checked_run(source, inputs, {"local"},
                                                              reference=False),
                           "reference": lambda: data.checked_run(source, inputs, {"local"},
                                                                 reference=True)},
                          max(2, reps - 2), warmup=1)
            figures.append(Figure(f"local/fit/{algo}/{rows}/reference_over_engine",
                                  ratio(s["reference"], s["engine"]), "x",
                                  f"{algo} at {rows} rows, local: --reference / the exact "
                                  "engine", "higher", sides=sides_of(s)))
    figures += _against_sklearn(scale, reps)
    figures.append(_parse(PARSE_N[scale]))
    figures.append(_csv(CSV_ROWS[scale]))
    return figures


def _parse(n: int) -> Figure:
    """Microseconds a value to parse and check a script holding an n×n literal."""
    rng = random.Random(n)
    source = HEAD + f"in::a = {_literal((n, n), [rng.randint(-999, 999) for _ in range(n * n)])};" \
        "\ncalc::lambda_flow f(a) {\n    a tensor_sum r =\n} return r;\n"
    s = alternate({"parse": lambda: compile_script(source)}, 5)
    return Figure("local/parse/per_value", s["parse"].median / (n * n) * 1e6, "us",
                  f"parsing and checking an {n}x{n} tensor literal, per value")


def _csv(rows: int) -> Figure:
    """Microseconds a cell to read a 3-column CSV of decimals at quantres 2."""
    rng = random.Random(rows)
    text = "".join(f"{rng.randint(-9999, 9999) / 100},{rng.randint(-500, 500) / 10},"
                   f"{rng.randint(0, 99)}\n" for _ in range(rows))
    quant = Quant(1000, -1000, 2)
    s = alternate({"csv": lambda: parse_csv(text, "t.csv", quant)}, 5)
    return Figure("local/csv/per_cell", s["csv"].median / (rows * 3) * 1e6, "us",
                  f"reading a {rows}-row, 3-column CSV of decimals, per cell")


# The float fit a user would otherwise reach for (issue 35), on the same rows at scale 10^2:
# timed when the optional extra is installed (pip install '.[peers]'), left out otherwise.
SKLEARN = {
    "linear_regression": ("sklearn.linear_model", "LinearRegression", {}),
    "logistic_regression": ("sklearn.linear_model", "LogisticRegression", {"max_iter": 300}),
    "xgboost": ("sklearn.ensemble", "HistGradientBoostingRegressor",
                {"max_iter": 4, "max_depth": 2, "max_bins": 4, "learning_rate": 0.3,
                 "l2_regularization": 1.0, "early_stopping": False}),
}


def _against_sklearn(scale: str, reps: int) -> list[Figure]:
    """The engine's local fit over scikit-learn's float fit of the same rows (lower is better;
    not gated: the extra is optional and its fits are not ours)."""
    import importlib
    import importlib.util
    if importlib.util.find_spec("sklearn") is None:  # the optional extra, not installed
        return []
    import numpy as np
    figures = []
    for algo, sizes in FITS[scale].items():
        module, name, settings = SKLEARN[algo]
        model = getattr(importlib.import_module(module), name)
        source = data.script(algo)
        for rows in sizes:
            inputs = data.inputs(algo, rows)
            x = np.array(inputs["X"].data, dtype=float).reshape(rows, 2) / 100
            y = np.array(inputs["y"].data, dtype=float) / 100
            y = y.astype(int) if algo == "logistic_regression" else y
            s = alternate({"engine": lambda: data.checked_run(source, inputs, {"local"},
                                                              reference=False),
                           "scikit-learn": lambda: model(**settings).fit(x, y)},
                          max(2, reps - 2), warmup=1)
            figures.append(Figure(f"local/fit/{algo}/{rows}/over_sklearn",
                                  ratio(s["engine"], s["scikit-learn"]), "x",
                                  f"{algo} at {rows} rows, local: the exact engine / scikit-"
                                  f"learn's {name} (float64)", "lower", sides=sides_of(s)))
    return figures
