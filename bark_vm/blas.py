"""One home for the BLAS thread rule (numpy-free, so it runs before numpy is imported):
every process that runs the executor is one serial worker (bark-worker, a VM child,
maned-bench's own process), so its BLAS runs on one thread unless the environment says
otherwise; N workers then use N cores, and none starts a thread pool it cannot use (on a
loaded machine such a pool made a 256x256 matmul 7x slower)."""

BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def one_blas_thread(env):
    """`env` (a mapping, os.environ itself before numpy is imported) with BLAS_THREADS set
    to 1 where they are unset: a value the user set wins."""
    for name in BLAS_THREADS:
        env.setdefault(name, "1")
    return env
