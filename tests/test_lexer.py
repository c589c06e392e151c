"""The lexer: token classes, glued signs, qualified names, positions and lexical errors."""
import re

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


# --- an in:: tensor literal read in one pass ------------------------------------------------
from hypothesis import given, settings, strategies as st  # noqa: E402

from maned.lang.decls import input_value, _tokens_of  # noqa: E402
from maned.lang.literals import Cursor, parse_tensor  # noqa: E402
from maned.diagnostics import MnError  # noqa: E402


@st.composite
def literal_texts(draw):
    """A tensor literal's text: rectangular or ragged, values in or past int32, blanks and
    line breaks anywhere a literal may have them, and now and then a form only the tokens
    read (a float, a leading zero, a trailing comma, a comment, an empty row)."""
    value = st.one_of(st.integers(-2 ** 31, 2 ** 31 - 1), st.integers(-2 ** 40, 2 ** 40))
    blank = st.sampled_from(["", "", " ", "\n", " \n  ", "\t"])

    def build(shape):
        if not shape:
            return str(draw(value))
        n = shape[0] + (1 if len(shape) > 1 and draw(st.integers(0, 9)) == 0 else 0)
        parts = [build(shape[1:]) for _ in range(n)]
        return "[" + draw(blank) + ("," + draw(blank)).join(parts) + draw(blank) + "]"
    text = build(draw(st.lists(st.integers(1, 3), min_size=1, max_size=4)))
    quirk = draw(st.sampled_from([None] * 6 + ["1.5", "01", ",]", "# c\n", "[]"]))
    if quirk:
        at = draw(st.integers(1, len(text) - 1))
        text = text[:at] + quirk + text[at:]
    return text


def _read_as_tokens(tokens):
    try:
        lit = parse_tensor(Cursor(tokens))
        return lit.pos, lit.shape, lit.data
    except MnError as e:
        return [(d.code, d.message, d.pos) for d in e.diagnostics]


@settings(max_examples=400, deadline=None)
@given(literal_texts())
def test_a_literal_read_in_one_pass_is_what_its_tokens_read(text):
    source = "in::x = " + text + ";\nin::y = 1.5;"
    toks, diags = tokenize(source)
    if diags:  # a character no token takes: never one pass
        assert "TENSOR" not in [t.kind for t in toks]
        return
    head = next(i for i, t in enumerate(toks) if t.kind == "=") + 1
    fast = toks[head]
    end = next(i for i, t in enumerate(toks) if t.kind == ";")
    tokens = _tokens_of(fast) if fast.kind == "TENSOR" else [
        t for t in toks[head:end] if t.kind != "NEWLINE"]
    slow = _read_as_tokens(tokens)
    if fast.kind == "TENSOR":  # one pass: exactly what the tokens give
        assert slow == (fast.pos, *fast.value)
        lit = input_value("x", [fast])
        assert (lit.pos, lit.shape, lit.data) == slow
    elif isinstance(slow, tuple):  # the tokens read it: a comment, or a leading zero
        assert "#" in text or re.search(r"(?<![0-9])0[0-9]", text), text
    # the item after the literal is where the tokens would put it
    after = toks[end + 1:]
    y = next(t for t in after if t.kind == "FLOAT")
    assert y.pos == Pos(2 + text.count("\n"), 9)


def test_a_literal_that_is_not_the_whole_initializer_is_read_as_tokens():
    from maned.lang.parser import parse
    _, diags = parse("mnd::quantmax=10;\nmnd::quantmin=-10;\nmnd::quantres=0;\n"
                     "in::x = [1, 2] [3];\n")
    assert [(d.code, d.pos) for d in diags] == [("EPARSE", Pos(4, 9))]
