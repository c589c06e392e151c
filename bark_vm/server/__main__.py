"""`python -m bark_vm.server serve ...` is `bark-worker serve ...`."""
from .cli import main

main()
