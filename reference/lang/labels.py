"""The labels the binary classifiers train against (spec/ml-exact.md §4.2, §10.2): a
logistic regression's or xgboost's y is 0 or S, an svm's −S or S, S = 10^quantres. Other
values are never refused (the integers stay as the spec defines them), but they train to
nothing useful, so lint (W019) and maned-run (a note) say so."""
from ..ml_catalogue import BY_NAME
from ..tensor import Tensor

SHOWN = 3  # values quoted in a finding


def label_set(algo: str, quantres: int) -> tuple[int, int] | None:
    """The two labels of a binary classifier at this scale; None for any other algorithm."""
    row = BY_NAME.get(algo)
    if row is None or row.labels is None:
        return None
    low, high = row.labels
    return low * 10 ** quantres, high * 10 ** quantres


def off_labels(algo: str, quantres: int, y: Tensor) -> str | None:
    """Why y does not hold the algorithm's labels (a line naming them), or None."""
    labels = label_set(algo, quantres)
    if labels is None:
        return None
    bad = sorted({v for v in y.data if v not in labels})
    if not bad:
        return None
    shown = ", ".join(map(str, bad[:SHOWN])) + (", ..." if len(bad) > SHOWN else "")
    return (f"y holds {shown}, not a label of {algo}: its labels are {labels[0]} and "
            f"{labels[1]} at quantres {quantres} (real {labels[0] // 10 ** quantres} and "
            f"{labels[1] // 10 ** quantres}); other values train to nothing useful "
            "(docs/models.md, labels)")
