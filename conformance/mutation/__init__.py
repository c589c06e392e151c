"""Mutation testing of the conformance suite: mutants of the project's own worker, each
certified by `maned-certify`; a mutant that passes certification is a defect no case sees.

`python -m maned_conformance.mutation` runs it (docs/certify.md, "Measuring the suite by
mutation"); `operators` is the table of defects, `mutants` enumerates them, `trial` runs
one, `judgements` reads equivalent.toml, `report` writes the result.
"""
