"""The linter: static findings on a parsed Program, errors and warnings alike (D3, R24).

It runs only on a Program the parser accepted (no downstream noise after a parse failure).
Each rule is one small function `rule(ctx) -> iterable of Diagnostic`, registered in
`RULES`; `lint` runs them all and sorts the findings by (line, col, code). Each finding
points at the most actionable token; `docs/diagnostics.md` names the anchor of every code.
"""
from dataclasses import dataclass
from functools import cached_property
from os.path import normpath

from ..diagnostics import Diagnostic
from ..diagnostics.printer import sort_diagnostics
from ..catalogue import BY_NAME
from ..tensor import Tensor
from . import ast
from .labels import off_labels
from .names import (DECORATORS, DECORATORS_INERT, DEVICE_FIELDS, DIRECTIVE_KEYS,
                    STACK_OPS, apply_stack_op, nearest, stack_needs, suggest)

# Directive keys the parser refuses itself (E010, E011, E015): never an E007 here.
_PARSER_KEYS = ("quantrange", "register_backward", "quant", "backpropagation")
_RESERVED_KEYS = {"routing_policy": "E012", "checkpoint_every": "E020"}
_CREDENTIAL_FIELDS = ("pass", "token")

# --- walking the tree ---------------------------------------------------------------------


def statements(body) -> list[ast.Statement]:
    """Every statement of a flow body, repeat bodies flattened, in source order."""
    out = []
    for item in body:
        if isinstance(item, ast.Repeat):
            out.extend(item.body)
        elif isinstance(item, ast.Statement):
            out.append(item)
    return out


def refs(terms) -> list[ast.Ref]:
    return [t for t in terms if isinstance(t, ast.Ref)]


def flow_prefix(flow) -> str:
    return f"flow '{flow.name}': "


def kind_of(d) -> str:
    """How a message names a definition: `flow` or `ml definition`."""
    return "flow" if isinstance(d, ast.FlowDef) else "ml definition"


@dataclass
class Context:
    """The program plus the facts several rules share, computed once."""

    program: ast.Program

    @cached_property
    def flows(self) -> list[ast.FlowDef]:
        return self.program.of(ast.FlowDef)

    @cached_property
    def flow_table(self) -> dict[str, ast.FlowDef]:
        return {f.name: f for f in self.flows}

    @cached_property
    def ml_defs(self) -> list[ast.MLDef]:
        return self.program.of(ast.MLDef)

    @cached_property
    def top_statements(self) -> list[ast.Statement]:
        return [t.stmt for t in self.program.of(ast.TopStatement)]

    @cached_property
    def globals(self) -> set[str]:
        """What a flow body may read besides its own names: in:: inputs, top-level targets."""
        names = {i.name for i in self.program.inputs}
        names |= {t.name for s in self.top_statements for t in s.targets}
        return names

    @cached_property
    def callables(self) -> dict[str, str]:
        """Every name a statement may call, with what it is: op, stack op, or flow."""
        names = {n: "op" for n in BY_NAME}
        names.update({n: "op" for n in STACK_OPS})
        names.update({n: "flow" for n in self.flow_table})
        return names

    def callable_like(self, name: str) -> tuple[str, str] | None:
        """(kind, name) of the op or flow `name` looks like a misspelling of, or None."""
        best = nearest(name, self.callables)
        return (self.callables[best], best) if best else None

    @cached_property
    def term_lists(self) -> list[tuple[ast.FlowDef | None, tuple]]:
        """Every RPN term sequence of the script with its flow (None at top level)."""
        seqs = [(f, s.terms) for f in self.flows for s in statements(f.body)]
        seqs += [(None, s.terms) for s in self.top_statements]
        seqs += [(None, p.terms) for p in self.program.of(ast.PrintStatement)]
        return seqs

    @cached_property
    def statement_decorators(self) -> list[ast.Decorator]:
        stmts = [s for f in self.flows for s in statements(f.body)] + self.top_statements
        return [d for s in stmts for d in s.decorators]

    @cached_property
    def all_decorators(self) -> list[ast.Decorator]:
        defs = [d for f in self.flows + self.ml_defs for d in f.decorators]
        return defs + self.statement_decorators

    @cached_property
    def callers(self) -> dict[str, set[str]]:
        """Flow name -> names of the other flows whose bodies call it."""
        out: dict[str, set[str]] = {}
        for flow, terms in self.term_lists:
            for t in terms:
                if isinstance(t, ast.FlowCall) and flow is not None and t.name != flow.name:
                    out.setdefault(t.name, set()).add(flow.name)
        return out


def _duplicates(items, key):
    """The items whose key was already seen, with the first one of that key."""
    first = {}
    for item in items:
        k = key(item)
        if k in first:
            yield item, first[k]
        else:
            first[k] = item

# --- errors -------------------------------------------------------------------------------


def duplicate_definition(ctx):
    """E001: two flows (or a flow and an ML definition) share a name; at the second one."""
    defs = sorted(ctx.flows + ctx.ml_defs, key=lambda d: d.pos)
    for d, first in _duplicates(defs, lambda d: d.name):
        what = kind_of(d)
        yield Diagnostic("E001", f"{what} '{d.name}' is already defined at {first.pos}",
                         d.pos)


def duplicate_target(ctx):
    """E002: one name twice in one target list; at its second occurrence."""
    owned = [(f, s) for f in ctx.flows for s in statements(f.body)]
    owned += [(None, s) for s in ctx.top_statements]
    for flow, stmt in owned:
        for t, _ in _duplicates(stmt.targets, lambda t: t.name):
            where = flow_prefix(flow) if flow else ""
            yield Diagnostic("E002", f"{where}'{t.name}' appears twice in one target list",
                             t.pos)


def _undefined(flow, ref, known, extra="", ctx=None):
    """E003, suggesting the nearest bound name, else the nearest op or flow (a misspelt op
    reads as a variable)."""
    where = flow_prefix(flow) if flow else ""
    hint = suggest(ref.name, known)
    callable_ = ctx.callable_like(ref.name) if ctx is not None and not hint else None
    if callable_:
        hint = f" (did you mean the {callable_[0]} '{callable_[1]}'?)"
    return Diagnostic("E003", f"{where}undefined variable '{ref.name}'{extra}{hint}", ref.pos)


def undefined_variable(ctx):
    """E003: a read of a name nothing binds. Repeat reads see the previous iteration (R8)."""
    for flow in ctx.flows:
        bound = {p.name for p in flow.params} | ctx.globals
        for item in flow.body:
            if isinstance(item, ast.Statement):
                yield from (_undefined(flow, r, bound, ctx=ctx) for r in refs(item.terms)
                            if r.name not in bound)
                bound |= {t.name for t in item.targets}
            elif isinstance(item, ast.Repeat):
                inner = {t.name for s in item.body for t in s.targets}
                for r in (r for s in item.body for r in refs(s.terms)):
                    if r.name in bound:
                        continue
                    why = (" (a repeat body has no locals: its reads see the previous "
                           "iteration, and nothing binds it before the loop)"
                           if r.name in inner else "")
                    yield _undefined(flow, r, bound, why, ctx)
                bound |= inner
    inputs = {i.name for i in ctx.program.inputs}
    bound = set(inputs)
    for item in ctx.program.items:
        terms = (item.stmt.terms if isinstance(item, ast.TopStatement)
                 else item.terms if isinstance(item, ast.PrintStatement) else ())
        yield from (_undefined(None, r, bound, ctx=ctx) for r in refs(terms)
                    if r.name not in bound)
        if isinstance(item, ast.TopStatement):
            bound |= {t.name for t in item.stmt.targets}


def duplicate_parameter(ctx):
    """E004: a parameter listed twice (flows and ML definitions); at the second."""
    for d in ctx.flows + ctx.ml_defs:
        what = kind_of(d)
        for p, _ in _duplicates(d.params, lambda p: p.name):
            yield Diagnostic("E004", f"{what} '{d.name}': parameter '{p.name}' is listed twice",
                             p.pos)


def undefined_return(ctx):
    """E005: a flow's return clause names neither a parameter nor a body binding."""
    for flow in ctx.flows:
        known = {p.name for p in flow.params}
        known |= {t.name for s in statements(flow.body) for t in s.targets}
        for r in flow.returns:
            if r.name not in known:
                yield Diagnostic("E005", f"{flow_prefix(flow)}returns '{r.name}', which is "
                                 f"neither a parameter nor bound in the body"
                                 f"{suggest(r.name, known)}", r.pos)


def unknown_directive(ctx):
    """E007 (unknown key, nearest suggested), E012 routing_policy, E020 checkpoint_every."""
    for d in ctx.program.of(ast.Directive):
        if d.key in _RESERVED_KEYS:
            code = _RESERVED_KEYS[d.key]
            hint = ("reserved and unimplemented; route with @device(alias)"
                    if code == "E012" else "consumed by nothing (there is no backward pass)")
            yield Diagnostic(code, f"mnd::{d.key} is {hint}", d.pos)
        elif (d.key not in DIRECTIVE_KEYS and d.key not in _PARSER_KEYS
              and not d.key.endswith(("_fwd", "_grad"))):
            yield Diagnostic("E007", f"unknown directive mnd::{d.key}"
                             f"{suggest(d.key, DIRECTIVE_KEYS)}", d.pos)


def unknown_decorator(ctx):
    """E008: a decorator name not in the catalogue, nearest one suggested."""
    for d in ctx.all_decorators:
        if d.name not in DECORATORS:
            yield Diagnostic("E008", f"unknown decorator '@{d.name}'"
                             f"{suggest(d.name, DECORATORS)}", d.pos)


def device_without_host(ctx):
    """E024: a device:: block with neither `host` nor `discover` (nor `pool`)."""
    for dev in ctx.program.of(ast.DeviceDecl):
        if not {f.key for f in dev.fields} & {"host", "discover", "pool"}:
            yield Diagnostic("E024", f"device '{dev.alias}' has neither host nor discover; "
                             f"add host = \"...\" (or \"local\") or discover = true", dev.pos)


def undeclared_device(ctx):
    """E030: `@device(alias)` with no `device::alias` block, nearest alias suggested (what
    planning would refuse, said by lint)."""
    declared = {d.alias for d in ctx.program.of(ast.DeviceDecl)}
    for d in ctx.flows + ctx.ml_defs:
        kind = kind_of(d)
        for ref in d.devices:
            if ref.alias not in declared:
                yield Diagnostic("E030", f"{kind} '{d.name}': @device({ref.alias}) names no "
                                 f"device:: block{suggest(ref.alias, declared)}; declare "
                                 f"device::{ref.alias} {{ ... }}", ref.pos)


def discover_conflict(ctx):
    """E032: `discover` or `pool` that is not true/false/1/0, or either one true with
    `host` (the address comes from the reply) or `port` (the reply advertises it), or both
    (spec/wire.md §3.8; a pool is this implementation's, docs/language.md)."""
    for dev in ctx.program.of(ast.DeviceDecl):
        fields = {f.key: f for f in dev.fields}
        for flag in ("discover", "pool"):
            if flag not in fields:
                continue
            value = fields[flag].value
            if value not in (True, False):  # 1 and 0 are True and False
                yield Diagnostic("E032", f"device '{dev.alias}': {flag} takes true or false "
                                 f"(or 1 or 0)", fields[flag].pos)
                continue
            others = ("host", "port") + (("discover",) if flag == "pool" else ())
            for key in others:
                if value and key in fields:
                    why = {"host": "discovery gives the worker's address",
                           "port": "discovery gives the worker's port",
                           "discover": "a pool discovers already"}[key]
                    yield Diagnostic("E032", f"device '{dev.alias}': {key} and {flag} = true "
                                     f"exclude each other ({why}); drop one", fields[key].pos)


def device_pool(ctx):
    """W018: a `pool = true` block, this implementation's extension (upstream has none)."""
    for dev in ctx.program.of(ast.DeviceDecl):
        if any(f.key == "pool" and f.value is True for f in dev.fields):
            yield Diagnostic("W018", f"device '{dev.alias}' is a pool (pool = true), an "
                             "extension of this implementation: upstream Maned does not run "
                             "it", dev.pos)


def grid_sweep(ctx):
    """W021: a calc::ml:: grid (several sweep lists), this implementation's extension
    (upstream takes one sweep list)."""
    for d in ctx.program.of(ast.MLDef):
        given = {h.key: h.value for h in d.hypers}  # as ml.hyper.swept reads them
        lists = [key for key, value in given.items() if isinstance(value, tuple)]
        if len(lists) > 1:
            yield Diagnostic("W021", f"ml definition '{d.name}' sweeps a grid over "
                             f"{', '.join(lists)}, an extension of this implementation: "
                             "upstream Maned takes one sweep list", d.pos)

# --- warnings -----------------------------------------------------------------------------


def _reads(flow) -> set[str]:
    return {r.name for s in statements(flow.body) for r in refs(s.terms)}


def unused_parameter(ctx):
    """W001: a flow parameter never read in the body and not returned (it keeps its slot)."""
    for flow in ctx.flows:
        used = _reads(flow) | {r.name for r in flow.returns}
        for p in flow.params:
            if p.name not in used:
                yield Diagnostic("W001", f"{flow_prefix(flow)}parameter '{p.name}' is never "
                                 f"used (it keeps its input slot)", p.pos)


def rebound_variable(ctx):
    """W002: a name bound by a second statement of a body; at that statement's target.

    A repeat is one binding site per name it assigns, and only for names nothing bound
    before the loop: updating a loop-carried name is the repeat's own SSA, not a rebinding.
    """
    for flow in ctx.flows:
        first: dict[str, ast.Target] = {}
        for item in flow.body:
            if isinstance(item, ast.Repeat):
                for t in (t for s in item.body for t in s.targets):
                    first.setdefault(t.name, t)
                continue
            for t in item.targets if isinstance(item, ast.Statement) else ():
                if t.name in first:
                    yield Diagnostic("W002", f"{flow_prefix(flow)}'{t.name}' is assigned again "
                                     f"(first at {first[t.name].pos}); the later binding wins",
                                     t.pos)
                else:
                    first[t.name] = t


def duplicate_object_key(ctx):
    """W003: a key twice in one object parameter `{k: v}` (op params and decorators)."""
    objs = [t.params for _, terms in ctx.term_lists for t in terms if isinstance(t, ast.OpCall)]
    objs += [d.obj for d in ctx.all_decorators]
    for obj in objs:
        for e, _ in _duplicates(obj, lambda e: e.key):
            yield Diagnostic("W003", f"object key '{e.key}' is given twice; the last one wins",
                             e.pos)


def unused_variable(ctx):
    """W004: a body binding never read and not returned; at its first binding."""
    for flow in ctx.flows:
        used = _reads(flow) | {r.name for r in flow.returns}
        seen = set()
        for s in statements(flow.body):
            for t in s.targets:
                if t.name not in used and t.name not in seen:
                    seen.add(t.name)
                    yield Diagnostic("W004", f"{flow_prefix(flow)}'{t.name}' is assigned but "
                                     f"never used", t.pos)


def duplicate_device_field(ctx):
    """W005: one field twice in a device:: block; at the second."""
    for dev in ctx.program.of(ast.DeviceDecl):
        for f, _ in _duplicates(dev.fields, lambda f: f.key):
            yield Diagnostic("W005", f"device '{dev.alias}': field '{f.key}' is given twice; "
                             f"the last one wins", f.pos)


def duplicate_input(ctx):
    """W006: an in:: name declared more than once; at the second (last binding wins)."""
    for i, first in _duplicates(ctx.program.inputs, lambda i: i.name):
        yield Diagnostic("W006", f"in::{i.name} is declared again (first at {first.pos}); "
                         f"the last binding wins", i.pos)


def device_on_called_flow(ctx):
    """W007: @device on a flow another flow calls; the caller's placement wins."""
    for flow in ctx.flows:
        if flow.devices and flow.name in ctx.callers:
            by = ", ".join(sorted(ctx.callers[flow.name]))
            yield Diagnostic("W007", f"{flow_prefix(flow)}@device({flow.devices[0].alias}) is "
                             f"ignored: the flow is called (inlined) by {by}",
                             flow.devices[0].pos)


def duplicate_output_path(ctx):
    """W009: two out:: declarations write one path; at the second."""
    outs = ctx.program.of(ast.OutputDecl)
    for o, first in _duplicates(outs, lambda o: normpath(o.path)):
        yield Diagnostic("W009", f"out::{o.name} writes '{o.path}', already written by "
                         f"out::{first.name}", o.pos)


def inert_print(ctx):
    """W010: return(...) or memory::write inside a flow body; parsed, never executed."""
    for flow in ctx.flows:
        for item in flow.body:
            if isinstance(item, ast.InertPrint):
                what = "return(...)" if item.kind == "return" else item.kind
                yield Diagnostic("W010", f"{flow_prefix(flow)}{what} inside a flow body does "
                                 f"nothing; return values with the return clause", item.pos)


def _op_calls(ctx):
    for flow, terms in ctx.term_lists:
        for t in terms:
            if isinstance(t, ast.OpCall) and t.name in BY_NAME:
                yield flow, t, BY_NAME[t.name]


def unexecutable_op(ctx):
    """W011: an op registered but executable nowhere (kind `none`); it refuses at run time."""
    for _, call, op in _op_calls(ctx):
        if op.kind == "none":
            yield Diagnostic("W011", f"op '{op.name}' is registered but not executable on any "
                             f"path - it will refuse at run time", call.pos)


def inert_decorator(ctx):
    """W012: a registered decorator with no implementation; parsed and ignored."""
    for d in ctx.all_decorators:
        if d.name in DECORATORS_INERT:
            yield Diagnostic("W012", f"decorator '@{d.name}' is recognized but not "
                             f"implemented; it is ignored", d.pos)


def local_op_routed(ctx):
    """W013: a local-only op inside a flow routed with @device; pre-flight will refuse it."""
    for flow, call, op in _op_calls(ctx):
        if flow is not None and flow.devices and op.kind == "local":
            alias = flow.devices[0].alias
            yield Diagnostic("W013", f"{flow_prefix(flow)}op '{op.name}' runs on the local "
                             f"interpreter only, but the flow is routed with @device({alias}) "
                             f"- pre-flight will refuse it", call.pos)


def literal_credential(ctx):
    """W014: a literal `pass`/`token` string in a device:: block (the value is never shown)."""
    for dev in ctx.program.of(ast.DeviceDecl):
        for f in dev.fields:
            if f.key in _CREDENTIAL_FIELDS and isinstance(f.value, str):
                yield Diagnostic("W014", f"device '{dev.alias}': {f.key} is a literal "
                                 f"credential in the script; use {f.key} = env(\"NAME\")", f.pos)


def unknown_device_field(ctx):
    """W015: a device:: field outside DEVICE_FIELDS, nearest one suggested."""
    for dev in ctx.program.of(ast.DeviceDecl):
        for f in dev.fields:
            if f.key not in DEVICE_FIELDS:
                yield Diagnostic("W015", f"device '{dev.alias}': unknown field '{f.key}'"
                                 f"{suggest(f.key, DEVICE_FIELDS)}", f.pos)


def _self_call_args(flow, stmt, table):
    """Simulate the stack of `stmt` symbolically; yield (call, args) per self-call.

    A value is the Ref that pushed it or None (anything computed). Gives up (yields
    nothing more) on anything it cannot size, which the parser has refused already.
    """
    stack: list = []
    for t in stmt.terms:
        if isinstance(t, ast.StackOp):
            if len(stack) < stack_needs(t.name):
                return
            apply_stack_op(stack, t.name)
        elif isinstance(t, (ast.OpCall, ast.FlowCall)):
            callee = table.get(t.name) if isinstance(t, ast.FlowCall) else None
            if isinstance(t, ast.FlowCall) and callee is None:
                return
            arity = len(callee.params) if callee else BY_NAME[t.name].arity
            if len(stack) < arity:
                return
            args = stack[len(stack) - arity:]
            del stack[len(stack) - arity:]
            if callee is flow:
                yield t, args
            stack.extend([None] * (len(callee.returns) if callee else 1))
        else:
            stack.append(t if isinstance(t, ast.Ref) else None)


def unroll_pass_through(ctx):
    """W016: in an @unroll flow, a self-call passing parameter i unchanged at position i
    (i < returns): the innermost, pass-through copy then returns that parameter as is."""
    for flow in ctx.flows:
        if flow.unroll is None:
            continue
        changed: set[str] = set()
        for item in flow.body:
            for stmt in item.body if isinstance(item, ast.Repeat) else (item,):
                if not isinstance(stmt, ast.Statement):
                    continue
                for call, args in _self_call_args(flow, stmt, ctx.flow_table):
                    n = min(len(flow.returns), len(flow.params), len(args))
                    for i in range(n):
                        p = flow.params[i].name
                        if (isinstance(args[i], ast.Ref) and args[i].name == p
                                and p not in changed):
                            yield Diagnostic("W016", f"{flow_prefix(flow)}@unroll self-call "
                                             f"passes parameter '{p}' through unchanged at "
                                             f"position {i + 1}; the innermost copy returns "
                                             f"'{p}' as is", call.pos)
                changed |= {t.name for t in stmt.targets}


def off_label_set(ctx):
    """W019: a logistic regression's or svm's literal y outside its labels (0/S, ±S)."""
    literal = {i.name: i for i in ctx.program.inputs if isinstance(i.value, ast.LiteralInput)}
    for d in ctx.ml_defs:
        y = literal.get(d.params[1].name) if len(d.params) > 1 else None
        why = y and off_labels(d.algo, ctx.program.quant.quantres,
                               Tensor(y.value.shape, y.value.data))
        if why:
            yield Diagnostic("W019", f"ml definition '{d.name}' ({d.algo}): {why}", y.pos)


def dropped_values(ctx):
    """W017: values below the top at '=' are dropped (legal: the top binds)."""
    owned = [(f, s) for f in ctx.flows for s in statements(f.body)]
    owned += [(None, s) for s in ctx.top_statements]
    for flow, stmt in owned:
        # a misspelt op counted as a pushed value would make the leftover count a guess
        # (E003 already says what it looks like)
        bound = (({p.name for p in flow.params} | {t.name for s in statements(flow.body)
                                                    for t in s.targets}) if flow else set())
        misspelt = any(r.name not in bound | ctx.globals and ctx.callable_like(r.name)
                       for r in refs(stmt.terms))
        if stmt.leftover > 0 and not misspelt:
            where = flow_prefix(flow) if flow else ""
            yield Diagnostic("W017", f"{where}{stmt.leftover} value(s) left on the stack at "
                             f"'=' are dropped; the top binds", stmt.pos)


RULES = (
    duplicate_definition, duplicate_target, undefined_variable, duplicate_parameter,
    undefined_return, unknown_directive, unknown_decorator, device_without_host,
    discover_conflict, undeclared_device,
    unused_parameter, rebound_variable, duplicate_object_key, unused_variable,
    duplicate_device_field, duplicate_input, device_on_called_flow, duplicate_output_path,
    inert_print, unexecutable_op, inert_decorator, local_op_routed, literal_credential,
    unknown_device_field, unroll_pass_through, dropped_values, device_pool, off_label_set,
    grid_sweep,
)


def lint(program: ast.Program) -> list[Diagnostic]:
    """Every static finding on a parsed program, sorted by (line, col, code)."""
    ctx = Context(program)
    return sort_diagnostics(d for rule in RULES for d in rule(ctx))
