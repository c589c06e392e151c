"""Round trip of the tiny flow per transport (Bark VM over stdio, bark-worker over HTTP sync
and async, the same worker in a container), beside the floors in the same run: a raw pipe
echo and a raw loopback HTTP request."""
from contextlib import ExitStack

from .figures import Figure, sides_of
from .floors import loopback_http, pipe_echo
from .timing import alternate, ratio
from .workers import container_device, container_unavailable, http_device, tiny_request, vm_device

REPS = {"smoke": 15, "full": 200}
START_REPS = {"smoke": 2, "full": 10}


def _vm_start() -> None:
    with vm_device():
        pass


def measure(scale: str) -> list[Figure]:
    mnpk, mnrs = tiny_request()
    with ExitStack() as stack:
        vm = stack.enter_context(vm_device())
        http = stack.enter_context(http_device())
        pipe = stack.enter_context(pipe_echo())
        loop = stack.enter_context(loopback_http())
        sides = {"pipe echo": lambda: pipe(mnpk), "loopback http": lambda: loop(mnpk),
                 "vm": lambda: vm.run(mnpk), "http sync": lambda: http.run(mnpk),
                 "http async": lambda: http.run_async(mnpk)}
        why = container_unavailable() if scale == "full" else "not at the smoke scale"
        if why is None:
            box = stack.enter_context(container_device())
            sides["container sync"] = lambda: box.run(mnpk)
        for name, side in sides.items():  # each answers what it must, before it is timed
            if side() != (mnpk if name in ("pipe echo", "loopback http") else mnrs):
                raise RuntimeError(f"the {name} side did not answer the tiny flow exactly")
        s = alternate(sides, REPS[scale])
        start = alternate({"vm start": _vm_start}, START_REPS[scale], warmup=0)
    figures = [Figure(f"roundtrip/{name.replace(' ', '_')}", v.median * 1000, "ms",
                      f"round trip of the tiny flow: {name} (median)", sides=sides_of({name: v}))
               for name, v in s.items()]
    figures.append(Figure("roundtrip/vm_start", start["vm start"].median * 1000, "ms",
                          "a Bark VM child's start (spawn to HELO) and close, which every "
                          "maned-run pays per VM alias", sides=sides_of(start)))
    pairs = [("vm", "pipe echo"), ("http sync", "loopback http"), ("http async", "http sync")]
    if "container sync" in s:
        pairs.append(("container sync", "http sync"))
    else:
        figures.append(Figure("roundtrip/container_sync", None, "ms", f"not measured: {why}"))
    figures += [Figure(f"roundtrip/{a.replace(' ', '_')}_over_{b.replace(' ', '_')}",
                       ratio(s[a], s[b]), "x", f"{a} round trip / {b}", "lower",
                       sides=sides_of({a: s[a], b: s[b]})) for a, b in pairs]
    return figures
