"""MNPK requests for tests: one built here (an outer product, whose answer is far larger
than its request), and the files `mnpk-gen` writes for examples/matmul_relu.mnd and for
a few requests a worker must refuse or fail."""
from pathlib import Path

from bark_vm.wire.envelope import decode_request, encode_request
from maned.lowering.envelopes import job_quant
from maned.lowering.lower import lower
from maned.pipeline.intake import compile_script

from support.processes import MNPK_GEN, run
from support.scripts import EXAMPLES, H0, preamble

# mnpk-gen's mutations of the golden request, and the CDP error and HTTP status each gets
MUTATION_CODES = {"bad_magic": ("BAD_ENVELOPE", 400), "bad_truncated": ("BAD_ENVELOPE", 400),
                  "bad_shape": ("SHAPE_MISMATCH", 422),
                  "unsupported_op": ("UNSUPPORTED_OP", 422)}


def outer_product_request(n: int) -> bytes:
    """[n,1] x [1,n]: a request of 8n bytes whose answer has n^2 elements."""
    checked = compile_script(H0 + "calc::lambda_flow g(a, b) {\n    a b matmul r =\n"
                             "} return r;\n")
    col = tuple((7 * i) % 2001 - 1000 for i in range(n))
    return encode_request(job_quant(checked.program.quant), lower(checked.graphs["g"], 2).ir,
                          [((n, 1), col), ((1, n), col)])


def mnpk_files(tmp: Path) -> dict[str, bytes]:
    """mnpk-gen's outputs, written under `tmp`: the v1 golden request ("matmul_relu") and
    its MNRS ("golden_mnrs"), the four mutations, the v2 request ("v2"), an int8 request
    that overflows ("overflow") and a request of over 4 KiB ("big")."""
    def gen(*args):
        run(MNPK_GEN, *args, check=True)
    out = {}
    gen(EXAMPLES / "matmul_relu.mnd", "--out", tmp / "v1")
    for name in ("matmul_relu", *MUTATION_CODES):
        out[name] = (tmp / "v1" / f"{name}.mnpk").read_bytes()
    out["golden_mnrs"] = (tmp / "v1" / "matmul_relu.mnrs").read_bytes()
    gen(EXAMPLES / "matmul_relu.mnd", "--out", tmp / "v2", "--abi", "2")
    out["v2"] = (tmp / "v2" / "matmul_relu.mnpk").read_bytes()
    # int8 envelope (quant -1..1 at quantres 0): generated at x = [1, 1], then the data
    # bytes (the request's last two) become 100, so x + x = 200 overflows int8 on the worker.
    (tmp / "ovf.mnd").write_text(preamble(1, -1, 0) + "calc::lambda_flow ovf(x) {\n"
                                 "    x x elemwise_add y =\n} return y;\n")
    gen(tmp / "ovf.mnd", "--out", tmp / "ovf", "--in", "x=2:1,1")
    ovf = bytearray((tmp / "ovf" / "ovf.mnpk").read_bytes())
    assert ovf[17] == 1  # dtype int8
    ovf[-2:] = bytes((100, 100))
    out["overflow"] = bytes(ovf)
    # A 4 KiB request (a 32x32 input swapped into a request generated at 1x1).
    (tmp / "big.mnd").write_text(H0 + "calc::lambda_flow big(x) {\n    x relu r =\n"
                                 "} return r;\n")
    gen(tmp / "big.mnd", "--out", tmp / "big", "--in", "x=1x1:3")
    small = decode_request((tmp / "big" / "big.mnpk").read_bytes())
    data = tuple((i * 7) % 19 - 9 for i in range(32 * 32))
    out["big"] = encode_request(small.quant, small.ir, [((32, 32), data)])
    assert 4096 < len(out["big"]) < 64 * 1024
    return out
