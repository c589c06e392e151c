"""Build a flow's dataflow graph (spec/wire-golden.md §1.1): walk the RPN body token by token,
inline calls (bounded self-recursion under @unroll), expand `repeat` with simultaneous update
(R8), share equal constants, drop values no output reaches, renumber densely."""
from bark_vm.wire.constants import RF_SLOTS as ABI_RF_SLOTS

from ..diagnostics import Diagnostic, MnError, Pos
from ..lang import ast
from ..lang.names import apply_stack_op, stack_needs
from ..catalogue import BY_NAME
from ..tensor import Tensor
from .flow_graph import FlowGraph, Node, NodeKind

RF_SLOTS = ABI_RF_SLOTS[2]  # the ABI v2 register budget used locally and in lint
RAW_LIMIT = 16 * RF_SLOTS  # give up expanding long before a runaway expansion can hang


class Builder:
    def __init__(self, flows: dict[str, ast.FlowDef], globals_: frozenset[str], root: str,
                 root_pos: Pos):
        self.flows = flows
        self.globals = globals_
        self.root = root
        self.root_pos = root_pos
        self.nodes: list[dict] = []
        self.consts: dict[tuple, int] = {}
        self.global_ids: dict[str, int] = {}
        self.calls = 0

    # --- nodes -----------------------------------------------------------------------
    def _new(self, kind: NodeKind, level, **fields) -> int:
        if len(self.nodes) >= RAW_LIMIT:
            raise MnError(Diagnostic(
                "ELIMIT", f"flow '{self.root}' expands to more than {RAW_LIMIT} values while "
                f"inlining calls and repeats; the register file has {RF_SLOTS} slots",
                self.root_pos))
        self.nodes.append(dict(kind=kind, level=level, **fields))
        return len(self.nodes) - 1

    def param(self, name, pos) -> int:
        return self._new("param", 0, name=name, pos=pos)

    def const(self, value: Tensor, pos) -> int:
        key = (value.shape, value.data)
        if key not in self.consts:
            self.consts[key] = self._new("const", 0, value=value, pos=pos)
        return self.consts[key]

    def ref(self, name, env, pos) -> int:
        if name in env:
            return env[name]
        if name in self.globals:
            if name not in self.global_ids:
                self.global_ids[name] = self._new("global", 0, name=name, pos=pos)
            return self.global_ids[name]
        raise MnError(Diagnostic("E003", f"undefined variable '{name}'", pos))

    def op(self, name: str, srcs, params: tuple = (), pos: Pos | None = None) -> int:
        level = 1 + max((self.nodes[s]["level"] for s in srcs), default=0)
        return self._new("op", level, op=name, srcs=tuple(srcs), params=params, pos=pos)

    # --- bodies ----------------------------------------------------------------------
    def inline(self, flow: ast.FlowDef, args: list[int], depth: int, prefix: str) -> list[int]:
        """Bind `args` to the flow's params, run its body, return its outputs' node ids."""
        env = {p.name: a for p, a in zip(flow.params, args)}
        for item in flow.body:
            if isinstance(item, ast.Statement):
                self.statement(item, env, env, flow, depth, prefix)
            elif isinstance(item, ast.Repeat):
                for _ in range(item.count):
                    new_env = dict(env)
                    for stmt in item.body:
                        self.statement(stmt, env, new_env, flow, depth, prefix)
                    env = new_env
        outs = []
        for t in flow.returns:
            if t.name not in env:
                raise MnError(Diagnostic(
                    "E005", f"flow '{flow.name}' returns '{t.name}', which it never binds",
                    t.pos))
            outs.append(env[t.name])
        return outs

    def statement(self, stmt: ast.Statement, read_env, write_env, flow, depth, prefix):
        stack = self.terms(stmt.terms, read_env, flow, depth, prefix)
        n = len(stmt.targets)
        if len(stack) < n:
            raise MnError(Diagnostic("EPARSE", "the stack holds fewer values than targets",
                                     stmt.pos))
        for target, node in zip(stmt.targets, stack[len(stack) - n:]):
            write_env[target.name] = node
            if self.nodes[node]["kind"] == "op" and self.nodes[node].get("name") is None:
                self.nodes[node]["name"] = prefix + target.name

    def terms(self, terms, env, flow, depth, prefix) -> list[int]:
        stack: list[int] = []
        for term in terms:
            if isinstance(term, ast.Num):
                stack.append(self.const(Tensor.scalar(term.value), term.pos))
            elif isinstance(term, ast.TensorLit):
                stack.append(self.const(Tensor(term.shape, term.data), term.pos))
            elif isinstance(term, ast.Ref):
                stack.append(self.ref(term.name, env, term.pos))
            elif isinstance(term, ast.StackOp):
                _stack_op(stack, term)
            elif isinstance(term, ast.OpCall):
                args = _pop(stack, BY_NAME[term.name].arity, term)
                params = tuple((k, v) for k, v in term.param_dict().items()
                               if not isinstance(v, str))
                stack.append(self.op(term.name, args, params, term.pos))
            elif isinstance(term, ast.FlowCall):
                stack.extend(self.call(term, stack, flow, depth))
        return stack

    def call(self, term: ast.FlowCall, stack, caller, depth) -> list[int]:
        callee = self.flows[term.name]
        args = _pop(stack, len(callee.params), term)
        if caller is not None and callee.name == caller.name:
            if depth >= (caller.unroll or 0):
                if len(caller.returns) > len(args):
                    raise MnError(Diagnostic(
                        "EPARSE", f"recursion in '{caller.name}' exceeds "
                        f"@unroll({caller.unroll or 0})", term.pos))
                return args[:len(caller.returns)]
            depth += 1
        else:
            depth = 1
        self.calls += 1
        return self.inline(callee, args, depth, f"{callee.name}${self.calls}$")

    # --- finishing ---------------------------------------------------------------------
    def finish(self, params: tuple[str, ...], outputs: list[tuple[str, int]]) -> FlowGraph:
        """Drop const/op values no output reaches, renumber densely in creation order."""
        live = set()
        todo = [i for _, i in outputs]
        while todo:
            i = todo.pop()
            if i not in live:
                live.add(i)
                todo.extend(self.nodes[i].get("srcs", ()))
        keep = [i for i, n in enumerate(self.nodes)
                if i in live or n["kind"] in ("param", "global")]
        new_id = {old: new for new, old in enumerate(keep)}
        nodes = []
        for old in keep:
            n = dict(self.nodes[old])
            n["srcs"] = tuple(new_id[s] for s in n.get("srcs", ()))
            nodes.append(Node(id=new_id[old], **n))
        return FlowGraph(self.root, tuple(nodes), params,
                         tuple((name, new_id[i]) for name, i in outputs))


def _pop(stack: list[int], n: int, term) -> list[int]:
    if len(stack) < n:
        raise MnError(Diagnostic("EPARSE", f"'{getattr(term, 'name', '?')}' needs {n} "
                                 f"operands, the stack holds {len(stack)}", term.pos))
    args = stack[len(stack) - n:] if n else []
    del stack[len(stack) - n:]
    return args


def _stack_op(s: list[int], term: ast.StackOp) -> None:
    """The stack op's permutation (lang.names.STACK_PERMS, Forth semantics)."""
    need = stack_needs(term.name)
    if len(s) < need:
        raise MnError(Diagnostic("EPARSE", f"'{term.name}' needs {need} "
                                 f"values, the stack holds {len(s)}", term.pos))
    apply_stack_op(s, term.name)


def check_budget(g: FlowGraph, pos: Pos | None) -> FlowGraph:
    if len(g.nodes) > RF_SLOTS:
        raise MnError(Diagnostic(
            "ELIMIT", f"flow '{g.flow}' compiles to {len(g.nodes)} values, but the target "
            f"register file has {RF_SLOTS} slots (ABI v2 RF_SLOTS); split the flow or reduce "
            "intermediates", pos))
    return g


def build_flow(flows: dict[str, ast.FlowDef], name: str, globals_: frozenset[str]) -> FlowGraph:
    """The graph of flow `name`; globals_ are the names a local flow may read as globals."""
    flow = flows[name]
    b = Builder(flows, globals_, name, flow.pos)
    args = [b.param(p.name, p.pos) for p in flow.params]
    outs = b.inline(flow, args, 1, "")
    graph = b.finish(tuple(p.name for p in flow.params),
                     [(t.name, i) for t, i in zip(flow.returns, outs)])
    return check_budget(graph, flow.pos)


def build_terms(flows: dict[str, ast.FlowDef], label: str, terms, targets: list[str] | None,
                globals_: frozenset[str], pos: Pos) -> FlowGraph:
    """The graph of one top-level statement (outputs = its targets) or print (the top)."""
    b = Builder(flows, globals_, label, pos)
    stack = b.terms(terms, {}, None, 1, "")
    if not stack:
        raise MnError(Diagnostic("EPARSE", "the statement leaves no value", pos))
    names = targets or ["return"]
    if len(stack) < len(names):
        raise MnError(Diagnostic("EPARSE", "the stack holds fewer values than targets", pos))
    outs = list(zip(names, stack[len(stack) - len(names):]))
    return check_budget(b.finish((), outs), pos)
