"""A routed chain against the local run, per algorithm and row count: `maned-run` with the
definition on one Bark VM (the child's start included, as a user pays it) against the
same script run locally, and the crossover: the fewest rows at which routing is faster."""
from . import data
from .figures import Figure, sides_of
from .timing import alternate, ratio

SIZES = {"smoke": {"linear_regression": (8, 100)},
         "full": {a: (8, 100, 1000, 10000) for a in data.ALGORITHMS}}
REPS = {"smoke": 5, "full": 3}
SMALL, SMALL_REPS = 100, 10  # up to this many rows a run is short and noisy: more repetitions


def measure(scale: str) -> list[Figure]:
    figures = []
    for algo, sizes in SIZES[scale].items():
        local_src = data.script(algo)
        routed_src = data.script(algo, ("vm",)) + data.vm_devices(["vm"])
        crossover = None
        for rows in sizes:
            inputs = data.inputs(algo, rows)
            reps = SMALL_REPS if scale == "full" and rows <= SMALL else REPS[scale]
            s = alternate({"local": lambda: data.checked_run(local_src, inputs, {"local"}),
                           "routed": lambda: data.checked_run(routed_src, inputs, {"vm"})},
                          reps,
                          warmup=0 if rows >= 10000 else 1)
            r = ratio(s["routed"], s["local"])
            figures.append(Figure(f"chain/{algo}/{rows}", r, "x",
                                  f"{algo} at {rows} rows: routed to one VM / local",
                                  "lower", sides=sides_of(s)))
            if crossover is None and r < 1:
                crossover = rows
        figures.append(Figure(f"chain/{algo}/crossover", crossover, "rows",
                              f"{algo}: the fewest rows measured ({', '.join(map(str, sizes))})"
                              " at which routing is faster; none when it never is"))
    return figures
