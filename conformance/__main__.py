"""`python -m maned_conformance URL ...` is `maned-certify URL ...`."""
import sys

from .certify import main

sys.exit(main())
