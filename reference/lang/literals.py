"""The parser's token cursor and the literal forms shared by every context: integers,
tensor literals, object parameters and decorators."""
from ..diagnostics import Diagnostic, MnError, Pos
from ..numeric.int32 import INT32_MAX, INT32_MIN, fits32
from .ast import Decorator, ObjEntry, TensorLit
from .lexer import MAX_NESTING, Token


def stop(code: str, message: str, pos: Pos | None, resume: int | None = None) -> MnError:
    """What stops the current item: one diagnostic (none when `code` is empty: already
    reported); `resume` is where parsing may go on."""
    return MnError(*([Diagnostic(code, message, pos)] if code else []), resume=resume)


def fail(tok, message: str, code: str = "EPARSE"):
    """Stop the item at `tok` (a token or node); a BAD token was already reported by the lexer."""
    if getattr(tok, "kind", None) == "BAD":
        raise stop("", "", tok.pos)
    raise stop(code, message, tok.pos)


def describe(tok: Token) -> str:
    return "end of input" if tok.kind == "EOF" else ("end of line" if tok.kind == "NEWLINE"
                                                   else f"'{tok.text}'")


class Cursor:
    """A position in a token list; past its end it yields an EOF token."""

    def __init__(self, tokens: list[Token], start: int = 0, end: int | None = None):
        self.toks = tokens
        self.i = start
        self.end = len(tokens) if end is None else end
        last = tokens[self.end - 1].pos if self.end > 0 else Pos(1, 1)
        self.eof = Token("EOF", "", last)

    def peek(self, k: int = 0) -> Token:
        j = self.i + k
        return self.toks[j] if j < self.end else self.eof

    def next(self) -> Token:
        t = self.peek()
        if self.i < self.end:
            self.i += 1
        return t

    def at(self, kind: str, text: str | None = None) -> bool:
        t = self.peek()
        return t.kind == kind and (text is None or t.text == text)

    def skip_newlines(self) -> None:
        while self.peek().kind == "NEWLINE":
            self.i += 1

    def expect(self, kind: str, what: str, newlines: bool = False) -> Token:
        if newlines:
            self.skip_newlines()
        t = self.peek()
        if t.kind != kind:
            fail(t, f"expected {what}, found {describe(t)}")
        return self.next()

    def done(self) -> bool:
        return self.i >= self.end


def int_value(tok: Token) -> int:
    """The value of an INT token in a value position; outside int32 is E026."""
    if tok.value is None or not fits32(tok.value):
        shown = tok.text if len(tok.text) <= 40 else tok.text[:40] + "..."
        raise stop("E026", f"integer literal {shown} is outside int32 "
                   f"({INT32_MIN}..{INT32_MAX})", tok.pos)
    return tok.value


def float_error(tok: Token):
    raise stop("E023", f"float literal {tok.text} in a value position; values are integers "
               "(write the scaled integer, e.g. 0.5 at quantres 2 is 50)", tok.pos)


def truncated(tok: Token) -> int:
    """A FLOAT or INT token truncated toward zero (object and decorator params only)."""
    whole = tok.text.split(".")[0]
    return int(whole) if len(whole) <= 30 else 0


def parse_tensor(c: Cursor) -> TensorLit:
    """`[...]` with newlines allowed inside; rectangular, non-empty, integer elements."""
    start = c.peek()
    shape, data = _tensor_level(c, 0)
    return TensorLit(start.pos, shape, tuple(data))


def _tensor_level(c: Cursor, depth: int):
    open_tok = c.next()  # '['
    if depth >= MAX_NESTING:
        fail(open_tok, f"tensor literal nests deeper than {MAX_NESTING} levels")
    items = []  # (shape, data) per element; scalars have shape ()
    while True:
        c.skip_newlines()
        t = c.peek()
        if t.kind == "]":
            c.next()
            break
        if items:
            if t.kind != ",":
                fail(t, f"expected ',' or ']' in the tensor literal, found {describe(t)}")
            c.next()
            c.skip_newlines()
            t = c.peek()
        if t.kind == "INT":
            items.append(((), [int_value(c.next())]))
        elif t.kind == "FLOAT":
            float_error(t)
        elif t.kind == "[":
            items.append(_tensor_level(c, depth + 1))
        else:
            fail(t, f"expected a number in the tensor literal, found {describe(t)}")
    if not items:
        fail(open_tok, "empty tensor literal (a tensor needs at least one element)")
    first = items[0][0]
    if any(s != first for s, _ in items):
        fail(open_tok, "tensor literal is not rectangular (every row needs the same shape)")
    return (len(items), *first), [v for _, d in items for v in d]


def parse_object(c: Cursor) -> tuple[ObjEntry, ...]:
    """`{k: v, ...}`: int, float (truncated), true/false (1/0), a name, or a list of ints."""
    c.next()  # '{'
    entries = []
    while True:
        c.skip_newlines()
        t = c.peek()
        if t.kind == "}":
            c.next()
            return tuple(entries)
        if entries:
            if t.kind != ",":
                fail(t, f"expected ',' or '}}' in the object parameters, found {describe(t)}")
            c.next()
            c.skip_newlines()
            t = c.peek()
            if t.kind == "}":
                continue
        if t.kind != "NAME" or not t.text.isidentifier():
            fail(t, f"expected a key in the object parameters, found {describe(t)}")
        c.next()
        c.expect(":", f"':' after the key '{t.text}'", newlines=True)
        c.skip_newlines()
        entries.append(ObjEntry(t.pos, t.text, _obj_value(c)))


def _obj_value(c: Cursor):
    t = c.next()
    if t.kind in ("INT", "FLOAT"):
        return truncated(t)
    if t.kind == "NAME" and t.text in ("true", "false"):
        return int(t.text == "true")
    if t.kind in ("NAME", "STRING"):
        return t.value if t.kind == "STRING" else t.text
    if t.kind == "[":
        values = []
        while True:
            c.skip_newlines()
            v = c.next()
            if v.kind == "]" and not values:
                return ()
            if v.kind not in ("INT", "FLOAT"):
                fail(v, f"an object-parameter list holds integers, found {describe(v)}")
            values.append(truncated(v))
            c.skip_newlines()
            sep = c.next()
            if sep.kind == "]":
                return tuple(values)
            if sep.kind != ",":
                fail(sep, f"expected ',' or ']' in the list, found {describe(sep)}")
    fail(t, f"expected an object-parameter value, found {describe(t)}")


def parse_decorator(c: Cursor) -> Decorator:
    """`@name`, `@name(args)` or `@name{...}`; args are ints (floats truncated) or names."""
    at = c.next()
    if c.at("{"):
        return Decorator(at.pos, at.text, (), parse_object(c))
    if not c.at("("):
        return Decorator(at.pos, at.text)
    c.next()
    args = []
    while True:
        c.skip_newlines()
        t = c.next()
        if t.kind == ")" and not args:
            break
        if t.kind in ("INT", "FLOAT"):
            args.append(truncated(t))
        elif t.kind == "NAME":
            args.append(t.text)
        elif t.kind == "STRING":
            args.append(t.value)
        else:
            fail(t, f"expected a decorator argument, found {describe(t)}")
        c.skip_newlines()
        sep = c.next()
        if sep.kind == ")":
            break
        if sep.kind != ",":
            fail(sep, f"expected ',' or ')' after a decorator argument, found {describe(sep)}")
    return Decorator(at.pos, at.text, tuple(args))
