"""`maned-model show` (issue 15, point 9): a descriptor as a person reads it, from a .mnm
file or from maned-run's printed block, and whether it validates."""
import json

import pytest

from maned.cli import model as model_cli

from conftest import run_tool

FIT = ("{H2}\nin::X = [[100,200],[200,100],[300,500],[400,200],[500,800],[600,300],[0,100],"
       "[200,700]];\nin::y = [[300],[600],[400],[900],[500],[1200],[200],[0]];\n"
       "out::model = model(\"fit.mnm\");\n"
       "calc::ml::linear_regression fit(X, y) {\n    iters: 400, lr: 5, features: 2\n"
       "} return model, loss;\n")


def test_a_model_file_and_a_printed_descriptor_read_the_same(maned_run, workdir):
    code, out, err = maned_run(source=FIT)
    assert code == 0, err
    (workdir / "printed.txt").write_text(out)
    shown = run_tool(model_cli, ["show", "fit.mnm"])
    assert shown == run_tool(model_cli, ["show", "printed.txt"])
    code, text, err = shown
    assert (code, err) == (0, "")
    assert text.splitlines()[:7] == ["valid: yes", "algorithm: linear_regression",
                                     "quantres: 2", "features: 2", "outputs: 1",
                                     "intercept: yes", "standardized: yes"]
    slots = [int(v) for v in out.split("model : [15] = [")[1].split("]")[0].split(", ")]
    w1, w2, b, m1, m2, s1, s2 = slots[8:]
    assert f"weights: {w1 / 100:.2f}, {w2 / 100:.2f}" in text  # scale 2: hundredths
    assert f"bias: {b / 100:.2f}" in text
    assert f"feature_sds: {s1 / 100:.2f}, {s2 / 100:.2f}" in text
    info = json.loads(run_tool(model_cli, ["show", "fit.mnm", "--json"])[1])
    assert info["valid"] and info["weights"] == [f"{w1 / 100:.2f}", f"{w2 / 100:.2f}"]


def test_a_forged_descriptor_is_shown_as_invalid_with_its_reason(workdir):
    (workdir / "forged.txt").write_text("m : [9] = [1296974925, 1, 1, 2, 2, 1, 3, 9, 0]\n")
    code, out, err = run_tool(model_cli, ["show", "forged.txt"])
    assert (code, err) == (1, "") and out.startswith("valid: no, ")


def test_unreadable_files_and_bad_command_lines_exit_2(workdir):
    (workdir / "empty.txt").write_text("nothing here\n")
    code, out, err = run_tool(model_cli, ["show", "empty.txt"])
    assert code == 2 and "neither a model file" in err and err.endswith("[E029]\n")
    assert run_tool(model_cli, ["show", "missing.mnm"])[2] == (
        "error: cannot read 'missing.mnm': No such file or directory [EIO]\n")
    assert run_tool(model_cli, ["look", "x"])[0] == 2
    assert run_tool(model_cli, ["--version"])[1].startswith("maned-model ")


@pytest.mark.parametrize("example, counts", [
    ("kmeans", {"clusters": 2}), ("knn", {"neighbours": 3, "stored_rows": 8}),
    ("naive_bayes", {"classes": 2}), ("decision_tree", {"nodes": 5, "leaves": 3}),
    ("isolation_forest", {"trees": 50}), ("xgboost", {"rounds": 4, "depth": 2}),
    ("hmm", {"states": 2, "symbols": 3}),
])
def test_every_algorithms_descriptor_shows_its_counts(maned_run, workdir, example, counts):
    """The other algorithms' descriptors, as the examples fit them: valid, with the counts
    their payload holds (kmeans also its centroids in real units)."""
    code, out, err = maned_run(f"{example}.mnd")
    assert code == 0, err
    (workdir / "printed.txt").write_text(out)
    code, text, err = run_tool(model_cli, ["show", "printed.txt", "--json"])
    info = json.loads(text)
    assert (code, err, info["valid"], info["algorithm"]) == (0, "", True, example)
    assert {k: info[k] for k in counts} == counts
    if example == "kmeans":
        assert len(info["centroids"]) == 2 and all(len(c) == info["features"]
                                                   for c in info["centroids"])
