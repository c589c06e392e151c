"""`maned.run()`: one script run as a function (DESIGN §7). Check, plan, route, load the
inputs, run the top-level statements and every planned definition on its target, write
the out:: files, verify; every step's outcome lands in the Report, never in printed text."""
import os
from dataclasses import dataclass

from ..catalogue import OpContext
from ..diagnostics import Diagnostic, MnError
from ..diagnostics.ledger import exit_code
from ..diagnostics.printer import mask
from ..devices.specs import DeviceOverride, discovers
from ..dispatch.fleet import Fleet
from ..dispatch.plan import make_plan
from ..dispatch.replicas import REPLICAS_MAX
from ..dispatch.routing import resolve_routing, routed_aliases
from ..dispatch.scheduler import Routing, RunResult, Scheduler, Workload
from ..dispatch.trace import VERIFY, Trace
from ..dispatch.verify import Verdict, compare
from ..failures import DeviceFailure, Refused
from ..interp.evaluate import FAILED, evaluate
from ..io.inputs import load_inputs
from ..io.outputs import Writes, makers, write_outputs
from ..io.own_files import read_files, refuse_clash, refuse_overwrites, written_files
from ..lang import ast
from ..lang.labels import off_labels
from ..lang.names import suggest
from ..static_check import build_statement
from ..devices.bounds import THREADS_MAX
from ..targets.local import engine_chosen
from ..devices.discovery import Discovery, Probing
from .intake import check_input_names, compile_script, input_values, script_source
from .sweeps import sweep_note, sweeps
from .report import (STATUS_FIELDS, DiagnosticRecord, FlowOutputs, Note, OutFile, Report,
                     StatusBlock, Value)


@dataclass(frozen=True)
class Script:
    """The script a run runs: its text, its path when it came from a file, and the folder
    its csv()/model() paths (and, without --out-dir, its out:: paths) resolve in."""

    text: str
    path: str | None
    folder: str


@dataclass(frozen=True)
class RunOptions:
    """What a run was asked to do: `run()`'s keywords past the script, as given, but for
    `out_dir` and `threads`, checked before any work. trace, progress and devices are the
    caller's own objects, carried as they are."""

    inputs: object               # `--in` values: (name, value) pairs or a mapping
    flow: str | None             # `--flow`: run only this definition and what it needs
    verify: bool                 # `--verify`: run the routed definitions again locally
    threads: int                 # `--threads`: the local interpreter's pool width
    require_vm: bool             # `--require-vm`: every routable flow to a device
    trap_overflow: bool          # `--trap-overflow`: wrap is an error (local only)
    reference: bool | None       # `--reference` (True), `--engine` (False), or by size (None)
    out_dir: str | None          # `--out-dir`: an existing folder this process may write into
    probing: Probing             # how `discover = true` blocks look for their workers
    journal: str | None          # `--journal`: the file of completed rounds to resume from
    replicas: int                # `--replicas`: the aliases each routed ML round runs on
    device: DeviceOverride | None  # `--device`: the one target of every routed job
    devices: dict | None         # ready-made devices by alias, kept open by the caller
    trace: object                # the trace sink: called with each job's records
    progress: object             # the progress callback: called with each event


class _Builder:
    """What a run has found so far; `report()` freezes it."""

    def __init__(self, progress):
        self.progress = progress
        self.diagnostics: list[Diagnostic] = []
        self.notes: list[str] = []
        self.statuses, self.prints, self.flows, self.files = [], [], [], []
        self.sweeps = []
        self.verify = None
        self.extra_codes: list[str] = []
        self.trace: Trace | None = None

    def error(self, *diags: Diagnostic) -> None:
        self.diagnostics.extend(diags)

    def note(self, text: str) -> None:
        text = mask(text)
        self.notes.append(text)
        if self.progress:
            self.progress(Note(text))

    def report(self) -> Report:
        if self.trace:  # a trace or progress callback that failed: the run went on
            self.error(*(Diagnostic("EIO", why) for why in self.trace.failures))
        codes = [d.code for d in self.diagnostics] + self.extra_codes
        return Report(exit_code=exit_code(codes),
                      diagnostics=tuple(DiagnosticRecord.of(d) for d in self.diagnostics),
                      statuses=tuple(self.statuses), prints=tuple(self.prints),
                      flows=tuple(self.flows), files=tuple(self.files), verify=self.verify,
                      notes=tuple(self.notes),
                      jobs=tuple(self.trace.jobs) if self.trace else (),
                      sweeps=tuple(self.sweeps))


def run(script: str | os.PathLike | None = None, *, source: str | None = None,
        base_dir: str | os.PathLike | None = None, inputs=None, flow: str | None = None,
        verify: bool = False, threads: int = 1, require_vm: bool = False,
        trap_overflow: bool = False, reference: bool | None = None, trace=None, progress=None,
        devices: dict | None = None, probing: Probing | None = None,
        device: DeviceOverride | None = None,
        out_dir: str | os.PathLike | None = None,
        journal: str | os.PathLike | None = None, replicas: int = 1) -> Report:
    """Run a script and report what it did (see docs/api.md).

    script: a .mnd path; or `source` text with `base_dir` (default: the working folder) for
    its csv()/model() paths. inputs: what `--in` takes, as (name, value) pairs or a mapping;
    a value is `--in` text (raw integers, or a path for a csv() input) or a Tensor.
    trace(record) is called with each job's start and end record (a trace with an open()
    method is opened first, just before the jobs), progress(event) with each Note and
    each Planned, JobStarted, JobDone, Settled and Phase (maned.dispatch.trace), both while the run
    goes on. A bad script, input, worker or
    callback is a coded diagnostic in the report; only a wrong call raises (TypeError), and
    Ctrl-C raises KeyboardInterrupt once every target has been stopped.
    devices: ready-made devices by alias, kept open by the caller across runs (a conformance
    target: with require_vm, alias "vm" takes every routable flow). probing: how the
    `discover = true` blocks look for their workers (`--probe`, `--no-broadcast`,
    `--discover-timeout`; default: broadcast, 1000 ms). device: `--device` (a
    `maned.DeviceOverride`), the one target of every flow and Tier A round. out_dir:
    `--out-dir`, the existing folder the relative out:: paths are written into (default:
    the script's folder, or base_dir). reference: True runs the local flows on the
    reference (`--reference`), False on the exact engine (`--engine`), None (default) on
    the engine when the run's data hold at least `ENGINE_FROM` values. journal: `--journal`,
    the file every completed round of a calc::ml:: chain is written to, and that a run
    resumes from (docs/fleet.md, "Resume"). replicas: `--replicas`, how many distinct
    aliases each routed round of a calc::ml:: definition runs on, their answers compared
    and the majority's taken (docs/fleet.md, "Replicas")."""
    if (script is None) == (source is None):
        raise TypeError("run() takes a script path or source=, not both or neither")
    if not isinstance(probing, (Probing, type(None))) or not isinstance(
            device, (DeviceOverride, type(None))):
        raise TypeError("run(): probing= takes a maned.Probing, device= a maned.DeviceOverride")
    if reference not in (None, True, False):
        raise TypeError("run(): reference= takes True, False or None")
    b = _Builder(progress)
    try:
        if script is not None:
            text, folder = script_source(script)
            given = Script(text, os.fspath(script), folder)
        else:
            given = Script(source, None, os.path.abspath(os.fspath(base_dir or os.getcwd())))
        checked_out_dir = _out_dir(out_dir)  # refused before --threads is looked at
        options = RunOptions(inputs=inputs, flow=flow, verify=verify,
                             threads=_count("--threads", threads, THREADS_MAX),
                             require_vm=require_vm, trap_overflow=trap_overflow,
                             reference=reference,
                             out_dir=checked_out_dir, probing=probing or Probing(),
                             device=device, devices=devices, trace=trace, progress=progress,
                             journal=None if journal is None else os.fspath(journal),
                             replicas=_count("--replicas", replicas, REPLICAS_MAX))
        _run(b, given, options)
    except MnError as e:
        b.error(*e.diagnostics)
    return b.report()


def _count(flag: str, value, most: int) -> int:
    """A count keyword (`--threads`, `--replicas`), checked before any work: a whole number
    from 1 to `most`."""
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= most:
        raise MnError(Diagnostic("EUSAGE", f"{flag} takes a whole number from 1 to {most}, "
                                 f"not {value!r}"[:200]))
    return value


def _replicated(routing: Routing, replicas: int) -> None:
    """--replicas N needs N aliases in every routed ML definition's list, and at least one
    such definition: refused before anything runs."""
    if replicas == 1:
        return
    short = [(name, aliases) for name, aliases in routing.ml.items()
             if aliases and len(aliases) < replicas]
    if short:
        name, aliases = short[0]
        raise MnError(Diagnostic("EUSAGE", f"--replicas {replicas}: ml definition '{name}' "
                                 f"runs on {len(aliases)} alias{'es' * (len(aliases) > 1)} "
                                 f"({', '.join(aliases)}); it needs at least {replicas} "
                                 "distinct aliases in its @device list"))
    if not any(routing.ml.values()):
        raise MnError(Diagnostic("EUSAGE", f"--replicas {replicas}: no calc::ml:: "
                                 "definition of this run is routed; replicas compare the "
                                 "rounds a sweep sends to its @device aliases"))


def _out_dir(out_dir) -> str | None:
    """`--out-dir`, checked before any work: an existing folder this process may write
    into (a relative one is taken from the working folder)."""
    if out_dir is None:
        return None
    path = os.fsdecode(os.fspath(out_dir))
    why = _unwritable(path)
    if why:
        raise MnError(Diagnostic("EUSAGE", f"--out-dir {path!r}: {why} (give an existing "
                                 "folder you may write into for the out:: files)"))
    return path


def _unwritable(path: str) -> str | None:
    if not path:
        return "is empty"
    if not os.path.isdir(path):
        return "is not a folder" if os.path.exists(path) else "no such folder"
    if not os.access(path, os.W_OK | os.X_OK):
        return "cannot be written into"
    return None


def _run(b: _Builder, script: Script, options: RunOptions) -> None:
    trap, sink = options.trap_overflow, options.trace
    writes = Writes(script.folder, options.out_dir)
    discovery = Discovery(options.probing)
    checked = compile_script(script.text)
    program = checked.program
    plan = make_plan(program, options.flow)
    compiler = None  # the routed flows' compile cache, made when the plan routes anything
    if options.require_vm or options.device is not None or program.of(ast.DeviceDecl):
        from ..lowering.compiled import Compiler
        compiler = Compiler()
    device = options.device.spec() if options.device is not None else None
    routing = resolve_routing(program, plan, checked.graphs, checked.ml, options.require_vm,
                              compiler, device, discovery)
    _replicated(routing, options.replicas)
    if trap and routing.any:
        raise MnError(Diagnostic("EUSAGE", "--trap-overflow runs on the local interpreter "
                                 "only; it cannot be combined with routing (@device or "
                                 "--require-vm)"))
    if any(discovers(routing.devices[a]) for a in routed_aliases(routing)):
        try:
            discovery.resolve()  # a probe target that does not resolve stops the run here
        except Refused as e:
            raise MnError(Diagnostic("EUSAGE", str(e))) from None
    overrides = input_values(program, options.inputs)
    check_input_names(program, overrides)
    reads = read_files(program, script.path, overrides, script.folder)
    written = written_files(program, writes)
    refuse_overwrites(reads, written)
    if getattr(sink, "path", None) is not None:  # a trace file is none of the run's own
        refuse_clash(sink.path, "--trace", reads + written)
    fleet = Fleet(routing.devices, program.quant, trap=trap, compiler=compiler,
                  devices=options.devices, discovery=discovery)
    if options.journal is not None:  # the journal is none of the run's own files either
        refuse_clash(options.journal, "--journal", reads + written)
    fleet.spawn(routed_aliases(routing))  # D7: the children start while the run goes on
    journal = None
    try:
        loaded = load_inputs(program, overrides, script.folder)
        if options.journal is not None:  # refused here, before anything runs
            from ..dispatch.journal import Journal, identity
            journal = Journal(options.journal, identity(script.text, loaded.values))
        fleet.reference = not engine_chosen(loaded.values, options.reference)
        for n in loaded.notes + _label_notes(program, loaded.values):
            b.note(n)
        b.prints = _top_level(program, loaded.values, OpContext(program.quant.quantres), trap)
        if hasattr(sink, "open"):  # a sink with an open() is opened here, as late as it can be
            sink.open()
        b.trace = Trace(sink, options.progress)
        b.statuses, down = _status_blocks(program, fleet)
        b.error(*down)
        work = Workload(program, plan, checked.graphs, checked.ml, loaded.values)
        result = Scheduler(work, routing, fleet, threads=options.threads, trace=b.trace,
                           journal=journal, replicas=options.replicas).run()
    except BaseException:
        fleet.abort()  # a refusal, or Ctrl-C, while children start: do not wait for them
        raise
    finally:
        fleet.close()
        if journal is not None:
            journal.close()
    for n in discovery.notes:  # a broadcast that could not be sent, when unicast sufficed
        b.note(f"discovery: {n}")
    for n in result.notes:
        b.note(n)
    b.error(*result.errors)
    b.flows = [FlowOutputs(name, tuple(Value.of(k, v) for k, v in result.outputs[name].items()))
               for name in plan.printed if name in result.outputs]
    b.sweeps = [s for s in sweeps(program, checked.ml, result.outputs, result.configurations)
                if s.definition in plan.printed]
    for s in b.sweeps:
        b.note(sweep_note(s))
    written, errors, skipped = write_outputs(program, result.outputs, loaded.values,
                                             program.quant.quantres, writes, plan.order)
    for n in skipped:
        b.note(n)
    b.files = [OutFile(name, path) for name, path in written]
    b.error(*errors)
    if options.verify and not result.errors and not errors:
        b.verify = _verify(work, routing, result, options.threads, fleet.reference, b.trace)
        if b.verify.status == "MISMATCH":
            b.extra_codes.append("ERUN")


def _verify(work: Workload, routing: Routing, result: RunResult, threads: int,
            reference: bool, trace: Trace) -> Verdict:
    """`--verify`: the definitions that ran off the reference (routed, or on the local
    exact engine unless `reference`) run again on the reference alone, and their printed
    outputs compared with the run's (SKIPPED when nothing ran off the reference)."""
    routed = [n for n in work.plan.order if routing.flows.get(n) or routing.ml.get(n)]
    checked = routed if reference else list(work.plan.order)
    if not checked:
        return compare(checked, routed, result, None)
    trace.phase(VERIFY, False)
    local = Scheduler(work, Routing(), threads=threads, reference=True).run()
    trace.phase(VERIFY, True)
    printed = [n for n in work.plan.printed if n in checked] or checked
    return compare(printed, routed, result, local)


def _status_blocks(program: ast.Program,
                   fleet: Fleet) -> tuple[list[StatusBlock], list[Diagnostic]]:
    """`status::A;` blocks (R23, R44), from the same one probe the run's jobs use. A device
    that does not answer fails its own block only (and, through the same probe, the jobs
    sent to it): the run goes on."""
    blocks, errors = [], []
    for item in program.of(ast.StatusDecl):
        if item.alias not in fleet.specs:
            raise MnError(Diagnostic("EPLAN", f"status::{item.alias}: no device::{item.alias} "
                                     "block" + suggest(item.alias, fleet.specs)))
        try:
            status = fleet.target(item.alias).open()
        except DeviceFailure as e:
            errors.append(Diagnostic("ERUN", f"status::{item.alias}: {e.message}",
                                     cause=e.cause))
            continue
        blocks.append(StatusBlock(item.alias, tuple((k, getattr(status, k))
                                                    for k in STATUS_FIELDS)))
    return blocks, errors


def _label_notes(program: ast.Program, values: dict) -> list[str]:
    """A note for each classifier whose y, read from an input (literal, csv() or --in), is
    not its label set (lint's W019 for what only the run can see)."""
    notes = []
    for d in program.of(ast.MLDef):
        y = d.params[1].name if len(d.params) > 1 else None
        if y in values and not makers(y, program):
            why = off_labels(d.algo, program.quant.quantres, values[y])
            if why:
                notes.append(f"ml definition '{d.name}' ({d.algo}): {why}")
    return notes


def _top_level(program: ast.Program, values: dict, ctx: OpContext, trap: bool) -> list[Value]:
    """Run top-level statements in order (they bind globals, R28); the return@ values."""
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
        except FAILED as e:
            pos = graph.flow.partition("@")[2]
            raise MnError(Diagnostic("ERUN", f"top-level statement at line {pos}: {e.message}"))
        if isinstance(item, ast.PrintStatement):
            printed.append(Value.of(f"return@{item.pos.line}", got["return"]))
        else:
            values.update(got)
    return printed
