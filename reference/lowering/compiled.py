"""A routed flow compiled once per (graph, ABI) in a run (DESIGN §7): the lowered module with
its encoded bytes and the compute ops a worker must advertise; per input ranks, whether
each output is rank-0 locally (R5). Pre-flight and the routed targets read only this."""
import threading
from dataclasses import dataclass

from bark_vm.wire.ir import compute_mnemonics

from ..graph.flow_graph import FlowGraph
from ..interp.evaluate import describe
from ..ops.broadcast import check_axis
from ..ops.nn import conv_params, pool_params
from ..catalogue import BY_NAME, axis_of
from ..failures import OpError, Refused
from ..tensor import Tensor
from . import lower as lowering
from .lower import Lowered
from .shapes import rank0_values


@dataclass(frozen=True)
class Compiled:
    lowered: Lowered | None     # None when refused: nothing is lowered or sent
    mnemonics: tuple[str, ...]  # the compute ops of the module, for pre-flight
    rank0: tuple[bool, ...]     # per returned name: rank-0 locally (a `[1]` comes back as one)
    refusal: str | None = None  # what the local interpreter refuses that a worker would run

    @property
    def graph(self) -> FlowGraph:
        return self.lowered.graph

    @property
    def values(self) -> int:
        """The registers the flow needs (pre-flight's budget check)."""
        return len(self.lowered.graph.nodes)


class Compiler:
    """The run's one cache: each program is lowered, encoded and checked once per ABI and
    input ranks. A program is a graph's nodes, parameters and outputs; its name is not part
    of it, so the renamed rounds of a chain (ml/round_graphs) share one entry, and a job is
    named from its own graph. Thread-safe enough for its use: a race can only check twice,
    never give two different answers."""

    def __init__(self):
        self._lowered: dict[tuple, tuple[FlowGraph, Lowered, tuple[str, ...]]] = {}
        self._compiled: dict[tuple, tuple[FlowGraph, Compiled]] = {}
        self._lock = threading.Lock()  # two lanes wanting one program lower it once
        self.lowerings = 0  # how many times a graph was lowered (a test counts them)

    @staticmethod
    def _program(graph: FlowGraph, abi: int) -> tuple:
        return id(graph.nodes), graph.params, graph.outputs, abi

    def lowered(self, graph: FlowGraph, abi: int) -> tuple[Lowered, tuple[str, ...]]:
        """The graph's program lowered at `abi` (Refused when it cannot be), and its
        mnemonics. The Lowered is the program's: its graph may carry another round's name."""
        key = self._program(graph, abi)
        with self._lock:
            if key not in self._lowered:
                low = lowering.lower(graph, abi)
                self.lowerings += 1
                # the graph is held so that the id of its nodes is not reused meanwhile
                self._lowered[key] = (graph, low, tuple(compute_mnemonics(low.module)))
            _, low, mnemonics = self._lowered[key]
        return low, mnemonics

    def compile(self, graph: FlowGraph, abi: int, inputs: dict[str, Tensor]) -> Compiled:
        """The program's Compiled (shared by the rounds that are this program: name the job
        from its own graph, never from `compiled.graph`)."""
        key = self._program(graph, abi) + (tuple(inputs[p].rank == 0 for p in graph.params),)
        held = self._compiled.get(key)
        if held is None:
            held = self._compiled[key] = (graph, self._compile(graph, abi, inputs))
        return held[1]

    def warm(self, graph: FlowGraph, abi: int, inputs: dict[str, Tensor]) -> None:
        """Compile ahead, while a device starts; a refusal is left for the job to meet."""
        try:
            self.compile(graph, abi, inputs)
        except Refused:
            pass

    def _compile(self, graph: FlowGraph, abi: int, inputs: dict[str, Tensor]) -> Compiled:
        rank0 = rank0_values(graph, inputs)
        refusal = interpreter_refusal(graph, rank0)
        if refusal:
            return Compiled(None, (), (), refusal)
        low, mnemonics = self.lowered(graph, abi)
        return Compiled(low, mnemonics, tuple(rank0[i] for _, i in graph.outputs))


# Each reads the call's params with every one it leaves out at its catalogue default.
PARAM_CHECKS = {"conv2d": lambda p: conv_params(p["stride"], p["padding"]),
                "maxpool2d": lambda p: pool_params(p["kernel_size"], p["stride"], "maxpool2d"),
                "avgpool2d": lambda p: pool_params(p["kernel_size"], p["stride"], "avgpool2d")}


def interpreter_refusal(graph: FlowGraph, rank0: list[bool] | None = None) -> str | None:
    """The first op, in graph order, that the interpreter refuses whatever the values, in
    its words (ERUN when the job would run, as a local run refuses it; never a wire
    limit): a parameter the op itself refuses (a pool's kernel 0, a negative conv stride),
    or, given which values are rank-0, an axis op on a rank-0 operand (docs/ops.md §5.0; a
    rank-0 value travels as `[1]`, where axis 0 exists, so a worker would run it)."""
    for n in graph.nodes:
        if n.kind != "op":
            continue
        params = dict(n.params)
        try:
            if n.op in PARAM_CHECKS:
                PARAM_CHECKS[n.op]({**dict(BY_NAME[n.op].defaults), **params})
            if rank0 is not None and any(rank0[s] for s in n.srcs):
                axis = axis_of(n.op, params)
                if axis is not None:
                    check_axis(axis, 0)
        except OpError as e:
            return f"{describe(n)}: {e}"
    return None
