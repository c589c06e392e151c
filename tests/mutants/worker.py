"""bark-worker with one mutant installed: `python worker.py NAME serve [options]`."""
import sys

from mutants import apply

from bark_vm.server import cli

apply(sys.argv.pop(1))
if __name__ == "__main__":
    cli.main()
