"""`python -m maned_conformance.mutation ...`: the mutation run (see run.py)."""
import sys

from .run import main

sys.exit(main())
