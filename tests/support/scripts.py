"""Scripts as the tests write them: the quantization preamble a script starts with,
`device::` blocks, and examples/sweep.mnd (DESIGN §6's sweep) with its two local VMs
swapped for other devices."""
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"


def preamble(quantmax: int = 1000, quantmin: int = -1000, quantres: int = 0) -> str:
    """The three `mnd::` lines a script starts with."""
    return (f"mnd::quantmax={quantmax};\nmnd::quantmin={quantmin};\n"
            f"mnd::quantres={quantres};\n")


H0 = preamble()  # integers within +-1000: most tests' scripts
H2 = preamble(quantres=2)  # two decimal places
H8 = preamble(100, -100, 0)  # a range int8 carries
HML = preamble(100, -100, 2)  # the ML examples' (examples/sweep.mnd, the §6 fit)
# the §6 fit's inputs (examples/sweep.mnd's X and y)
FIT_DATA = ("in::X = [[100,200],[200,100],[300,500],[400,200],[500,800],[600,300],[0,100],"
            "[200,700]];\nin::y = [[300],[600],[400],[900],[500],[1200],[200],[0]];\n")


class Verbatim(str):
    """A device field's value written as it is: env("X"), or a value a test means to be bad."""


def env(var: str) -> Verbatim:
    """The field value env("VAR")."""
    return Verbatim(f'env("{var}")')


def _value(v) -> str:
    if isinstance(v, Verbatim):
        return str(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    return f'"{v}"'


def device(alias: str, **fields) -> str:
    """`device::ALIAS { field = value; ... }` and a newline, the fields in the order given
    (`pass` is spelled password=): strings quoted, numbers and booleans bare, a Verbatim
    as it is."""
    body = " ".join(f"{'pass' if k == 'password' else k} = {_value(v)};"
                    for k, v in fields.items())
    return f"device::{alias} {{ {body} }}\n"


def sweep_with(text: str | None = None, route: str | None = None, **blocks: str) -> str:
    """examples/sweep.mnd (or `text`, a variant of it) with each local VM named in `blocks`
    (vm1=..., vm2=...) replaced by its block ("" drops it); `route` replaces the fit's
    `@device(vm1, vm2)` with `@device(ROUTE)`."""
    text = (EXAMPLES / "sweep.mnd").read_text() if text is None else text
    for alias, block in blocks.items():
        line = f'device::{alias} {{ host = "local"; }}\n'
        assert line in text, f"the sweep has no local {alias} to replace"
        text = text.replace(line, block)
    if route is not None:
        assert "@device(vm1, vm2)" in text
        text = text.replace("@device(vm1, vm2)", f"@device({route})")
    return text
