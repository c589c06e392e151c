"""The recursive-descent parser: source text to a Program plus parse errors (never raises).

Top-level items, the quantization preamble and definitions live here; declaration values
are in `decls`, RPN statements and flow bodies in `body`, shared literal forms in `literals`.
"""
from bark_vm.wire.alias import is_alias
from bark_vm.wire.constants import MAX_QUANTRES

from ..diagnostics import Diagnostic, MnError, Pos
from . import decls, names
from .ast import (DeviceDecl, DeviceRef, Directive, FlowDef, Hyper, InputDecl, MLDef, Param,
                  OutputDecl, PrintStatement, Program, Quant, StatusDecl, Target, TopStatement)
from .body import (BodyParser, Scope, check_bindable, parse_statement, parse_terms,
                   refuse_retracted, reserved_reason)
from .lexer import Token, tokenize
from .literals import Cursor, describe, fail, float_error, int_value, parse_decorator, stop
from .recursion import check_recursion

QUANT_REQUIRED = ("quantmax", "quantmin", "quantres")
PREAMBLE_MSG = ("the script must open with the quantization preamble (mnd::quantmax, "
                "mnd::quantmin, mnd::quantres)")
OUT_OF_SCOPE = ("frame::", "profile::", "tensor::")
BODY_BREAKERS = ("calc::", "in::", "out::", "device::", "status::")


def parse(text: str) -> tuple[Program | None, list[Diagnostic]]:
    """Parse a whole script. Program is None only when there is no usable preamble."""
    return _Parser(text).run()


def prescan(toks: list[Token]) -> dict[str, tuple[int, int]]:
    """Flow name -> (parameter count, return count), so calls may precede definitions."""
    flows, i, n = {}, 0, len(toks)
    while i < n:
        t = toks[i]
        i += 1
        if not (t.kind == "NAME" and t.text == "calc::lambda_flow" and i < n
                and toks[i].kind == "NAME" and toks[i].text.isidentifier()):
            continue
        name, params = toks[i].text, 0
        while i < n and toks[i].kind not in ("{", ")"):
            params += toks[i].kind == "NAME"
            i += 1
        params -= 1  # the flow's own name
        while i < n and toks[i].kind != "{":
            i += 1
        depth = 0
        while i < n:
            depth += {"{": 1, "}": -1}.get(toks[i].kind, 0)
            i += 1
            if depth == 0:
                break
        while i < n and toks[i].kind == "NEWLINE":
            i += 1
        returns = 0
        if i < n and toks[i].kind == "NAME" and toks[i].text == "return":
            i += 1
            while i < n and toks[i].kind in ("NAME", ",", "NEWLINE"):
                returns += toks[i].kind == "NAME"
                i += 1
        if name not in flows and reserved_reason(name, {}) is None:
            flows[name] = (max(params, 0), returns)
    return flows


class _Parser:
    def __init__(self, text: str):
        self.toks, self.diags = tokenize(text)
        self.c = Cursor(self.toks)
        self.flows = prescan(self.toks)
        self.items: list = []
        self.quant: dict[str, tuple[int, Pos]] = {}
        self.other_keys: dict[str, Pos] = {}  # directives that are not quantization's
        self.quant_bad = False
        self.preamble: Quant | None | bool = None  # None: undecided; False: unusable
        self.calls: dict[int, list] = {}  # id(FlowDef) -> its FlowCalls

    # --- driver --------------------------------------------------------------------------

    def run(self):
        c, pending = self.c, []
        while True:
            while c.peek().kind in ("NEWLINE", ";"):
                c.next()
            t = c.peek()
            if t.kind == "EOF":
                break
            start = c.i
            try:
                if t.kind == "AT":
                    self.check_preamble(t)
                    pending.extend(self.top_decorators())
                    continue
                decs, pending = pending, []
                item = self.item(t, decs)
                if item is not None:
                    self.items.append(item)
            except MnError as f:
                pending = []
                self.report(f)
                if f.resume is not None and f.resume > start:
                    c.i = f.resume
                else:
                    c.i = start
                    self.skip_item()
        if pending:
            self.report(stop("EPARSE", f"decorator '@{pending[0].name}' must precede a "
                             "calc:: definition", pending[0].pos))
        self.check_preamble(None)
        self.diags.extend(check_recursion(self.items, self.calls))
        program = Program(self.preamble, tuple(self.items)) if self.preamble else None
        return program, self.diags

    def report(self, f: MnError) -> None:
        self.diags.extend(f.diagnostics)

    def collect(self) -> list[Token]:
        """The tokens up to `;`/newline at bracket depth 0 (terminator consumed). A newline
        right after a depth-0 comma continues the item (multi-line return clauses)."""
        c, out, depth = self.c, [], 0
        while True:
            t = c.peek()
            if t.kind == "EOF":
                return out
            c.next()
            if depth == 0 and (t.kind == ";" or (t.kind == "NEWLINE" and not (
                    out and out[-1].kind == ","))):
                return out
            if t.kind in ("(", "[", "{"):
                depth += 1
            elif t.kind in (")", "]", "}"):
                depth = max(0, depth - 1)
            if t.kind != "NEWLINE":
                out.append(t)

    def skip_item(self) -> None:
        start = self.c.i
        self.collect()
        if self.c.i == start:
            self.c.next()

    def check_preamble(self, tok: Token | None) -> None:
        """Decide the preamble at the first non-directive item (or at the end)."""
        if self.preamble is not None:
            return
        self.preamble = False
        if self.quant_bad:
            return
        missing = [k for k in QUANT_REQUIRED if k not in self.quant]
        pos = tok.pos if tok is not None else Pos(1, 1)
        if missing:
            self.diags.append(Diagnostic("EPARSE", f"{PREAMBLE_MSG}; missing "
                                         + ", ".join(map(self._missing, missing)), pos))
            return
        (qmax, _), (qmin, qmin_pos), (qres, _) = (self.quant[k] for k in QUANT_REQUIRED)
        if qmin >= qmax:
            self.diags.append(Diagnostic("EPARSE", f"mnd::quantmin ({qmin}) must be less than "
                                         f"mnd::quantmax ({qmax})", qmin_pos))
            return
        self.preamble = Quant(qmax, qmin, qres)

    def top_decorators(self) -> list:
        c, decs = self.c, []
        while c.at("AT"):
            decs.append(parse_decorator(c))
            c.skip_newlines()
        return decs

    def item(self, t: Token, decs):
        text = t.text if t.kind == "NAME" else ""
        if text.startswith("calc::") or text == "calc":
            self.check_preamble(t)
            return self.definition(t, decs)
        if decs:
            fail(decs[0], f"decorator '@{decs[0].name}' must precede a calc:: definition")
        if text.startswith("mnd::"):
            return self.directive()
        self.check_preamble(t)
        if text.startswith("in::"):
            return self.input_decl()
        if text.startswith("out::"):
            return self.output_decl()
        if text.startswith("device::"):
            return self.device_decl()
        if text.startswith("status::"):
            return self.status_decl()
        if text.startswith(OUT_OF_SCOPE):
            kind = text.split("::")[0]
            fail(t, f"'{kind}::' statements are out of scope for this implementation", "E025")
        return self.top_statement()

    def _missing(self, key: str) -> str:
        """A missing quantization key, with the typo that may have meant it."""
        typo = names.nearest(key, self.other_keys)
        if typo is None:
            return f"mnd::{key}"
        at = self.other_keys[typo]
        return f"mnd::{key} (mnd::{typo} at {at.line}:{at.col}: did you mean mnd::{key}?)"

    # --- directives ----------------------------------------------------------------------

    def directive(self) -> Directive:
        toks = self.collect()
        head = toks[0]
        key = head.text[len("mnd::"):]
        if not key:
            fail(head, "mnd:: needs a directive key")
        if key.startswith("device::") or key == "device":
            fail(head, "mnd::device:: blocks are retracted; declare device::alias { ... } and "
                 "route a flow with @device(alias)", "E016")
        if key == "backpropagation":
            fail(head, "mnd::backpropagation is retracted: there is no automatic "
                 "differentiation; write the gradient as ordinary ops", "E015")
        if key == "quantrange":
            fail(head, "mnd::quantrange is consumed by nothing; declare mnd::quantmax and "
                 "mnd::quantmin", "E010")
        if key in ("quant", "register_backward") or key.endswith(("_fwd", "_grad")):
            fail(head, f"mnd::{key} is retracted (no backward pass, no legacy quant); declare "
                 "mnd::quantmax, mnd::quantmin and mnd::quantres", "E011")
        nxt = toks[1] if len(toks) > 1 else None
        if nxt is not None and nxt.kind == "{" and key not in names.QUANT_KEYS:
            return Directive(head.pos, key, None)
        if nxt is None or nxt.kind != "=":
            fail(nxt or head, f"expected '=' after mnd::{key}")
        values = toks[2:]
        if key in names.QUANT_KEYS:
            return self.quant_directive(head, key, values)
        self.other_keys.setdefault(key, head.pos)
        if not values:
            fail(nxt, f"expected a value after mnd::{key} =")
        return Directive(head.pos, key, _plain_value(values))

    def quant_directive(self, head: Token, key: str, values: list[Token]) -> Directive:
        quant_key = "quantres" if key == "decimal_places" else key
        try:
            if len(values) != 1 or values[0].kind not in ("INT", "FLOAT"):
                where = values[0] if values else head
                fail(where, f"mnd::{key} takes one integer literal")
            if values[0].kind == "FLOAT":
                float_error(values[0])
            v = int_value(values[0])
            if quant_key == "quantres" and not 0 <= v <= MAX_QUANTRES:
                fail(values[0], f"mnd::{key} must be 0..{MAX_QUANTRES}, got {v}")
        except MnError:
            self.quant_bad = True
            raise
        self.quant[quant_key] = (v, head.pos)
        return Directive(head.pos, key, v)

    # --- declarations --------------------------------------------------------------------

    def input_decl(self) -> InputDecl:
        return decls.input_decl(self.collect(), self.flows)

    def output_decl(self) -> OutputDecl:
        return decls.output_decl(self.collect())

    def status_decl(self) -> StatusDecl:
        return decls.status_decl(self.collect())

    def device_decl(self) -> DeviceDecl:
        c = self.c
        head = c.next()
        alias = head.text[len("device::"):]
        if not is_alias(alias):
            fail(head, f"device:: needs an alias (letters, digits, '_', '-'), found "
                 f"'{head.text}'")
        c.expect("{", f"'{{' to open the device::{alias} block", newlines=True)
        fields, error = [], None
        while True:
            while c.peek().kind in ("NEWLINE", ";"):
                c.next()
            t = c.peek()
            if t.kind == "}":
                c.next()
                break
            if t.kind == "EOF" or (t.kind == "NAME" and t.text.startswith(BODY_BREAKERS)):
                raise stop("EPARSE", f"device::{alias} block is not closed (missing '}}')",
                           head.pos, resume=c.i)
            line = []
            while c.peek().kind not in ("NEWLINE", ";", "}", "EOF"):
                line.append(c.next())
            try:
                fields.append(decls.device_field(line))
            except MnError as f:
                error = error or f
        if error:
            error.resume = c.i
            raise error
        return DeviceDecl(head.pos, alias, tuple(fields))

    # --- statements ----------------------------------------------------------------------

    def top_statement(self):
        toks = self.collect()
        first = toks[0]
        scope = Scope(self.flows, in_body=False)
        if first.kind == "NAME" and first.text == "return" and len(toks) > 1 \
                and toks[1].kind == "(":
            if toks[-1].kind != ")":
                fail(toks[-1], "expected ')' to close return(")
            inner = toks[2:-1]
            refuse_retracted(inner, scope)
            terms, depth = parse_terms(inner, scope)
            if depth == 0:
                fail(first, "return() needs a value to print")
            return PrintStatement(first.pos, tuple(terms))
        for t in toks:
            if t.kind == "NAME" and t.text == "memory::write":
                fail(t, "memory::write statements are out of scope for this implementation",
                     "E025")
        return TopStatement(parse_statement(toks, scope))

    # --- definitions ---------------------------------------------------------------------

    def definition(self, t: Token, decs):
        text = t.text
        if text == "calc::lambda_flow":
            return self.flow_def(decs)
        if text == "calc::ml" or text.startswith("calc::ml::"):
            return self.ml_def(decs)
        if text.startswith("calc::lambda_symphony"):
            fail(t, "calc::lambda_symphony is reserved and not implemented; use "
                 "calc::lambda_flow", "E013")
        if text.startswith("calc::lambda_calculator"):
            fail(t, "calc::lambda_calculator is reserved and not implemented; use "
                 "calc::lambda_flow", "E014")
        fail(t, f"unrecognized definition kind '{text}'; use calc::lambda_flow or "
             "calc::ml::<algorithm>" + names.suggest(text, ("calc::lambda_flow", "calc::ml")),
             "E009")

    def signature(self, what: str):
        """NAME ( params ) [@device(a, ...)] — shared by flows and ML definitions."""
        c = self.c
        name_tok = c.peek()
        if name_tok.kind != "NAME" or not name_tok.text.isidentifier():
            fail(name_tok, f"expected the {what} name, found {describe(name_tok)}")
        why = reserved_reason(name_tok.text, {})
        if why:
            fail(name_tok, f"'{name_tok.text}' is reserved ({why}) and cannot name a {what}")
        c.next()
        c.expect("(", f"'(' after the {what} name")
        params = []
        while True:
            c.skip_newlines()
            t = c.peek()
            if t.kind == ")" and not params:
                c.next()
                break
            check_bindable(t, self.flows, "a parameter name")
            params.append(Param(c.next().pos, t.text))
            c.skip_newlines()
            sep = c.next()
            if sep.kind == ")":
                break
            if sep.kind != ",":
                fail(sep, f"expected ',' or ')' in the parameter list, found {describe(sep)}")
        c.skip_newlines()
        devices, extra = [], []
        while c.at("AT"):
            if c.peek().text == "device":
                devices.extend(_device_refs(c))
            else:  # kept for the linter (E008 unknown, W012 inert)
                extra.append(parse_decorator(c))
            c.skip_newlines()
        return name_tok, tuple(params), tuple(devices), tuple(extra)

    def flow_def(self, decs) -> FlowDef:
        c = self.c
        kw = c.next()
        name_tok, params, devices, extra = self.signature("flow")
        name = name_tok.text
        decs = (*decs, *extra)
        unroll = _unroll(decs)
        open_tok = c.expect("{", f"'{{' to open the body of flow '{name}'", newlines=True)
        end = self.block_end(open_tok, f"flow '{name}' body")
        scope = Scope(self.flows)
        body = BodyParser(scope, self.diags).parse(self.toks[c.i:end])
        c.i = end + 1
        returns = self.return_clause(f"flow '{name}'", "EPARSE")
        flow = FlowDef(kw.pos, name, params, devices, body, returns, tuple(decs), unroll)
        self.calls[id(flow)] = scope.calls
        return flow

    def block_end(self, open_tok: Token, what: str) -> int:
        """Index of the `}` closing `open_tok` (the cursor sits just after it)."""
        depth, j = 1, self.c.i
        while j < len(self.toks):
            t = self.toks[j]
            if t.kind == "{":
                depth += 1
            elif t.kind == "}":
                depth -= 1
                if depth == 0:
                    return j
            elif t.kind == "EOF" or (t.kind == "NAME" and t.text.startswith(BODY_BREAKERS)
                                     and self.toks[j - 1].kind == "NEWLINE"):
                break
            j += 1
        raise stop("EPARSE", f"{what} is not closed (missing '}}')", open_tok.pos, resume=j)

    def return_clause(self, what: str, code: str) -> tuple[Target, ...]:
        """`return a, b;` after a closing brace; newlines allowed after commas."""
        c = self.c
        c.skip_newlines()
        t = c.peek()
        if not (t.kind == "NAME" and t.text == "return") or c.peek(1).kind == "(":
            raise stop(code, f"{what} needs a return clause ('}} return name;')", t.pos,
                       resume=c.i)
        c.next()
        targets = []
        while True:
            c.skip_newlines()
            t = c.peek()
            if t.kind != "NAME" or not t.text.isidentifier():
                if t.kind == "BAD":
                    raise stop("", "", None, resume=c.i)
                raise stop(code, f"expected a name in the return clause of {what}, found "
                           f"{describe(t)}", t.pos, resume=c.i)
            targets.append(Target(c.next().pos, t.text))
            sep = c.peek()
            if sep.kind == ",":
                c.next()
                continue
            if sep.kind == ";":
                c.next()
                return tuple(targets)
            c.skip_newlines()
            if c.at(","):
                c.next()
                continue
            raise stop(code, f"expected ',' or ';' after '{targets[-1].name}' in the return "
                       f"clause of {what}, found {describe(sep)}", sep.pos, resume=c.i)

    def ml_def(self, decs) -> MLDef:
        c = self.c
        kw = c.next()
        algo = kw.text[len("calc::ml::"):] if kw.text.startswith("calc::ml::") else ""
        from ..ml_catalogue import NAMES  # the closed set of algorithms (E021 otherwise)
        if algo not in NAMES:
            known = ", ".join(NAMES)
            hint = names.suggest(algo, NAMES)
            msg = (f"unknown calc::ml:: algorithm '{algo}'{hint}" if algo
                   else "calc::ml:: needs an algorithm")
            fail(kw, f"{msg}; the algorithms are {known}", "E021")
        try:
            name_tok, params, devices, extra = self.signature("ML definition")
            decs = (*decs, *extra)
            what = f"ml definition '{name_tok.text}' ({algo})"
            open_tok = c.expect("{", f"'{{' to open the hyperparameters of {what}",
                                newlines=True)
            hypers = self.hypers(open_tok, what)
            returns = self.return_clause(what, "E022")
        except MnError as f:
            if f.diagnostics and f.diagnostics[0].code == "EPARSE":
                d = f.diagnostics[0]
                raise stop("E022", d.message, d.pos, f.resume) from None
            raise
        return MLDef(kw.pos, algo, name_tok.text, params, devices, hypers, returns,
                     tuple(decs))

    def hypers(self, open_tok: Token, what: str) -> tuple[Hyper, ...]:
        c, out = self.c, []
        while True:
            c.skip_newlines()
            t = c.peek()
            if t.kind == "}":
                c.next()
                return tuple(out)
            if out:
                if t.kind != ",":
                    fail(t, f"{what}: expected ',' or '}}' between hyperparameters, found "
                         f"{describe(t)}", "E022")
                c.next()
                c.skip_newlines()
                t = c.peek()
                if t.kind == "}":
                    continue
            if t.kind == "EOF":
                fail(open_tok, f"{what}: hyperparameter block is not closed", "E022")
            if t.kind != "NAME" or not t.text.isidentifier() or c.peek(1).kind != ":":
                fail(t, f"{what}: the block holds 'key: value' hyperparameters, found "
                     f"{describe(t)}", "E022")
            c.next()
            c.next()
            c.skip_newlines()
            out.append(Hyper(t.pos, t.text, _hyper_value(c, what, t.text)))


# --- small value forms --------------------------------------------------------------------


def _plain_value(values: list[Token]):
    """A directive's value: int, string, bool or name; anything longer is kept as text."""
    if len(values) == 1:
        v = values[0]
        if v.kind == "INT" and v.value is not None:
            return v.value
        if v.kind == "STRING":
            return v.value
        if v.kind == "NAME" and v.text in ("true", "false"):
            return v.text == "true"
        return v.text
    return " ".join(v.text for v in values)


def _hyper_value(c: Cursor, what: str, key: str):
    t = c.next()
    if t.kind == "INT":
        return int_value(t)
    if t.kind == "NAME" and t.text in ("true", "false"):
        return t.text == "true"
    if t.kind == "FLOAT":
        fail(t, f"{what}: '{key}' is {t.text}; hyperparameters are scaled integers, never "
             "floats", "E022")
    if t.kind == "[":
        values = []
        while True:
            c.skip_newlines()
            v = c.next()
            if v.kind == "INT":
                values.append(int_value(v))
            elif v.kind == "FLOAT":
                fail(v, f"{what}: '{key}' holds the float {v.text}; hyperparameters are "
                     "scaled integers", "E022")
            elif v.kind == "[":
                fail(v, f"{what}: '{key}' is a nested list; a sweep is a flat list of "
                     "integers", "E022")
            else:
                fail(v, f"{what}: expected an integer in the '{key}' list, found "
                     f"{describe(v)}", "E022")
            c.skip_newlines()
            sep = c.next()
            if sep.kind == "]":
                return tuple(values)
            if sep.kind != ",":
                fail(sep, f"{what}: expected ',' or ']' in the '{key}' list", "E022")
    fail(t, f"{what}: '{key}' takes an integer, true/false or a list of integers, found "
         f"{describe(t)}", "E022")


def _device_refs(c: Cursor) -> list[DeviceRef]:
    """`@device(a[, b...])` with each alias at its own position."""
    at = c.next()
    c.expect("(", "'(' after @device")
    refs = []
    while True:
        c.skip_newlines()
        a = c.next()
        if a.kind != "NAME" or not is_alias(a.text):
            fail(a if a.kind != ")" else at, "@device takes one or more worker aliases, as in "
                 "@device(bob)")
        refs.append(DeviceRef(a.pos, a.text))
        c.skip_newlines()
        sep = c.next()
        if sep.kind == ")":
            return refs
        if sep.kind != ",":
            fail(sep, f"expected ',' or ')' in @device(...), found {describe(sep)}")


def _unroll(decs) -> int | None:
    """The @unroll(n) count (1..256), or None without the decorator."""
    n = None
    for d in decs:
        if d.name == "unroll":
            if len(d.args) != 1 or not isinstance(d.args[0], int) \
                    or not 1 <= d.args[0] <= names.MAX_REPEAT:
                raise stop("EPARSE", "@unroll takes one integer count 1..256, as in @unroll(5)",
                           d.pos)
            n = d.args[0]
    return n
