"""RPN statements and flow bodies: term classification (R34), the stack-depth check (R8),
targets, `repeat` blocks and statement decorators."""
from dataclasses import dataclass, field

from ..diagnostics import Diagnostic, MnError
from .. import catalogue
from . import names
from .ast import (FlowCall, InertPrint, Num, OpCall, Ref, Repeat, StackOp,
                  Statement, Target)
from .lexer import Token
from .literals import (Cursor, describe, fail, float_error, int_value, parse_decorator,
                       parse_object, parse_tensor, stop)

ANNOTATION_PREFIXES = ("oc::", "ot::", "os::")
LAMBDA_MSG = ("lambda expressions (x => body / lambda ... end) are retracted - the evaluator "
              "never implemented them; define a calc::lambda_flow or use the combinator ops "
              "(identity/kestrel/kite/compose)")
REPEAT_MSG = "repeat takes one integer count 1..256, as in repeat(8):"


@dataclass
class Scope:
    """What classification needs: the pre-scanned flow table (name -> params, returns)."""

    flows: dict[str, tuple[int, int]]
    in_body: bool = True
    calls: list[FlowCall] = field(default_factory=list)


def reserved_reason(name: str, flows) -> str | None:
    """Why `name` may not be bound (a target, parameter or input), or None."""
    if name in names.KEYWORDS:
        return "a keyword"
    if name in names.STACK_OPS:
        return "a stack op"
    if catalogue.lookup(name):
        return "an op name"
    if name in names.COMBINATORS or name in names.BIRDS:
        return "a reserved combinator name"
    if name in flows:
        return "a flow name"
    return None


def check_bindable(tok: Token, flows, what: str) -> None:
    """EPARSE unless `tok` is a plain identifier that is not reserved."""
    if tok.kind != "NAME" or not tok.text.isidentifier():
        fail(tok, f"expected {what}, found {describe(tok)}")
    why = reserved_reason(tok.text, flows)
    if why:
        fail(tok, f"'{tok.text}' is reserved ({why}) and cannot be used as {what}")


def combinator_message(name: str, in_body: bool) -> str:
    if name in names.BIRDS:
        return f"'{name}' is reserved but has no implementation"
    if in_body:
        return (f"combinator '{name}' in a flow body is not executable yet (lambda expressions "
                "are not accepted inside a flow body). Use the postfix stack-op spelling instead.")
    return (f"combinator '{name}' is not reachable from this context; it is implemented as a "
            "λ-term only")


def refuse_retracted(toks: list[Token], scope: Scope) -> None:
    """The retracted forms win over any other complaint about the statement (E017, E015)."""
    for t in toks:
        if t.kind == "ARROW" or (t.kind == "NAME" and t.text in ("lambda", "ycombinator")):
            raise stop("E017", LAMBDA_MSG, t.pos)
        if t.kind == "NAME" and (t.text in names.COMBINATORS or t.text in names.BIRDS):
            raise stop("E017", combinator_message(t.text, scope.in_body), t.pos)
        if t.kind == "NAME" and t.text == "mnd::backpropagation":
            raise stop("E015", "mnd::backpropagation is retracted: there is no automatic "
                       "differentiation; write the gradient as ordinary ops", t.pos)


class _Terms:
    """Left-to-right classification of RPN terms with the stack depth simulated."""

    def __init__(self, c: Cursor, scope: Scope):
        self.c, self.scope = c, scope
        self.terms, self.depth = [], 0

    def run(self) -> list:
        c = self.c
        pending = None  # (open token, entries) of an object parameter
        while not c.done():
            t = c.peek()
            if t.kind == "{":
                if pending:
                    fail(pending[0], "object parameters must be followed by the op they "
                         "configure")
                pending = (t, parse_object(c))
                continue
            term = self.term(c.next())
            if pending:
                if not isinstance(term, OpCall):
                    fail(pending[0], "object parameters must be followed by the op they "
                         "configure")
                term = self.attach(term, *pending)
                pending = None
            self.terms.append(term)
        if pending:
            fail(pending[0], "object parameters must be followed by the op they configure")
        return self.terms

    def attach(self, op: OpCall, open_tok: Token, entries) -> OpCall:
        allowed = catalogue.BY_NAME[op.name].params
        for e in entries:
            if e.key not in allowed:
                takes = f"it takes {', '.join(allowed)}" if allowed else "it takes none"
                raise stop("EPARSE", f"'{e.key}' is not a parameter of '{op.spelling}' ({takes})"
                           f"{names.suggest(e.key, allowed)}", e.pos)
        return OpCall(op.pos, op.name, op.spelling, tuple(entries))

    def need(self, tok: Token, name: str, n: int) -> None:
        if self.depth < n:
            s = "" if n == 1 else "s"
            fail(tok, f"'{name}' needs {n} operand{s}, the stack holds {self.depth}")

    def term(self, t: Token):
        kind, text = t.kind, t.text
        if kind == "INT":
            self.depth += 1
            return Num(t.pos, int_value(t))
        if kind == "FLOAT":
            float_error(t)
        if kind == "[":
            self.c.i -= 1
            lit = parse_tensor(self.c)
            self.depth += 1
            return lit
        if kind == "CMP":
            return self.op(t, catalogue.lookup(text))
        if kind != "NAME":
            fail(t, f"unexpected {describe(t)} in a statement")
        if text in names.STACK_PERMS:
            self.need(t, text, names.stack_needs(text))
            self.depth += names.stack_delta(text)
            return StackOp(t.pos, text)
        spec = catalogue.lookup(text)
        if spec is not None:
            return self.op(t, spec)
        if text in self.scope.flows:
            params, returns = self.scope.flows[text]
            self.need(t, text, params)
            self.depth += returns - params
            call = FlowCall(t.pos, text)
            self.scope.calls.append(call)
            return call
        if "::" in text:
            fail(t, f"unexpected qualified name '{text}' in a statement")
        if "." in text:
            if self.scope.in_body:
                fail(t, f"property reference '{text}' is not allowed in a flow body; pass the "
                     "value in as a parameter", "E006")
            fail(t, f"projection '{text}' is out of scope for this implementation", "E025")
        if text in names.KEYWORDS:
            fail(t, f"'{text}' is a keyword and cannot appear as an operand")
        nxt = self.c.peek()
        if nxt.kind == "[" and not nxt.spaced:
            fail(t, f"indexed reference '{text}[...]' is not allowed in a flow body; slice "
                 "with an op (slice, split) instead", "E006")
        self.depth += 1
        return Ref(t.pos, text)

    def op(self, t: Token, spec) -> OpCall:
        if spec.kind == "ctor":
            fail(t, f"constructor '{t.text}' is only valid in an in:: initializer")
        if spec.kind == "scope":
            fail(t, f"op '{t.text}' is out of scope for this implementation", "E025")
        self.need(t, t.text, spec.arity)
        self.depth += 1 - spec.arity
        return OpCall(t.pos, spec.name, t.text)


def parse_terms(toks: list[Token], scope: Scope) -> tuple[list, int]:
    """Classified terms and the final stack depth."""
    tc = _Terms(Cursor(toks), scope)
    terms = tc.run()
    return terms, tc.depth


def parse_statement(toks: list[Token], scope: Scope, decorators=()) -> Statement:
    """`terms targets [annotation] =` (the tokens of one statement, terminator excluded)."""
    refuse_retracted(toks, scope)
    last = toks[-1]
    if last.kind != "=":
        fail(last, "a statement ends with 'target =' (no '=' found)")
    j = len(toks) - 2
    annotation = None
    if j >= 0 and toks[j].kind == "NAME" and toks[j].text.startswith(ANNOTATION_PREFIXES):
        annotation = toks[j].text
        j -= 1
    if j < 0:
        fail(last, "missing target name before '='")
    targets = [toks[j]]
    while j >= 2 and toks[j - 1].kind == ",":
        j -= 2
        targets.insert(0, toks[j])
    for tt in targets:
        check_bindable(tt, scope.flows, "a target name")
    terms, depth = parse_terms(toks[:j], scope)
    n = len(targets)
    if depth == 0:
        fail(last, "nothing to bind: the stack is empty at '='")
    if n > 1:
        callee = terms[-1] if terms else None
        returns = scope.flows[callee.name][1] if isinstance(callee, FlowCall) else None
        if returns != n:
            what = (f"'{callee.name}' returns {returns}" if returns is not None
                    else "the last term is not a flow call")
            fail(targets[0], f"{n} targets need a flow call returning {n} values as the last "
                 f"term ({what})")
    return Statement(toks[0].pos, tuple(terms), tuple(Target(t.pos, t.text) for t in targets),
                     annotation, tuple(decorators), depth - n)


# --- flow bodies ------------------------------------------------------------------------


def split_lines(toks: list[Token]) -> list[list[Token]]:
    """Body tokens into statements: `;`/newline at bracket depth 0, after a depth-0 `=`,
    and after the `:` of a `repeat(n):` or `@clock(n):` header."""
    lines, cur, depth = [], [], 0
    for t in toks:
        k = t.kind
        if depth == 0 and k in ("NEWLINE", ";"):
            if cur:
                lines.append(cur)
            cur = []
            continue
        cur.append(t)
        if k in ("(", "[", "{"):
            depth += 1
        elif k in (")", "]", "}"):
            depth = max(0, depth - 1)
        elif depth == 0 and (k == "=" or (k == ":" and _is_header(cur))):
            lines.append(cur)
            cur = []
    if cur:
        lines.append(cur)
    return lines


def _is_header(line: list[Token]) -> bool:
    first = line[0]
    return (first.kind == "NAME" and first.text == "repeat") or (
        first.kind == "AT" and first.text == "clock")


class BodyParser:
    """Items of one flow body; each statement's error is reported and parsing goes on."""

    def __init__(self, scope: Scope, diags: list[Diagnostic]):
        self.scope, self.diags = scope, diags

    def report(self, f: MnError) -> None:
        self.diags.extend(f.diagnostics)

    def parse(self, toks: list[Token]) -> tuple:
        lines = split_lines(toks)
        items, pending, i = [], [], 0
        while i < len(lines):
            line = lines[i]
            i += 1
            first = line[0]
            try:
                if first.kind == "NAME" and first.text == "repeat":
                    i, item = self.repeat(lines, i, line)
                    if pending:
                        fail(pending[0], "a statement decorator must precede a statement")
                    if item:
                        items.append(item)
                    continue
                if first.kind == "NAME" and first.text == "end" and len(line) == 1:
                    fail(first, "'end' without a matching repeat(n):")
                if first.kind == "AT":
                    rest = self.decorators(line, pending)
                    if not rest:
                        continue
                    line = rest
                decs, pending = pending, []
                item = self.simple(line, decs)
                if decs and not isinstance(item, Statement):
                    fail(decs[0], "a statement decorator must precede a statement")
                items.append(item)
            except MnError as f:
                pending = []
                self.report(f)
        if pending:
            self.report(stop("EPARSE", "a statement decorator must precede a statement",
                             pending[0].pos))
        return tuple(items)

    def decorators(self, line, pending: list) -> list[Token]:
        """Parse leading decorators into `pending`; returns the rest of the line."""
        c = Cursor(line)
        while c.at("AT"):
            at = c.peek()
            if at.text == "clock":
                fail(at, "@clock sections are out of scope for this implementation; data "
                     "dependencies already order the body", "E025")
            pending.append(parse_decorator(c))
        return line[c.i:]

    def simple(self, line: list[Token], decs) -> object:
        first = line[0]
        if first.kind == "NAME" and first.text == "return":
            if len(line) > 1 and line[1].kind == "(":
                return InertPrint(first.pos, "return")
            fail(first, "the return clause belongs after the body's closing '}'")
        if any(t.kind == "NAME" and t.text == "memory::write" for t in line):
            return InertPrint(first.pos, "memory::write")
        return parse_statement(line, self.scope, decs)

    def repeat(self, lines, i: int, header: list[Token]):
        """`repeat(n):` ... `end`; returns (next line index, Repeat or None on error)."""
        count, error = _repeat_count(header)
        body, nested_error = [], None
        while True:
            if i >= len(lines):
                self.report(stop("EPARSE", "repeat(n): block has no 'end'", header[0].pos))
                break
            line = lines[i]
            i += 1
            first = line[0]
            if first.kind == "NAME" and first.text == "end" and len(line) == 1:
                break
            if first.kind == "NAME" and first.text == "repeat":
                nested_error = nested_error or stop("EPARSE", "repeat blocks do not nest; move "
                                                    "the inner loop into a helper flow",
                                                    first.pos)
                i = self._skip_to_end(lines, i)
                continue
            body.append(line)
        for f in (error, nested_error):
            if f:
                self.report(f)
        stmts = self.parse(_join(body))
        stmts = tuple(s for s in stmts if isinstance(s, Statement))
        if error or nested_error:
            return i, None
        return i, Repeat(header[0].pos, count, stmts)

    @staticmethod
    def _skip_to_end(lines, i: int) -> int:
        while i < len(lines):
            line = lines[i]
            i += 1
            if line[0].kind == "NAME" and line[0].text == "end" and len(line) == 1:
                break
        return i


def _join(lines: list[list[Token]]) -> list[Token]:
    out = []
    for line in lines:
        out.extend(line)
        out.append(Token(";", ";", line[-1].pos))
    return out


def _repeat_count(header: list[Token]):
    """(count, None) or (None, MnError) for the tokens `repeat ( n ) :`."""
    kinds = [t.kind for t in header]
    if kinds[-1] != ":":
        return None, stop("EPARSE", "expected ':' after repeat(n)", header[-1].pos)
    if kinds == ["NAME", "(", "INT", ")", ":"]:
        n = header[2].value
        if n is not None and 1 <= n <= names.MAX_REPEAT:
            return n, None
    pos = header[2].pos if len(header) > 2 else header[0].pos
    return None, stop("E019", REPEAT_MSG, pos)
