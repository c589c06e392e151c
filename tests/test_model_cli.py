"""`maned-model show` (issue 15, point 9): a descriptor as a person reads it, from a .mnm
file or from maned-run's printed block, and whether it validates."""
import json
import tracemalloc

import pytest

from maned.cli import model as model_cli

from support.cli import ROOT, run_tool

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
    assert f"weights: {hundredths(w1)}, {hundredths(w2)}" in text  # scale 2: hundredths
    assert f"bias: {hundredths(b)}" in text
    assert f"feature_sds: {hundredths(s1)}, {hundredths(s2)}" in text
    info = json.loads(run_tool(model_cli, ["show", "fit.mnm", "--json"])[1])
    assert info["valid"] and info["weights"] == [hundredths(w1), hundredths(w2)]


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


def _fit(maned_run, workdir, example=None, source=None):
    """An example's fit (or a script's): the `maned-model show` data and text of its printed
    descriptor, and its payload slots as maned-run printed them (read here, apart from the
    tool)."""
    code, out, err = maned_run(f"{example}.mnd") if example else maned_run(source=source)
    assert code == 0, err
    (workdir / "printed.txt").write_text(out)
    line = next(ln for ln in out.splitlines() if "= [1296974925, " in ln)
    slots = [int(v) for v in line.split("= [")[1].rstrip("]").split(", ")]
    info = json.loads(run_tool(model_cli, ["show", "printed.txt", "--json"])[1])
    text = run_tool(model_cli, ["show", "printed.txt"])[1].splitlines()
    return info, text, slots[8:]


def hundredths(v: int) -> str:
    """A scale-2 value as the examples' quantres 2 shows it (and π, A, B's scale 100)."""
    return f"{'-' if v < 0 else ''}{abs(v) // 100}.{abs(v) % 100:02d}"


def test_naive_bayes_shows_each_class_in_real_units(maned_run, workdir):
    info, text, p = _fit(maned_run, workdir, "naive_bayes")
    c, d = p[0], info["features"]
    means, variances = p[1 + 2 * c:1 + 2 * c + c * d], p[1 + 2 * c + c * d:]
    assert len(info["class_table"]) == c >= 2
    for i, row in enumerate(info["class_table"]):
        assert (row["label"], row["count"]) == (p[1 + i], p[1 + c + i])
        assert row["means"] == [hundredths(v) for v in means[i * d:(i + 1) * d]]
        # variances are squares of scale-2 values: scale 4, ten-thousandths
        assert row["variances"] == [f"{v // 10**4}.{v % 10**4:04d}"
                                    for v in variances[i * d:(i + 1) * d]]
        assert (f"class {row['label']}: {row['count']} rows, means {', '.join(row['means'])}, "
                f"variances {', '.join(row['variances'])}") in text


def test_a_decision_tree_shows_its_splits_in_real_units(maned_run, workdir):
    info, text, p = _fit(maned_run, workdir, "decision_tree")
    for i in range(p[0]):
        feat, thr, left, right, label = p[1 + 5 * i:6 + 5 * i]
        expected = (f"node {i}: label {label}" if feat == -1 else
                    f"node {i}: x[{feat}] <= {hundredths(thr)} ? node {left} : node {right}")
        assert expected in text
    assert sum("label" in n for n in info["tree"]) == info["leaves"]


def test_xgboost_shows_each_rounds_splits_and_leaves(maned_run, workdir):
    info, text, p = _fit(maned_run, workdir, "xgboost")
    rounds, depth = p[0], p[1]
    m = 2 ** depth - 1
    assert len(info["boosting"]) == rounds
    for r, got in enumerate(info["boosting"]):
        at = 2 + r * (3 * m + 1)
        assert got["leaves"] == [hundredths(v) for v in p[at + 2 * m:at + 3 * m + 1]]
        splits = [(p[at + 2 * j], p[at + 2 * j + 1]) for j in range(m)]
        assert [s["feature"] for s in got["splits"]] == [f for f, _ in splits]
        shown = ", ".join("left" if f == -1 else f"x[{f}] <= {hundredths(t)}" for f, t in splits)
        assert f"round {r + 1}: splits {shown}; leaves {', '.join(got['leaves'])}" in text


def test_hmm_shows_its_probabilities(maned_run, workdir):
    info, text, p = _fit(maned_run, workdir, "hmm")
    k, v = p[0], p[1]
    assert info["start"] == [hundredths(x) for x in p[2:2 + k]]
    assert info["transitions"] == [[hundredths(x) for x in p[2 + k + i * k:2 + k + (i + 1) * k]]
                                   for i in range(k)]
    b = p[2 + k + k * k:]
    assert info["emissions"] == [[hundredths(x) for x in b[i * v:(i + 1) * v]]
                                 for i in range(k)]
    assert f"start: {', '.join(info['start'])}" in text
    assert f"emissions of {k - 1}: {', '.join(info['emissions'][-1])}" in text
    # issue 23, point 7: an hmm's slot 4 counts steps (its `steps:` key), not features
    steps = int((ROOT / "examples" / "hmm.mnd").read_text().split("steps:")[1].split(",")[0])
    assert info["steps"] == steps and "features" not in info
    assert f"steps: {steps}" in text and not any(ln.startswith("features") for ln in text)


def test_a_sweeps_output_shows_every_model_by_name(maned_run, workdir):
    """Issue 23, point 7: a sweep prints m0, l0, m1, l1, m2, l2; each model is shown under
    its name (the losses are no descriptors), as the same tool shows each alone."""
    code, out, err = maned_run("sweep.mnd")
    assert code == 0, err
    (workdir / "sweep.txt").write_text(out)
    code, text, err = run_tool(model_cli, ["show", "sweep.txt"])
    assert (code, err) == (0, "")
    assert [ln for ln in text.splitlines() if ln.startswith("model ")] == [
        "model m0:", "model m1:", "model m2:"]
    doc = json.loads(run_tool(model_cli, ["show", "sweep.txt", "--json"])[1])["models"]
    for name, model in zip(("m0", "m1", "m2"), doc):
        line = next(ln for ln in out.splitlines() if ln.startswith(f"{name} : "))
        (workdir / f"{name}.txt").write_text(line + "\n")
        alone = json.loads(run_tool(model_cli, ["show", f"{name}.txt", "--json"])[1])
        assert model == {"name": name, **alone}
    assert len({tuple(m["weights"]) for m in doc}) == 3


def test_kmeans_centroids_and_its_std_block_read_in_real_units(maned_run, workdir):
    info, text, p = _fit(maned_run, workdir, "kmeans")
    d, k = info["features"], p[0]
    assert info["centroids"] == [[hundredths(x) for x in p[1 + i * d:1 + (i + 1) * d]]
                                 for i in range(k)]
    assert f"centroid {k - 1}: {', '.join(info['centroids'][-1])}" in text
    assert info["standardized"]
    assert info["feature_means"] == [hundredths(x) for x in p[-2 * d:-d]]
    assert info["feature_sds"] == [hundredths(x) for x in p[-d:]]


STANDARDIZED = ("{H2}\nin::X = [[100,200],[200,100],[300,500],[400,200],[500,800],[600,300],"
                "[0,100],[200,700]];\nin::y = [[0],[0],[100],[0],[100],[100],[0],[100]];\n"
                "calc::ml::ALGO fit(X, y) {\n    KEYS\n} return m;\n")


@pytest.mark.parametrize("algo, keys", [("knn", "k: 3, standardize: true"),
                                        ("naive_bayes", "standardize: true")])
def test_knn_and_naive_bayes_fitted_standardized_show_their_std_block(maned_run, workdir,
                                                                     algo, keys):
    info, text, p = _fit(maned_run, workdir, source=STANDARDIZED.replace("ALGO", algo)
                         .replace("KEYS", keys))
    d = info["features"]
    assert info["standardized"] and info["feature_sds"] == [hundredths(x) for x in p[-d:]]
    assert info["feature_means"] == [hundredths(x) for x in p[-2 * d:-d]]
    assert "(the fitted numbers act on standardized features: (x - mean) / sd)" in text
    if algo == "knn":
        n = info["stored_rows"]
        assert info["rows"] == [[hundredths(x) for x in p[2 + i * d:2 + (i + 1) * d]]
                                for i in range(n)]
        assert info["labels"] == p[2 + n * d:2 + n * d + n]
    else:
        c = p[0]
        assert [r["means"] for r in info["class_table"]] == [
            [hundredths(x) for x in p[1 + 2 * c + i * d:1 + 2 * c + (i + 1) * d]]
            for i in range(c)]


def test_an_isolation_forests_splits_read_in_real_units(maned_run, workdir):
    info, text, p = _fit(maned_run, workdir, "isolation_forest")
    at = 1
    for tree in info["forest"]:
        m = p[at]
        nodes = [p[at + 1 + 5 * j:at + 6 + 5 * j] for j in range(m)]
        assert tree == [{"feature": f, "threshold": hundredths(t), "left": lo, "right": hi,
                         "size": n} for f, t, lo, hi, n in nodes]
        at += 1 + 5 * m
    assert at == len(p) and len(info["forest"]) == info["trees"]


MAGIC = "1296974925, 1"


def test_a_flag_an_algorithm_does_not_read_shows_no_std_block(workdir):
    """Flag bit 1 on a decision tree (which stores no std block) is valid, and the tree's
    slots are not shown as feature statistics."""
    (workdir / "tree.txt").write_text(f"m : [14] = [{MAGIC}, 7, 2, 2, 1, 2, 6, "
                                      "1, -1, 0, -1, -1, 7]\n")
    code, text, err = run_tool(model_cli, ["show", "tree.txt"])
    assert (code, err) == (0, "")
    assert text.endswith("nodes: 1\nleaves: 1\nnode 0: label 7\n")
    assert "feature_means" not in text and "standardized features" not in text


def test_a_slot_outside_int64_is_invalid_and_a_huge_one_unreadable(workdir):
    (workdir / "wide.txt").write_text(f"m : [9] = [{MAGIC}, 1, 2, 1, 1, 0, 1, "
                                      "9223372036854775808]\n")
    code, text, err = run_tool(model_cli, ["show", "wide.txt"])
    assert (code, err) == (1, "")
    assert text.startswith("valid: no, slot 8 is outside int64 (a descriptor's slots are "
                           "int64)\n")
    (workdir / "huge.txt").write_text(f"m : [9] = [{MAGIC}, 1, 2, 1, 1, 0, 1, {'9' * 5000}]\n")
    assert run_tool(model_cli, ["show", "huge.txt"]) == (2, "", (
        "error: huge.txt: slot 8 is 5,000 digits long; an int64 slot has at most 19 [E029]\n"))


def test_the_models_doc_shows_what_the_tool_prints(maned_run, workdir):
    """docs/models.md's `maned-model show` session, run as written."""
    doc = (ROOT / "docs" / "models.md").read_text()
    command = "$ maned-run examples/linear_regression.mnd > fit.txt && maned-model show fit.txt\n"
    shown = doc.split(command, 1)[1].split("```", 1)[0]
    code, out, err = maned_run("linear_regression.mnd")
    (workdir / "fit.txt").write_text(out)
    assert run_tool(model_cli, ["show", "fit.txt"]) == (0, shown, "")


def test_a_long_unclosed_list_is_read_in_one_pass(workdir):
    """4 MB of `[1,1,1,...` with no `]`: E029, in memory in proportion to the file (a
    backtracking pattern took about 150 bytes per cell)."""
    (workdir / "open.txt").write_text("m = [" + "1," * (2 << 20))
    tracemalloc.start()
    try:
        code, out, err = run_tool(model_cli, ["show", "open.txt"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (code, out) == (2, "") and err.startswith("error: open.txt: neither a model file")
    assert peak < 32 << 20
