"""The quantizer boundary, csv in and out, and `--in` values."""
from decimal import Decimal

import pytest
from hypothesis import given, strategies as st

from maned.diagnostics import MnError
from maned.io.cli_values import parse_value
from maned.io.csvfile import format_csv, parse_csv
from maned.io.quant import decode, encode
from maned.lang.ast import Quant
from maned.tensor import Tensor

Q2 = Quant(quantmax=1000, quantmin=-1000, quantres=2)


@pytest.mark.parametrize("text, value, clamped", [
    ("1.5", 150, False), ("0.125", 13, False), ("-0.125", -13, False), ("0.124", 12, False),
    ("-0.005", -1, False), ("1000", 100000, False), ("1000.01", 100000, True),
    ("-5000", -100000, True), ("1e2", 10000, False),
])
def test_encode_rounds_half_away_from_zero_and_clamps(text, value, clamped):
    assert encode(Decimal(text), Q2) == (value, clamped)


@given(st.integers(-100000, 100000))
def test_decode_then_encode_is_identity(v):
    assert encode(Decimal(decode(v, 2)), Q2) == (v, False)


def test_decode_writes_exactly_q_decimals():
    assert [decode(v, 2) for v in (5, -5, 100, -1234, 0)] == ["0.05", "-0.05", "1.00",
                                                              "-12.34", "0.00"]
    assert decode(-7, 0) == "-7"


def test_csv_header_clamp_and_shape():
    got = parse_csv("a,b\n1,2\n3000,-0.5\n\n", "t.csv", Q2)
    assert got.tensor == Tensor((2, 2), (100, 200, 100000, -50))
    assert got.notes == ("'t.csv' line 1 is a header; skipped",
                         "'t.csv': 1 value(s) clamped to the quant range [-1000, 1000]")


@pytest.mark.parametrize("text, where", [
    ("1,2\n3\n", "t.csv:2:1"), ("1,2\n3,x\n", "t.csv:2:3"), ("1,,2\n", "t.csv:1:3"),
    ("1,2\nnan,1\n", "t.csv:2:1"), ("1\ninf\n", "t.csv:2:1"), ("", "t.csv:1:1"),
    ("h\n", "t.csv:1:1"),
])
def test_csv_bad_content_is_e029_with_position(text, where):
    with pytest.raises(MnError) as e:
        parse_csv(text, "t.csv", Q2)
    d = e.value.diagnostics[0]
    assert d.code == "E029" and d.message.startswith(where)


def test_csv_value_outside_int32_is_e026():
    with pytest.raises(MnError) as e:
        parse_csv("30000000\n", "t.csv", Quant(10 ** 9, -1, 2))
    assert e.value.diagnostics[0].code == "E026"


def test_format_csv_ranks():
    assert format_csv(Tensor.scalar(-5), 2) == "-0.05\n"
    assert format_csv(Tensor((3,), (1, 2, 3)), 0) == "1,2,3\n"
    assert format_csv(Tensor((2, 2), (100, 250, -1, 0)), 2) == "1.00,2.50\n-0.01,0.00\n"


@pytest.mark.parametrize("text, shape, data", [
    ("5", (), (5,)), ("-7", (), (-7,)), ("3:1,2,3", (3,), (1, 2, 3)),
    ("2x2:1,2,3,-4", (2, 2), (1, 2, 3, -4)), ("1x1x2:9,8", (1, 1, 2), (9, 8)),
])
def test_in_values(text, shape, data):
    assert parse_value(text) == Tensor(shape, data)


@pytest.mark.parametrize("text", ["x", "2x2:1,2,3", "2x:1", "0:", "2147483648", "1.5",
                                  "2x2x2x2x2:" + ",".join(["1"] * 32), "3:1,,2"])
def test_bad_in_values(text):
    with pytest.raises(ValueError):
        parse_value(text)


def test_written_csv_reads_back(maned_run, workdir):
    code, out, err = maned_run("csv_io.mnd")
    assert code == 0, err
    assert (workdir / "scaled.csv").read_text() == "3.00,2.25\n-1.00,3.00\n20.00,0.13\n"


def test_out_dir_takes_the_files_out_of_the_script_folder(maned_run, workdir, tmp_path):
    elsewhere = tmp_path / "results"
    elsewhere.mkdir()
    code, out, err = maned_run("csv_io.mnd", "--out-dir", str(elsewhere))
    assert code == 0, err
    assert f"out::scaled -> {elsewhere / 'scaled.csv'}" in out.splitlines()
    assert (elsewhere / "scaled.csv").read_text() == "3.00,2.25\n-1.00,3.00\n20.00,0.13\n"
    assert not (workdir / "scaled.csv").exists()


@pytest.mark.parametrize("given, why", [
    ("missing", "no such folder"), ("csv_io.mnd", "is not a folder"), ("", "is empty")])
def test_an_out_dir_that_is_no_folder_is_refused_before_the_run(maned_run, workdir, given, why):
    code, out, err = maned_run("csv_io.mnd", "--out-dir", given)
    assert (code, out) == (2, "")
    assert err == (f"error: --out-dir {given!r}: {why} (give an existing folder you may write "
                   "into for the out:: files) [EUSAGE]\n")
    assert not (workdir / "scaled.csv").exists()


def test_a_relative_out_dir_is_taken_from_the_working_folder(maned_run, workdir, tmp_path,
                                                             monkeypatch):
    (tmp_path / "here" / "results").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "here")
    code, out, err = maned_run(str(workdir / "csv_io.mnd"), "--out-dir", "results")
    assert code == 0, err
    assert "out::scaled -> results/scaled.csv" in out.splitlines()
    assert (tmp_path / "here" / "results" / "scaled.csv").exists()
    assert not (workdir / "scaled.csv").exists()


# --- a table read in one pass ---------------------------------------------------------------
from hypothesis import settings  # noqa: E402

from maned.io.csvfile import _in_one_pass, _row_by_row  # noqa: E402


@st.composite
def tables(draw):
    """(lines, quant, plain): a CSV's lines, now and then with a header, a ragged row, an
    exponent, an empty cell or a value past the clamp bounds; plain when it has none."""
    quantres = draw(st.integers(0, 4))
    bound = draw(st.integers(1, 10 ** 5))
    quant = Quant(bound, -bound, quantres)
    width, rows = draw(st.integers(1, 4)), draw(st.integers(1, 6))

    def cell():
        whole = draw(st.integers(0, bound + 2))
        frac = draw(st.text("0123456789", max_size=6))
        sign = draw(st.sampled_from(["", "-", "+"]))
        return draw(st.sampled_from(["", " ", "\t"])) + sign + str(whole) + (
            "." + frac if frac or draw(st.booleans()) else "")
    lines = [",".join(cell() for _ in range(width)) for _ in range(rows)]
    quirk = draw(st.sampled_from([None] * 4 + ["header", "ragged", "exponent", "empty"]))
    if quirk == "header":
        lines.insert(0, ",".join(["x"] * width))
    elif quirk == "ragged":
        lines[-1] += ",1"
    elif quirk == "exponent":
        lines[0] = "1.5e2" + lines[0][lines[0].find(","):] if width > 1 else "1.5e2"
    elif quirk == "empty":
        lines[0] = "," * (width - 1)
    return lines, quant, quirk in (None, "header")


def _read(read, lines, quant):
    try:
        return read(lines, "t.csv", quant)
    except MnError as e:
        return [(d.code, d.message) for d in e.diagnostics]


@settings(max_examples=400, deadline=None)
@given(tables())
def test_a_table_read_in_one_pass_is_what_its_rows_read(table):
    lines, quant, plain = table
    fast, slow = _read(_in_one_pass, lines, quant), _read(_row_by_row, lines, quant)
    if fast is not None:
        assert fast == slow
    if plain and fast is None:  # only a value near a clamp bound leaves the one pass
        s = 10 ** quant.quantres
        assert isinstance(slow, list) or any(
            not quant.quantmin * s + 1 < v < quant.quantmax * s - 1 for v in slow.tensor.data)
