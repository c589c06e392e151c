"""A definition's round graphs, built once per distinct program in a run (DESIGN §7, R13):
rounds whose graphs the module says are equal (its `round_key`, from the steps and the
configuration) share one graph, renamed per round, so a chain of equal rounds, and the same
rounds of a sweep's configurations, are built, lowered and sent as one program. Never
changes a node."""
from dataclasses import replace

from ..graph.flow_graph import FlowGraph
from .base import Start


def round_name(definition: str, config: int, round_: int) -> str:
    """`<def>#c<K>#r<R>` (R13)."""
    return f"{definition}#c{config}#r{round_}"


def config_of(flow: str) -> int:
    """The K of a round's name `<def>#c<K>#r<R>`: its configuration."""
    return int(flow.rpartition("#c")[2].partition("#r")[0])


def hyper_key(cfg: dict, inputs: tuple[str, ...] = ()) -> tuple:
    """The hyperparameters a round graph may depend on, as a key; `inputs` are those that
    reach the round only as input tensors (so configurations differing in them share it)."""
    return tuple(sorted((k, v) for k, v in cfg.items() if k not in inputs))


class RoundGraphs:
    """One definition's round graphs; every configuration of it starts from the same data,
    so a module's graph depends on its steps and configuration only."""

    def __init__(self, module, definition: str, q: int):
        self.module, self.definition, self.q = module, definition, q
        self._built: dict[object, FlowGraph] = {}

    def build(self, config: int, start: Start, cfg: dict, first: int, count: int,
              round_: int = 0) -> FlowGraph:
        """Steps [first, first+count) of configuration `config` as round `round_`'s flow."""
        name = round_name(self.definition, config, round_)
        key = self.module.round_key(first, count, cfg)
        graph = self._built.get(key)
        if graph is None:
            graph = self._built[key] = self.module.round_graph(name, first, count, start, cfg,
                                                               self.q)
        return graph if graph.flow == name else replace(graph, flow=name)
