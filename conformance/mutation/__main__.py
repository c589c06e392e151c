"""`python -m maned_conformance.mutation ...`: the mutation run (see cli.py)."""
import sys

from .cli import main

sys.exit(main())
