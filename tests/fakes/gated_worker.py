"""The real bark-worker with one change: its executor holds each job while a hold file
exists, so a "long" job is long by construction, not by the machine's speed.

    python gated_worker.py HOLD_FILE serve [bark-worker options]

Each job that reaches the executor appends `job PID` to HOLD_FILE.entered first, so a test
knows the job is executing (held) before it probes; each poll of a job appends `poll ID`. A hold left in place is released after
HOLD_LIMIT_S, so a broken test cannot leave a worker stuck."""
import os
import sys
import time

from bark_vm.server import cli, endpoints, job_table

HOLD_LIMIT_S = 120
HOLD = sys.argv.pop(1)
_real = endpoints.execute_request


def _held(request, module, *budget):
    with open(HOLD + ".entered", "a") as f:
        f.write(f"job {os.getpid()}\n")
    give_up = time.monotonic() + HOLD_LIMIT_S
    while os.path.exists(HOLD) and time.monotonic() < give_up:
        time.sleep(0.005)
    return _real(request, module, *budget)


_real_poll = job_table.JobTable.poll


def _logged_poll(self, job_id):
    with open(HOLD + ".entered", "a") as f:
        f.write(f"poll {job_id}\n")
    return _real_poll(self, job_id)


endpoints.execute_request = _held
job_table.JobTable.poll = _logged_poll
if __name__ == "__main__":
    cli.main()
