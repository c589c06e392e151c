"""The dataflow graph of one flow: nodes numbered densely in topological (creation) order."""
from dataclasses import dataclass
from typing import Literal

from ..diagnostics import Pos
from ..tensor import Tensor

NodeKind = Literal["param", "global", "const", "op"]


@dataclass(frozen=True)
class Node:
    """kind: param (flow input), global (an `in::` name read by a local flow), const, op."""

    id: int
    kind: NodeKind
    level: int
    op: str | None = None
    srcs: tuple[int, ...] = ()
    params: tuple[tuple[str, object], ...] = ()
    value: Tensor | None = None
    name: str | None = None
    pos: Pos | None = None


@dataclass(frozen=True)
class FlowGraph:
    flow: str
    nodes: tuple[Node, ...]
    params: tuple[str, ...]
    outputs: tuple[tuple[str, int], ...]

    @property
    def globals(self) -> tuple[str, ...]:
        return tuple(n.name for n in self.nodes if n.kind == "global")
