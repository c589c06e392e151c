"""The mutation operators, as a table: each row names a defect, the ast node class it
applies to, where in a node it applies, and the mutated node (the original is untouched).

`mutants.py` turns a row's site into a text edit and checks that the edited source parses
to exactly the node made here, so what is certified is the defect this table describes.
"""
import ast
import copy
from dataclasses import dataclass
from typing import Callable

# The source spelling of each operator class a row swaps (the text edit's tokens).
SYMBOL = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%",
    ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
    ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not",
    ast.And: "and", ast.Or: "or",
}


@dataclass(frozen=True)
class Operator:
    """One row: `sites(node)` lists where it applies (a comparison has one site per
    operator, every other node at most one), `mutate(node, site)` the new node, and
    `edit` how the source text changes (see mutants.EDITS)."""

    name: str
    node: type
    sites: Callable[[ast.AST], list]
    mutate: Callable[[ast.AST, object], ast.AST]
    edit: str


def _binop(old: type, new: type, node_class: type = ast.BinOp) -> Operator:
    """An arithmetic or bitwise operator swapped (also in an augmented assignment)."""
    def mutate(node, site):
        out = copy.copy(node)
        out.op = new()
        return out
    prefix = "aug_" if node_class is ast.AugAssign else ""
    return Operator(f"{prefix}{old.__name__.lower()}_{new.__name__.lower()}", node_class,
                    lambda node: [None] if isinstance(node.op, old) else [],
                    mutate, "augassign" if prefix else "binop")


def _compare(old: type, new: type) -> Operator:
    """One comparison operator of a (possibly chained) comparison swapped."""
    def mutate(node, site):
        out = copy.copy(node)
        out.ops = [new() if k == site else op for k, op in enumerate(node.ops)]
        return out
    return Operator(f"{old.__name__.lower()}_{new.__name__.lower()}", ast.Compare,
                    lambda node: [k for k, op in enumerate(node.ops) if isinstance(op, old)],
                    mutate, "compare")


def _boolop(old: type, new: type) -> Operator:
    """`and` read as `or`, or the other way."""
    def mutate(node, site):
        out = copy.copy(node)
        out.op = new()
        return out
    return Operator(f"{old.__name__.lower()}_{new.__name__.lower()}", ast.BoolOp,
                    lambda node: [None] if isinstance(node.op, old) else [], mutate, "boolop")


def _negate(node_class: type, name: str) -> Operator:
    """The test of an if, while or conditional expression negated (a test that is a `not`
    already is left to drop_not, which makes the same defect)."""
    def mutate(node, site):
        out = copy.copy(node)
        out.test = ast.UnaryOp(ast.Not(), node.test)
        return out

    def sites(node):
        test = node.test
        return [] if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else [None]
    return Operator(name, node_class, sites, mutate, "negate")


def _is_int(node) -> bool:
    return (isinstance(node, ast.Constant) and isinstance(node.value, int)
            and not isinstance(node.value, bool))


def _int_shift(name: str, delta: int) -> Operator:
    """An integer literal one more, or one less (a 0 only becomes 1)."""
    def sites(node):
        if not _is_int(node):
            return []
        return [] if delta < 0 and node.value == 0 else [None]
    return Operator(name, ast.Constant, sites,
                    lambda node, site: ast.Constant(node.value + delta), "literal")


def _bool_flip(old: bool) -> Operator:
    """True read as False, or the other way."""
    return Operator(f"{str(old).lower()}_{str(not old).lower()}", ast.Constant,
                    lambda node: [None] if node.value is old else [],
                    lambda node, site: ast.Constant(not old), "literal")


def _statement(old: type, new: type, name: str, sites=lambda node: [None]) -> Operator:
    """A whole statement replaced by another (no operands: break, continue, pass), where
    `sites` says it applies."""
    return Operator(name, old, sites, lambda node, site: new(), "statement")


def is_stringy(node: ast.AST) -> bool:
    """Text being built: a str literal, an f-string, or an operation on one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    return isinstance(node, ast.BinOp) and (is_stringy(node.left) or is_stringy(node.right))


def _to_pass(node_class: type) -> Operator:
    """A simple statement (an expression, an assignment, an augmented one) replaced by
    `pass`: a step of the computation left out (not one that only builds text)."""
    return _statement(node_class, ast.Pass, f"{node_class.__name__.lower()}_pass",
                      lambda node: [] if is_stringy(node.value) else [None])


def _swap_args() -> Operator:
    """Two neighbouring positional arguments of a call swapped (one site per pair): an
    operand order, a shape's dims, (lo, hi) read the wrong way round."""
    def sites(node):
        args = node.args
        return [k for k in range(len(args) - 1)
                if not isinstance(args[k], ast.Starred) and not isinstance(args[k + 1], ast.Starred)
                and ast.dump(args[k]) != ast.dump(args[k + 1])]

    def mutate(node, k):
        out = copy.copy(node)
        out.args = node.args[:k] + [node.args[k + 1], node.args[k]] + node.args[k + 2:]
        return out
    return Operator("swap_args", ast.Call, sites, mutate, "swap")


def _slice_bound(bound: str, delta: int) -> Operator:
    """A slice's lower bound one more, or its upper bound one less (an absent one becomes
    1, or -1): an element left out at an end."""
    def mutate(node, site):
        out = copy.copy(node)
        old = getattr(node, bound)
        op = ast.Add() if delta > 0 else ast.Sub()
        setattr(out, bound, ast.BinOp(old, op, ast.Constant(abs(delta))) if old is not None
                else ast.Constant(1) if delta > 0 else ast.UnaryOp(ast.USub(), ast.Constant(1)))
        return out
    name = f"slice_{bound}_{'plus' if delta > 0 else 'minus'}1"
    return Operator(name, ast.Slice, lambda node: [None], mutate, "rewrite")


def _zero_to_minus1() -> Operator:
    """An integer literal 0 read as -1 (an empty start, a mask of all ones, the last axis)."""
    return Operator("zero_minus1", ast.Constant,
                    lambda node: [None] if _is_int(node) and node.value == 0 else [],
                    lambda node, site: ast.UnaryOp(ast.USub(), ast.Constant(1)), "rewrite")


def _drop_not() -> Operator:
    """A unary `not` removed: the condition read the other way round."""
    return Operator("drop_not", ast.UnaryOp,
                    lambda node: [None] if isinstance(node.op, ast.Not) else [],
                    lambda node, site: node.operand, "drop_not")


OPERATORS: tuple[Operator, ...] = (
    _binop(ast.Add, ast.Sub), _binop(ast.Sub, ast.Add),
    _binop(ast.Mult, ast.FloorDiv), _binop(ast.FloorDiv, ast.Mult),
    _binop(ast.Mod, ast.FloorDiv),
    _binop(ast.LShift, ast.RShift), _binop(ast.RShift, ast.LShift),
    _binop(ast.BitAnd, ast.BitOr), _binop(ast.BitOr, ast.BitAnd),
    _binop(ast.BitXor, ast.BitOr),
    _binop(ast.Add, ast.Sub, ast.AugAssign), _binop(ast.Sub, ast.Add, ast.AugAssign),
    _binop(ast.Mult, ast.FloorDiv, ast.AugAssign),
    _binop(ast.FloorDiv, ast.Mult, ast.AugAssign),
    _compare(ast.Lt, ast.LtE), _compare(ast.LtE, ast.Lt),
    _compare(ast.Gt, ast.GtE), _compare(ast.GtE, ast.Gt),
    _compare(ast.Eq, ast.NotEq), _compare(ast.NotEq, ast.Eq),
    _compare(ast.In, ast.NotIn), _compare(ast.NotIn, ast.In),
    _compare(ast.Is, ast.IsNot), _compare(ast.IsNot, ast.Is),
    _boolop(ast.And, ast.Or), _boolop(ast.Or, ast.And),
    _drop_not(),
    _negate(ast.If, "negate_if"), _negate(ast.While, "negate_while"),
    _negate(ast.IfExp, "negate_ifexp"),
    _int_shift("int_plus1", 1), _int_shift("int_minus1", -1),
    _bool_flip(True), _bool_flip(False),
    _statement(ast.Break, ast.Continue, "break_continue"),
    _statement(ast.Continue, ast.Break, "continue_break"),
    _statement(ast.Raise, ast.Pass, "raise_pass"),
    _to_pass(ast.Expr), _to_pass(ast.Assign), _to_pass(ast.AugAssign),
    _swap_args(),
    _slice_bound("lower", 1), _slice_bound("upper", -1),
    _zero_to_minus1(),
)

BY_NAME = {op.name: op for op in OPERATORS}
assert len(BY_NAME) == len(OPERATORS), "operator names must be unique"
