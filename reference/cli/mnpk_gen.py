"""mnpk-gen: write a flow's golden wire fixtures (spec/wire-golden.md §6.2 [W16], wire.md §2.4).

    mnpk-gen <file.mnd> --out DIR [--flow NAME] [--in name=VALUE]... [--abi 1|2] [--mutate M]

Writes <stem>.mnpk (the request), <stem>.mnrs (the expected result, from the local
interpreter), <stem>.json (informational) and the four mutations bad_magic, bad_truncated,
bad_shape and unsupported_op (.mnpk); with --mutate only that one file.
"""
import hashlib
import json
import os
import sys
from dataclasses import dataclass

from bark_vm.wire.constants import ABIS

from ..diagnostics import Diagnostic, MnError
from ..diagnostics.ledger import exit_code
from ..diagnostics.printer import run_line, sort_diagnostics
from ..dispatch.plan import helpers
from ..io.cli_values import parse_value
from ..io.files import open_for_writing, overwrites
from ..io.inputs import load_inputs
from ..io.own_files import read_files
from ..lang import ast
from ..lowering.fixtures import DEFAULTS, MUTATIONS, build_fixture, mutate
from ..pipeline.intake import compile_script, input_values, script_source
from ..tensor import Tensor
from .args import ArgReader, ToolOptions, shown_argument, usage_error
from .version import version_text


USAGE = """usage: mnpk-gen <file.mnd> --out DIR [--flow NAME] [--in name=VALUE]... [--abi 1|2]
                [--mutate bad_magic|bad_truncated|bad_shape|unsupported_op]
       mnpk-gen --version | --help

Compiles one flow (the first top-level flow unless --flow) and writes its wire fixtures:
<stem>.mnpk (the MNPK request), <stem>.mnrs (the expected MNRS, from the local
interpreter), <stem>.json (informational), and the mutations bad_magic.mnpk,
bad_truncated.mnpk, bad_shape.mnpk and unsupported_op.mnpk.

  --out DIR          folder to write into (created if missing)
  --flow NAME        the flow to compile
  --in name=VALUE    a flow parameter: 5, 3:1,2,3, 2x2:1,2,3,4, AxBxC:... (raw integers).
                     A parameter without --in takes the script's in:: value of that name;
                     parameters named x, w and bias with no other value default to the
                     canonical matmul_relu inputs x=2x2:1,2,3,4, w=2x2:5,6,7,8 and
                     bias=2x2:0,0,-100,0
  --abi 1|2          IR ABI (default 1, which gives the documented 97/205/40-byte fixture)
  --mutate M         write only mutation M
  --version          print the version and a build line
  --help             print this help
"""


@dataclass
class GenOptions(ToolOptions):
    out: str | None = None
    abi: int = 1
    mutate: str | None = None


def parse_args(argv: list[str]) -> GenOptions:
    opts = GenOptions()
    reader = ArgReader(argv)
    value = reader.value
    for arg, name in reader:
        if reader.common(opts, name):
            continue
        if name == "--out":
            opts.out = value()
        elif name == "--abi":
            text = value()
            if text not in map(str, ABIS):
                raise usage_error(f"--abi takes {' or '.join(map(str, ABIS))}, not '{text}'")
            opts.abi = int(text)
        elif name == "--mutate":
            text = value()
            if text not in MUTATIONS:
                raise usage_error(f"--mutate takes one of {', '.join(MUTATIONS)}, not '{text}'")
            opts.mutate = text
        elif arg.startswith("-") and arg != "-":
            raise usage_error(f"unknown argument: {shown_argument(arg)}")
        elif opts.script is None:
            opts.script = arg
        else:
            raise usage_error(f"unknown argument: {shown_argument(arg)}")
    if opts.show is None:
        if opts.script is None:
            raise usage_error("no script given (usage: mnpk-gen <file.mnd> --out DIR; see --help)")
        if opts.out is None:
            raise usage_error("--out DIR is required")
    return opts


# --- the command ------------------------------------------------------------------------------
def main(argv: list[str] | None = None, out=None, err=None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    codes: list[str] = []
    try:
        _run(sys.argv[1:] if argv is None else argv, out, err)
    except MnError as e:
        for d in sort_diagnostics(e.diagnostics):
            codes.append(d.code)
            err.write(run_line(d) + "\n")
    return exit_code(codes)


def _error(code: str, msg: str) -> MnError:
    return MnError(Diagnostic(code, msg, stage="run"))


def _pick_flow(program: ast.Program, name: str | None) -> ast.FlowDef:
    flows = {f.name: f for f in program.flows}
    if name is not None:
        if name not in flows:
            raise usage_error(f"--flow {name}: no such flow")
        return flows[name]
    called = helpers(program)
    tops = [f for f in program.flows if f.name not in called]
    if not tops:
        raise usage_error("the script has no top-level flow")
    return tops[0]


def _run(argv: list[str], out, err) -> None:
    opts = parse_args(argv)
    if opts.show:
        out.write(USAGE if opts.show == "help" else version_text("mnpk-gen"))
        return
    text, script_dir = script_source(opts.script)
    checked = compile_script(text)
    program = checked.program
    flow = _pick_flow(program, opts.flow)
    graph = checked.graphs[flow.name]
    overrides = input_values(program, opts.inputs)
    for name in overrides:
        if name not in graph.params and name not in {d.name for d in program.inputs}:
            raise usage_error(f"--in {name}: flow '{flow.name}' has no parameter '{name}' and the "
                         f"script has no in::{name}")
    values = load_inputs(program, overrides, script_dir).values
    inputs = []
    for p in graph.params:
        if p in values:
            inputs.append(values[p])
        elif p in DEFAULTS:
            inputs.append(parse_value(DEFAULTS[p]))
        else:
            raise usage_error(f"flow '{flow.name}': parameter '{p}' has no value; pass --in {p}=VALUE")
    lowered, mnpk, mnrs, quant, local = build_fixture(program, graph, inputs, opts.abi)

    stem = os.path.splitext(os.path.basename(opts.script))[0]
    files: dict[str, bytes] = {}
    notes: list[str] = []
    wanted = (opts.mutate,) if opts.mutate else MUTATIONS
    if not opts.mutate:
        files[f"{stem}.mnpk"] = mnpk
        files[f"{stem}.mnrs"] = mnrs
    for m in wanted:
        if f"{m}.mnpk" in files:  # the script's own fixture would be lost under the mutation's
            raise usage_error(f"the script's name '{stem}' is mutation {m}'s: rename the "
                              "script, or pass --mutate")
        try:
            files[f"{m}.mnpk"] = mutate(mnpk, m, lowered.module)
        except ValueError as e:
            if opts.mutate:
                raise _error("EPLAN", f"cannot derive {m}: {e}") from None
            notes.append(f"{m}.mnpk not written: {e}")
    if not opts.mutate:
        files[f"{stem}.json"] = _describe(flow.name, opts.abi, quant, graph, inputs, lowered,
                                          local, files)
    why = overwrites([(os.path.join(opts.out, name), f"the fixture {name}") for name in files],
                     read_files(program, opts.script, overrides, script_dir))
    if why:
        raise usage_error(f"{why}: give --out another folder")
    try:
        os.makedirs(opts.out, exist_ok=True)
        for name, data in files.items():
            with open_for_writing(os.path.join(opts.out, name)) as f:
                f.write(data)
    except (OSError, ValueError) as e:
        why = f"{name} {e}" if isinstance(e, ValueError) else e.strerror or e
        raise _error("EIO", f"cannot write to '{opts.out}': {why}") from None
    for n in notes:
        err.write(f"note: {n}\n")
    for name, data in files.items():
        out.write(f"{os.path.join(opts.out, name)} ({len(data)} bytes)\n")


def _tensor_json(t: Tensor) -> dict:
    return {"shape": list(t.shape), "data": list(t.data)}


def _describe(flow, abi, quant, graph, inputs, lowered, local, files) -> bytes:
    """The informational <stem>.json (never compared byte for byte)."""
    ir_bytes = lowered.ir
    doc = {
        "flow": flow, "abi": abi,
        "quant": {"quantres": quant.quantres, "dtype": quant.dtype, "quantmin": quant.quantmin,
                  "quantmax": quant.quantmax},
        "inputs": [{"name": n, **_tensor_json(t)} for n, t in zip(graph.params, inputs)],
        "hoisted": [_tensor_json(t) for t in lowered.hoisted],
        "outputs": [{"name": n, **_tensor_json(local[n])} for n, _ in graph.outputs],
        "ir": {"bytes": len(ir_bytes), "sha256": hashlib.sha256(ir_bytes).hexdigest(),
               "instructions": len(lowered.module.instrs)},
        "files": {n: {"bytes": len(d), "sha256": hashlib.sha256(d).hexdigest()}
                  for n, d in files.items()},
    }
    return (json.dumps(doc, indent=2) + "\n").encode("ascii")


if __name__ == "__main__":
    from .console import mnpk_gen
    mnpk_gen()
