"""A configuration's round graphs, built once per distinct program in a run (DESIGN §7, R13):
rounds whose graphs the module says are equal (its `round_key`) share one graph, renamed per
round, so a chain of equal rounds is built, lowered and encoded once. Never changes a node."""
from dataclasses import replace

from ..graph.model import FlowGraph
from .base import Start


def round_name(definition: str, config: int, round_: int) -> str:
    """`<def>#c<K>#r<R>` (R13)."""
    return f"{definition}#c{config}#r{round_}"


class RoundGraphs:
    def __init__(self, module, definition: str, config: int, start: Start, cfg: dict, q: int):
        self.module, self.definition, self.config = module, definition, config
        self.start, self.cfg, self.q = start, cfg, q
        self._built: dict[object, FlowGraph] = {}

    def build(self, first: int, count: int, round_: int = 0) -> FlowGraph:
        """Steps [first, first+count) as round `round_`'s flow."""
        name = round_name(self.definition, self.config, round_)
        key = self.module.round_key(first, count)
        graph = self._built.get(key)
        if graph is None:
            graph = self._built[key] = self.module.round_graph(name, first, count, self.start,
                                                               self.cfg, self.q)
        return graph if graph.flow == name else replace(graph, flow=name)
