"""Every mutant of a set of source files, in a fixed order, each a text edit of one file.

A mutant's id is `<path>:<line>:<col>:<operator>` (line and column 1-based, in characters,
of the token it changes; `#n` added when one node yields several alike): where it is today.
Its site, `<path>::<qualname>:<operator>#<n>` (the n-th mutant of that operator in that
definition, in source order), is what it is: the key a judgement uses, which an edit of
another definition, or of this one but not of that operator's sites, leaves alone.

The edit touches only that token (or that literal, statement or test), so the rest of the file, its
comments and spelling included, stays as written; a mutant is kept only when the edited
file compiles and parses to exactly the node `operators.py` made.
"""
import ast
import bisect
import glob
import io
import tokenize
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from .operators import OPERATORS, SYMBOL, Operator, is_stringy

DEFAULT_FILES = ("bark_vm/executor/*.py", "bark_vm/wire/ir.py", "bark_vm/wire/envelope.py",
                 "bark_vm/wire/dtypes.py", "bark_vm/request_handling.py", "bark_vm/kept.py")

Edit = tuple[int, int, str]  # (start, end, replacement), character offsets in the file


@dataclass(frozen=True)
class Mutant:
    id: str
    path: str       # relative to the root (the folder holding the bark_vm package), posix
    line: int
    col: int
    operator: str
    scope: str      # the enclosing definitions, `Class.method`, or `<module>`
    site: str       # `<path>::<scope>:<operator>#<n>`: the judgements' key
    original: str   # the source line(s) the edit touches, whitespace collapsed
    mutated: str    # the same line(s) after the edit
    edits: tuple[Edit, ...]

    def apply(self, source: str) -> str:
        """The mutated text of the file whose original text is `source`."""
        for start, end, text in sorted(self.edits, reverse=True):
            source = source[:start] + text + source[end:]
        return source


class _Source:
    """A file's text with what the edits need: offsets from ast positions (UTF-8 byte
    columns) and from tokens (character columns), and the tokens themselves."""

    def __init__(self, text: str):
        self.text = text
        self.lines = io.StringIO(text).readlines()  # split at "\n" only, as ast counts
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))
        self.tokens = [(t.type, t.string, self.at(*t.start), self.at(*t.end))
                       for t in tokenize.generate_tokens(io.StringIO(text).readline)
                       if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT,
                                         tokenize.INDENT, tokenize.DEDENT,
                                         tokenize.ENDMARKER)]
        self.token_starts = [t[2] for t in self.tokens]

    def at(self, line: int, col: int) -> int:
        return self.starts[line - 1] + col

    def _byte_col(self, line: int, col: int) -> int:
        return self.at(line, len(self.lines[line - 1].encode()[:col].decode()))

    def start(self, node: ast.AST) -> int:
        return self._byte_col(node.lineno, node.col_offset)

    def end(self, node: ast.AST) -> int:
        return self._byte_col(node.end_lineno, node.end_col_offset)

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset) - 1  # 0-based

    def find(self, symbol: str, lo: int, hi: int) -> tuple[int, int]:
        """The span of `symbol` (one or two tokens, as `not in`) between offsets lo and hi."""
        words = symbol.split()
        k = bisect.bisect_left(self.token_starts, lo)
        while k + len(words) <= len(self.tokens) and self.tokens[k][2] < hi:
            run = self.tokens[k:k + len(words)]
            if [t[1] for t in run] == words and run[-1][3] <= hi:
                return run[0][2], run[-1][3]
            k += 1
        raise LookupError(f"no {symbol!r} between offsets {lo} and {hi}")

    def next_token(self, offset: int) -> int:
        """The start of the first token after the one starting at `offset`."""
        k = bisect.bisect_right(self.token_starts, offset)
        return self.tokens[k][2]


def _literal(original: str, value) -> str:
    """An integer written in the base the original literal used (0xFFFF -> 0x10000)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return repr(value)
    prefix = original[:2].lower()
    if prefix in ("0x", "0o", "0b") and value >= 0:
        text = format(value, {"0x": "x", "0o": "o", "0b": "b"}[prefix])
        return original[:2] + (text.upper() if original[2:].isupper() else text)
    return str(value)


def _edits(src: _Source, op: Operator, node: ast.AST, site, new: ast.AST) -> list[Edit]:
    """The text edits that make `node` into `new`, touching as little as possible."""
    kind = op.edit
    if kind in ("binop", "augassign"):
        left, right = (node.left, node.right) if kind == "binop" else (node.target, node.value)
        tail = "=" if kind == "augassign" else ""
        s, e = src.find(SYMBOL[type(node.op)] + tail, src.end(left), src.start(right))
        return [(s, e, SYMBOL[type(new.op)] + tail)]
    if kind == "compare":
        before = node.left if site == 0 else node.comparators[site - 1]
        s, e = src.find(SYMBOL[type(node.ops[site])], src.end(before),
                        src.start(node.comparators[site]))
        return [(s, e, SYMBOL[type(new.ops[site])])]
    if kind == "boolop":
        word, spans = SYMBOL[type(node.op)], []
        for a, b in zip(node.values, node.values[1:]):
            s, e = src.find(word, src.end(a), src.start(b))
            spans.append((s, e, SYMBOL[type(new.op)]))
        return spans
    if kind == "drop_not":
        s, _ = src.find("not", src.start(node), src.start(node.operand))
        return [(s, src.next_token(s), "")]
    if kind == "negate":
        return [(src.start(node.test), src.start(node.test), "not ("),
                (src.end(node.test), src.end(node.test), ")")]
    s, e = src.start(node), src.end(node)
    if kind == "literal":
        return [(s, e, _literal(src.text[s:e], new.value))]
    if kind in ("statement", "rewrite"):  # the node written anew
        return [(s, e, ast.unparse(new))]
    if kind == "swap":
        a, b = node.args[site], node.args[site + 1]
        return [(src.start(a), src.end(a), src.text[src.start(b):src.end(b)]),
                (src.start(b), src.end(b), src.text[src.start(a):src.end(a)])]
    raise ValueError(f"operator {op.name}: unknown edit kind {kind!r}")


def _fallbacks(src: _Source, node: ast.AST, new: ast.AST, edits: list[Edit]):
    """The edits, then the same with the node's span in parentheses (a swapped operator of
    another precedence), then the node rewritten whole by ast.unparse."""
    yield edits
    if isinstance(node, ast.expr):
        s, e = src.start(node), src.end(node)
        yield [(s, s, "(")] + edits + [(e, e, ")")]
        yield [(s, e, "(" + ast.unparse(new) + ")")]


def _is_docstring(parent: ast.AST, field: str, index, node: ast.AST) -> bool:
    return (index == 0 and field == "body" and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            and isinstance(parent, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                    ast.AsyncFunctionDef)))


SKIPPED_FIELDS = {"decorator_list", "returns", "annotation", "type_comment"}


def _walk(node: ast.AST, top: int | None = None, scope: str = ""):
    """(node, parent, field, index, top-level statement index, scope) for every node that
    may be mutated: never a docstring, an f-string, an annotation, an import, a decorator,
    the `__all__`, or text being built (a str operand of + * %, and all beneath it)."""
    for field, value in ast.iter_fields(node):
        if field in SKIPPED_FIELDS:
            continue
        children = value if isinstance(value, list) else [value]
        for index, child in enumerate(children):
            if not isinstance(child, ast.AST):
                continue
            where = index if isinstance(value, list) else None
            if (isinstance(child, (ast.JoinedStr, ast.Import, ast.ImportFrom))
                    or is_stringy(child) or _is_docstring(node, field, where, child)
                    or (isinstance(child, ast.Assign) and any(
                        isinstance(t, ast.Name) and t.id == "__all__" for t in child.targets))):
                continue
            stmt = where if top is None else top
            yield child, node, field, where, stmt, scope or "<module>"
            inner = scope
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = f"{scope}.{child.name}" if scope else child.name
            yield from _walk(child, stmt, inner)


def _swapped(parent: ast.AST, field: str, index, new: ast.AST, dump):
    """dump() while `new` stands in the parent's field in place of the node."""
    if index is None:
        old = getattr(parent, field)
        setattr(parent, field, new)
        try:
            return dump()
        finally:
            setattr(parent, field, old)
    items = getattr(parent, field)
    old = items[index]
    items[index] = new
    try:
        return dump()
    finally:
        items[index] = old


def _region(text: str, lo: int, hi: int) -> str:
    """The whole lines holding offsets lo..hi, whitespace collapsed to one line."""
    start = text.rfind("\n", 0, lo) + 1
    end = text.find("\n", hi)
    lines = text[start:len(text) if end < 0 else end].split("\n")
    return " ".join(line.strip() for line in lines if line.strip())


def mutants_of_source(text: str, path: str) -> list[Mutant]:
    """Every mutant of one file's text, `path` naming it in the ids, in a fixed order."""
    tree = ast.parse(text)
    src = _Source(text)
    found: list[tuple[Mutant, int]] = []
    rank = {op.name: k for k, op in enumerate(OPERATORS)}
    for node, parent, field, index, top, scope in _walk(tree):
        for op in OPERATORS:
            if not isinstance(node, op.node):
                continue
            for site in op.sites(node):
                mutant = _make(src, tree, path, op, node, site, (parent, field, index), top,
                               scope)
                if mutant is not None:
                    found.append((mutant, rank[op.name]))
    found.sort(key=lambda m: (m[0].line, m[0].col, m[1]))
    return _numbered([m for m, _ in found])


def _make(src, tree, path, op, node, site, where, top, scope) -> Mutant | None:
    """The mutant of `node` at `site`, or None when no edit gives exactly the mutated node
    (or the edited file does not compile, or does not change)."""
    new = op.mutate(node, site)
    want = _swapped(*where, new, lambda: ast.dump(tree.body[top]))
    try:
        primary = _edits(src, op, node, site, new)
    except LookupError:
        return None
    lo = min(s for s, _, _ in primary)
    for edits in _fallbacks(src, node, new, primary):
        probe = Mutant("", path, 0, 0, op.name, scope, "", "", "", tuple(edits))
        text = probe.apply(src.text)
        if text == src.text:
            continue
        try:  # the edit stays inside one top-level statement: only it can change
            got = ast.parse(text)
            if len(got.body) != len(tree.body) or ast.dump(got.body[top]) != want:
                continue
            compile(ast.Module([got.body[top]], []), path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            continue
        line = src.line_of(lo)
        col = lo - src.starts[line]
        first = min(s for s, _, _ in edits)
        last = max(e for _, e, _ in edits)
        grown = sum(len(t) - (e - s) for s, e, t in edits)
        return Mutant(f"{path}:{line + 1}:{col + 1}:{op.name}", path, line + 1, col + 1,
                      op.name, scope, "", _region(src.text, first, last),
                      _region(text, first, last + grown), tuple(edits))
    return None


def _numbered(mutants: list[Mutant]) -> list[Mutant]:
    """Ids made unique (several alike from one place are `#1`, `#2`, ... in order), and each
    mutant's site numbered among its definition's mutants of its operator."""
    counts, seen, sites = Counter(m.id for m in mutants), Counter(), Counter()
    out = []
    for m in mutants:
        if counts[m.id] > 1:
            seen[m.id] += 1
            m = replace(m, id=f"{m.id}#{seen[m.id]}")
        key = f"{m.path}::{m.scope}:{m.operator}"
        sites[key] += 1
        out.append(replace(m, site=f"{key}#{sites[key]}"))
    return out


def resolve_files(patterns, root: Path) -> list[Path]:
    """The files the glob patterns (relative to root) name, sorted, each once;
    ValueError for a pattern that names no Python file."""
    files: set[Path] = set()
    for pattern in patterns:
        hits = [Path(p) for p in glob.glob(str(root / pattern), recursive=True)
                if p.endswith(".py")]
        if not hits:
            raise ValueError(f"{pattern!r} names no Python file under {root}")
        files.update(p.resolve() for p in hits)
    return sorted(files)


def enumerate_mutants(files, root: Path) -> list[Mutant]:
    """Every mutant of the files (paths under root), file by file in path order."""
    out: list[Mutant] = []
    for f in sorted(Path(f).resolve() for f in files):
        rel = f.relative_to(root.resolve()).as_posix()
        out.extend(mutants_of_source(f.read_text(encoding="utf-8"), rel))
    return out
