"""The numeric edges of each op's integer rule in docs/ops.md and of the envelope: a
generator per family (division, conv2d, pools, batchnorm, layernorm, reductions, tables,
softmax, shapes, matmul, scalar_mul, comparisons and logic, unary, envelopes), each with its
own seeded values, called by `generate.py`."""
import random

from bark_vm.wire.constants import DTYPE_INT8, DTYPE_INT32, MAX_RANK
from bark_vm.executor.linalg import LIMB_CHUNK, uses_limbs
from bark_vm.wire.dtypes import wire_dtype

from .casewriter import (BY_WORKER, EDGES, HEAD, MAX, MIN, NOT_ROUTABLE, OUT_OF_ENVELOPE,
                         OVER_LIMIT, REDUCE, case, flow, tensor, values)


# Each family below takes its values from docs/ops.md's integer rules (where a rule changes
# branch: a sign, a zero, a table end, a wrap, an envelope end) and from its own seeded
# generator, so adding a family never moves another family's (or generate()'s) sample.
EXTREMES = [MIN, MAX, MIN + 1, MAX - 1, -1, 0, 1]


def _rng(family: str) -> random.Random:
    """The seeded generator of one edge family."""
    return random.Random(f"maned-edges/{family}")


def quant(q: int, lo: int = -1000, hi: int = 1000) -> str:
    """The quant directives of an int32 envelope at quantres q (checked by wire.md §2.1)."""
    assert wire_dtype(q, lo, hi) == DTYPE_INT32, (q, lo, hi)
    return f"mnd::quantmax={hi};\nmnd::quantmin={lo};\nmnd::quantres={q};\n"


def int8_quant(q: int, lo: int, hi: int) -> str:
    """The quant directives of an int8 envelope (wire.md §2.1 must pick int8 for them)."""
    assert wire_dtype(q, lo, hi) == DTYPE_INT8, (q, lo, hi)
    return f"mnd::quantmax={hi};\nmnd::quantmin={lo};\nmnd::quantres={q};\n"


def _size(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _pick(rng: random.Random, shape: tuple[int, ...], pool=EXTREMES) -> str:
    """A tensor of `shape` drawn from `pool` (the int32 extremes by default)."""
    return tensor(shape, [rng.choice(pool) for _ in range(_size(shape))])


def _outputs(lines: list[tuple[str, str]]) -> tuple[str, str]:
    """A flow body and its return list from (expression, name) pairs."""
    return " ".join(f"{e} {n} =" for e, n in lines), ", ".join(n for _, n in lines)


def division_edges() -> dict[str, str]:
    """div by tensors: negative dividends, both divisor signs, zeros mixed in, singles."""
    out = {}
    pairs = [(-7, 2), (-7, -2), (-6, 3), (-6, -3), (-1, 5), (-1, -5), (-4, 7), (-4, -7),
             (MIN, 2), (MIN, -2), (MIN, 3), (MIN, MAX), (MIN, MIN), (-2, MIN), (MIN + 1, -1),
             (MIN + 1, MIN)]
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    out["ops/div/negative_by_tensor.toml"] = case(
        "div of negative dividends by a tensor of both signs: exact and inexact quotients, "
        "|a| < |b|, truncated toward zero (no zero divisor)", HEAD[0] + flow(
            "a, b", "a b div r ="), {"a": tensor((2, 8), a), "b": tensor((2, 8), b)})
    za = a[:8] + [-7, MIN, -1, 0]
    zb = b[:8] + [0, 0, 0, -3]
    out["ops/div/negative_zero_mixed.toml"] = case(
        "div of negative dividends by a tensor with zero divisors mixed in (x/0 = 0)",
        HEAD[0] + flow("a, b", "a b div r ="),
        {"a": tensor((3, 4), za), "b": tensor((3, 4), zb)})
    out["ops/div/min_by_minus_one_tensor.toml"] = case(
        "INT32_MIN / -1 inside a tensor divisor without zeros wraps to INT32_MIN",
        HEAD[0] + flow("a, b", "a b div r ="),
        {"a": tensor((2, 3), [MIN, -7, MIN, MAX, MIN + 1, -1]),
         "b": tensor((2, 3), [-1, -1, 1, -1, -1, -1])})
    dividends = tensor((2, 4), [-7, -6, -1, MIN, MIN + 1, 7, 0, MAX])
    for name, divisor, why in [
            ("one_positive", "1:3", "a [1] positive divisor"),
            ("one_negative", "1:-3", "a [1] negative divisor"),
            ("rank0_negative", "-2", "a rank-0 negative divisor"),
            ("one_zero", "1:0", "a [1] zero divisor (every quotient 0)"),
            ("rank0_minus_one", "-1", "a rank-0 -1 divisor (INT32_MIN wraps)"),
            ("one_min", f"1:{MIN}", "a [1] INT32_MIN divisor")]:
        out[f"ops/div/single_{name}.toml"] = case(
            f"div of mixed-sign dividends by {why}", HEAD[0] + flow("a, b", "a b div r ="),
            {"a": dividends, "b": divisor})
    out["ops/div/single_dividend.toml"] = case(
        "div of a [1] and a rank-0 negative dividend by a tensor with zeros (the single on the "
        "left)", HEAD[0] + flow("s, t, b", "s b div r = t b div q =", "r, q"),
        {"s": "1:-7", "t": str(MIN), "b": tensor((2, 3), [2, -2, 0, 7, -1, MIN])})
    return out


def conv2d_edges() -> dict[str, str]:
    """conv2d over non-square inputs and kernels, channel counts that differ, refusals."""
    rng = _rng("conv2d")
    small = list(range(-9, 10))
    out = {}
    for (h, w), (kh, kw), params in [
            ((3, 5), (2, 3), [None, (2, 0), (1, 1), (2, 1), (3, 2), (1, 3)]),
            ((5, 3), (3, 1), [None, (2, 1), (1, 2), (3, 0)])]:
        lines = []
        for sp in params:
            p = "" if sp is None else f"{{stride: {sp[0]}, padding: {sp[1]}}} "
            lines.append((f"x k {p}conv2d", "r" if sp is None else f"s{sp[0]}p{sp[1]}"))
        body, ret = _outputs(lines)
        out[f"ops/conv2d/nonsquare_{h}x{w}_k{kh}x{kw}.toml"] = case(
            f"conv2d of a [{h},{w}] input with a [{kh},{kw}] kernel, bare and at "
            f"{len(params) - 1} stride/padding pairs", HEAD[0] + flow("x, k", body, ret),
            {"x": _pick(rng, (h, w), small), "k": _pick(rng, (kh, kw), small)})
    out["ops/conv2d/cin3_cout2.toml"] = case(
        "conv2d of a [3,4,4] input with a [2,3,2,2] kernel (3 in, 2 out channels), bare and "
        "at stride 2, padding 1", HEAD[0] + flow(
            "x, k", "x k conv2d r = x k {stride: 2, padding: 1} conv2d s =", "r, s"),
        {"x": _pick(rng, (3, 4, 4), small), "k": _pick(rng, (2, 3, 2, 2), small)})
    out["ops/conv2d/rank2_input_cout3.toml"] = case(
        "conv2d of a rank-2 [3,4] input (one channel) with a [3,1,2,3] kernel: 3 out channels",
        HEAD[0] + flow("x, k", "x k {padding: 1} conv2d r ="),
        {"x": _pick(rng, (3, 4), small), "k": _pick(rng, (3, 1, 2, 3), small)})
    out["ops/conv2d/cin2_cout1_nonsquare.toml"] = case(
        "conv2d of a [2,3,5] input with a [1,2,2,3] kernel at stride 2, padding 1",
        HEAD[0] + flow("x, k", "x k {stride: 2, padding: 1} conv2d r ="),
        {"x": _pick(rng, (2, 3, 5), small), "k": _pick(rng, (1, 2, 2, 3), small)})
    out["ops/conv2d/channels_extremes.toml"] = case(
        "conv2d with 2 in and 3 out channels over int32 extremes (the exact sum wraps)",
        HEAD[0] + flow("x, k", "x k {padding: 1} conv2d r ="),
        {"x": _pick(rng, (2, 2, 3)), "k": _pick(rng, (3, 2, 2, 2))})
    out["ops/conv2d/kernel_fills_padded.toml"] = case(
        "conv2d whose [4,5] kernel exactly covers the padded [2,3] input: one output",
        HEAD[0] + flow("x, k", "x k {padding: 1} conv2d r ="),
        {"x": _pick(rng, (2, 3), small), "k": _pick(rng, (4, 5), small)})
    for name, x, k, p, why in [
            ("channel_mismatch", (3, 4, 4), (2, 2, 2, 2), "", "a kernel for 2 input channels "
             "over 3"),
            ("rank2_kernel_channels", (2, 3, 3), (2, 2), "", "a rank-2 kernel (one input "
             "channel) over 2"),
            ("kernel_taller", (2, 3), (5, 2), "{padding: 1} ", "a kernel taller than the "
             "padded input")]:
        out[f"ops/conv2d/{name}_refused.toml"] = case(
            f"conv2d with {why} is refused on every target (SHAPE_MISMATCH)",
            HEAD[0] + flow("x, k", f"x k {p}conv2d r ="),
            {"x": _pick(rng, x, small), "k": _pick(rng, k, small)}, **BY_WORKER)
    return out


def pool_edges() -> dict[str, str]:
    """1x1 pools at several strides on rank-2 and rank-3 inputs; rank 4 is refused."""
    rng = _rng("pools")
    out = {}
    for op in ("maxpool2d", "avgpool2d"):
        for shape, strides in [((3, 5), (None, 2, 3, 4)), ((2, 3, 4), (1, 2, 3))]:
            lines = [(f"x {{kernel_size: 1{'' if s is None else f', stride: {s}'}}} {op}",
                      f"s{s or 'default'}") for s in strides]
            body, ret = _outputs(lines)
            rank = len(shape)
            out[f"ops/{op}/k1_rank{rank}.toml"] = case(
                f"{op} kernel_size 1 on a rank-{rank} {list(shape)} input at strides "
                f"{', '.join(str(s or 'default') for s in strides)}",
                HEAD[0] + flow("x", body, ret), {"x": _pick(rng, shape)})
        out[f"ops/{op}/k1_rank4_refused.toml"] = case(
            f"{op} of a rank-4 input is refused on every target (SHAPE_MISMATCH)",
            HEAD[0] + flow("x", f"x {{kernel_size: 1}} {op} r ="),
            {"x": _pick(rng, (1, 2, 2, 2))}, **BY_WORKER)
    return out


def batchnorm_edges() -> dict[str, str]:
    """batchnorm's per-step wraps (R31): var 0, negative, wrapping var·M; int32 gamma/beta."""
    out = {}
    full = {"x": [MIN, MAX, 0, -1, 5, -5, 100, MIN + 1],
            "m": [1, -1, MIN, MAX, 0, 0, -100, 0],
            "v": [0, -1, MIN, MAX, 2 ** 30, 2 ** 25, 1, 400],
            "g": [MIN, MAX, -1, 1, MAX, MIN, 3, 2],
            "b": [MAX, MIN, MAX, MIN, 0, -1, MAX, MIN]}
    for q in (0, 2, 9):
        out[f"ops/batchnorm/full_stats_q{q}.toml"] = case(
            f"batchnorm with full-shape statistics at quantres {q}: var 0, negative and "
            "wrapping var·M give isqrt 0; x − mean and (x − mean)·gamma wrap",
            quant(q) + flow("x, m, v, g, b", "x m v g b batchnorm r ="),
            {k: tensor((2, 4), v) for k, v in full.items()})
    x = tensor((2, 3), [MIN, MAX, 0, -1, 1, 12345])
    out["ops/batchnorm/one_stats_var_edges.toml"] = case(
        "batchnorm with [1] statistics over [2,3]: var 0, var -5 and var 2^30 (var·100 wraps "
        "to 0) each give beta", HEAD[2] + flow(
            "x, m, v0, vn, vw, g, b", "x m v0 g b batchnorm r = x m vn g b batchnorm s = "
            "x m vw g b batchnorm t =", "r, s, t"),
        {"x": x, "m": "1:3", "v0": "1:0", "vn": "1:-5", "vw": f"1:{2 ** 30}", "g": "1:7",
         "b": "1:-20"})
    out["ops/batchnorm/gamma_beta_edges.toml"] = case(
        "batchnorm with [1] gamma INT32_MIN and beta INT32_MAX at quantres 0 (each step wraps)",
        HEAD[0] + flow("x, m, v, g, b", "x m v g b batchnorm r ="),
        {"x": x, "m": "1:-1", "v": "1:1", "g": f"1:{MIN}", "b": f"1:{MAX}"})
    out["ops/batchnorm/single_x.toml"] = case(
        "batchnorm of a [1] x with [2,3] statistics: the result takes the statistics' shape",
        HEAD[2] + flow("x, m, v, g, b", "x m v g b batchnorm r ="),
        {"x": f"1:{MIN}", "m": tensor((2, 3), [0, 1, -1, MAX, MIN, 7]),
         "v": tensor((2, 3), [1, 4, 0, -9, 100, MAX]),
         "g": tensor((2, 3), [1, -1, MAX, MIN, 2, 3]), "b": tensor((2, 3), [0, 0, 1, -1, 5, 6])})
    out["ops/batchnorm/rank0_stats.toml"] = case(
        "batchnorm with rank-0 and [1] statistics mixed over [2,3]", HEAD[2] + flow(
            "x, m, v, g, b", "x m v g b batchnorm r ="),
        {"x": x, "m": "-4", "v": "1:9", "g": "-300", "b": "1:11"})
    return out


def layernorm_edges() -> dict[str, str]:
    """layernorm rows at the int32 extremes, variance 0, one element, and the int64 limits."""
    out = {}
    rows = [[MAX] * 4, [MIN] * 4, [MAX, MIN, MAX, MIN], [MIN, MAX, MAX, MAX], [7] * 4,
            [MIN, MIN, MIN, MIN + 1], [0, 0, 0, 1]]
    pairs = [[MAX, MIN], [MIN, MAX], [MIN, MIN + 1], [MAX - 1, MAX]]
    for q in (0, 2, 9):
        out[f"ops/layernorm/extremes_q{q}.toml"] = case(
            f"layernorm at quantres {q}: rows of INT32_MAX, of INT32_MIN, mixed extremes, "
            "constant rows (variance 0), a one-step row (the result wraps) and two-element rows",
            quant(q) + flow("a, b", "a layernorm r = b layernorm s =", "r, s"),
            {"a": tensor((len(rows), 4), sum(rows, [])), "b": tensor((4, 2), sum(pairs, []))})
    out["ops/layernorm/one_element_rows.toml"] = case(
        "layernorm of one-element rows and of a rank-0 input is 0 (quantres 9)", quant(9) + flow(
            "a, z", "a layernorm r = z layernorm s =", "r, s"),
        {"a": tensor((2, 3, 1), [MIN, MAX, 0, -1, 1, 7]), "z": str(MIN)})
    # Row [x, 0, 0, 0]: c = [3x, -x, -x, -x]. The largest x that keeps max|c|·M·N·2^10 below
    # 2^60 (q 9), or max|c|²·N below 2^62 (q 0), and one past it: both sides of the point
    # where an int64 executor must leave int64 (docs/ops.md §5.3).
    for q, limit, what in [(9, 2 ** 60 // (10 ** 9 * 4 * 2 ** 10), "max|c|·M·N·2^10 < 2^60"),
                           (0, 2 ** 30, "max|c|²·N < 2^62")]:
        x = (limit - 1) // 3
        for name, v in (("below", x), ("above", x + 1)):
            out[f"ops/layernorm/int64_{name}_q{q}.toml"] = case(
                f"layernorm at quantres {q} of rows [±{v}, 0, 0, 0]: "
                + (f"the largest x with {what}" if name == "below" else f"one past {what}"),
                quant(q) + flow("a", "a layernorm r ="),
                {"a": tensor((2, 4), [v, 0, 0, 0, -v, 0, 0, 0])})
    return out


def reduce_edges() -> dict[str, str]:
    """Reductions along every axis of rank 3 and 4 at the int32 extremes, rank-0 inputs."""
    rng = _rng("reduce")
    out = {}
    pool = [MIN, MIN, MIN + 1, MAX, MAX - 1, -1, 1, -7, 0]
    for op in REDUCE:
        for shape in [(2, 3, 2), (2, 3, 2, 2)]:
            lines = [(f"a {op}", "whole")] + [(f"a {{axis: {k}}} {op}", f"axis{k}")
                                              for k in range(len(shape))]
            params = "a"
            inputs = {"a": _pick(rng, shape, pool)}
            if len(shape) == 3:
                lines.append((f"z {op}", "rank0"))
                params, inputs["z"] = "a, z", str(MIN)
            body, ret = _outputs(lines)
            out[f"ops/{op}/extremes_rank{len(shape)}.toml"] = case(
                f"{op} of a {list(shape)} tensor at the int32 extremes, whole and along every "
                "axis" + (", and of a rank-0 input (gives [1])" if len(shape) == 3 else ""),
                HEAD[0] + flow(params, body, ret), inputs)
    rows = [[MIN] * 3, [MAX] * 3, [MIN, MIN, 2], [-7, 0, 0], [MAX, MAX, -8], [MIN, -1, 0]]
    out["ops/tensor_mean/truncation.toml"] = case(
        "tensor_mean of sums far outside int32, negative inexact sums truncated toward zero",
        HEAD[0] + flow("a", "a tensor_mean w = a {axis: 0} tensor_mean r = "
                       "a {axis: 1} tensor_mean c =", "w, r, c"),
        {"a": tensor((len(rows), 3), sum(rows, []))})
    return out


def _lut_inputs(q: int, ends: list[int]) -> list[int]:
    """Inputs x whose table argument rdiv(x·1000, 10^q) lands at, next to and one rounding
    past each end (thousandths), with the int32 extremes; sorted, within int32."""
    m = 10 ** q
    xs = {MIN, MIN + 1, MAX - 1, MAX, -1, 0, 1}
    for end in ends:
        if m < 1000:  # one unit of x is 1000/M thousandths
            base = end * m // 1000
            xs.update(base + d for d in (-2, -1, 0, 1, 2))
        else:
            u = m // 1000
            xs.update((end + d) * u for d in (-65, -64, -63, -1, 0, 1, 63, 64, 65))
            if u > 1:  # half a thousandth either side: rdiv rounds away from zero
                xs.update((end * u + s * (u // 2) + t) for s in (-1, 1) for t in (-1, 0, 1))
    return sorted(x for x in xs if MIN <= x <= MAX)


def activation_edges() -> dict[str, str]:
    """sigmoid and tanh at, around and past the table ends, at several quantres."""
    from bark_vm.wire import lut
    out = {}
    for op, table in (("sigmoid", lut.SIGMOID), ("tanh", lut.TANH)):
        for q in (0, 2, 3, 6, 9):
            xs = _lut_inputs(q, [table.lo, 0, table.hi])
            out[f"ops/{op}/lut_ends_q{q}.toml"] = case(
                f"{op} at quantres {q}: inputs at, beside and one rounding past the table's "
                f"ends ({table.lo} and {table.hi} thousandths) and the int32 extremes",
                quant(q) + flow("a", f"a {op} r ="), {"a": tensor((len(xs),), xs)})
    return out


def softmax_edges() -> dict[str, str]:
    """softmax with x − max at and past the EXP table's ends, at every quantres 0..9."""
    from bark_vm.wire import lut
    out = {}
    for q in range(10):
        diffs = sorted({d for d in _lut_inputs(q, [lut.EXP.lo, lut.EXP.hi]) if d <= 0}
                       | {MIN - MAX})
        row = [MAX + d for d in diffs]
        out[f"ops/softmax/lut_ends_q{q}.toml"] = case(
            f"softmax at quantres {q} of one group whose x − max lands at, beside and past the "
            f"EXP table's ends ({lut.EXP.lo} and {lut.EXP.hi} thousandths), max INT32_MAX",
            quant(q) + flow("a", "a softmax r ="), {"a": tensor((1, len(row)), row)})
    for q in (0, 2):
        out[f"ops/softmax/all_equal_q{q}.toml"] = case(
            f"softmax at quantres {q} of all-equal rows (each gets rdiv(M, n)) and of a rank-0 "
            "input (M)", quant(q) + flow(
                "a, b, z", "a softmax r = b softmax s = z softmax t =", "r, s, t"),
            {"a": tensor((3, 2), [MAX, MAX, MIN, MIN, 5, 5]),
             "b": tensor((2, 3), [MIN] * 3 + [-1] * 3), "z": str(MIN)})
    diffs = [0, -1, -63, -64, -65, -15999, -16000, -16001, MIN - MAX]
    col = [MAX + d for d in diffs]
    out["ops/softmax/lut_ends_axis0.toml"] = case(
        "softmax along axis 0 at quantres 3: columns whose x − max land at the EXP table's ends",
        quant(3) + flow("a", "a {axis: 0} softmax r ="),
        {"a": tensor((len(col), 2), [v for x in col for v in (x, MIN + (x - MIN) // 2)])})
    return out


def shape_edges() -> dict[str, str]:
    """reshape to the largest dims, transpose, concat and split on the high axes."""
    rng = _rng("shape")
    out = {}
    out["ops/reshape/dim_65534.toml"] = case(
        "reshape of 65534 elements to [1,1,1,65534] and to {rows: 65534, cols: 1}: the "
        "largest legal dim, and 4 dims", HEAD[0] + "in::a = 65534 range;\n" + flow(
            "a", "a {shape: [1, 1, 1, 65534]} reshape r = a {rows: 65534, cols: 1} reshape c =",
            "r, c"))
    out["ops/reshape/four_dims.toml"] = case(
        "reshape to 4 dims from rank 3, from rank 1 and from rank 0", HEAD[0] + flow(
            "a, b, z", "a {shape: [3, 1, 2, 2]} reshape r = b {shape: [2, 1, 3, 2]} reshape s = "
            "z {shape: [1, 1, 1, 1]} reshape t =", "r, s, t"),
        {"a": _pick(rng, (2, 3, 2)), "b": _pick(rng, (12,)), "z": str(MIN)})
    out["ops/reshape/dim_65535_not_routable.toml"] = case(
        "reshape to a dim of 65535 does not fit the wire (65534 is the largest): refused "
        "before sending", HEAD[0] + "in::a = 65535 range;\n" + flow(
            "a", "a {shape: [65535]} reshape r ="), **NOT_ROUTABLE)
    out["ops/reshape/five_dims_not_routable.toml"] = case(
        "reshape to 5 dims does not fit the wire: refused before sending", HEAD[0] + flow(
            "a", "a {shape: [1, 1, 1, 1, 2]} reshape r ="), {"a": tensor((2,), [MIN, MAX])},
        **NOT_ROUTABLE)
    for shape in [(2, 3, 4), (2, 1, 3, 5), (1, 2, 1, 3)]:
        out[f"ops/transpose/{'x'.join(map(str, shape))}.toml"] = case(
            f"transpose of a non-square rank-{len(shape)} {list(shape)} tensor (the last two "
            "axes swap)", HEAD[0] + flow("a", "a transpose r ="),
            {"a": tensor(shape, values(rng, _size(shape)))})
    for a, b, axis in [((2, 1, 3), (2, 2, 3), 1), ((2, 2, 1), (2, 2, 3), 2),
                       ((1, 2, 2, 2), (1, 1, 2, 2), 1), ((2, 1, 1, 2), (2, 1, 3, 2), 2),
                       ((1, 2, 2, 1), (1, 2, 2, 3), 3)]:
        out[f"ops/concat/rank{len(a)}_axis_{axis}.toml"] = case(
            f"concat of {list(a)} and {list(b)} along axis {axis}", HEAD[0] + flow(
                "a, b", f"a b {{axis: {axis}}} concat r ="),
            {"a": tensor(a, values(rng, _size(a))),
             "b": tensor(b, values(rng, _size(b), EDGES[::-1]))})
    out["ops/concat/off_axis_refused.toml"] = case(
        "concat along axis 2 of [1,2,2] and [1,3,2] (they differ off the axis) is refused on "
        "every target (SHAPE_MISMATCH)", HEAD[0] + flow("a, b", "a b {axis: 2} concat r ="),
        {"a": _pick(rng, (1, 2, 2)), "b": _pick(rng, (1, 3, 2))}, **BY_WORKER)
    for shape, axis, sections, index in [((2, 2, 6), 2, 3, 2), ((1, 2, 2, 4), 3, 4, 3),
                                         ((2, 1, 4, 2), 2, 2, 1)]:
        out[f"ops/split/rank{len(shape)}_a{axis}_s{sections}_i{index}.toml"] = case(
            f"split of {list(shape)} along axis {axis} into {sections}, section {index}",
            HEAD[0] + flow("a", f"a {{axis: {axis}, sections: {sections}, index: {index}}} "
                           "split r ="), {"a": tensor(shape, values(rng, _size(shape)))})
    out["ops/split/not_dividing_refused.toml"] = case(
        "split of an axis of 6 into 4 sections is refused on every target (SHAPE_MISMATCH)",
        HEAD[0] + flow("a", "a {axis: 2, sections: 4} split r ="),
        {"a": _pick(rng, (1, 2, 6))}, **BY_WORKER)
    return out


def matmul_edges() -> dict[str, str]:
    """matmul with inner dims > 1 at the extremes, row by column, and a large product."""
    rng = _rng("matmul")
    out = {}
    for (m, k, n), why in [((2, 4, 3), "an inner dim of 4 at the int32 extremes (wraps)"),
                           ((1, 5, 1), "a row by a column at the int32 extremes"),
                           ((4, 1, 3), "a column by a row (inner dim 1)")]:
        out[f"ops/matmul/extremes_{m}x{k}x{n}.toml"] = case(
            f"matmul [{m},{k}]·[{k},{n}]: {why}", HEAD[0] + flow("a, b", "a b matmul r ="),
            {"a": _pick(rng, (m, k)), "b": _pick(rng, (k, n))})
    m, k, n = 32, 33, 32  # 33792 multiply-adds: past a small-product loop's usual size
    out[f"ops/matmul/large_{m}x{k}x{n}.toml"] = case(
        f"matmul [{m},{k}]·[{k},{n}] over int32 edges and a seeded sample (wraps)",
        HEAD[0] + flow("a, b", "a b matmul r ="),
        {"a": tensor((m, k), values(rng, m * k)), "b": tensor((k, n), values(rng, k * n))})
    out["ops/matmul/inner_mismatch_refused.toml"] = case(
        "matmul [2,3]·[2,3] is refused on every target (SHAPE_MISMATCH)",
        HEAD[0] + flow("a, b", "a b matmul r ="),
        {"a": _pick(rng, (2, 3)), "b": _pick(rng, (2, 3))}, **BY_WORKER)
    # the first cube our executor sends to BLAS on limbs (bark_vm's uses_limbs: 32)
    m = k = n = next(side for side in range(1, 1000) if uses_limbs(side, side, side))
    out[f"ops/matmul/square_{m}x{k}x{n}.toml"] = case(
        f"matmul [{m},{k}]·[{k},{n}] over int32 edges and a seeded sample (wraps): a square "
        "product, which a worker may run on a float64 BLAS scheme, exact only if it is exact",
        HEAD[0] + flow("a, b", "a b matmul r ="),
        {"a": tensor((m, k), values(rng, m * k)), "b": tensor((k, n), values(rng, k * n))})
    # A float64 scheme may multiply whole int32 values by unsigned 16-bit limbs while
    # K·2^47 ≤ 2^53: one more odd term near 2^47 sums past 2^53 and rounds.
    m, k, n = 32, 65, 32
    out[f"ops/matmul/odd_terms_{m}x{k}x{n}.toml"] = case(
        f"matmul [{m},{k}]·[{k},{n}] of -(2^31-1) by 65535: {k} odd terms near 2^47 whose sum "
        "passes 2^53, where a float64 product of whole values by 16-bit limbs rounds (wraps)",
        HEAD[0] + flow("a, b", "a b matmul r ="),
        {"a": tensor((m, k), [MIN + 1] * (m * k)), "b": tensor((k, n), [65535] * (k * n))})
    # With signed 16-bit digits of b (|digit| ≤ 2^15) the bound is K·2^46 ≤ 2^53 (bark_vm's
    # WHOLE_A_UP_TO, 128): one more odd term near 2^46 sums past 2^53 and rounds.
    m, k, n = 32, 129, 32
    out[f"ops/matmul/odd_terms_{m}x{k}x{n}.toml"] = case(
        f"matmul [{m},{k}]·[{k},{n}] of -(2^31-1) by -32767: {k} odd terms near 2^46 whose "
        "sum passes 2^53, where a float64 product of whole values by signed 16-bit digits "
        "rounds (wraps)", HEAD[0] + flow("a, b", "a b matmul r ="),
        {"a": tensor((m, k), [MIN + 1] * (m * k)), "b": tensor((k, n), [-32767] * (k * n))})
    # At K = 128 those sums reach ±2^53 exactly, so nothing may be added to one in float64: a
    # sum just inside -2^53 (2^31-1 by digits of -2^15, one of -2^15+1: an odd sum) plus a
    # middle sum's residue times 2^16 (b's high digits summing to -1) leaves 2^53 and rounds.
    m, k, n = 32, 128, 32
    column = [-2 ** 15 + 1, -2 ** 15 - 2 ** 16] + [-2 ** 15] * (k - 2)
    out[f"ops/matmul/low_sum_at_2_53_{m}x{k}x{n}.toml"] = case(
        f"matmul [{m},{k}]·[{k},{n}] of 2^31-1 by -2^15 (one -2^15+1, one -2^15-2^16): an odd "
        f"sum of {k} terms just inside -2^53 and a middle sum ≡ -1 (mod 2^16), where a float64 "
        "scheme that adds the one to the other rounds (wraps)",
        HEAD[0] + flow("a, b", "a b matmul r ="),
        {"a": tensor((m, k), [MAX] * (m * k)),
         "b": tensor((k, n), [v for v in column for _ in range(n)])})
    m, k, n = 32, 160, 32
    out[f"ops/matmul/wide_{m}x{k}x{n}.toml"] = case(
        f"matmul [{m},{k}]·[{k},{n}] over int32 edges and a seeded sample (wraps): an inner "
        "dim past 128, where a float64 scheme splits both operands into limbs",
        HEAD[0] + flow("a, b", "a b matmul r ="),
        {"a": tensor((m, k), values(rng, m * k)), "b": tensor((k, n), values(rng, k * n))})
    return out


def scalar_mul_edges() -> dict[str, str]:
    """scalar_mul with a [1] scalar against a rank-0 one, and the shapes it refuses."""
    out = {}
    a = tensor((2, 3), [MIN, MAX, -1, 0, 1, 46341])
    out["ops/scalar_mul/one_vs_rank0.toml"] = case(
        "scalar_mul by a [1] scalar and by a rank-0 scalar, on either side",
        HEAD[0] + flow("a, s, t", "a s scalar_mul r = s a scalar_mul q = a t scalar_mul u = "
                       "t a scalar_mul v =", "r, q, u, v"), {"a": a, "s": "1:-1", "t": str(MIN)})
    out["ops/scalar_mul/both_single.toml"] = case(
        "scalar_mul of two singles: [1] with rank-0 gives [1], rank-0 with rank-0 stays rank-0",
        HEAD[0] + flow("s, t", "s t scalar_mul r = t s scalar_mul q = t t scalar_mul u = "
                       "s s scalar_mul v =", "r, q, u, v"), {"s": f"1:{MAX}", "t": str(MIN)})
    for name, x, y, why in [("equal_shapes", "2:3,4", "2:5,6", "two equal non-single shapes"),
                            ("one_by_one", "1x1:3", "2x2:1,2,3,4", "a [1,1] (not a single)")]:
        out[f"ops/scalar_mul/{name}_refused.toml"] = case(
            f"scalar_mul of {why} is refused on every target (SHAPE_MISMATCH)",
            HEAD[0] + flow("a, b", "a b scalar_mul r ="), {"a": x, "b": y}, **BY_WORKER)
    return out


def compare_logic_edges() -> dict[str, str]:
    """Comparisons and logic with [1] and rank-0 operands on the left and the right."""
    out = {}
    a = tensor((2, 3), [MIN, MAX, 0, -1, 1, MIN + 1])
    for op in ["gt", "lt", "eq", "ge", "le", "ne", "and", "or", "xor"]:
        body, ret = _outputs([(f"s a {op}", "sl"), (f"a s {op}", "sr"), (f"t a {op}", "tl"),
                              (f"a t {op}", "tr"), (f"u a {op}", "ul"), (f"a u {op}", "ur")])
        out[f"ops/{op}/single_sides_extremes.toml"] = case(
            f"{op} of [2,3] int32 extremes with a [1] INT32_MIN, a rank-0 INT32_MAX and a [1] "
            "0, each on the left and on the right", HEAD[0] + flow("a, s, t, u", body, ret),
            {"a": a, "s": f"1:{MIN}", "t": str(MAX), "u": "1:0"})
    return out


def unary_edges() -> dict[str, str]:
    """relu and not at INT32_MIN, rank 4, [1] and rank-0."""
    out = {}
    for op in ("relu", "not"):
        out[f"ops/{op}/min.toml"] = case(
            f"{op} at INT32_MIN and its neighbours, rank 4, [1] and rank-0", HEAD[0] + flow(
                "a, s, z", f"a {op} r = s {op} q = z {op} t =", "r, q, t"),
            {"a": tensor((2, 1, 1, 3), [MIN, MIN + 1, -1, 0, 1, MAX]), "s": f"1:{MIN}",
             "z": str(MIN)})
    return out


def envelope_edges() -> dict[str, str]:
    """int8 envelopes at their ends and past them, entry counts at 16 and 17, ranks."""
    out = {}
    i8 = {0: int8_quant(0, -128, 127), 1: int8_quant(1, -12, 12), 2: int8_quant(2, -1, 1)}
    out["envelopes/int8_one_element.toml"] = case(
        "int8 tensors of rank 2 with one element ([1,1])", HEAD["int8"] + flow(
            "a, b", "a b add r = a b mul s = a b gt t =", "r, s, t"),
        {"a": "1x1:-1", "b": "1x1:1"})
    out["envelopes/int8_ends_q0.toml"] = case(
        "int8 envelope (quantmin -128, quantmax 127, quantres 0): inputs at -128 and 127 and "
        "outputs exactly at both ends", i8[0] + flow(
            "a, b", "a b add r = a b sub s = a relu t = a not u = a b lt v =", "r, s, t, u, v"),
        {"a": tensor((2, 3), [-128, 127, 100, -100, -1, 0]),
         "b": tensor((2, 3), [0, 0, 27, -28, 127, -127])})
    out["envelopes/int8_ends_q1.toml"] = case(
        "int8 envelope at quantres 1 (quant range -12..12): -128 and 127 still travel",
        i8[1] + flow("a, b", "a b mul r = a b div s = a b ge t =", "r, s, t"),
        {"a": tensor((2, 2), [-64, 127, -128, 63]), "b": tensor((2, 2), [2, 1, 1, -2])})
    out["envelopes/int8_activations_q2.toml"] = case(
        "int8 envelope at quantres 2 (quant range -1..1): sigmoid, tanh and softmax of -128 "
        "and 127", i8[2] + flow("a", "a sigmoid r = a tanh s = a softmax t =", "r, s, t"),
        {"a": tensor((2, 3), [-128, 127, 0, -1, 1, -128])})
    out["envelopes/int8_reductions.toml"] = case(
        "int8 envelope: reductions whose results stay inside -128..127", i8[0] + flow(
            "a", "a tensor_mean r = a tensor_max s = a {axis: 1} tensor_min t = "
            "a {axis: 0} tensor_sum u =", "r, s, t, u"),
        {"a": tensor((2, 2), [-128, 127, 63, -64])})
    out["envelopes/int8_rank4.toml"] = case(
        "int8 envelope with rank-4 inputs", i8[0] + flow(
            "a, b", "a b add r = a transpose t =", "r, t"),
        {"a": tensor((1, 2, 1, 2), [-128, 127, 0, -1]), "b": tensor((1, 2, 1, 2), [0, 0, 1, 1])})
    for name, script, inputs, why in [
            ("add_over", "a b add r =", {"a": "2:127,1", "b": "2:1,1"}, "127 + 1"),
            ("sub_under", "a b sub r =", {"a": "2:-128,0", "b": "2:1,0"}, "-128 - 1"),
            ("div_min", "a b div r =", {"a": "2:-128,4", "b": "2:-1,2"}, "-128 / -1 = 128"),
            ("sum_over", "a tensor_sum r =", {"a": "2:127,1"}, "a sum of 128")]:
        out[f"envelopes/int8_{name}_refused.toml"] = case(
            f"int8 envelope: an output of {why} does not fit int8, the worker refuses "
            "(EXEC_FAILED); the reference runs it", i8[0] + flow(
                ", ".join(inputs), script), inputs, **OUT_OF_ENVELOPE)
    out["envelopes/int8_input_refused.toml"] = case(
        "int8 envelope: an input of 128 cannot travel, refused before sending",
        i8[0] + flow("a", "a a add r ="), {"a": "2:128,0"}, **NOT_ROUTABLE)
    out["envelopes/int32_past_int8.toml"] = case(
        "quantmax 128 at quantres 0 needs 9 bits: the envelope is int32 and 128 travels",
        quant(0, -128, 128) + flow("a", "a a add r ="), {"a": "2:128,-128"})
    n = 16
    names = [f"a{i}" for i in range(n)]
    chain = "a0 a1 add s1 = " + " ".join(f"s{i} a{i + 1} add s{i + 1} =" for i in range(1, n - 1))
    ins = {f"a{i}": tensor((2,), [MIN + i, MAX - i]) if i % 2 == 0 else str(i * 1000)
           for i in range(n)}
    out["envelopes/params_16.toml"] = case(
        "a flow of 16 parameters: a job's largest input table", HEAD[0] + flow(
            ", ".join(names), chain, f"s{n - 1}"), ins)
    out["envelopes/params_17_refused.toml"] = case(
        "a flow of 17 parameters does not fit one job: refused before sending",
        HEAD[0] + flow(", ".join(names + ["a16"]), chain + f" s{n - 1} a16 add r =", "r"),
        {**ins, "a16": "1:7"}, **OVER_LIMIT)
    kinds = ["add", "sub", "mul", "div", "gt", "lt", "eq", "ge", "le", "ne", "and", "or",
             "xor", "matmul", "relu", "not", "transpose"]
    lines = [(f"a {'b ' if k not in ('relu', 'not', 'transpose') else ''}{k}", f"r{i}")
             for i, k in enumerate(kinds)]
    for count in (16, 17):
        body, ret = _outputs(lines[:count])
        out[f"envelopes/outputs_{count}" + ("_refused" if count > 16 else "") + ".toml"] = case(
            f"a flow returning {count} values" + (
                ": a job's largest output table" if count == 16
                else " does not fit one job: refused before sending"),
            HEAD[0] + flow("a, b", body, ret),
            {"a": tensor((2, 2), [MIN, MAX, -1, 0]), "b": tensor((2, 2), [MIN, 1, 0, -1])},
            **({} if count == 16 else OVER_LIMIT))
    hoisted = ["[[1,2],[3,4]]", "70000", "-40000", "[5,6]"]
    for extra in (3, 4):
        params = [f"a{i}" for i in range(13)]
        body = "a0 a1 add s1 = " + " ".join(f"s{i} a{i + 1} add s{i + 1} =" for i in range(1, 12))
        last = "s12"
        for k, lit in enumerate(hoisted[:extra]):
            body += f" {last} {lit} add h{k} ="
            last = f"h{k}"
        out[f"envelopes/params_hoisted_{13 + extra}" + ("_refused" if extra > 3 else "")
            + ".toml"] = case(
            f"13 parameters and {extra} hoisted constants (tensor literals, scalars outside "
            f"int16): {13 + extra} input tensors" + (
                ", exactly a job's largest input table" if extra == 3
                else ", one too many: refused before sending"), HEAD[0] + flow(
                ", ".join(params), body, last),
            {p: tensor((2, 2), [i, -i, MIN + i, MAX - i]) for i, p in enumerate(params)},
            **({} if extra == 3 else OVER_LIMIT))
    out["envelopes/rank4_inputs.toml"] = case(
        "rank-4 inputs travel with their 4 dims (including [1,1,1,1], which is not a single)",
        HEAD[0] + flow("a, b, c", "a b add r = a transpose t = c c mul u =", "r, t, u, c"),
        {"a": tensor((2, 1, 2, 3), values(_rng("rank4"), 12)),
         "b": tensor((2, 1, 2, 3), values(_rng("rank4b"), 12, EDGES[::-1])),
         "c": tensor((1, 1, 1, 1), [MIN])})
    out["envelopes/one_vs_rank0.toml"] = case(
        "a [1] input and a rank-0 input both travel as [1]; results and returned parameters "
        "keep [1] or rank-0 as the reference has them (R5)", HEAD[0] + flow(
            "a, b", "a b add r = b a add q = b b add s = a a add t =", "r, q, s, t, a, b"),
        {"a": f"1:{MIN}", "b": "-1"})
    out["envelopes/negative_consts.toml"] = case(
        "int16 literals at the ends of a v2 CONST immediate and just inside: -1, -3, -32768 "
        "and 32767 travel as CONST (imm 0xffff, 0xfffd, 0x8000, 0x7fff, sign-extended)",
        HEAD[0] + flow("a", "a -3 add r = a -32768 add s = a 32767 add t = a -1 mul u =",
                       "r, s, t, u"),
        {"a": tensor((2, 2), [1, -2, 3, -4])})
    return out


def runtime_refusal_edges() -> dict[str, str]:
    """Operand shapes and axes that reach the worker and that its kernel must refuse with
    SHAPE_MISMATCH before anything else fails: R4-incompatible shapes numpy would broadcast,
    an axis equal to the rank (W11), ranks an op cannot take, a kernel wider than the
    padded input (each also a place where a sloppier worker fails with another code)."""
    rng = _rng("runtime_refusals")
    out = {}
    for op, a, b, why in [("add", (2, 3), (3,), "[2,3] and [3] (numpy would broadcast them)"),
                          ("mul", (2, 1), (1, 2), "[2,1] and [1,2] (numpy would broadcast "
                           "them to [2,2])")]:
        out[f"ops/{op}/incompatible_{'x'.join(map(str, a))}_"
            f"{'x'.join(map(str, b))}_refused.toml"] = case(
            f"{op} of {why} is refused on every target (R4: SHAPE_MISMATCH)",
            HEAD[0] + flow("a, b", f"a b {op} r ="),
            {"a": _pick(rng, a), "b": _pick(rng, b)}, **BY_WORKER)
    for op in ("tensor_sum", "tensor_mean", "softmax"):
        out[f"ops/{op}/axis_2_rank2_refused.toml"] = case(
            f"{op} along axis 2 of a rank-2 [2,3] tensor (an axis equal to the rank) is refused "
            "on every target (W11: SHAPE_MISMATCH)", HEAD[0] + flow("a", f"a {{axis: 2}} {op} r ="),
            {"a": _pick(rng, (2, 3))}, **BY_WORKER)
    out["ops/transpose/rank1_refused.toml"] = case(
        "transpose of a rank-1 [3] tensor is refused on every target (ranks 2 to "
        f"{MAX_RANK}: SHAPE_MISMATCH)", HEAD[0] + flow("a", "a transpose r ="),
        {"a": _pick(rng, (3,))},
        **BY_WORKER)
    for name, a, b in [("left", (3,), (3, 2)), ("right", (2, 3), (3,))]:
        out[f"ops/matmul/rank1_{name}_refused.toml"] = case(
            f"matmul of {list(a)} and {list(b)} (a rank-1 operand on the {name}) is refused on "
            "every target (both must be rank 2: SHAPE_MISMATCH)",
            HEAD[0] + flow("a, b", "a b matmul r ="), {"a": _pick(rng, a), "b": _pick(rng, b)},
            **BY_WORKER)
    small = list(range(-9, 10))
    for name, x, k, why in [("input_rank1", (4,), (1, 1), "a rank-1 [4] input"),
                            ("input_rank4", (1, 1, 2, 2), (1, 1), "a rank-4 [1,1,2,2] input"),
                            ("kernel_rank1", (2, 2), (1,), "a rank-1 [1] kernel"),
                            ("kernel_rank3", (2, 2), (1, 1, 1), "a rank-3 [1,1,1] kernel"),
                            ("kernel_wider", (3, 2), (1, 3), "a [1,3] kernel wider than the "
                             "[3,2] input (its height fits)")]:
        out[f"ops/conv2d/{name}_refused.toml"] = case(
            f"conv2d with {why} is refused on every target (SHAPE_MISMATCH)",
            HEAD[0] + flow("x, k", "x k conv2d r ="),
            {"x": _pick(rng, x, small), "k": _pick(rng, k, small)}, **BY_WORKER)
    stats = {"x": (2, 3), "m": (3,), "v": (1,), "g": (1,), "b": (1,)}
    out["ops/batchnorm/mean_incompatible_refused.toml"] = case(
        "batchnorm of a [2,3] x with a [3] mean (R4 has no [3] against [2,3]) is refused on "
        "every target (SHAPE_MISMATCH)", HEAD[0] + flow(
            "x, m, v, g, b", "x m v g b batchnorm r ="),
        {k: _pick(rng, shape) for k, shape in stats.items()}, **BY_WORKER)
    return out


def unit_window_edges() -> dict[str, str]:
    """Windows of one element: conv2d with a [1,1] kernel over one channel (each output is one
    product, padding gives zeros), maxpool2d and avgpool2d of a [1,1] and a [1,1,1] input."""
    rng = _rng("unit_windows")
    out = {}
    out["ops/conv2d/kernel_1x1.toml"] = case(
        "conv2d of a one-channel [3,4] input with a [1,1] kernel (one product per output), "
        "bare, at padding 1 (a ring of zeros) and at stride 2",
        HEAD[0] + flow("x, k", "x k conv2d r = x k {padding: 1} conv2d p = "
                       "x k {stride: 2} conv2d s =", "r, p, s"),
        {"x": _pick(rng, (3, 4)), "k": "1x1:-3"})
    for op in ("maxpool2d", "avgpool2d"):
        out[f"ops/{op}/one_element.toml"] = case(
            f"{op} with kernel_size 1 of a [1,1] and a [1,1,1] input (one window of one "
            "element)", HEAD[0] + flow("a, b", f"a {{kernel_size: 1}} {op} r = "
                                       f"b {{kernel_size: 1}} {op} s =", "r, s"),
            {"a": f"1x1:{MIN}", "b": "1x1x1:-7"})
    return out


def plan_edges() -> dict[str, str]:
    """Flows whose module is mostly PARAMs: one that computes nothing and returns its only
    parameter, one whose three unused parameters still travel (its highest value is not an
    output), and a literal 0 (the one CONST an ABI-1 module can carry; v2 carries any int16)."""
    out = {}
    out["envelopes/passthrough_one.toml"] = case(
        "a flow that computes nothing returns its only parameter (a module of one PARAM and "
        "RETURN)", HEAD[0] + flow("a", "", "a"), {"a": tensor((2, 3), [MIN, MAX, 0, -1, 1, 7])})
    out["envelopes/passthrough_unused_params.toml"] = case(
        "a flow of four parameters that returns the first: the other three travel unused, "
        "so the module's highest value is not an output", HEAD[0] + flow("a, b, c, d", "", "a"),
        {"a": tensor((2, 2), [MIN, MAX, -1, 0]), "b": "1:3", "c": tensor((3,), [4, 5, 6]),
         "d": str(MIN)})
    out["envelopes/literal_zero.toml"] = case(
        "a literal 0 as the right operand of add, gt and div (a CONST 0 in ABI 1 and 2; x/0 = 0)",
        HEAD[0] + flow("a", "a 0 add r = a 0 gt s = a 0 div t =", "r, s, t"),
        {"a": tensor((2, 3), [MIN, MAX, 0, -1, 1, 7])})
    return out


def wide_edges() -> dict[str, str]:
    """Small jobs at the far ends of their parameters: conv2d at stride and padding 255 with a
    large kernel (three windows per axis, one over the input), and layernorm rows whose exact
    results leave int32 on the wide (Python integer) path and wrap."""
    rng = _rng("wide")
    out = {}
    small = list(range(-9, 10))
    out["ops/conv2d/s255_p255_k16x16.toml"] = case(
        "conv2d of a [16,16] input with a [16,16] kernel at stride 255, padding 255: a [1,3,3] "
        "output whose centre window covers the input exactly, the rest only padding",
        HEAD[0] + flow("x, k", "x k {stride: 255, padding: 255} conv2d r ="),
        {"x": _pick(rng, (16, 16), small), "k": _pick(rng, (16, 16), small)})
    kernels = {"k": (1, 2, 511, 1), "j": (1, 2, 1, 511)}
    out["ops/conv2d/p255_kernel_511.toml"] = case(
        "conv2d at padding 255 of a [2,1,1] input (two channels of one pixel) with a [1,2,511,1] "
        "and a [1,2,1,511] kernel, each as tall or as wide as the padded input: [1,1,511] and "
        "[1,511,1] outputs, one window over the pixels, the rest only padding",
        HEAD[0] + flow("x, k, j", "x k {padding: 255} conv2d r = x j {padding: 255} conv2d s =",
                       "r, s"),
        {"x": tensor((2, 1, 1), [MAX, MIN]),
         **{n: _pick(rng, shape, small) for n, shape in kernels.items()}})
    n = 16384
    out[f"ops/matmul/long_inner_{n}.toml"] = case(
        f"matmul of a [1,{n}] row by a [{n},1] column (a {n}-term dot product of 46341 and "
        f"-46341, which wraps) and of a [{n},1] column by a [1,1] matrix: small products with "
        "one long dim", HEAD[0] + f"in::a = 1 {n} 46341 full;\nin::b = {n} 1 -46341 full;\n"
        f"in::c = {n} 1 7 full;\n" + flow("a, b, c, s", "a b matmul r = c s matmul t =", "r, t"),
        {"s": f"1x1:{MIN + 1}"})
    # Past one limb chunk of the exact BLAS path (bark_vm's LIMB_CHUNK, 2^20 terms): a
    # second chunk of three distinct terms, each a wrapping product.
    k = LIMB_CHUNK
    out["ops/matmul/inner_past_limb_chunk.toml"] = case(
        f"matmul of a [1,{k + 3}] row by a [{k + 3},1] column: an inner dimension past 2^20, "
        "so an executor that sums in chunks of 2^20 terms needs a second chunk, here of three "
        "distinct wrapping terms", HEAD[0] + f"in::a = 1 {k} 46341 full;\n"
        f"in::b = {k} 1 -46341 full;\n" + flow(
            "a, b, u, v", "a u {axis: 1} concat row = b v {axis: 0} concat column = "
            "row column matmul r ="),
        {"u": tensor((1, 3), [MAX, MIN, 12345]), "v": tensor((3, 1), [MIN + 1, -3, MAX])})
    # A conv2d window is one product on the limbs whatever its shape: 2^21 + 1023 terms of -1
    # by -1, whose low limbs' products (65535^2, odd) sum past 2^53 in one float64 product,
    # to an odd total float64 cannot hold.
    k = 2 * LIMB_CHUNK + 1023
    out["ops/conv2d/inner_past_limb_chunk.toml"] = case(
        f"conv2d of a [1,{k + 3}] row by a [1,{k + 3}] kernel, mostly -1 by -1: one window "
        "whose 16-bit limbs' products sum past 2^53, so an executor on float64 limbs needs "
        "chunks of at most 2^21 terms, the last here of three distinct wrapping terms",
        HEAD[0] + f"in::a = 1 {k} -1 full;\nin::b = 1 {k} -1 full;\n" + flow(
            "a, b, u, v", "a u {axis: 1} concat row = b v {axis: 1} concat kernel = "
            "row kernel {stride: 1, padding: 0} conv2d r ="),
        {"u": tensor((1, 3), [MAX, MIN, 12345]), "v": tensor((1, 3), [MIN + 1, -3, MAX])})
    # Row [v, 0, ..., 0] of N = 8: c = [7v, -v, ...], out_0 = rdiv(7v·M·8·2^10, R) ≈ M·√7, which
    # leaves int32 at q 9 and wraps; v = 10^6 puts max|c|·M·N·2^10 past 2^60 (the wide path).
    v = 10 ** 6
    rows = [[v] + [0] * 7, [-v] + [0] * 7, [v, -v] + [0] * 6, [0, 3] + [0] * 6]
    out["ops/layernorm/wide_wraps_q9.toml"] = case(
        "layernorm at quantres 9 of 8-element rows on the wide path (max|c|·M·N·2^10 past "
        "2^60) whose results leave int32 (about ±10^9·√7) and wrap", quant(9) + flow(
            "a", "a layernorm r ="), {"a": tensor((len(rows), 8), sum(rows, []))})
    # Two-element rows whose c = ±2^31: max|c|²·N = 2^63 (past int64, the wide path), and
    # Σc² = 2^63 is one past int64 too; max|c|·M·N·2^10 stays below 2^60 at quantres 5.
    pairs = [[MAX, -1], [-1, MAX], [MIN, 0], [0, MIN], [MAX, MAX - 1]]
    out["ops/layernorm/pairs_sum_2_63_q5.toml"] = case(
        "layernorm at quantres 5 of two-element rows [MAX, -1], [MIN, 0] and their mirrors: "
        "c = ±2^31, so Σc² = max|c|²·N = 2^63, one past int64", quant(5) + flow(
            "a", "a layernorm r ="), {"a": tensor((len(pairs), 2), sum(pairs, []))})
    return out


EDGE_FAMILIES = (division_edges, conv2d_edges, pool_edges, batchnorm_edges, layernorm_edges,
                 reduce_edges, activation_edges, softmax_edges, shape_edges, matmul_edges,
                 scalar_mul_edges, compare_logic_edges, unary_edges, envelope_edges,
                 runtime_refusal_edges, unit_window_edges, plan_edges, wide_edges)


def edge_cases() -> dict[str, str]:
    """Every edge family's cases (docs/ops.md's integer rules at their branch points)."""
    out: dict[str, str] = {}
    for family in EDGE_FAMILIES:
        for rel, text in family().items():
            assert rel not in out, rel
            out[rel] = text
    return out
