"""Declarations: the values of `in::`, `out::`, `status::` items and `device::` fields."""
from bark_vm.wire.alias import is_alias

from .. import catalogue
from . import names
from .ast import (CtorInput, DeviceField, EnvRef, FileInput, InputDecl, LiteralInput, Num,
                  OutputDecl, StatusDecl)
from .body import reserved_reason
from .lexer import Token, tokenize
from .literals import Cursor, describe, fail, float_error, int_value, parse_tensor


def declared_name(toks: list[Token], prefix: str) -> Token:
    head = toks[0]
    name = head.text[len(prefix):]
    if not name.isidentifier() or not name.isascii():
        fail(head, f"{prefix} needs a plain name, found '{head.text}'")
    if len(toks) < 2 or toks[1].kind != "=":
        fail(toks[1] if len(toks) > 1 else head, f"expected '=' after {head.text}")
    if len(toks) < 3:
        fail(toks[1], f"{head.text} needs a value after '='")
    return head


def input_decl(toks: list[Token], flows) -> InputDecl:
    """`in::NAME = value` (the item's tokens)."""
    head = declared_name(toks, "in::")
    name = head.text[4:]
    why = reserved_reason(name, flows)
    if why:
        fail(head, f"'{name}' is reserved ({why}) and cannot name an input")
    return InputDecl(head.pos, name, input_value(name, toks[2:]))


def input_value(name: str, vals: list[Token]):
    first = vals[0]
    if first.kind == "TENSOR":
        if len(vals) == 1:  # read by the lexer in one pass
            shape, data = first.value
            return LiteralInput(first.pos, shape, data)
        vals = _tokens_of(first) + vals[1:]  # not the whole value: read as tokens
        first = vals[0]
    last = vals[-1]
    if len(vals) == 1 and first.kind == "INT":
        return LiteralInput(first.pos, (), (int_value(first),))
    if len(vals) == 1 and first.kind == "FLOAT":
        float_error(first)
    if first.kind == "[" and _closes_at_end(vals):
        lit = parse_tensor(Cursor(vals))
        return LiteralInput(lit.pos, lit.shape, lit.data)
    if first.kind == "NAME" and len(vals) > 1 and vals[1].kind == "(":
        return source(name, vals)
    if any(t.kind == "NAME" and t.text == "cols" and u.kind == "("
           for t, u in zip(vals, vals[1:])) or (
            len(vals) == 1 and first.kind == "NAME" and "." in first.text):
        fail(first, f"in::{name}: frame and profile projections are out of scope for this "
             "implementation", "E025")
    if last.kind == "NAME":
        return ctor(name, vals)
    fail(first, f"in::{name}: expected an integer, a tensor literal, csv(\"path\"), "
         "model(\"path\") or a constructor such as '3 3 zeros'")


def source(name: str, vals: list[Token]) -> FileInput:
    kind_tok = vals[0]
    kind = kind_tok.text
    if kind in names.INPUT_KINDS_REFUSED:
        fail(kind_tok, f"in::{name}: {kind}(...) inputs are not supported by this "
             "implementation (it loads csv and model)", "E018")
    if kind not in names.INPUT_KINDS:
        fail(kind_tok, f"in::{name}: unknown input source '{kind}'"
             + names.suggest(kind, names.INPUT_KINDS + names.INPUT_KINDS_REFUSED))
    args = vals[2:]
    if args and args[-1].kind == ")":
        args = args[:-1]
    else:
        fail(vals[-1], f"expected ')' to close {kind}(")
    if not args:
        return FileInput(kind_tok.pos, kind, None)
    if len(args) != 1 or args[0].kind != "STRING":
        fail(args[0], f"{kind}() takes one path string, as in {kind}(\"data.{kind}\")")
    return FileInput(kind_tok.pos, kind, args[0].value)


def ctor(name: str, vals: list[Token]) -> CtorInput:
    ctor_tok = vals[-1]
    spec = catalogue.lookup(ctor_tok.text)
    if spec is not None and spec.kind == "scope":
        fail(ctor_tok, f"in::{name}: constructor '{ctor_tok.text}' is out of scope for "
             "this implementation", "E025")
    if spec is None or spec.kind != "ctor":
        ctors = [o.name for o in catalogue.OPS if o.kind == "ctor"]
        fail(ctor_tok, f"in::{name}: '{ctor_tok.text}' is not a constructor"
             + names.suggest(ctor_tok.text, ctors))
    c, operands = Cursor(vals[:-1]), []
    while not c.done():
        t = c.peek()
        if t.kind == "INT":
            operands.append(Num(t.pos, int_value(c.next())))
        elif t.kind == "FLOAT":
            float_error(t)
        elif t.kind == "[":
            operands.append(parse_tensor(c))
        else:
            fail(t, f"constructor operands are integer or tensor literals, found {describe(t)}")
    if len(operands) != spec.arity:
        fail(ctor_tok, f"'{ctor_tok.text}' takes {spec.arity} operands, got {len(operands)}")
    return CtorInput(vals[0].pos, tuple(operands), spec.name, ctor_tok.pos)


def output_decl(toks: list[Token]) -> OutputDecl:
    """`out::NAME = csv("path")` or `model("path")`."""
    head = declared_name(toks, "out::")
    name, vals = head.text[5:], toks[2:]
    kind_tok = vals[0]
    if kind_tok.kind != "NAME" or len(vals) < 2 or vals[1].kind != "(":
        fail(kind_tok, f"out::{name}: expected csv(\"path\") or model(\"path\")")
    kind = kind_tok.text
    if kind in names.OUTPUT_KINDS_REFUSED:
        fail(kind_tok, f"out::{name}: {kind}(...) outputs are not supported by this "
             "implementation (it writes csv and model)", "E018")
    if kind not in names.OUTPUT_KINDS:
        fail(kind_tok, f"out::{name}: unknown output format '{kind}'"
             + names.suggest(kind, names.OUTPUT_KINDS + names.OUTPUT_KINDS_REFUSED))
    if [t.kind for t in vals[2:]] != ["STRING", ")"]:
        fail(vals[-1], f"{kind}() takes one path string, as in {kind}(\"out.{kind}\")")
    return OutputDecl(head.pos, name, kind, vals[2].value)


def status_decl(toks: list[Token]) -> StatusDecl:
    head = toks[0]
    alias = head.text[len("status::"):]
    if not is_alias(alias) or len(toks) > 1:
        fail(toks[1] if len(toks) > 1 else head, "expected 'status::alias;'")
    return StatusDecl(head.pos, alias)


def _tokens_of(tensor: Token) -> list[Token]:
    """A TENSOR token as the tokens it stands for, at their own positions."""
    line, col = tensor.pos.line, tensor.pos.col
    tokens, _ = tokenize("\n" * (line - 1) + " " * (col - 1) + tensor.text)
    return [t for t in tokens if t.kind not in ("NEWLINE", "EOF")]


def _closes_at_end(vals: list[Token]) -> bool:
    """True when the `[` opening `vals` is closed by its last token."""
    depth = 0
    for i, t in enumerate(vals):
        depth += {"[": 1, "]": -1}.get(t.kind, 0)
        if depth == 0:
            return i == len(vals) - 1
    return True  # unclosed: let the tensor parser say so


def device_field(line: list[Token]) -> DeviceField:
    key = line[0]
    if key.kind != "NAME" or not key.text.isidentifier():
        fail(key, f"expected a device field 'key = value', found {describe(key)}")
    if len(line) < 3 or line[1].kind != "=":
        fail(line[1] if len(line) > 1 else key, f"expected '=' and a value after '{key.text}'")
    vals, kinds = line[2:], [t.kind for t in line[2:]]
    v = vals[0]
    if kinds == ["STRING"]:
        value = v.value
    elif kinds == ["INT"]:
        value = int_value(v)
    elif kinds == ["NAME"] and v.text in ("true", "false"):
        value = v.text == "true"
    elif kinds == ["NAME", "(", "STRING", ")"] and v.text == "env":
        value = EnvRef(v.pos, vals[2].value)
    else:
        fail(v, f"device field '{key.text}' takes a string, an integer, true/false or "
             "env(\"NAME\")")
    return DeviceField(key.pos, key.text, value)
