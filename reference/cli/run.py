"""maned-run: check, plan, load inputs, run every flow, print blocks (D2), write out::."""
import os
import sys

from ..check import build_statement, check
from ..diagnostics import Diagnostic, MnError
from ..diagnostics.ledger import exit_code
from ..diagnostics.printer import mask, run_line, sort_diagnostics
from ..dispatch.fleet import Fleet
from ..dispatch.plan import make_plan
from ..dispatch.routing import resolve_routing
from ..dispatch.scheduler import Routing, Scheduler
from ..dispatch.trace import Trace
from ..dispatch.verify import compare
from ..dispatch.vm import DeviceFailure
from ..interp.evaluate import FlowFailure, evaluate
from ..io.files import read_script
from ..io.inputs import load_inputs, parse_overrides
from ..io.outputs import write_outputs
from ..lang import ast
from ..lang.names import suggest
from ..ops.registry import OpContext
from ..tensor import format_value
from .args import USAGE, parse_args
from .version import version_text


INTERRUPTED = ("notice: interrupted (SIGINT): the run was stopped; Bark VM children were "
               "closed and queued worker jobs cancelled")
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it


class _Out:
    """Collects what the run prints so that stdout keeps D2's order."""

    def __init__(self, out, err):
        self.out, self.err, self.codes = out, err, []

    def error(self, *diags: Diagnostic) -> None:
        for d in diags:
            self.codes.append(d.code)
            self.err.write(run_line(d) + "\n")

    def note(self, text: str) -> None:
        self.err.write(mask(f"note: {text}") + "\n")

    def line(self, text: str) -> None:
        self.out.write(text + "\n")


def main(argv: list[str], out=None, err=None) -> int:
    o = _Out(out or sys.stdout, err or sys.stderr)
    try:
        _run(argv, o)
    except MnError as e:
        o.error(*e.diagnostics)
    except KeyboardInterrupt:
        o.err.write(INTERRUPTED + "\n")
        return EXIT_INTERRUPTED
    return exit_code(o.codes)


def console_main() -> None:
    sys.exit(main(sys.argv[1:]))


def _run(argv: list[str], o: _Out) -> None:
    opts = parse_args(argv)
    if opts.show:
        o.out.write(USAGE if opts.show == "help" else version_text("maned-run"))
        return
    checked = check(read_script(opts.script))
    if not checked.ok:  # warnings are lint-only (R3)
        raise MnError(*sort_diagnostics(d for d in checked.diagnostics if d.is_error))
    program = checked.program
    plan = make_plan(program, opts.flow)
    routing = resolve_routing(program, plan, checked.graphs, checked.ml, opts.require_vm)
    if opts.trap_overflow and routing.any:
        raise MnError(Diagnostic("EUSAGE", "--trap-overflow runs on the local interpreter "
                                 "only; it cannot be combined with routing (@device or "
                                 "--require-vm)"))
    script_dir = os.path.dirname(os.path.abspath(opts.script))
    file_names = {d.name for d in program.inputs if isinstance(d.value, ast.FileInput)}
    overrides = parse_overrides(opts.inputs, file_names)
    _check_input_names(program, overrides)
    loaded = load_inputs(program, overrides, script_dir)
    for n in loaded.notes:
        o.note(n)
    ctx = OpContext(program.quant.quantres)
    printed = _top_level(program, loaded.values, ctx, opts.trap_overflow)
    progress = opts.progress if opts.progress is not None else o.err.isatty()
    trace = _open_trace(opts.trace, o.err if progress else None)
    fleet = Fleet(routing.devices)
    try:
        status_lines = _status_blocks(program, fleet)
        result = Scheduler(program, plan, checked.graphs, checked.ml, loaded.values, routing,
                           trap=opts.trap_overflow, threads=opts.threads, trace=trace,
                           fleet=fleet).run()
    finally:
        trace.close()
        fleet.close()
    o.error(*result.errors)
    for line in status_lines:
        o.line(line)
    for line in printed:
        o.line(line)
    for name in plan.printed:
        if name in result.outputs:
            o.line(f"flow '{name}' outputs:")
            for out_name, value in result.outputs[name].items():
                o.line(format_value(out_name, value))
    lines, errors = write_outputs(program, result.outputs, loaded.values,
                                  program.quant.quantres, script_dir)
    o.error(*errors)
    for line in lines:
        o.line(line)
    if opts.verify and not result.errors and not errors:
        _verify(program, plan, checked, loaded.values, routing, opts, result, o)


def _status_blocks(program: ast.Program, fleet: Fleet) -> list[str]:
    """`status::A;` blocks (R23, R44), from the same one probe the plan's jobs use."""
    lines = []
    for item in program.of(ast.StatusDecl):
        if item.alias not in fleet.specs:
            raise MnError(Diagnostic("EPLAN", f"status::{item.alias}: no device::{item.alias} "
                                     "block" + suggest(item.alias, fleet.specs)))
        try:
            lines += fleet.status_block(item.alias)
        except DeviceFailure as e:
            raise MnError(Diagnostic("ERUN", f"status::{item.alias}: {e.message}")) from None
    return lines


def _open_trace(path: str | None, progress_stream) -> Trace:
    try:
        return Trace(path, progress_stream)
    except OSError as e:
        raise MnError(Diagnostic("EIO", f"cannot write the trace file '{path}': "
                                 f"{e.strerror or e}")) from None


def _verify(program, plan, checked, values, routing, opts, routed, o: _Out) -> None:
    """Re-run the whole plan on the local interpreter and compare every routed output."""
    routed_defs = [n for n in plan.order if routing.flows.get(n) or routing.ml.get(n)]
    local = Scheduler(program, plan, checked.graphs, checked.ml, values, Routing(),
                      threads=opts.threads).run() if routed_defs else None
    lines = compare([n for n in plan.printed if n in routed_defs] or routed_defs, routed, local)
    for line in lines:
        o.line(line)
    if lines[0].startswith("verify: MISMATCH"):
        o.codes.append("ERUN")


def _check_input_names(program: ast.Program, overrides: dict) -> None:
    known = {d.name for d in program.inputs} | {p.name for f in program.flows for p in f.params}
    for name in overrides:
        if name not in known:
            raise MnError(Diagnostic("EUSAGE", f"--in {name}: the script has no in::{name} and "
                                     f"no flow parameter '{name}'" + suggest(name, known)))


def _top_level(program: ast.Program, values: dict, ctx: OpContext, trap: bool) -> list[str]:
    """Run top-level statements in order (they bind globals, R28); returns the return@ lines."""
    printed = []
    for item in program.items:
        if isinstance(item, ast.TopStatement):
            targets = [t.name for t in item.stmt.targets]
            graph = build_statement(program, item.stmt.terms, targets, item.stmt.pos)
        elif isinstance(item, ast.PrintStatement):
            graph = build_statement(program, item.terms, None, item.pos)
        else:
            continue
        try:
            got = evaluate(graph, {}, values, ctx, trap)
        except FlowFailure as e:
            pos = graph.flow.partition("@")[2]
            raise MnError(Diagnostic("ERUN", f"top-level statement at line {pos}: {e.message}"))
        if isinstance(item, ast.PrintStatement):
            printed.append(format_value(f"return@{item.pos.line}", got["return"]))
        else:
            values.update(got)
    return printed
