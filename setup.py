"""Package list for setuptools: `maned` is the `reference/` folder, `maned_conformance` the
`conformance/` one, `maned_bench` the `benchmarks/` one, `maned_machine` the `machine/` one
(pyproject's package-dir)."""
from setuptools import find_packages, setup

setup(
    packages=["maned"] + ["maned." + p for p in find_packages("reference")]
    + ["bark_vm"] + ["bark_vm." + p for p in find_packages("bark_vm")]
    + ["maned_conformance", "maned_conformance.mutation", "maned_bench"]
    + ["maned_machine"] + ["maned_machine." + p for p in find_packages("machine")],
)
