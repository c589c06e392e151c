"""The real Bark VM at ABI 1 (`--abi 1` added to its command line), for tests that need a
device of the older ABI beside a v2 one."""
import sys

from bark_vm import vm

if __name__ == "__main__":
    sys.exit(vm.main(sys.argv[1:] + ["--abi", "1"]))
