"""`.mnm` model files (R13): fit, save, load in a second script, predict the same numbers;
a corrupted or truncated file is refused with a clear E029 line."""
import struct

import pytest

import maned
from maned.io.mnm import decode, encode, fnv1a64
from maned.pipeline.report import OutFile

from support.cli import expand

FIT = """{LR}
in::Xnew = [[100,100],[300,100],[0,500]];
out::model = model("linear_fit.mnm");
calc::ml::linear_regression fit(X, y) { iters: 400, lr: 5, features: 2 } return model, loss;
calc::lambda_flow infer(model, Xnew) {
    model Xnew ml_predict yhat =
} return yhat;
"""
LOAD = """{H2}
in::m = model("linear_fit.mnm");
in::Xnew = [[100,100],[300,100],[0,500]];
calc::lambda_flow infer(m, Xnew) {
    m Xnew ml_predict yhat =
} return yhat;
"""
MODEL = (1296974925, 1, 1, 2, 2, 1, 3, 7, 377, -251, 512, 287, 362, 189, 254)


def test_fnv1a64_known_vectors():
    assert fnv1a64(b"") == 0xCBF29CE484222325
    assert fnv1a64(b"a") == 0xAF63DC4C8601EC8C


def test_file_layout_is_count_slots_checksum():
    raw = encode(MODEL)
    assert len(raw) == 8 + 8 * len(MODEL) + 8
    assert struct.unpack_from("<Q", raw)[0] == len(MODEL)
    assert struct.unpack_from("<Q", raw, len(raw) - 8)[0] == fnv1a64(raw[:-8])
    assert decode(raw) == MODEL


def test_fit_save_load_predict_gives_the_same_numbers(workdir):
    yhat = maned.Tensor((3, 1), (401, 793, -192))
    fit = maned.run(source=expand(FIT), base_dir=workdir)
    assert fit.exit_code == 0, fit.diagnostics
    assert [f.flow for f in fit.flows][-1] == "infer" and fit.outputs("infer") == {"yhat": yhat}
    assert fit.files == (OutFile("model", "linear_fit.mnm"),)
    assert decode((workdir / "linear_fit.mnm").read_bytes()) == MODEL
    load = maned.run(source=expand(LOAD), base_dir=workdir)
    assert (load.exit_code, load.diagnostics, load.notes) == (0, (), ())
    assert (load.statuses, load.prints, load.files) == ((), (), ())
    assert [f.flow for f in load.flows] == ["infer"] and load.outputs("infer") == {"yhat": yhat}


def _corrupt(raw: bytes, how: str) -> bytes:
    if how == "truncated":
        return raw[:-9]
    if how == "flipped byte":
        return raw[:20] + bytes([raw[20] ^ 1]) + raw[21:]
    if how == "trailing byte":
        return raw + b"\0"
    if how == "empty":
        return b""
    slots = list(MODEL)
    slots[0] = 5  # a valid file around a non-descriptor
    return encode(tuple(slots))


@pytest.mark.parametrize("how, reason", [
    ("truncated", "the header says 15 slots"), ("flipped byte", "checksum mismatch"),
    ("trailing byte", "the header says 15 slots"), ("empty", "too short"),
    ("bad magic", "not a model descriptor"),
])
def test_a_bad_model_file_is_refused(maned_run, workdir, how, reason):
    (workdir / "linear_fit.mnm").write_bytes(_corrupt(encode(MODEL), how))
    code, out, err = maned_run(source=LOAD)
    assert (code, out) == (1, "")
    assert err.startswith("error: in::m: linear_fit.mnm: ") and reason in err
    assert err.endswith("[E029]\n")


def test_a_missing_model_file_is_eio(maned_run):
    code, out, err = maned_run(source=LOAD)
    assert (code, out) == (2, "")
    assert err.endswith("[EIO]\n")


def test_writing_a_non_descriptor_as_a_model_is_refused(maned_run, workdir):
    source = '{H2}\nin::v = [1, 2, 3];\nout::v = model("v.mnm");\n'
    code, out, err = maned_run(source=source)
    assert code == 1 and not (workdir / "v.mnm").exists()
    assert err.startswith("error: out::v: model() not a model descriptor: ") 
    assert err.endswith("[E029]\n")


@pytest.mark.parametrize("model, reason", [
    ("[1, 2, 3]", "invalid model descriptor"),
    ("[1296974925, 1, 1, 3, 2, 1, 3, 7, 377, -251, 512, 287, 362, 189, 254]",
     "the model was fitted at quantres 3, the script declares 2"),
])
def test_ml_predict_refusals_are_erun_lines(maned_run, model, reason):
    source = ("{H2}\nin::m = " + model + ";\nin::X = [[1, 2]];\n"
              "calc::lambda_flow infer(m, X) {\n    m X ml_predict p =\n} return p;\n")
    code, out, err = maned_run(source=source)
    assert (code, out) == (1, "")
    assert err.startswith(f"error: flow 'infer': ml_predict: {reason}")
    assert err.endswith("[ERUN]\n")


def test_ml_predict_column_mismatch(maned_run):
    source = ("{H2}\nin::m = [1296974925, 1, 1, 2, 2, 1, 3, 7, 377, -251, 512, 287, 362, 189, "
              "254];\nin::X = [[1, 2, 3]];\n"
              "calc::lambda_flow infer(m, X) {\n    m X ml_predict p =\n} return p;\n")
    code, out, err = maned_run(source=source)
    assert err == ("error: flow 'infer': ml_predict: X has 3 columns, the model was fitted on "
                   "2 [ERUN]\n")
