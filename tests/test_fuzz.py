"""The script front end never ends in a traceback, a stray exit code or a hang (R33):
generated mutations of the example scripts run in-process through maned-run, each under a
deadline. The count and the long mode are tests/fuzzing.py's; MANED_FUZZ_ML=1 adds the ML
and routed examples to the corpus."""
import io
import os
import random
import re

import pytest

from maned.cli import run as run_cli

from support.cli import EXAMPLES
from fuzzing import cases, check_outcome, deadline

pytestmark = pytest.mark.fuzz

CASES = 1200
# Pinned to the language-core examples (R33): ML training would make each case slow.
CORPUS = ["birds.mnd", "choose.mnd", "constructors.mnd", "csv_io.mnd", "gather.mnd",
          "hello.mnd", "layer.mnd", "linalg.mnd", "matmul_relu.mnd", "power.mnd",
          "repeat.mnd", "scales.mnd", "solve.mnd", "stack_ops.mnd", "stats.mnd"]
ML = bool(os.environ.get("MANED_FUZZ_ML"))
if ML:  # the slow opt-in mode: the ML and routed examples too
    CORPUS += sorted({p.name for p in EXAMPLES.glob("*.mnd")} - set(CORPUS))
# With ML, a mutated iteration count is a long fit, not a hang: the documented step limit
# (E031), lowered to a few times the examples' largest (1,200), refuses it instead.
ML_MAX_STEPS = "4000"
TOKEN = re.compile(r"\s+|[A-Za-z_][A-Za-z0-9_]*|-?\d+(?:\.\d+)?|::|.", re.S)


def _tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def mutate(text: str, rng: random.Random, vocabulary: list[str]) -> bytes:
    """One to three random edits of tokens, characters or bytes."""
    data = text
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["drop", "dup", "swap", "replace", "cdrop", "cdup", "cswap",
                           "truncate", "bytes"])
        toks = _tokens(data)
        if kind in ("drop", "dup", "swap", "replace") and len(toks) > 1:
            i = rng.randrange(len(toks) - 1)
            if kind == "drop":
                del toks[i]
            elif kind == "dup":
                toks.insert(i, toks[i])
            elif kind == "swap":
                toks[i], toks[i + 1] = toks[i + 1], toks[i]
            else:
                toks[i] = rng.choice(vocabulary)
            data = "".join(toks)
        elif kind in ("cdrop", "cdup", "cswap") and len(data) > 1:
            i = rng.randrange(len(data) - 1)
            if kind == "cdrop":
                data = data[:i] + data[i + 1:]
            elif kind == "cdup":
                data = data[:i] + data[i] + data[i:]
            else:
                data = data[:i] + data[i + 1] + data[i] + data[i + 2:]
        elif kind == "truncate":
            data = data[:rng.randrange(len(data) + 1)]
    raw = data.encode("utf-8")
    if rng.random() < 0.15:
        i = rng.randrange(len(raw) + 1)
        raw = raw[:i] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 4))) + raw[i:]
    return raw


def test_mutated_examples_end_cleanly(workdir, monkeypatch):
    if ML:
        monkeypatch.setenv("MANED_MAX_STEPS", ML_MAX_STEPS)
    rng = random.Random(20261130)
    texts = {name: (workdir / name).read_text(encoding="utf-8") for name in CORPUS}
    vocabulary = sorted({t for text in texts.values() for t in _tokens(text) if t.strip()})
    target = workdir / "fuzz.mnd"
    for n in cases("the script front end", CASES):
        name = rng.choice(CORPUS)
        raw = mutate(texts[name], rng, vocabulary)
        target.write_bytes(raw)
        out, err = io.StringIO(), io.StringIO()
        try:
            with deadline():
                code = run_cli.main([str(target)], out, err)
        except Exception as e:  # a traceback is the bug this test exists to find
            pytest.fail(f"case {n} ({name}) raised {type(e).__name__}: {e}\n{raw!r}")
        try:
            check_outcome(code, out.getvalue(), err.getvalue())
        except AssertionError as e:
            pytest.fail(f"case {n} ({name}): {e}\n{raw!r}")
