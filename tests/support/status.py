"""A worker's status (GET /api/status, spec/wire.md §3): the one reader the tests use,
for a worker given as anything with `host` and `port`, and the fields a status has."""
from support.raw_http import call

STATUS_KEYS = ["proto", "alias", "kind", "uptime_s", "requests", "jobs_running",
               "jobs_capacity", "ops", "max_payload", "ir", "rf_slots", "jobs_sync",
               "jobs_async", "jobs_done"]  # in the order a worker sends them
# the ops an ABI-2 worker lists, in its order
OPS_V2 = ["matmul", "add", "sub", "mul", "div", "scalar_mul", "relu", "sigmoid", "tanh",
          "softmax", "conv2d", "maxpool2d", "avgpool2d", "transpose", "concat", "reshape",
          "split", "layernorm", "batchnorm", "tensor_sum", "tensor_mean", "tensor_max",
          "tensor_min", "gt", "lt", "eq", "ge", "le", "ne", "and", "or", "xor", "not"]


def status_of(worker, timeout: float = 30) -> dict:
    """The worker's status fields, asked without the X-Maned-Proto header (status needs
    none); the answer must be 200. `timeout` bounds the wait for the answer."""
    s, _, data = call(worker, "GET", "/api/status", proto=False, timeout=timeout)
    assert s == 200, data
    return data
