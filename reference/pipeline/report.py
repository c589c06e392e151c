"""The report of one run (DESIGN §7): plain frozen records that serialise to JSON. It holds
everything `maned-run` prints (status blocks, return@ lines, flow blocks, out:: lines, the
verify verdict, notes, coded diagnostics) as fields, the exit code, and per-job timings.
`docs/api.md` documents it; `report.schema.json` beside this file is its JSON Schema."""
from dataclasses import asdict, dataclass

from ..diagnostics import Diagnostic, Pos
from ..diagnostics.ledger import code_info
from ..diagnostics.printer import mask
from ..dispatch.trace import JobRecord
from ..dispatch.verify import Verdict
from ..tensor import Tensor

SCHEMA_VERSION = 1
# a status block's fields, in the order `status::` prints them (R23, R44)
STATUS_FIELDS = ("alias", "proto", "kind", "ir", "rf_slots", "jobs_running", "jobs_capacity",
                 "max_payload", "uptime_s", "requests", "ops")


@dataclass(frozen=True)
class Note:
    """A progress event: one note of the run (a csv value clamped, ...), as `note:` says it."""

    text: str


@dataclass(frozen=True)
class Value:
    """One named tensor: its shape ([] for rank 0), its row-major values, and whether it is a
    wide (int64, never wrapped) model descriptor (R30)."""

    name: str
    shape: tuple[int, ...]
    values: tuple[int, ...]
    wide: bool = False

    @staticmethod
    def of(name: str, t: Tensor) -> "Value":
        return Value(name, tuple(t.shape), tuple(t.data), t.wide)

    def tensor(self) -> Tensor:
        return Tensor(self.shape, self.values, self.wide)


@dataclass(frozen=True)
class FlowOutputs:
    flow: str
    outputs: tuple[Value, ...]


@dataclass(frozen=True)
class StatusBlock:
    """A `status::alias;` block: the worker's status fields in R23's order."""

    alias: str
    fields: tuple[tuple[str, object], ...]


@dataclass(frozen=True)
class DiagnosticRecord:
    """A diagnostic as fields; the message is already masked (D13)."""

    code: str
    severity: str
    stage: str
    line: int | None
    column: int | None
    message: str
    cause: str | None = None  # a failed job's device code or transport name (UNSUPPORTED_OP,
    #                           timeout, connect_failed, malformed_response, too_large, died;
    #                           outvoted, no_majority under --replicas)

    @staticmethod
    def of(d: Diagnostic) -> "DiagnosticRecord":
        return DiagnosticRecord(d.code, d.severity, d.stage or code_info(d.code).stage,
                                d.pos.line if d.pos else None, d.pos.col if d.pos else None,
                                mask(d.message), d.cause)

    def diagnostic(self) -> Diagnostic:
        pos = Pos(self.line, self.column) if self.line is not None else None
        return Diagnostic(self.code, self.message, pos, self.stage, self.cause)


@dataclass(frozen=True)
class OutFile:
    name: str
    path: str


@dataclass(frozen=True)
class SweepConfig:
    """One configuration of a sweep: its value of the swept key (of a grid's first key), its
    values of every swept key (`Sweep.keys`), the names its outputs are bound to, its loss (the `[1]` value, for an algorithm that returns one), how it ended
    (`finished`, or `failed`: its outputs were not produced, an error line says why), the
    aliases its rounds ran on (none: locally) and how many of its rounds ran."""

    index: int
    value: int
    outputs: tuple[str, ...]
    loss: int | None = None
    status: str = "finished"
    devices: tuple[str, ...] = ()
    rounds: int = 0
    values: tuple[int, ...] = ()


@dataclass(frozen=True)
class Sweep:
    """A calc::ml:: sweep as a person reads it: which value each configuration had, and
    which configurations have the lowest loss (none when the algorithm returns no loss).
    `key` is the swept key (a grid's first); `keys` every swept key, in the order
    written."""

    definition: str
    algorithm: str
    key: str
    configurations: tuple[SweepConfig, ...]
    lowest: tuple[int, ...] = ()
    keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class Report:
    exit_code: int
    diagnostics: tuple[DiagnosticRecord, ...] = ()
    statuses: tuple[StatusBlock, ...] = ()
    prints: tuple[Value, ...] = ()  # return@LINE values, in script order
    flows: tuple[FlowOutputs, ...] = ()  # the printed blocks, in script order
    files: tuple[OutFile, ...] = ()  # out:: files written
    verify: Verdict | None = None  # None: not asked, or the routed run failed
    notes: tuple[str, ...] = ()
    jobs: tuple[JobRecord, ...] = ()
    sweeps: tuple[Sweep, ...] = ()  # every sweep that printed its block, in script order
    schema_version: int = SCHEMA_VERSION

    def outputs(self, flow: str) -> dict[str, Tensor]:
        """One flow's outputs as tensors, by name (KeyError when it printed no block)."""
        block = next((f for f in self.flows if f.flow == flow), None)
        if block is None:
            raise KeyError(flow)
        return {v.name: v.tensor() for v in block.outputs}

    def to_json(self) -> dict:
        """The report as JSON-ready data (docs/api.md has its schema): lists and dicts only,
        so it validates as returned, not only once through `json`."""
        doc = _lists(asdict(self))
        for block in doc["statuses"]:
            block["fields"] = dict(block["fields"])
        return doc


def _lists(value):
    """`value` with every tuple, at any depth, made a list (JSON has arrays, not tuples)."""
    if isinstance(value, (list, tuple)):
        return [_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    return value
