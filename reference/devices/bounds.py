"""The coordinator's bounds, one home (DESIGN §10, spec/wire.md §3.1, §3.5): every
wait on a worker has a deadline, every answer a size cap."""
from bark_vm.wire.constants import MAX_SECONDS, RESULT_TTL_S

CONNECT_TIMEOUT_S = 5.0
# One deadline per exchange: a CDP request from send to the last byte of its answer, a Bark
# VM job from the request frame to the last byte of its answer (and the HELO). A device's
# `timeout = N` field replaces it for that device.
ANSWER_DEADLINE_S = 30.0
MAX_DEADLINE_S = MAX_SECONDS  # the longest `timeout` a device may ask for: one day
# A Bark VM's start (spawn to HELO) gets at least this long whatever its `timeout`: a cold
# start (an interpreter and numpy loading on a busy machine) is not an answer to a job.
START_DEADLINE_S = 30.0
MAX_ANSWER_BYTES = 64 * 1024 * 1024  # above the 32 MiB max_payload a v2 worker advertises
MAX_HEAD_BYTES = 64 * 1024  # an HTTP answer's status line and headers
POLL_FIRST_S, POLL_CAP_S, POLL_BUDGET_S = 0.05, 1.0, float(RESULT_TTL_S)
CLOSE_GRACE_S = 5.0  # a VM child given this long to exit after its stdin closes
SIGNAL_CHECK_S = 0.1  # the longest the main thread sleeps before it looks for a Ctrl-C
# `--threads N`: the local pool's width at most (each pool process is a fork of the run), and
# never wider than the jobs the run can have at once (one per flow and per ML configuration)
THREADS_MAX = 256
