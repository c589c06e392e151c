"""The lexer: token classes, glued signs, qualified names, positions and lexical errors."""
import pytest

from maned.diagnostics import Pos
from maned.lang.lexer import tokenize


def kinds(text):
    toks, diags = tokenize(text)
    assert not diags, diags
    return [(t.kind, t.text) for t in toks[:-1]]


@pytest.mark.parametrize("text, expected", [
    ("result", [("NAME", "result")]),
    ("-7", [("INT", "-7")]),
    ("3 -7", [("INT", "3"), ("INT", "-7")]),
    ("3.14 -0.5", [("FLOAT", "3.14"), ("FLOAT", "-0.5")]),
    ('"a b" \'c\'', [("STRING", '"a b"'), ("STRING", "'c'")]),
    ("mnd::quantmax", [("NAME", "mnd::quantmax")]),
    ("calc::ml::svm", [("NAME", "calc::ml::svm")]),
    ("calc::ml::", [("NAME", "calc::ml::")]),
    ("oc::tensor::trunc", [("NAME", "oc::tensor::trunc")]),
    ("tensor.init r.eigenvalues", [("NAME", "tensor.init"), ("NAME", "r.eigenvalues")]),
    ("a b -rot", [("NAME", "a"), ("NAME", "b"), ("NAME", "-rot")]),
    ("> < == >= <= !=", [("CMP", s) for s in "> < == >= <= !=".split()]),
    ("x => y", [("NAME", "x"), ("ARROW", "=>"), ("NAME", "y")]),
    ("@unroll(5)", [("AT", "unroll"), ("(", "("), ("INT", "5"), (")", ")")]),
    ("{ } [ ] ( ) : , ; =", [(c, c) for c in "{}[]():,;="]),
    ("a # comment ; b\nc", [("NAME", "a"), ("NEWLINE", "\n"), ("NAME", "c")]),
])
def test_token_classes(text, expected):
    assert kinds(text) == expected


def test_values_and_positions():
    toks, _ = tokenize("in::a = -7;\n\tx 'p'")
    assert toks[2].value == -7
    assert toks[2].pos == Pos(1, 9)
    assert toks[5].pos == Pos(2, 2)  # a tab is one column
    assert toks[6].value == "p"
    assert toks[-1].kind == "EOF"


def test_glued_and_spaced():
    toks, _ = tokenize("A[0] return (x")
    assert not toks[1].spaced and toks[0].spaced
    assert toks[5].spaced


def test_huge_integer_is_kept_as_text():
    toks, diags = tokenize("9" * 5000)
    assert not diags and toks[0].kind == "INT" and toks[0].value is None


@pytest.mark.parametrize("text, pos, fragment", [
    ("a $ b", Pos(1, 3), "unexpected character '$'"),
    ("x\n  'open", Pos(2, 3), "unterminated string"),
    ("a - b", Pos(1, 3), "unexpected character '-'"),
    ("héllo", Pos(1, 2), "unexpected character 'é'"),
    ("1.", Pos(1, 2), "unexpected character '.'"),
])
def test_lexical_errors(text, pos, fragment):
    toks, diags = tokenize(text)
    assert len(diags) == 1
    d = diags[0]
    assert (d.code, d.pos) == ("EPARSE", pos) and fragment in d.message
    assert any(t.kind == "BAD" for t in toks)
