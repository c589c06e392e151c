"""A routed flow compiled once per (graph, ABI) in a run (DESIGN §7): the lowered module with
its encoded bytes and the compute ops a worker must advertise; per input ranks, whether
each output is rank-0 locally (R5). Pre-flight and the routed targets read only this."""
from dataclasses import dataclass

from bark_vm.wire.ir import compute_mnemonics

from ..graph.model import FlowGraph
from ..tensor import Tensor
from . import lower as lowering
from .lower import Lowered
from .shapes import rank0_outputs


@dataclass(frozen=True)
class Compiled:
    lowered: Lowered
    mnemonics: tuple[str, ...]  # the compute ops of the module, for pre-flight
    rank0: tuple[bool, ...]     # per returned name: rank-0 locally (a `[1]` comes back as one)

    @property
    def graph(self) -> FlowGraph:
        return self.lowered.graph

    @property
    def values(self) -> int:
        """The registers the flow needs (pre-flight's budget check)."""
        return len(self.lowered.graph.nodes)


class Compiler:
    """The run's one cache: each (graph, ABI) is lowered and encoded once. Thread-safe enough
    for its use: a race can only lower twice, never give two different answers."""

    def __init__(self):
        self._lowered: dict[tuple[int, int], tuple[FlowGraph, Lowered, tuple[str, ...]]] = {}
        self.lowerings = 0  # how many times a graph was lowered (a test counts them)

    def lowered(self, graph: FlowGraph, abi: int) -> tuple[Lowered, tuple[str, ...]]:
        """The graph lowered at `abi` (LoweringError when it cannot be), and its mnemonics."""
        key = (id(graph), abi)
        if key not in self._lowered:
            low = lowering.lower(graph, abi)
            self.lowerings += 1
            # the graph is held so that its id is not reused while the cache lives
            self._lowered[key] = (graph, low, tuple(compute_mnemonics(low.module)))
        _, low, mnemonics = self._lowered[key]
        return low, mnemonics

    def compile(self, graph: FlowGraph, abi: int, inputs: dict[str, Tensor]) -> Compiled:
        low, mnemonics = self.lowered(graph, abi)
        return Compiled(low, mnemonics, rank0_outputs(graph, inputs))
