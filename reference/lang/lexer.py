"""The lexer: one pass over the source text into tokens (spec/language.md §1).

Qualified and dotted names (`mnd::quantmax`, `calc::ml::svm`, `tensor.init`, `r.eigenvalues`)
are one NAME token; the parser splits them. Bad characters become BAD tokens plus a
diagnostic, so the parser can skip the item without reporting it twice.

An `in::NAME =` initializer that is a well-formed tensor literal of integers is read in one
pass into one TENSOR token holding its shape and values (`value`); anything else about it
(a float, a ragged row, a value outside int32, a comment inside) is left to the tokens and
the parser's literal reader, which say what is wrong where.
"""
import json
import re
from dataclasses import dataclass

from ..diagnostics import Diagnostic, Pos
from ..numeric.int32 import INT32_MAX, INT32_MIN

# Token kinds: NAME INT FLOAT STRING AT CMP ARROW NEWLINE BAD EOF, and each punctuation
# character `{ } [ ] ( ) : , ; =` as its own kind.
PUNCT = frozenset("{}[]():,;=")
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_DIGITS = frozenset("0123456789")
_IDENT = _LETTERS | _DIGITS
_SPACE = frozenset(" \t\r\f\v")
_CMP2 = ("==", ">=", "<=", "!=")
_MAX_DIGITS = 30  # longer literals are kept as text only (never converted)
MAX_NESTING = 16  # tensor-literal bracket depth
_PLAIN = re.compile(r"\[[0-9,\[\] \t\r\n-]*")  # what a plain tensor literal is made of
_BRACKETS = re.compile(r"[\[\]]")


@dataclass(frozen=True)
class Token:
    """kind, source text, 1-based position; `value` is the int/str a literal holds;
    `spaced` says whitespace (or a line start) precedes the token."""

    kind: str
    text: str
    pos: Pos
    value: object = None
    spaced: bool = True


def _number_value(text: str):
    """The int of an integer literal; None when it has too many digits to convert."""
    digits = text.lstrip("-")
    return int(text) if len(digits) <= _MAX_DIGITS else None


class _Lexer:
    def __init__(self, text: str):
        self.s = text
        self.i = 0
        self.line = 1
        self.col = 1
        self.tokens: list[Token] = []
        self.diags: list[Diagnostic] = []
        self.spaced = True
        self.in_device_refs = False  # between `@device(` and `)`: aliases may hold hyphens

    def pos(self) -> Pos:
        return Pos(self.line, self.col)

    def advance(self, n: int = 1) -> None:
        self.i += n
        self.col += n

    def emit(self, kind, text, pos, value=None) -> None:
        self.tokens.append(Token(kind, text, pos, value, self.spaced))
        self.spaced = False

    def error(self, pos: Pos, message: str) -> None:
        self.diags.append(Diagnostic("EPARSE", message, pos))

    def run(self) -> None:
        s = self.s
        n = len(s)
        while self.i < n:
            c = s[self.i]
            if c == "\n":
                self.emit("NEWLINE", "\n", self.pos())
                self.i += 1
                self.line += 1
                self.col = 1
                self.spaced = True
            elif c in _SPACE:
                self.advance()
                self.spaced = True
            elif c == "#":
                while self.i < n and s[self.i] != "\n":
                    self.advance()
                self.spaced = True
            elif c in _LETTERS:
                self.name()
            elif c in _DIGITS or (c == "-" and self.peek(1) in _DIGITS):
                self.number()
            elif c == "-" and s.startswith("rot", self.i + 1) and self.peek(4) not in _IDENT:
                self.emit("NAME", "-rot", self.pos())
                self.advance(4)
            elif c in "\"'":
                self.string(c)
            elif c == "@" and self.peek(1) in _LETTERS:
                pos = self.pos()
                self.advance()
                start = self.i
                while self.i < n and s[self.i] in _IDENT:
                    self.advance()
                self.emit("AT", s[start:self.i], pos)
                self.in_device_refs = s[start:self.i] == "device" and self.peek(0) == "("
            elif s.startswith("=>", self.i):
                self.emit("ARROW", "=>", self.pos())
                self.advance(2)
            elif s[self.i:self.i + 2] in _CMP2:
                self.emit("CMP", s[self.i:self.i + 2], self.pos())
                self.advance(2)
            elif c in "<>":
                self.emit("CMP", c, self.pos())
                self.advance()
            elif c == "[" and self.initializer() and self.tensor():
                pass
            elif c in PUNCT:
                self.emit(c, c, self.pos())
                self.advance()
                if c == ")":
                    self.in_device_refs = False
            else:
                self.bad_run()

    def peek(self, k: int) -> str:
        """The character k ahead, or "" past the end ("" is in no character set)."""
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def name(self) -> None:
        """identifier, then any `::ident` / `.ident` glued parts; a dangling `::` is kept.
        A worker alias (`device::bob-i3`, `@device(bob-i3)`, `status::bob-i3`) glues `-ident`
        parts too (spec/wire.md §3.8); anywhere else a `-` after a name starts a new token."""
        s, pos, start = self.s, self.pos(), self.i
        n = len(s)
        alias = self.in_device_refs
        while True:
            while self.i < n and (s[self.i] in _IDENT or (
                    alias and s[self.i] == "-" and self.peek(1) in _IDENT)):
                self.advance()
            if s.startswith("::", self.i):
                alias = alias or s[start:self.i] in ("device", "status")
                self.advance(2)
                if self.i < n and s[self.i] in _LETTERS:
                    continue
                break
            if self.peek(0) == "." and self.peek(1) in _LETTERS:
                self.advance()
                continue
            break
        self.emit("NAME", s[start:self.i], pos)

    def initializer(self) -> bool:
        """Whether the next token starts an `in::NAME =` initializer."""
        t = self.tokens
        return len(t) >= 2 and t[-1].kind == "=" and t[-2].kind == "NAME" and \
            t[-2].text.startswith("in::")

    def tensor(self) -> bool:
        """A plain tensor literal as one TENSOR token; False (nothing read) otherwise."""
        s, start = self.s, self.i
        run = _PLAIN.match(s, start)
        depth = deepest = 0
        for m in _BRACKETS.finditer(s, start, run.end()):
            depth += 1 if m.group() == "[" else -1
            deepest = max(deepest, depth)
            if depth == 0:
                break
        if depth or deepest > MAX_NESTING:
            return False
        text = s[start:m.end()]
        try:
            read = plain_tensor(json.loads(text))
        except ValueError:  # not JSON's integers (`01`, `- 1`, `[1,]`): the tokens say why
            return False
        if read is None:
            return False
        self.emit("TENSOR", text, self.pos(), read)
        lines = text.count("\n")
        self.i += len(text)
        if lines:
            self.line += lines
            self.col = len(text) - text.rfind("\n")
        else:
            self.col += len(text)
        return True

    def number(self) -> None:
        s, pos, start = self.s, self.pos(), self.i
        if s[self.i] == "-":
            self.advance()
        while self.peek(0) in _DIGITS:
            self.advance()
        if self.peek(0) == "." and self.peek(1) in _DIGITS:
            self.advance()
            while self.peek(0) in _DIGITS:
                self.advance()
            self.emit("FLOAT", s[start:self.i], pos)
            return
        text = s[start:self.i]
        self.emit("INT", text, pos, _number_value(text))

    def string(self, quote: str) -> None:
        s, pos = self.s, self.pos()
        end = s.find(quote, self.i + 1)
        newline = s.find("\n", self.i + 1)
        if end < 0 or (0 <= newline < end):
            stop = newline if newline >= 0 else len(s)
            self.error(pos, "unterminated string")
            self.emit("BAD", s[self.i:stop], pos)
            self.advance(stop - self.i)
            return
        self.emit("STRING", s[self.i:end + 1], pos, s[self.i + 1:end])
        self.advance(end + 1 - self.i)

    def bad_run(self) -> None:
        """One diagnostic for a run of characters the language has no token for."""
        pos, start = self.pos(), self.i
        c = self.s[self.i]
        self.advance()
        while self.i < len(self.s) and self._is_bad(self.s[self.i]):
            self.advance()
        self.error(pos, f"unexpected character {c!r}")
        self.emit("BAD", self.s[start:self.i], pos)

    def _is_bad(self, c: str) -> bool:
        return not (c in _IDENT or c in _SPACE or c in PUNCT or c in "\n#\"'@<>!-")


def plain_tensor(value) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """(shape, row-major values) of nested lists that are a rectangular, non-empty tensor of
    int32 integers; None otherwise."""
    shape, v = [], value
    while isinstance(v, list):
        if not v:
            return None
        shape.append(len(v))
        v = v[0]
    level = [value]
    for d in shape:
        flat: list = []
        for x in level:
            if type(x) is not list or len(x) != d:
                return None
            flat.extend(x)
        level = flat
    if not all(type(x) is int for x in level) or min(level) < INT32_MIN or max(
            level) > INT32_MAX:
        return None
    return tuple(shape), tuple(level)


def tokenize(text: str) -> tuple[list[Token], list[Diagnostic]]:
    """Tokens of `text` (always ending with EOF) and the lexical errors found."""
    lx = _Lexer(text)
    lx.run()
    lx.tokens.append(Token("EOF", "", lx.pos(), None, True))
    return lx.tokens, lx.diags
