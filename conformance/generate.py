"""Writes the generated part of cases/ (`ops/`, `envelopes/`, `ml/`): every wire op over
shapes, parameters and int32 edge values, with a seeded sample between the boundaries; the
numeric edges of each op's integer rule (`generate_edges.py`); and every calc::ml::
algorithm from its example. A developer tool, run by hand after a change to the lists; its
output is committed data, and the suite reads only the files
(`python -m maned_conformance.generate` rewrites them)."""
import random
import re
import shutil
import tomllib
from pathlib import Path

import maned
from maned.ml_catalogue import ABSENT, REQUIRED, TRAINED, algorithm

from .cases import CASES
from .casewriter import (BINARY, EDGES, HEAD, MAX, MIN, NOT_ROUTABLE, PLANNED, REDUCE, UNARY,
                         case, flow, tensor, values)
from .generate_edges import edge_cases


def binary_cases(rng: random.Random) -> dict[str, str]:
    """Each binary op over shapes at int32 edge values, its broadcasts (R4) and rank-0 operands
    (R5); div's zero divisors."""
    out: dict[str, str] = {}
    for op in BINARY:
        for shape in [(2, 3), (4,), (1, 1)]:
            n = 1
            for d in shape:
                n *= d
            a, b = values(rng, n), values(rng, n, EDGES[::-1])
            out[f"ops/{op}/{'x'.join(map(str, shape))}.toml"] = case(
                f"{op} of two {shape} tensors at int32 edge values", HEAD[0] + flow(
                    "a, b", f"a b {op} r ="), {"a": tensor(shape, a), "b": tensor(shape, b)})
        out[f"ops/{op}/broadcast_rank0.toml"] = case(
            f"{op}: a rank-0 operand broadcasts (R4)", HEAD[0] + flow(
                "a, b", f"a b {op} r ="), {"a": str(MIN), "b": tensor((2, 2), values(rng, 4))})
        out[f"ops/{op}/broadcast_one.toml"] = case(
            f"{op}: a [1] operand broadcasts, the result takes the other shape (R4)",
            HEAD[0] + flow("a, b", f"b a {op} r ="),
            {"a": "1:-1", "b": tensor((3,), values(rng, 3))})
        out[f"ops/{op}/rank0_both.toml"] = case(
            f"{op} of two rank-0 values stays rank-0 (R5)", HEAD[0] + flow(
                "a, b", f"a b {op} r ="), {"a": str(MAX), "b": "-1"})
    out["ops/div/zero_divisors.toml"] = case(
        "div by zero is 0, INT32_MIN / -1 is INT32_MIN", HEAD[0] + flow("a, b", "a b div r ="),
        {"a": tensor((4,), [7, -7, MIN, MIN]), "b": tensor((4,), [0, 0, -1, 0])})
    return out


def unary_cases(rng: random.Random) -> dict[str, str]:
    """Each unary op over two shapes."""
    out: dict[str, str] = {}
    for op in UNARY:
        shapes = [(2, 3), (3, 2, 2)] if op == "transpose" else [(2, 3), (5,)]
        for shape in shapes:
            n = 1
            for d in shape:
                n *= d
            head = HEAD[2] if op in ("sigmoid", "tanh") else HEAD[0]
            data = values(rng, n) if op not in ("sigmoid", "tanh", "layernorm") else [
                rng.randint(-3000, 3000) for _ in range(n)]
            out[f"ops/{op}/{'x'.join(map(str, shape))}.toml"] = case(
                f"{op} over {shape}", head + flow("a", f"a {op} r ="), {"a": tensor(shape, data)})
    return out


def softmax_cases(rng: random.Random) -> dict[str, str]:
    """softmax along each axis, of rank 2 and rank 4."""
    out: dict[str, str] = {}
    for axis in (None, 0, 1):
        p = "" if axis is None else f"{{axis: {axis}}} "
        out[f"ops/softmax/axis_{axis}.toml"] = case(
            f"softmax {'over the last axis' if axis is None else f'along axis {axis}'}",
            HEAD[2] + flow("a", f"a {p}softmax r ="),
            {"a": tensor((2, 3), [rng.randint(-500, 500) for _ in range(6)])})
    for axis in (2, 3):
        out[f"ops/softmax/axis_{axis}_rank4.toml"] = case(
            f"softmax along axis {axis} of a rank-4 tensor", HEAD[2] + flow(
                "a", f"a {{axis: {axis}}} softmax r ="),
            {"a": tensor((2, 1, 2, 3), [rng.randint(-500, 500) for _ in range(12)])})
    return out


def reduce_cases(rng: random.Random) -> dict[str, str]:
    """Each reduction along each axis, and its axis on a rank-0 operand refused."""
    out: dict[str, str] = {}
    for op in REDUCE:
        for axis in (None, 0, 1, 2):
            p = "" if axis is None else f"{{axis: {axis}}} "
            out[f"ops/{op}/axis_{axis}.toml"] = case(
                f"{op} {'of the whole tensor' if axis is None else f'along axis {axis}'}",
                HEAD[0] + flow("a", f"a {p}{op} r ="), {"a": tensor((2, 3, 2), values(rng, 12))})
        out[f"ops/{op}/axis_3.toml"] = case(
            f"{op} along axis 3 of a rank-4 tensor", HEAD[0] + flow(
                "a", f"a {{axis: 3}} {op} r ="), {"a": tensor((2, 1, 2, 3), values(rng, 12))})
        out[f"ops/{op}/rank0_axis_refused.toml"] = case(
            f"{op} with an axis on a rank-0 operand is refused on every target (ops §5.0)",
            HEAD[0] + flow("a", f"a {{axis: 0}} {op} r ="), {"a": "7"}, **PLANNED)
    return out


def rank0_refusal_cases(rng: random.Random) -> dict[str, str]:
    """Ops that have no axis 0 on a rank-0 operand: refused on every target."""
    out: dict[str, str] = {}
    out["ops/softmax/rank0_axis_refused.toml"] = case(
        "softmax with an axis on a rank-0 operand is refused on every target",
        HEAD[2] + flow("a", "a {axis: 0} softmax r ="), {"a": "7"}, **PLANNED)
    out["ops/concat/rank0_refused.toml"] = case(
        "concat of rank-0 operands is refused on every target (it has no axis 0)",
        HEAD[0] + flow("a", "a a concat r ="), {"a": "7"}, **PLANNED)
    out["ops/split/rank0_refused.toml"] = case(
        "{sections: 1} split of a rank-0 operand is refused on every target",
        HEAD[0] + flow("a", "a {sections: 1} split r ="), {"a": "7"}, **PLANNED)
    return out


def matmul_cases(rng: random.Random) -> dict[str, str]:
    """matmul of three shapes at int32 edge values (wraps)."""
    out: dict[str, str] = {}
    for m, k, n in [(2, 3, 2), (1, 1, 1), (3, 4, 5)]:
        out[f"ops/matmul/{m}x{k}x{n}.toml"] = case(
            f"matmul [{m},{k}]·[{k},{n}] at int32 edge values (wraps)",
            HEAD[0] + flow("a, b", "a b matmul r ="),
            {"a": tensor((m, k), values(rng, m * k)), "b": tensor((k, n), values(rng, k * n))})
    return out


def scalar_mul_cases(rng: random.Random) -> dict[str, str]:
    """scalar_mul with the scalar on either side."""
    out: dict[str, str] = {}
    out["ops/scalar_mul/both_sides.toml"] = case(
        "scalar_mul with the scalar on either side", HEAD[0] + flow(
            "a, s", "a s scalar_mul r = s a scalar_mul q =", "r, q"),
        {"a": tensor((2, 2), values(rng, 4)), "s": "-3"})
    return out


def concat_cases(rng: random.Random) -> dict[str, str]:
    """concat along each axis of a rank-2 pair."""
    out: dict[str, str] = {}
    for axis, other in ((0, (1, 2)), (1, (2, 3))):
        out[f"ops/concat/axis_{axis}.toml"] = case(
            f"concat of [2,2] and {list(other)} along axis {axis} (a first, then b)",
            HEAD[0] + flow("a, b", f"a b {{axis: {axis}}} concat r ="),
            {"a": tensor((2, 2), values(rng, 4)),
             "b": tensor(other, values(rng, other[0] * other[1], EDGES[::-1]))})
    return out


def reshape_cases(rng: random.Random) -> dict[str, str]:
    """reshape by rows/cols and by a shape list."""
    out: dict[str, str] = {}
    for shape in ["{rows: 3, cols: 2}", "{shape: [6]}", "{shape: [1, 2, 3]}"]:
        name = shape.strip("{}").replace(":", "").replace(" ", "").replace(",", "_")
        out[f"ops/reshape/{name.replace('[', '').replace(']', '')}.toml"] = case(
            f"reshape {shape}", HEAD[0] + flow("a", f"a {shape} reshape r ="),
            {"a": tensor((2, 3), values(rng, 6))})
    return out


def split_cases(rng: random.Random) -> dict[str, str]:
    """split along each axis into sections."""
    out: dict[str, str] = {}
    for axis, sections, index in [(0, 2, 1), (1, 3, 0), (1, 3, 2), (0, 1, 0)]:
        out[f"ops/split/a{axis}_s{sections}_i{index}.toml"] = case(
            f"split axis {axis} into {sections}, section {index}", HEAD[0] + flow(
                "a", f"a {{axis: {axis}, sections: {sections}, index: {index}}} split r ="),
            {"a": tensor((2, 6), values(rng, 12))})
    return out


def conv2d_cases(rng: random.Random) -> dict[str, str]:
    """conv2d over strides and paddings (with a seeded sample between the boundaries), the
    refused and the unroutable ones, edge values and channels."""
    out: dict[str, str] = {}
    sample = (rng.randint(64, 254), rng.randint(1, 254))  # seeded, between the boundaries
    for stride, padding in [(None, None), (1, 0), (2, 1), (0, 0), (3, 2), (1, 255), (255, 0),
                            (255, 255), sample]:
        p = ", ".join(f"{k}: {v}" for k, v in (("stride", stride), ("padding", padding))
                      if v is not None)
        out[f"ops/conv2d/s{stride}_p{padding}.toml"] = case(
            f"conv2d {p or 'bare'}" + (" (an explicit stride 0 means 1 on every target)"
                                       if stride == 0 else ""),
            HEAD[0] + flow("x, k", f"x k {{{p}}} conv2d r =" if p else "x k conv2d r ="),
            {"x": tensor((4, 5), [rng.randint(-50, 50) for _ in range(20)]),
             "k": tensor((2, 2), [1, -2, 3, -4])})
    for key in ("stride", "padding"):
        out[f"ops/conv2d/{key}_negative_refused.toml"] = case(
            f"conv2d with a negative {key} is refused on every target, in the same words",
            HEAD[0] + flow("x, k", f"x k {{{key}: -1}} conv2d r ="),
            {"x": tensor((4, 5), list(range(20))), "k": tensor((2, 2), [1, 0, 0, 1])},
            **PLANNED)
        out[f"ops/conv2d/{key}_256_not_routable.toml"] = case(
            f"conv2d {key} 256 does not fit the wire's byte: refused before sending",
            HEAD[0] + flow("x, k", f"x k {{{key}: 256}} conv2d r ="),
            {"x": tensor((4, 5), list(range(20))), "k": tensor((2, 2), [1, 0, 0, 1])},
            **NOT_ROUTABLE)
    out["ops/conv2d/edges.toml"] = case(
        "conv2d over int32 edge values with an edge-valued kernel (wraps)",
        HEAD[0] + flow("x, k", "x k {stride: 1, padding: 1} conv2d r ="),
        {"x": tensor((3, 4), values(rng, 12)), "k": tensor((2, 2), [MAX, MIN, -1, 2])})
    out["ops/conv2d/channels.toml"] = case(
        "conv2d with 2 input and 2 output channels",
        HEAD[0] + flow("x, k", "x k {stride: 1, padding: 1} conv2d r ="),
        {"x": tensor((2, 3, 3), [rng.randint(-9, 9) for _ in range(18)]),
         "k": tensor((2, 2, 2, 2), [rng.randint(-3, 3) for _ in range(16)])})
    return out


def pool_cases(rng: random.Random) -> dict[str, str]:
    """maxpool2d and avgpool2d over kernels and strides, the wire's largest, a seeded sample,
    and the refused and unroutable ones."""
    out: dict[str, str] = {}
    for op in ("maxpool2d", "avgpool2d"):
        for k, s in [(2, None), (2, 1), (3, 3), (1, 1), (4, 2)]:
            p = f"kernel_size: {k}" + ("" if s is None else f", stride: {s}")
            out[f"ops/{op}/k{k}_s{s}.toml"] = case(
                f"{op} {p}", HEAD[0] + flow("x", f"x {{{p}}} {op} r ="),
                {"x": tensor((2, 4, 4), values(rng, 32))})
    for op in ("maxpool2d", "avgpool2d"):
        big = [rng.randint(-9, 9) for _ in range(255 * 255)]  # async: over the sync limit
        out[f"ops/{op}/k255.toml"] = case(
            f"{op} kernel_size 255 (the wire's largest) over [255,255]: one window",
            HEAD[0] + flow("x", f"x {{kernel_size: 255}} {op} r ="),
            {"x": tensor((255, 255), big)})
        k, stride = rng.randint(2, 3), rng.randint(2, 254)  # seeded, between the boundaries
        out[f"ops/{op}/k{k}_s{stride}.toml"] = case(
            f"{op} kernel_size {k}, stride {stride} (a seeded sample)", HEAD[0] + flow(
                "x", f"x {{kernel_size: {k}, stride: {stride}}} {op} r ="),
            {"x": tensor((2, 5, 6), values(rng, 60))})
        out[f"ops/{op}/s255.toml"] = case(
            f"{op} kernel_size 2, stride 255 (the wire's largest)",
            HEAD[0] + flow("x", f"x {{kernel_size: 2, stride: 255}} {op} r ="),
            {"x": tensor((3, 4), values(rng, 12))})
        by_worker = {"refused": {"code": "ERUN", "by": "worker", "cdp": "SHAPE_MISMATCH"}}
        for p, why, who in [("kernel_size: 0", "a kernel of 0", PLANNED),
                            ("kernel_size: 2, stride: 0", "an explicit stride 0", PLANNED),
                            ("kernel_size: 5", "a window larger than the input", by_worker)]:
            name = p.replace("kernel_size: ", "k").replace(", stride: ", "_s")
            out[f"ops/{op}/{name}_refused.toml"] = case(
                f"{op} with {why} is refused on every target", HEAD[0] + flow(
                    "x", f"x {{{p}}} {op} r ="), {"x": tensor((4, 4), values(rng, 16))},
                **who)
        out[f"ops/{op}/no_kernel_refused.toml"] = case(
            f"{op} without kernel_size is refused on every target", HEAD[0] + flow(
                "x", f"x {op} r ="), {"x": tensor((4, 4), values(rng, 16))}, **PLANNED)
        for p in ("kernel_size: 256", "kernel_size: 2, stride: 256"):
            name = p.replace("kernel_size: ", "k").replace(", stride: ", "_s")
            out[f"ops/{op}/{name}_not_routable.toml"] = case(
                f"{op} {{{p}}} does not fit the wire's byte: refused before sending",
                HEAD[0] + flow("x", f"x {{{p}}} {op} r ="), {"x": tensor((4, 4), values(rng, 16))},
                **NOT_ROUTABLE)
    return out


def edge_value_cases(rng: random.Random) -> dict[str, str]:
    """sigmoid, tanh and layernorm over the int32 edge values."""
    out: dict[str, str] = {}
    for op in ("sigmoid", "tanh", "layernorm"):
        out[f"ops/{op}/edges.toml"] = case(
            f"{op} over the int32 edge values", (HEAD[2] if op != "layernorm" else HEAD[0])
            + flow("a", f"a {op} r ="), {"a": tensor((len(EDGES),), EDGES)})
    return out


def batchnorm_cases(rng: random.Random) -> dict[str, str]:
    """batchnorm with x at the int32 edge values, and with [1] statistics broadcast (R31)."""
    out: dict[str, str] = {}
    out["ops/batchnorm/edges.toml"] = case(
        "batchnorm with x at the int32 edge values", HEAD[2] + flow(
            "x, m, v, g, b", "x m v g b batchnorm r ="),
        {"x": tensor((len(EDGES),), EDGES), "m": "1:-7", "v": "1:2147483647", "g": f"1:{MIN}",
         "b": f"1:{MAX}"})
    out["ops/batchnorm/broadcast.toml"] = case(
        "batchnorm with [1] statistics broadcast over x (R31)", HEAD[2] + flow(
            "x, m, v, g, b", "x m v g b batchnorm r ="),
        {"x": tensor((2, 3), [rng.randint(-900, 900) for _ in range(6)]), "m": "1:10",
         "v": "1:400", "g": "1:150", "b": "1:-20"})
    return out


def envelope_cases(rng: random.Random) -> dict[str, str]:
    """Envelopes: a flow of 256 values, an int8 envelope, literals hoisted to inputs (D4)."""
    out: dict[str, str] = {}
    chain = " ".join(f"v{i} a add v{i + 1} =" for i in range(254))
    out["envelopes/slots_256.toml"] = case(
        "a flow of exactly 256 values: it fills an ABI-1 register file to the last slot",
        HEAD[0] + flow("a", f"a a add v0 = {chain}", "v254"), {"a": "2:1,-1"})
    out["envelopes/int8.toml"] = case(
        "an int8 envelope (quant range -1..1 at quantres 0): values travel as one byte",
        HEAD["int8"] + flow("a, b", "a b add c = c b mul r =", "r"),
        {"a": tensor((2, 2), [1, -1, 0, 1]), "b": tensor((2, 2), [1, 1, -1, 0])})
    out["envelopes/hoisted_constants.toml"] = case(
        "literals a CONST cannot carry travel as extra inputs (D4)", HEAD[0] + flow(
            "a", "a 70000 add b = b [[1,2],[3,4]] mul c = c -40000 sub r =", "r"),
        {"a": tensor((2, 2), values(rng, 4))})
    return out


# The op and envelope families, in the order they draw from the one seeded stream: a new
# family goes last, or every sample after it changes.
OP_FAMILIES = (binary_cases, unary_cases, softmax_cases, reduce_cases, rank0_refusal_cases,
               matmul_cases, scalar_mul_cases, concat_cases, reshape_cases, split_cases,
               conv2d_cases, pool_cases, edge_value_cases, batchnorm_cases, envelope_cases)


def generate() -> dict[str, str]:
    """Every op and envelope family's cases, then the numeric edges (generate_edges.py)."""
    rng = random.Random(20261201)
    out: dict[str, str] = {}
    for cases in [family(rng) for family in OP_FAMILIES] + [edge_cases()]:
        for rel, text in cases.items():
            assert rel not in out, rel
            out[rel] = text
    return out


EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
# A sweep for each Tier A algorithm outside the gradient-descent family (whose sweep is over
# lr): the key, its values, and the return names (each configuration's model and second).
SWEEPS = [("xgboost", "eta", "[20, 30]", "m0, l0, m1, l1"),
          ("hmm", "iters", "[2, 3]", "m0, s0, m1, s1")]


def ml_cases() -> dict[str, str]:
    """Every calc::ml:: algorithm that trains, in catalogue order, from its teaching example
    (its definition only: a predict flow is local-only); for the gradient-descent family a
    sweep and a small budget that forces many rounds, for the other Tier A algorithms the
    smallest budget each trains with and one below, and a sweep."""
    out = {}
    for algo in TRAINED:
        text = _example(algo)
        if algorithm(algo).tier == "B":  # coordinator-only (E027 when routed): the reference
            out[f"ml/{algo}/defaults.toml"] = case(
                f"{algo} as its example trains it (coordinator-only: the reference target)",
                text, targets=["local"])
            continue
        out[f"ml/{algo}/defaults.toml"] = case(f"{algo} as its example trains it", text)
        gd = algorithm(algo).module == "gd"
        out.update(_gd_cases(algo, text) if gd else _budget_cases(algo, text))
    for algo, key, swept, returns in SWEEPS:
        text = _script_of(out[f"ml/{algo}/defaults.toml"])
        sweep = re.sub(r"return model, \w+;", f"return {returns};", _with_key(text, key, swept))
        if maned.run(source=sweep).exit_code == 0:
            out[f"ml/{algo}/sweep.toml"] = case(f"{algo}: a sweep over {key} {swept}", sweep)
    return out


def _example(algo: str) -> str:
    """The algorithm's teaching example, unrouted, up to its first lambda flow."""
    text = (EXAMPLES / f"{algo}.mnd").read_text(encoding="utf-8")
    text = re.sub(r"@device\([^)]*\)\s*", "", text)
    text = "\n".join(ln for ln in text.splitlines() if not ln.startswith("device::"))
    text = text[:text.index("calc::lambda_flow")] if "calc::lambda_flow" in text else text
    return text.rstrip() + "\n"


def _budget_cases(algo: str, text: str) -> dict[str, str]:
    """The smallest budget the algorithm trains with, and the one below it, refused."""
    out = {}
    for low, small in zip((32, 64, 128), (64, 128, 256)):
        run = maned.run(source=_with_key(text, "budget", str(small)))
        if run.exit_code == 0:
            out[f"ml/{algo}/budget_{small}.toml"] = case(
                f"{algo} with budget: {small}, which forces "
                f"{sum('#r' in j.flow for j in run.jobs)} rounds",
                _with_key(text, "budget", str(small)))
            refused = maned.run(source=_with_key(text, "budget", str(low)))
            out[f"ml/{algo}/budget_{low}_refused.toml"] = case(
                f"{algo} with budget: {low}, too small for one step, is refused on "
                "every target", _with_key(text, "budget", str(low)),
                refused={"code": refused.diagnostics[0].code, "by": "planning"},
                targets=["local", "vm"])
            break
    return out


def _gd_cases(algo: str, text: str) -> dict[str, str]:
    """A gradient-descent algorithm with budget 64, which forces many rounds, and a
    three-value lr sweep."""
    out = {}
    many = re.sub(r"iters: *\d+", "iters: 120", text).replace(
        "features: 2", "features: 2, budget: 64")
    out[f"ml/{algo}/budget_64.toml"] = case(
        f"{algo} with budget: 64, which forces many rounds", many)
    sweep = re.sub(r"lr: *\d+", "lr: [2, 5, 10]", many)
    sweep = re.sub(r"return model, loss;", "return m0, l0, m1, l1, m2, l2;", sweep)
    out[f"ml/{algo}/sweep.toml"] = case(f"{algo}: a three-value lr sweep", sweep)
    return out


def _with_key(text: str, key: str, value: str) -> str:
    """The script with `key: value` in its calc::ml:: block (replaced, or added first)."""
    if re.search(rf"\b{key}: *[^,\n}}]+", text):
        return re.sub(rf"\b{key}: *[^,\n}}]+", f"{key}: {value}", text, count=1)
    return re.sub(r"(calc::ml::\w+ \w+\([^)]*\) *\{)", rf"\1\n    {key}: {value},", text,
                  count=1)


def hyper_cases(base: dict[str, str]) -> dict[str, str]:
    """Each hyperparameter of each algorithm at a value other than its example's, kept only
    where the reference trains it (checked now, so every committed case is a runnable one;
    the routed targets must then agree with it)."""
    out = {}
    for algo in TRAINED:
        text = _script_of(base[f"ml/{algo}/defaults.toml"])
        for key in algorithm(algo).keys:
            if key.default in (REQUIRED, ABSENT) or key.name == "budget":
                continue
            for value in _other_values(key, text):
                varied = _with_key(text, key.name, value)
                if maned.run(source=varied).exit_code != 0:
                    continue
                extra = {"targets": ["local"]} if algorithm(algo).tier == "B" else {}
                out[f"ml/{algo}/{key.name}_{value}.toml"] = case(
                    f"{algo} with {key.name}: {value}", varied, **extra)
                break
    return out


def _script_of(toml_text: str) -> str:
    return tomllib.loads(toml_text)["script"]


def _other_values(key, text: str) -> list[str]:
    """Candidate values unlike the example's (or the default's) for one key."""
    m = re.search(rf"\b{key.name}: *([^,\n}}]+)", text)
    current = m.group(1).strip() if m else None
    if key.is_bool:
        default = "true" if key.default is True else "false"
        now = current or default
        return ["false" if now == "true" else "true"]
    now = int(current) if current and current.lstrip("-").isdigit() else None
    picks = [3, 2, 5, 7, 1, 4, 10]
    lo = key.lo if isinstance(key.lo, int) else 0
    return [str(v) for v in picks if v != now and v >= lo
            and (key.hi is None or v <= key.hi)][:4]


def main() -> None:
    for sub in ("ops", "envelopes", "ml"):
        shutil.rmtree(CASES / sub, ignore_errors=True)
    ml = ml_cases()
    cases = {**generate(), **ml, **hyper_cases(ml)}
    for rel, text in cases.items():
        path = Path(CASES / rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    print(f"wrote {len(cases)} cases under {CASES}")


if __name__ == "__main__":
    main()
