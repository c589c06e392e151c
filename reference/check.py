"""The static front end both commands share (spec: "a lint-clean script cannot refuse at run
time for a statically knowable reason"): parse, lint, then build every flow's graph (ELIMIT)."""
from dataclasses import dataclass, field

from .diagnostics import Diagnostic, MnError
from .graph.build import build_flow, build_terms
from .graph.model import FlowGraph
from .lang import ast, limits
from .lang.lint import lint
from .lang.names import suggest
from .lang.parser import parse
from .ml.define import check_definition


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
    return result


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
