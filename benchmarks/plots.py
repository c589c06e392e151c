"""The plots of a run (PNG, matplotlib): the routed/local ratio against rows per algorithm,
the sweep speed-up against workers with the ideal line, the per-round stages per target,
and a routed job's efficiency against its compute. Each returns its figure (to inspect)."""
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import NullLocator  # noqa: E402

from .paths import plot_file  # noqa: E402


def _values(figures, pattern: str) -> dict[tuple, float]:
    rx = re.compile(pattern)
    return {m.groups(): f.value for f in figures if (m := rx.fullmatch(f.name))
            and f.value is not None}


def _legend(ax) -> None:
    """The legend beside the axes, never over a line or a bar (savefig's tight box keeps it)."""
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)


def _integer_ticks(ax, xs) -> None:
    """The x ticks at the measured points, labelled as plain integers (never 2×10^0)."""
    ax.set_xticks(xs, [str(x) for x in xs])
    ax.xaxis.set_minor_locator(NullLocator())


def _series(points: dict[tuple, float], line: tuple[float, str], labels: tuple[str, str, str],
            ylog: bool, xlog: bool = True):
    """One line per series ({(series, x): y}) over a log x axis (or a linear one), ticks at
    the measured x, and a reference line."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name in sorted({n for n, _ in points}):
        xs = sorted(int(x) for n, x in points if n == name)
        ax.plot(xs, [points[(name, str(x))] for x in xs], marker="o", label=name)
    ax.axhline(line[0], color="grey", linestyle="--", label=line[1])
    if xlog:
        ax.set_xscale("log")
    if ylog:
        ax.set_yscale("log")
    _integer_ticks(ax, sorted({int(x) for _, x in points}))
    ax.set_xlabel(labels[0])
    ax.set_ylabel(labels[1])
    ax.set_title(labels[2])
    _legend(ax)
    return fig


def chain_ratio(figures, meta):
    return _series(_values(figures, r"chain/(\w+)/(\d+)"), (1.0, "break-even (1x)"),
                   ("training rows", "routed to one Bark VM / local (time ratio, x)",
                    f"Routed chain vs local ({meta['date']}, {meta['cores']} cores)"), True)


def sweep_speedup(figures, meta, yardstick):
    points = _values(figures, r"sweep/(\d+)/(\w+)_x(\d+)/over_one")
    fig, ax = plt.subplots(figsize=(7, 4.5))
    workers = sorted({int(n) for _, _, n in points} | {1})
    ax.plot(workers, workers, color="grey", linestyle="--", label="ideal (linear)")
    for k, kind in sorted({(k, kind) for k, kind, _ in points}, key=lambda t: (t[1], int(t[0]))):
        ns = [1] + sorted(int(n) for kk, kd, n in points if (kk, kd) == (k, kind))
        ax.plot(ns, [1.0] + [points[(k, kind, str(n))] for n in ns[1:]], marker="o",
                label=f"{kind}, {k} configurations")
    ax.set_xlabel("workers")
    ax.set_ylabel("speed-up over one worker (x)")
    _integer_ticks(ax, workers)
    ax.set_title(f"Sweep fan-out (yardstick {yardstick or 0:.2f}x of 2.0, {meta['date']})")
    _legend(ax)
    return fig


COORDINATOR = ("graph_build", "lowering", "encoding")       # stages.py's, timed in-process
WORKER = ("worker_decode_and_validate", "execute")


def round_stages(figures, meta):
    """Per target, a bar of what a routed round costs: the coordinator's stages (timed
    in-process), the round trip through the device (measured) and the rest of the run, with
    the measured whole round as a black line; beside it, the inside of the round trip: the
    worker's stages (timed in-process, hatched) and the transit they leave. A stage timed on
    its own can be longer than the part it sits in (colder, or overlapping it): the bar
    beside then rises past the round trip, and the line, not a stack, is the measure."""
    stages = {name: v for (name,), v in _values(figures, r"rounds/stage/(\w+)").items()}
    per = _values(figures, r"rounds/(vm|http)/(total|round_trip|transit|scheduler)")
    names = sorted({t for t, _ in per})
    colours = iter(plt.rcParams["axes.prop_cycle"].by_key()["color"] * 2)
    colour = {part: next(colours) for part in COORDINATOR + ("round_trip", "scheduler")
              + WORKER + ("transit",)}
    text = {"round_trip": "round trip (measured)",
            "scheduler": "rest of the run (scheduling, results)",
            "transit": "transit (round trip less the worker's stages)"}
    fig, ax = plt.subplots(figsize=(7, 4.5))
    width, shown = 0.34, set()

    def bar(x, part, height, bottom, **style):
        label = text.get(part, part.replace("_", " "))
        ax.bar(x, height, width, bottom, color=colour[part], edgecolor="white",
               label=None if part in shown else label, **style)
        shown.add(part)
        return bottom + height
    for i, target in enumerate(names):
        top = 0.0
        for part in COORDINATOR:
            top = bar(i - width / 2, part, stages.get(part, 0.0), top)
        trip_at = top
        top = bar(i - width / 2, "round_trip", per.get((target, "round_trip"), 0.0), top)
        bar(i - width / 2, "scheduler", per.get((target, "scheduler"), 0.0), top)
        inside = trip_at
        for part in WORKER:
            inside = bar(i + width / 2, part, stages.get(part, 0.0), inside, hatch="//")
        bar(i + width / 2, "transit", per.get((target, "transit"), 0.0), inside, hatch="//")
        total = per.get((target, "total"))
        if total is not None:
            ax.hlines(total, i - width, i + width, colors="black", linewidth=2,
                      label=None if "total" in shown else "measured whole round")
            shown.add("total")
    ax.set_xticks(range(len(names)), names)
    ax.set_xlabel("target (left: the round; right: inside its round trip)")
    ax.set_ylabel("time per round (microseconds)")
    ax.set_title(f"Per-round overhead by stage ({meta['date']})")
    _legend(ax)
    return fig


def metg_efficiency(figures, meta):
    return _series(_values(figures, r"metg/(\w+)/efficiency/(\d+)"),
                   (0.5, "50% efficiency (METG)"),
                   ("matmul size n (an n x n job)", "efficiency: compute / round trip",
                    f"A routed job's efficiency ({meta['date']})"), False)


def fleet_efficiency(figures, meta):
    points = _values(figures, r"fleet/h(\d+)/x(\d+)/efficiency")
    named = {(f"{hold} ms rounds", n): v for (hold, n), v in points.items()}
    fig = _series(named, (1.0, "ideal (every worker busy all the time)"),
                  ("workers (a simulated fleet: each holds a round to its round time)",
                   "efficiency: ideal / measured",
                   f"A sweep over a simulated fleet ({meta['date']}, {meta['cores']} cores)"),
                  False, xlog=False)
    fig.axes[0].set_ylim(0, 1.05)
    return fig


# name -> (the figures it plots, drawn only when this run has one of them; how to draw it)
PLOTS = {
    "chain_ratio": (r"chain/\w+/\d+", lambda f, meta, _: chain_ratio(f, meta)),
    "sweep_speedup": (r"sweep/\d+/\w+_x\d+/over_one", sweep_speedup),
    "round_stages": (r"rounds/(stage/\w+|(vm|http)/(transit|scheduler))",
                     lambda f, meta, _: round_stages(f, meta)),
    "metg_efficiency": (r"metg/\w+/efficiency/\d+", lambda f, meta, _: metg_efficiency(f, meta)),
    "fleet_efficiency": (r"fleet/h\d+/x\d+/efficiency",
                         lambda f, meta, _: fleet_efficiency(f, meta)),
}


def write_all(folder, figures, meta, yardstick) -> list:
    """The plot of every family that has points in this run, as PNG files; their paths. The
    plots of families that did not run (--only) are left as they are, never blanked."""
    made = []
    for name, (points, draw) in PLOTS.items():
        if not any(re.fullmatch(points, f.name) and f.value is not None for f in figures):
            continue
        fig = draw(figures, meta, yardstick)
        path = plot_file(folder, name)
        fig.savefig(path, dpi=110, bbox_inches="tight")
        made.append(path)
        plt.close(fig)
    return made
