"""Where each planned definition runs (wire.md §5.2 steps 4-5, R16, R29): a user flow on
its one `@device` alias or locally; an ML definition's round flows on its aliases
(configuration i on alias i mod N). Every refusal happens here, before anything runs."""
from bark_vm.wire.constants import DEFAULT_ABI

from ..diagnostics import Diagnostic, MnError
from ..graph.flow_graph import FlowGraph
from ..lang import ast
from ..lang.names import suggest
from ..catalogue import BY_NAME
from ..failures import DeviceFailure, Refused
from ..targets.target import LOCAL
from ..devices.specs import (FORCED_ALIAS, VM_ALIAS, DeviceSpec, deadline_of, device_specs,
                      pool_members, pools, remote_of)
from .plan import Plan, definitions, statements
from .scheduler import Routing
from .trace import COORDINATOR

RESERVED = (LOCAL, VM_ALIAS, FORCED_ALIAS, COORDINATOR)  # target names a pool member may not take

TWO_ALIASES = ("flow '{flow}' names {n} @device aliases; a flow runs on one worker - use one "
               "alias, or a calc::ml:: sweep to fan a hyperparameter list across workers")


def _refuse(msg: str, code: str = "EPLAN") -> MnError:
    return MnError(Diagnostic(code, msg))


def resolve_routing(program: ast.Program, plan: Plan, graphs: dict[str, FlowGraph],
                    ml: dict, require_vm: bool, compiler=None,
                    forced: DeviceSpec | None = None, discovery=None) -> Routing:
    """Where each planned definition runs; every routed user flow is also lowered at the
    default ABI, so that what cannot be routed at all is refused before anything runs.
    forced: the `--device` target, which takes every user flow and Tier A round whatever
    its @device says (init and epilogue stay local, R29). discovery: the plan's one
    discovery, which a pool alias needs now: its members are the aliases it stands for.
    compiler: the run's Compiler (one is made when a flow is routed and none was given)."""
    specs = device_specs(program)
    routing = Routing(devices=dict(specs))
    members = _Pools(specs, routing.devices, discovery)
    if require_vm and forced is None:
        routing.devices[VM_ALIAS] = DeviceSpec(VM_ALIAS, "vm", {})
    default, flag = None, None
    if forced is not None:
        routing.devices[forced.alias] = forced
        deadline_of(forced)
        if forced.kind == "remote":
            remote_of(forced)  # env: secrets resolved now, before any login
        default, flag = forced.alias, "--device"
    elif require_vm:
        default, flag = VM_ALIAS, "--require-vm"
    defs = definitions(program)
    for name in plan.order:
        d = defs[name]
        aliases = [] if forced is not None else [r.alias for r in d.devices]
        for alias in aliases:
            if alias not in specs:
                raise _refuse(f"flow '{name}': @device({alias}) names no device:: block"
                              + suggest(alias, specs))
            deadline_of(specs[alias])
            if specs[alias].kind == "remote":
                remote_of(specs[alias])  # env() secrets resolved now, before any login
        aliases = members.expand(aliases, isinstance(d, ast.MLDef) and len(ml[name][1]) > 1)
        if isinstance(d, ast.MLDef):
            routing.ml[name] = _ml_route(d, ml[name][1], aliases, default)
        else:
            _misplaced_device(d)
            if len(aliases) > 1:
                raise _refuse(TWO_ALIASES.format(flow=name, n=len(aliases)))
            alias = aliases[0] if aliases else default
            if alias:
                if compiler is None:
                    from ..lowering.compiled import Compiler
                    compiler = Compiler()
                _check_routable(graphs[name], None if aliases else flag, compiler)
            routing.flows[name] = alias
    return routing


class _Pools:
    """Pool aliases turned into their members, once per plan: configuration i of a sweep
    on member i mod N (N and the order fixed here); a plain flow, or a fit of one
    configuration, on the first member."""

    def __init__(self, specs: dict[str, DeviceSpec], devices: dict[str, DeviceSpec],
                 discovery):
        self.specs, self.devices, self.discovery = specs, devices, discovery
        self._members: dict[str, list[str]] = {}

    def expand(self, aliases: list[str], sweep: bool) -> list[str]:
        out = []
        for alias in aliases:
            if not pools(self.specs[alias]):
                out.append(alias)
                continue
            found = self._of(alias)
            out += found if sweep else found[:1]
        return out

    def _of(self, alias: str) -> list[str]:
        if alias not in self._members:
            if self.discovery is None:
                from ..devices.discovery import Discovery, Probing
                self.discovery = Discovery(Probing())
            try:
                found = self.discovery.found()
            except Refused as e:
                raise _refuse(str(e), "EUSAGE") from None
            except DeviceFailure as e:
                raise _refuse(e.at(f"device '{alias}' (pool)").message) from None
            members = pool_members(self.specs[alias], found)
            if not members:
                raise _refuse(f"device '{alias}' (pool): no worker answered discovery "
                              f"({self.discovery.probing.describe(found.notes)})")
            for m in members:
                if m.alias in RESERVED:
                    raise _refuse(f"device '{alias}' (pool): a worker answers as '{m.alias}', "
                                  "a name the run keeps for its own targets; give the worker "
                                  f"at {m.fields['host']} another BARK_ALIAS")
                if m.alias in self.specs:
                    raise _refuse(f"device '{alias}' (pool): the worker '{m.alias}' it found "
                                  f"is also a device:: block of this script; rename one")
                self.devices[m.alias] = m
            self._members[alias] = [m.alias for m in members]
        return self._members[alias]


def _ml_route(d: ast.MLDef, configs: list, aliases: list[str], default: str | None) -> tuple:
    from ..ml.algorithms import is_tier_a
    if not is_tier_a(d.algo):
        return ()  # Tier B is coordinator-only (its @device is E027 already)
    if len(aliases) > 1 and len(configs) == 1:
        raise _refuse(f"ml definition '{d.name}' names {len(aliases)} @device aliases but "
                      "trains one configuration; several aliases need a sweep (a list-valued "
                      "hyperparameter)")
    return tuple(aliases) or ((default,) if default else ())


def _misplaced_device(flow: ast.FlowDef) -> None:
    misplaced = [d for d in flow.decorators if d.name == "device"]
    misplaced += [d for item in flow.body for s in statements(item) for d in s.decorators
                  if d.name == "device"]
    if misplaced:
        raise _refuse(f"flow '{flow.name}': @device at line {misplaced[0].pos.line} routes "
                      "nothing; write @device(alias) between the flow's ')' and '{'")


def _check_routable(graph: FlowGraph, flag: str | None, compiler) -> None:
    """Compile-time refusals of a routed flow (globals, ops with no opcode, the caps), at
    the ABI a Bark worker speaks by default; a device of another ABI lowers it again when
    its job runs (and refuses it there, naming the flow). `flag`: the option that sent a
    flow without @device here (--require-vm, --device), which refuses local-only ops."""
    if flag:
        local = sorted({n.op for n in graph.nodes if n.kind == "op"
                        and not BY_NAME[n.op].wire})
        if local:
            where = "the Bark VM" if flag == "--require-vm" else "a worker"
            raise _refuse(f"{flag}: flow '{graph.flow}' uses ops with no binary-IR "
                          f"opcode ({', '.join(local)}); it cannot run on {where}")
    from ..lowering.compiled import interpreter_refusal
    if interpreter_refusal(graph):
        return  # refused when its job runs, in the interpreter's words, as locally
    try:
        compiler.lowered(graph, DEFAULT_ABI)
    except Refused as e:
        raise _refuse(str(e), "ELIMIT" if e.limit else "EPLAN") from None


def routed_aliases(routing: Routing) -> list[str]:
    """Every alias a job of the plan may run on, sorted."""
    return sorted({a for a in routing.flows.values() if a}
                  | {a for t in routing.ml.values() for a in t})
