"""One pytest-benchmark entry per benchmark family (its figures in extra_info); run with
`maned-bench` or `tox -e bench`, never by the unit suite (tests/test_bench.py is the smoke)."""
import pytest

from maned_bench.suite import FAMILIES, measure


@pytest.mark.parametrize("family", list(FAMILIES))
def test_family(family, benchmark, bench_scale, bench_figures):
    figures = []
    benchmark.group = family
    benchmark.pedantic(lambda: figures.extend(measure(family, bench_scale)), rounds=1,
                       iterations=1)
    benchmark.extra_info["figures"] = [f.to_json() for f in figures]
    bench_figures.extend(figures)
    assert figures and all(f.name.startswith(family) for f in figures)
