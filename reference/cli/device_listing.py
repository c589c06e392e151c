"""`maned-run devices`: list the workers that answer discovery (spec/wire.md §3.8).

    maned-run devices [--probe HOST[:PORT]]... [--no-broadcast] [--timeout MS]

One line per worker, `ALIAS KIND ADDRESS BUSY OPS`, or `no devices found`; exit 0 either
way, 2 for a bad flag or a probe target that does not resolve, 1 when no probe could be
sent."""
from dataclasses import dataclass, field

from ..diagnostics import Diagnostic, MnError
from ..diagnostics.ledger import exit_code
from ..diagnostics.printer import mask, run_line
from bark_vm.wire.constants import DISCOVERY_PORT, DISCOVERY_PROBE

from ..failures import DeviceFailure, Refused
from ..devices.discovery import (BROADCAST, DEFAULT_WINDOW_MS, MAX_WINDOW_MS, Probing,
                                 discover, parse_probe, resolve)
from .args import ArgReader, shown_argument, usage_error, window_ms
from .version import version_text

USAGE = f"""usage: maned-run devices [--probe HOST[:PORT]]... [--no-broadcast] [--timeout MS]

Sends the discovery probe (UDP, `{DISCOVERY_PROBE.decode()}`) to {BROADCAST}:{DISCOVERY_PORT} and to each --probe
target, and lists every worker that answers within the window:
ALIAS KIND ADDRESS BUSY OPS, or `no devices found` (exit 0 either way).

  --probe HOST[:PORT]  also probe this host (port {DISCOVERY_PORT} unless given); a name with several
                       addresses (tasks.worker on a swarm network) is probed at each.
                       Repeatable
  --no-broadcast       probe only the --probe targets
  --timeout MS         how long to wait for replies (default {DEFAULT_WINDOW_MS}; 1 to {MAX_WINDOW_MS})
  --help               print this help

example: maned-run devices --probe 127.0.0.1:{DISCOVERY_PORT} --no-broadcast
"""
HEADER = ("ALIAS", "KIND", "ADDRESS", "BUSY", "OPS")


@dataclass
class DevicesOptions:
    probes: list[str] = field(default_factory=list)
    broadcast: bool = True
    window_ms: int = DEFAULT_WINDOW_MS
    show: str | None = None


def parse_args(argv: list[str]) -> DevicesOptions:
    opts = DevicesOptions()
    reader = ArgReader(argv)
    for arg, name in reader:
        if name in ("--help", "-h"):
            opts.show = "help"
        elif name == "--version":
            opts.show = "version"
        elif name == "--probe":
            opts.probes.append(reader.value())
        elif name == "--no-broadcast":
            opts.broadcast = False
        elif name == "--timeout":
            opts.window_ms = window_ms("--timeout", reader.value())
        else:
            raise usage_error(f"maned-run devices: unknown argument: {shown_argument(arg)} (see "
                              "maned-run devices --help)")
    return opts


def main(argv: list[str], out, err) -> int:
    try:
        opts = parse_args(argv)
        if opts.show:
            out.write(USAGE if opts.show == "help" else version_text("maned-run"))
            return 0
        targets = [t for text in opts.probes for t in resolve(*parse_probe(text))]
    except Refused as e:
        return _fail(err, Diagnostic("EUSAGE", f"maned-run devices: {e}"))
    except MnError as e:
        return _fail(err, *e.diagnostics)
    try:
        found = discover(targets, opts.broadcast, opts.window_ms)
    except DeviceFailure as e:
        return _fail(err, Diagnostic("ERUN", e.at("maned-run devices").message))
    if not found:
        probing = Probing(tuple(opts.probes), opts.broadcast, opts.window_ms)
        out.write(f"no devices found ({probing.advice(found.notes)})\n")
        return 0
    for n in found.notes:  # the table stands, but a broadcast that was not sent is said
        err.write(f"note: {n}\n")
    rows = [HEADER] + [(f.alias, f.kind, f.address, "yes" if f.busy else "no", ",".join(f.ops))
                       for f in found]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER) - 1)]
    for r in rows:
        out.write(mask("  ".join([c.ljust(w) for c, w in zip(r, widths)] + [r[-1]])) + "\n")
    return 0


def _fail(err, *diags: Diagnostic) -> int:
    for d in diags:
        err.write(run_line(d) + "\n")
    return exit_code([d.code for d in diags])
