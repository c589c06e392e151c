"""A job: one flow graph to run on a target, with its inputs and where its result goes."""
import itertools
from dataclasses import dataclass, field
from typing import Callable

from ..graph.flow_graph import FlowGraph
from ..targets.target import LOCAL

_seq = itertools.count()


@dataclass(order=True)
class Job:
    """Ordered by `key` = (level, script position, configuration, round) on a device's lane;
    `target` names where it runs ("local" for the interpreter); `globals` are the in:: and
    top-level values a local flow reads; `done(outputs, error)` receives the result
    (outputs None when error is a Diagnostic) on the scheduler's thread. `follow(outputs)`,
    when set, is called on the lane that ran the job when it succeeds: the job that
    continues its chain on that lane (queued there at once, with no hop through the
    scheduler), or None when the chain ends, and only then is the result reported."""

    key: tuple
    seq: int = field(default_factory=lambda: next(_seq))
    name: str = field(default="", compare=False)
    graph: FlowGraph | None = field(default=None, compare=False)
    inputs: dict = field(default_factory=dict, compare=False)
    globals: dict = field(default_factory=dict, compare=False)
    target: str = field(default=LOCAL, compare=False)
    done: Callable = field(default=None, compare=False)
    round_flow: bool = field(default=False, compare=False)
    follow: Callable | None = field(default=None, compare=False)
