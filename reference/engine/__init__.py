"""The local exact engine (DESIGN §14): a local flow graph evaluated in this process on the
Bark executor's numpy kernels, the ones a worker runs, so a local result is a worker's
result by construction. What the executor does not run, the reference runs; the reference
stays the oracle that `--verify` compares against."""
