"""Writes `cases/malformed/` (bytes that do not decode: wire-golden §6.1 steps 2-3) and
`cases/invalid/` (bytes that decode but break a rule: steps 4-7): one request case per
malformation of `malformations.MALFORMATIONS`, on a small flow holding the instruction its rule
is about; and `cases/encodings/`: one per equivalent encoding of `malformations.EQUIVALENTS`
(bytes the compiler never makes, which the worker must read as it reads the compiler's). A
developer tool, run by hand after a change to the tables
(`python -m maned_conformance.generate_requests`); its output is committed data."""
import json
from pathlib import Path

from .cases import CASES
from .malformations import EQUIVALENTS, MALFORMATIONS, Equivalent, Malformation

HEAD = "mnd::quantmax=1000;\nmnd::quantmin=-1000;\nmnd::quantres=0;\n"
SQUARE = "2x2:1,-2,3,-4"

# The base flows: name -> (params, body, returns, inputs).
FLOWS = {
    "layer": ("x, w, bias", "x w matmul product =\n    product bias elemwise_add shifted =\n"
              "    shifted relu result =", "result",
              {"x": "2x2:1,2,3,4", "w": "2x2:5,6,7,8", "bias": "2x2:0,0,-100,0"}),
    "chain": ("a, b", "a relu c =\n    c b add r =", "r", {"a": SQUARE, "b": "2x2:5,6,7,8"}),
    "relu": ("a", "a relu r =", "r", {"a": SQUARE}),
    "const": ("a", "a 0 gt r =", "r", {"a": SQUARE}),
    "two_outputs": ("a", "a relu r =\n    a tanh s =", "r, s", {"a": SQUARE}),
    "reshape": ("a", "a {rows: 3, cols: 2} reshape r =", "r", {"a": "2x3:1,2,3,4,5,6"}),
    "split": ("a", "a {axis: 1, sections: 2, index: 1} split r =", "r",
              {"a": "2x6:1,2,3,4,5,6,7,8,9,10,11,12"}),
    "batchnorm": ("x, m, v, g, b", "x m v g b batchnorm r =", "r",
                  {"x": "2x3:-6,-4,-1,5,2,-2", "m": "1:1", "v": "1:4", "g": "1:2", "b": "1:-1"}),
    "conv2d": ("x, k", "x k {stride: 1, padding: 1} conv2d r =", "r",
               {"x": "3x3:1,2,3,4,5,6,7,8,9", "k": "2x2:1,0,0,-1"}),
    "maxpool": ("x", "x {kernel_size: 2, stride: 1} maxpool2d r =", "r",
                {"x": "3x3:1,-2,3,-4,5,-6,7,-8,9"}),
    "avgpool": ("x", "x {kernel_size: 2} avgpool2d r =", "r",
                {"x": "4x4:1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16"}),
    "softmax": ("a", "a {axis: 0} softmax r =", "r", {"a": "2x3:1,2,3,-1,-2,-3"}),
    "tensor_sum": ("a", "a {axis: 1} tensor_sum r =", "r", {"a": "2x3:1,2,3,-1,-2,-3"}),
    "concat": ("a, b", "a b {axis: 0} concat r =", "r", {"a": SQUARE, "b": "1x2:7,8"}),
    "sigmoid": ("a", "a sigmoid r =", "r", {"a": SQUARE}),
    "conv2d_wide": ("x, k", "x k {stride: 2, padding: 2} conv2d r =", "r",
                    {"x": "1x1:3", "k": "4x4:1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,-1"}),
}

# The flow each malformation breaks (default `layer`, the canonical fixture of §2).
BASE = {
    **dict.fromkeys(("reserved_quantize", "reserved_dequantize", "flags_bit1", "flags_bit3",
                     "flags_bit4", "flags_bit7", "flag_bit0_other_op", "values_over_rf_slots",
                     "v1_values_257"), "relu"),
    **dict.fromkeys(("opcode_unknown", "opcode_ff", "dst_gap", "param_after_compute",
                     "read_later_value", "read_self", "param_unused_imm", "param_level",
                     "sync_dst", "sync_src", "sync_imm", "return_unused_src", "return_level",
                     "binary_unused_imm", "binary_unused_src2", "unary_unused_src1",
                     "unary_unused_imm", "return_not_last", "last_not_return", "v1_return_level",
                     "return_other_value", "nop_present", "input_present"), "chain"),
    **dict.fromkeys(("const_unused_src", "const_level", "v1_const_nonzero",
                     "quant_dtype_0_no_tensors", "no_tensors_reserved_op"), "const"),
    **dict.fromkeys(("outputs_0", "outputs_17", "output_undefined"), "two_outputs"),
    **dict.fromkeys(("v1_module_reshape", "reshape_no_dims", "reshape_dims_gap",
                     "reshape_dim_0", "reshape_size_mismatch", "reshape_imm_after_absent",
                     "reshape_last_dim_0"), "reshape"),
    **dict.fromkeys(("v1_module_split", "split_unused_imm", "split_axis_4", "split_sections_0",
                     "split_index_over", "split_uneven", "split_axis_past_rank"), "split"),
    **dict.fromkeys(("v1_module_batchnorm", "batchnorm_no_flag"), "batchnorm"),
    **dict.fromkeys(("conv2d_stride_0", "v1_conv2d_imm_high"), "conv2d"),
    **dict.fromkeys(("pool_kernel_0", "v1_pool_imm_high", "v1_pool_kernel_over_input"),
                    "maxpool"),
    "v1_conv2d_kernel_over_padded_input": "conv2d_wide",
    **dict.fromkeys(("opcode_unknown_after_quantize", "v1_opcode_unknown_after_quantize"),
                    "chain"),
    **dict.fromkeys(("pool_stride_0", "pool_stride_0_kernel_128"), "avgpool"),
    "softmax_axis_5": "softmax",
    "reduction_axis_5": "tensor_sum", "concat_axis_5": "concat", "concat_imm_0": "concat",
    "quantres_10_table": "sigmoid",
}

# The module's ABI where it is not the worker's own: v1 rules run on every worker as v1
# modules; the v1 modules holding a v2-only op are lowered at ABI 2 first.
ABI = {**dict.fromkeys(("v1_const_nonzero", "v1_conv2d_imm_high", "v1_pool_imm_high",
                        "v1_values_257", "v1_opcode_unknown_after_quantize",
                        "v1_return_level", "v1_pool_kernel_over_input",
                        "v1_conv2d_kernel_over_padded_input"), 1),
       **dict.fromkeys(("v1_module_reshape", "v1_module_split", "v1_module_batchnorm"), 2)}


FOLDERS = ("malformed", "invalid", "encodings")  # what folder() gives


def folder(m: Malformation | Equivalent) -> str:
    """malformed: the bytes do not decode (steps 2-3); invalid: they break a rule; encodings:
    they break none."""
    if isinstance(m, Equivalent):
        return "encodings"
    return "malformed" if m.step <= 3 else "invalid"


def script(flow: str) -> str:
    params, body, returns, _ = FLOWS[flow]
    return f"{HEAD}calc::lambda_flow f({params}) {{\n    {body}\n}} return {returns};\n"


def _string(text: str) -> str:
    """A TOML basic string (a JSON string reads alike; § and × kept as they are)."""
    return json.dumps(text, ensure_ascii=False)


def _table(pairs: dict) -> str:
    """A TOML inline table: { key = "value", ... }."""
    return "{ " + ", ".join(f"{k} = {_string(v)}" for k, v in pairs.items()) + " }"


def case_text(name: str, m: Malformation | Equivalent) -> str:
    """One case file's TOML."""
    flow = BASE.get(name, "layer")
    lines = [f"about = {_string(m.rule)}", f'script = """\n{script(flow)}"""',
             f"inputs = {_table(FLOWS[flow][3])}", f"mutation = {_string(name)}"]
    if name in ABI:
        lines.append(f"abi = {ABI[name]}")
    lines.append('targets = ["vm", "hardware"]')
    if isinstance(m, Malformation):
        refused = {"by": "worker", "cdp": m.cdp} | (
            {"cdp_abi1": m.cdp_abi1} if m.cdp_abi1 else {})
        lines.append(f"refused = {_table(refused)}")
    return "\n".join(lines) + "\n"


def write(root: Path = CASES) -> int:
    """Rewrite the three folders; the number of files written."""
    for sub in FOLDERS:
        (root / sub).mkdir(parents=True, exist_ok=True)
        for old in (root / sub).glob("*.toml"):
            old.unlink()
    made = {**MALFORMATIONS, **EQUIVALENTS}
    for name, m in made.items():
        (root / folder(m) / f"{name}.toml").write_text(case_text(name, m), encoding="utf-8")
    return len(made)


if __name__ == "__main__":
    print(f"{write()} request cases written to {CASES}/malformed, /invalid and /encodings")
