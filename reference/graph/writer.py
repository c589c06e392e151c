"""Write a flow graph op by op from Python: how the ML expansion builds its round flows.
Same node rules as a parsed flow: shared constants, dead values dropped, dense ids."""
from ..diagnostics import Pos
from ..catalogue import BY_NAME
from ..tensor import Tensor
from .build import Builder
from .flow_graph import FlowGraph


class GraphWriter:
    """`wire_only` refuses any op without a binary-IR opcode (round flows must route)."""

    def __init__(self, name: str, wire_only: bool = True):
        self._b = Builder({}, frozenset(), name, Pos(1, 1))
        self._params: list[str] = []
        self.wire_only = wire_only

    def param(self, name: str) -> int:
        self._params.append(name)
        return self._b.param(name, None)

    def const(self, value: int | Tensor) -> int:
        return self._b.const(value if isinstance(value, Tensor) else Tensor.scalar(value), None)

    def op(self, name: str, *srcs: int, **params) -> int:
        spec = BY_NAME[name]
        if len(srcs) != spec.arity or (self.wire_only and not spec.wire):
            raise ValueError(f"op '{name}' with {len(srcs)} operands is not a wire op here")
        return self._b.op(name, srcs, tuple(params.items()))

    @property
    def size(self) -> int:
        """Values created so far (before dead values are dropped)."""
        return len(self._b.nodes)

    def finish(self, outputs: list[tuple[str, int]]) -> FlowGraph:
        return self._b.finish(tuple(self._params), outputs)
