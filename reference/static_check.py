"""The static check of a script's text, which maned-lint and maned-run both make (spec: "a
lint-clean script cannot refuse at run time for a statically knowable reason"): parse, lint,
check the ML definitions, then build every flow's graph (ELIMIT). `check(text)` returns every
diagnostic found, warnings included; `pipeline.intake` turns its errors into a refusal."""
from dataclasses import dataclass, field

from bark_vm.wire.constants import DTYPE_INT8
from bark_vm.wire.dtypes import DTYPE_RANGE, wire_dtype

from .diagnostics import Diagnostic, MnError
from .graph.build import build_flow, build_terms
from .graph.flow_graph import FlowGraph
from .interp.evaluate import FAILED, evaluate
from .lang import ast, limits
from .lang.lint import lint
from .lang.names import suggest
from .lang.parser import parse
from .ml.define import check_definition
from .catalogue import OpContext
from .tensor import Tensor


@dataclass
class Checked:
    program: ast.Program | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    graphs: dict[str, FlowGraph] = field(default_factory=dict)
    ml: dict[str, tuple[ast.MLDef, list[dict]]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.program is not None and not any(d.is_error for d in self.diagnostics)


def global_names(program: ast.Program) -> frozenset[str]:
    """What a local flow may read without a parameter: in:: names and top-level targets."""
    names = {d.name for d in program.inputs}
    names |= {t.name for s in program.of(ast.TopStatement) for t in s.stmt.targets}
    return frozenset(names)


def check(text: str) -> Checked:
    """The checked script. A script over a limit (E031) or a limit variable that is not a
    number (EUSAGE) raises MnError before the rest is looked at."""
    limits.check_source(len(text.encode("utf-8", "surrogatepass")))
    program, diags = parse(text)
    result = Checked(program, list(diags))
    if program is None or any(d.is_error for d in diags):
        return result
    result.diagnostics.extend(lint(program))
    if any(d.is_error for d in result.diagnostics):
        return result
    result.diagnostics.extend(_out_names(program))
    steps = 0
    for d in program.of(ast.MLDef):
        configs, diags = check_definition(d, program.quant.quantres)
        result.diagnostics.extend(diags)
        if configs is not None:
            result.ml[d.name] = (d, configs)
            steps += sum(limits.steps_of(c) for c in configs)
            refusal = limits.over(limits.STEPS, "the calc::ml:: definitions up to "
                                  f"'{d.name}' take", steps, d.pos)
            if refusal:
                result.diagnostics.append(refusal)
                break
    flows = {f.name: f for f in program.flows}
    globals_ = global_names(program)
    for name in flows:
        try:
            result.graphs[name] = build_flow(flows, name, globals_)
        except MnError as e:
            result.diagnostics.extend(e.diagnostics)
    result.diagnostics.extend(int8_envelope(program, result.graphs))
    return result


LINT_EVAL_ELEMENTS = 1 << 16  # literal input elements up to which W020 runs a routed flow


def int8_envelope(program: ast.Program, graphs: dict[str, FlowGraph]) -> list[Diagnostic]:
    """W020: under a quant range that picks the int8 wire type (wire.md §2.1), a routed flow
    whose in:: literals give an input or an output outside -128..127, found by running it
    on the reference (small literal inputs only): routed, that value cannot travel."""
    q = program.quant
    if wire_dtype(q.quantres, q.quantmin, q.quantmax) != DTYPE_INT8:
        return []
    made = {t.name for item in program.flows + program.of(ast.MLDef) for t in item.returns}
    literal = {i.name: Tensor(i.value.shape, i.value.data) for i in program.inputs
               if isinstance(i.value, ast.LiteralInput) and i.name not in made}
    lo, hi = DTYPE_RANGE[DTYPE_INT8]
    found = []
    for f in program.flows:
        g = graphs.get(f.name)
        if not f.devices or g is None or not set(g.params) <= set(literal) or any(
                n.kind == "global" for n in g.nodes) or sum(
                len(literal[p].data) for p in g.params) > LINT_EVAL_ELEMENTS:
            continue
        inputs = {p: literal[p] for p in g.params}
        try:
            values = {**inputs, **evaluate(g, inputs, {}, OpContext(q.quantres))}
        except FAILED:
            continue
        bad = next(((name, v) for name, t in values.items() for v in t.data
                    if not lo <= v <= hi), None)
        if bad:
            found.append(Diagnostic(
                "W020", f"flow '{f.name}': '{bad[0]}' holds {bad[1]} with the in:: values, "
                f"outside the int8 envelope ({lo}..{hi}) that mnd::quantmin={q.quantmin}, "
                f"mnd::quantmax={q.quantmax} and mnd::quantres={q.quantres} choose for routed "
                "values, so routed it cannot travel; widen mnd::quantmin/mnd::quantmax (a "
                "range over 8 bits travels as int32)", f.pos))
    return found


def _out_names(program: ast.Program) -> list[Diagnostic]:
    """An out:: must name a flow or ML return, or an in:: input (unknown name: EPARSE)."""
    known = {d.name for d in program.inputs}
    for item in program.flows + program.of(ast.MLDef):
        known |= {t.name for t in item.returns}
    return [Diagnostic("EPARSE", f"out::{o.name} names no flow output or in:: input"
                       + suggest(o.name, known), o.pos)
            for o in program.of(ast.OutputDecl) if o.name not in known]


def build_statement(program: ast.Program, stmt_terms, targets, pos) -> FlowGraph:
    flows = {f.name: f for f in program.flows}
    return build_terms(flows, f"statement@{pos.line}", stmt_terms, targets,
                       global_names(program), pos)
