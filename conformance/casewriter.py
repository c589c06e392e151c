"""How a generated case file is written (cases.py has the format): int32 edge values, tensors
as --in text, a one-flow script, the TOML of a case, and who refuses (the `refused` forms
the generators share)."""
import json
import random

MIN, MAX = -2 ** 31, 2 ** 31 - 1
EDGES = [0, 1, -1, MIN, MAX, MAX - 1, MIN + 1, 2, -2, 46341, -46341, 65536]
HEAD = {0: "mnd::quantmax=1000;\nmnd::quantmin=-1000;\nmnd::quantres=0;\n",
        2: "mnd::quantmax=100;\nmnd::quantmin=-100;\nmnd::quantres=2;\n",
        "int8": "mnd::quantmax=1;\nmnd::quantmin=-1;\nmnd::quantres=0;\n"}
BINARY = ["add", "sub", "mul", "div", "gt", "lt", "eq", "ge", "le", "ne", "and", "or", "xor"]
UNARY = ["relu", "not", "sigmoid", "tanh", "transpose", "layernorm"]
REDUCE = ["tensor_sum", "tensor_mean", "tensor_max", "tensor_min"]


def values(rng: random.Random, n: int, edges=EDGES) -> list[int]:
    """n values: the edge values first (cycled), a seeded random int32 sample after."""
    out = [edges[i % len(edges)] for i in range(min(n, len(edges)))]
    return out + [rng.randint(MIN, MAX) for _ in range(n - len(out))]


def tensor(shape: tuple[int, ...], data: list[int]) -> str:
    return "x".join(map(str, shape)) + ":" + ",".join(map(str, data))


def flow(params: str, body: str, returns: str = "r") -> str:
    return f"calc::lambda_flow f({params}) {{\n    {body}\n}} return {returns};\n"


def case(about: str, script: str, inputs: dict | None = None, **extra) -> str:
    """One case file's TOML (strings written as JSON strings, which TOML reads alike)."""
    lines = [f"about = {json.dumps(about)}", f'script = """\n{script}"""']
    if inputs:
        lines.append("inputs = { " + ", ".join(f"{k} = {json.dumps(v)}"
                                               for k, v in inputs.items()) + " }")
    lines += [f"{k} = {_toml(v)}" for k, v in extra.items()]
    return "\n".join(lines) + "\n"


def _toml(value) -> str:
    """A TOML value: a table inline, anything else as JSON (which TOML reads alike)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


# Who refuses (cases.py): planning refusals never reach a worker, so they run on the
# reference and the VM only; a refusal by the worker names its CDP code.
PLANNED = {"refused": {"code": "ERUN", "by": "planning"}, "targets": ["local", "vm"]}
NOT_ROUTABLE = {"refused": {"code": "EPLAN", "by": "planning"}, "targets": ["vm"]}
# Refused by the worker: an operand shape the op cannot take (every target refuses), or an
# int8 output outside the envelope (the reference runs it: routed targets only).
BY_WORKER = {"refused": {"code": "ERUN", "by": "worker", "cdp": "SHAPE_MISMATCH"}}
OUT_OF_ENVELOPE = {"refused": {"code": "ERUN", "by": "worker", "cdp": "EXEC_FAILED"},
                   "targets": ["vm", "hardware"]}
# A job over the wire's 16 input or output tensors: refused before sending (ELIMIT).
OVER_LIMIT = {"refused": {"code": "ELIMIT", "by": "planning"}, "targets": ["vm"]}
