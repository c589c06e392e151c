"""What a calc::ml:: sweep trained: the swept keys' values of each configuration (one key,
or a grid's several), the names its outputs are bound to (configuration-major, R13), its
loss, and which configurations reach the lowest loss. `maned-run` says it in a note;
`--json` carries it."""
from ..lang import ast
from ..ml.hyper import swept
from ..ml_catalogue import algorithm
from .report import Sweep, SweepConfig


def sweeps(program: ast.Program, ml: dict, outputs: dict,
           outcomes: dict | None = None) -> list[Sweep]:
    """Every sweep whose definition produced outputs (of one configuration at least), in
    script order; `outcomes`: how each configuration ended (the scheduler's)."""
    found = []
    for d in program.of(ast.MLDef):
        configs = ml.get(d.name, (None, []))[1]
        keys = tuple(swept((h.key, h.value) for h in d.hypers))
        if not keys or len(configs) < 2 or d.name not in outputs:
            continue
        per = len(d.returns) // len(configs)
        with_loss = per == 2 and algorithm(d.algo).second == "loss"
        ended = (outcomes or {}).get(d.name)
        rows = []
        for i, config in enumerate(configs):
            names = tuple(t.name for t in d.returns[i * per:(i + 1) * per])
            done = names[0] in outputs[d.name]
            loss = outputs[d.name][names[1]].data[0] if with_loss and done else None
            how = ended[i] if ended else None
            status = (how.status if how else "finished") if done else "failed"
            rows.append(SweepConfig(i, config[keys[0]], names, loss, status,
                                    how.devices if how else (), how.rounds if how else 0,
                                    tuple(config[k] for k in keys)))
        losses = [r.loss for r in rows if r.loss is not None]
        lowest = tuple(r.index for r in rows if losses and r.loss == min(losses))
        found.append(Sweep(d.name, d.algo, keys[0], tuple(rows), lowest, keys))
    return found


def _had(s: Sweep, c: SweepConfig) -> str:
    """`lr 5`; a grid's `iters 100, lr 5`."""
    return ", ".join(f"{k} {v}" for k, v in zip(s.keys, c.values))


def sweep_note(s: Sweep) -> str:
    """`sweep 'fit' over lr: m0, l0 had lr 2 (loss 1); ...; the lowest loss, 0: m1 (lr 5)`;
    a grid's `sweep 'fit' over iters, lr: m0, l0 had iters 100, lr 2 (loss 1); ...`."""
    parts = [f"{', '.join(c.outputs)} had {_had(s, c)}" +
             (f" (loss {c.loss})" if c.loss is not None else "") +
             (" (failed)" if c.status == "failed" else "") for c in s.configurations]
    text = f"sweep '{s.definition}' over {', '.join(s.keys)}: " + "; ".join(parts)
    if s.lowest:
        best = [s.configurations[i] for i in s.lowest]
        text += (f"; the lowest loss, {best[0].loss}: " +
                 ", ".join(f"{c.outputs[0]} ({_had(s, c)})" for c in best))
    return text
