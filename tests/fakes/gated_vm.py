"""The real Bark VM with one change: while the file named by $MANED_TEST_HOLD exists, it
holds its jobs numbered $MANED_TEST_HOLD_FROM (default 1) and later, so a job is long by
construction. Each job, held or not, first appends `ALIAS PID N` to HOLD.entered. A hold left
in place is released after HOLD_LIMIT_S, so a broken test cannot leave a child stuck."""
import os
import sys
import time

from bark_vm import vm

HOLD_LIMIT_S = 120
HOLD = os.environ["MANED_TEST_HOLD"]
HOLD_FROM = int(os.environ.get("MANED_TEST_HOLD_FROM", "1"))
ALIAS = sys.argv[sys.argv.index("--alias") + 1]
_real = vm.handle
_count = 0


def _held(payload, config):
    global _count
    _count += 1
    with open(HOLD + ".entered", "a") as f:
        f.write(f"{ALIAS} {os.getpid()} {_count}\n")
    give_up = time.monotonic() + HOLD_LIMIT_S
    while _count >= HOLD_FROM and os.path.exists(HOLD) and time.monotonic() < give_up:
        time.sleep(0.005)
    return _real(payload, config)


vm.handle = _held
if __name__ == "__main__":
    sys.exit(vm.main())
