"""The status JSON of `GET /api/status` and the VM's HELO (wire-golden §8 [W20], §7 [W19]).

Compact, ASCII, no trailing newline, keys in a fixed order; `bark-worker` adds three
counters. The parser ignores unknown fields and refuses a body missing a required one.
"""
import json
from dataclasses import dataclass

from . import strict_json
from .constants import PROTO, RF_SLOTS

KEYS = ("proto", "alias", "kind", "uptime_s", "requests", "jobs_running", "jobs_capacity",
        "ops", "max_payload", "ir", "rf_slots")
WORKER_KEYS = ("jobs_sync", "jobs_async", "jobs_done")


@dataclass(frozen=True)
class Status:
    alias: str
    kind: str
    uptime_s: int
    requests: int
    jobs_running: int
    jobs_capacity: int
    ops: tuple[str, ...]
    max_payload: int
    ir: int
    rf_slots: int
    proto: int = PROTO
    jobs_sync: int | None = None  # bark-worker only (R19); None leaves them out
    jobs_async: int | None = None
    jobs_done: int | None = None


def encode_status(s: Status) -> bytes:
    body = {k: getattr(s, k) for k in KEYS}
    body["ops"] = list(s.ops)
    if s.jobs_sync is not None:
        body.update({k: getattr(s, k) for k in WORKER_KEYS})
    return json.dumps(body, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def is_uint(v) -> bool:
    """A JSON non-negative integer (a bool is not one)."""
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _uint(obj: dict, key: str) -> int:
    v = obj.get(key)
    if not is_uint(v):
        raise ValueError(f"status field '{key}' is missing or not a non-negative integer")
    return v


def _first_wins(pairs):
    obj = {}
    for k, v in pairs:
        obj.setdefault(k, v)
    return obj


def parse_status(raw: bytes | str) -> Status:
    """A Status from a status body, every field checked; ValueError naming what is wrong
    (wire.md §3.4: unknown fields ignored, the first of duplicate keys wins, `ir` and
    `rf_slots` optional, a worker sending neither is ABI v1 with 256 slots; `ir` is 1 or 2
    and `rf_slots` at most that ABI's register file)."""
    obj = strict_json.loads(raw, object_pairs_hook=_first_wins)
    if not isinstance(obj, dict):
        raise ValueError("status is not a JSON object")
    for key in ("alias", "kind"):
        if not isinstance(obj.get(key), str):
            raise ValueError(f"status field '{key}' is missing or not a string")
    ops = obj.get("ops")
    if not isinstance(ops, list) or not all(isinstance(o, str) for o in ops):
        raise ValueError("status field 'ops' is missing or not a list of strings")
    extra = {k: _uint(obj, k) for k in WORKER_KEYS if k in obj}
    ir = _uint(obj, "ir") if "ir" in obj else None
    rf_slots = _uint(obj, "rf_slots") if "rf_slots" in obj else None
    if ir is None:
        ir = 2 if rf_slots is not None and rf_slots > RF_SLOTS[1] else 1
    if ir not in RF_SLOTS:
        raise ValueError(f"status field 'ir' is {ir}; the ABIs are 1 and 2")
    if rf_slots is None:
        rf_slots = RF_SLOTS[ir]
    if not 1 <= rf_slots <= RF_SLOTS[ir]:
        raise ValueError(f"status field 'rf_slots' is {rf_slots}; ABI v{ir} has 1 to "
                         f"{RF_SLOTS[ir]} register slots")
    return Status(alias=obj["alias"], kind=obj["kind"], uptime_s=_uint(obj, "uptime_s"),
                  requests=_uint(obj, "requests"), jobs_running=_uint(obj, "jobs_running"),
                  jobs_capacity=_uint(obj, "jobs_capacity"), ops=tuple(ops),
                  max_payload=_uint(obj, "max_payload"), ir=ir, rf_slots=rf_slots,
                  proto=_uint(obj, "proto"), **extra)
