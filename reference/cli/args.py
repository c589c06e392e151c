"""maned-run's command line. Options may come before or after the script path (R27)."""
import re
from dataclasses import dataclass, field, replace

from bark_vm.wire.constants import DISCOVERY_PORT
from bark_vm.wire.digits import whole_number

from ..diagnostics import Diagnostic, MnError
from ..devices.specs import DeviceOverride
from ..lang.names import nearest
from ..devices.bounds import THREADS_MAX
from ..dispatch.replicas import REPLICAS_MAX
from ..targets.local import ENGINE_FROM
from ..devices.discovery import DEFAULT_WINDOW_MS, MAX_WINDOW_MS, Probing

USAGE = f"""usage: maned-run <file.mnd> [--flow NAME] [--in name=VALUE]... [--verify]
                 [--require-vm] [--trap-overflow] [--reference | --engine] [--threads N]
                 [--progress | --no-progress]
                 [--trace FILE [--trace-format jsonl|chrome]] [--json] [--out-dir DIR]
                 [--journal FILE] [--replicas N]
                 [--probe HOST[:PORT]]... [--no-broadcast] [--discover-timeout MS]
                 [--device http://HOST:PORT | --device local] [--device-user USER]
                 [--device-pass PASS|env:NAME] [--device-token TOKEN|env:NAME]
                 [--no-vm-fallback]
       maned-run devices [--probe HOST[:PORT]]... [--no-broadcast] [--timeout MS]
       maned-run --version | --help

  --flow NAME        run NAME and the flows that produce its parameters; print only NAME
  --in name=VALUE    set an input or flow parameter: 5, 3:1,2,3, 2x2:1,2,3,4, AxBxC:...
                     (raw integers); for a csv() input, a file path. Repeatable; last wins
  --verify           re-run everything on the local interpreter (the reference) and
                     compare every output exactly: the routed ones and the local engine's
  --require-vm       send flows without @device to a Bark VM named 'vm' (Tier A round
                     flows too); a flow with a local-only op is refused
  --trap-overflow    fail at the first op result that leaves int32 instead of wrapping
                     (local runs only)
  --reference        run the local flows on the pure-Python reference interpreter (slower
                     on large data; the same numbers)
  --engine           run the local flows on the exact numpy engine whatever the data's size
                     (by default: when the run's data hold at least {ENGINE_FROM:,} values)
  --threads N        local flows run in a pool of up to N processes (default 1: inline; at
                     most {THREADS_MAX}, and never more than the run's flows and ML
                     configurations); never changes a number
  --progress         progress lines on stderr (default: on when stderr is a terminal)
  --no-progress      no progress lines
  --trace FILE       the run's timeline: one JSON line per job start and end, coordinator
                     step and phase, flushed at once
  --trace-format chrome  write it instead as one Trace Event document, which Perfetto
                     (ui.perfetto.dev) and chrome://tracing open
  --json             print the run's report as one JSON document on stdout instead of
                     the blocks (docs/api.md has its schema); errors still go to stderr
  --out-dir DIR      write the out:: files with relative paths into DIR (an existing
                     folder; relative to the working folder) instead of the script's
  --journal FILE     write every completed ML round to FILE as it lands; run the same
                     command again with the same FILE (after Ctrl-C, a kill, a power cut)
                     to go on from where it stopped (a finished one prints at once)
  --replicas N       run each round of a routed calc::ml:: sweep on N distinct aliases of
                     its @device list (2 or 3; default 1) and take the majority's answer;
                     an outvoted worker gets no more work in the run
  --probe HOST[:PORT]  where the discover = true blocks look for their workers, besides
                     the broadcast (port {DISCOVERY_PORT} unless given; repeatable)
  --no-broadcast     probe only the --probe targets
  --discover-timeout MS  how long discovery waits for replies (default {DEFAULT_WINDOW_MS})
  --device http://HOST:PORT | local
                     run every flow and ML round on this worker (or on a Bark VM child),
                     whatever the script's @device says; ML init and epilogue stay local.
                     Messages name it 'device'
  --device-user USER, --device-pass PASS|env:NAME
                     its login; without --device-pass the password is $MANED_DEVICE_PASS
  --device-token TOKEN|env:NAME
                     a pre-issued token instead of a login
  --no-vm-fallback   accepted for upstream's sake and does nothing: a worker that cannot
                     be reached is always an error, never a silent switch (R29)
  --version          print the version and a build line
  --help             print this help

examples:
  maned-run examples/sweep.mnd --verify
  maned-run examples/layer.mnd --in x=2x2:1,2,3,4 --json
  maned-run examples/csv_io.mnd --out-dir /tmp
  maned-run fit.mnd --device http://10.0.0.21:4780 --device-user me --device-pass env:PASS
  maned-run devices --probe 10.0.0.21 --no-broadcast

environment:
  MANED_DEVICE_PASS  --device-user's password when --device-pass is absent
  MANED_BARK_VM      the bark-vm a host = "local" device starts when it has no vm field
                     (else this Python's bark_vm)
  MANED_MAX_SOURCE_BYTES, MANED_MAX_STEPS, MANED_MAX_ROUNDS  the script limits (E031)
  a device's env("NAME") fields are read when the plan runs, never printed
"""


@dataclass
class ToolOptions:
    """What every tool's command line has (filled by ArgReader.common)."""

    script: str | None = None
    flow: str | None = None
    inputs: list[tuple[str, str]] = field(default_factory=list)
    show: str | None = None  # "version" or "help"


@dataclass
class RunOptions(ToolOptions):
    trap_overflow: bool = False
    reference: bool | None = None  # --reference: True, --engine: False, else by size
    threads: int = 1
    verify: bool = False
    require_vm: bool = False
    progress: bool | None = None  # None: on when stderr is a terminal
    trace: str | None = None
    trace_format: str = "jsonl"
    json: bool = False
    out_dir: str | None = None
    journal: str | None = None
    replicas: int = 1
    probing: Probing = field(default_factory=Probing)
    device: DeviceOverride | None = None


def usage_error(msg: str) -> MnError:
    return MnError(Diagnostic("EUSAGE", msg))


def shown_argument(arg: str) -> str:
    """An argument as a refusal may quote it: an option without its `=value` (a mistyped
    --device-pas=SECRET must not print the secret)."""
    return arg.partition("=")[0] if arg.startswith("-") else arg


def count_flag(flag: str, text: str, most: int) -> int:
    """A count option's value: a whole number from 1 to `most`."""
    value = whole_number(text, 1, most)
    if value is None:
        raise usage_error(f"{flag} takes a whole number from 1 to {most}, not '{text[:32]}'")
    return value


def window_ms(flag: str, text: str) -> int:
    """A discovery window in milliseconds, 1 to MAX_WINDOW_MS."""
    value = whole_number(text, 1, MAX_WINDOW_MS)
    if value is None:
        raise usage_error(f"{flag} takes a whole number of milliseconds, 1 to "
                          f"{MAX_WINDOW_MS}, not '{text[:32]}'")
    return value


class ArgReader:
    """Walks a command line; `--name value` and `--name=value` alike (shared by the tools)."""

    def __init__(self, argv: list[str]):
        self.args = list(argv)
        self.name = ""
        self._inline: str | None = None

    def __iter__(self):
        while self.args:
            arg = self.args.pop(0)
            if arg.startswith("--") and "=" in arg:
                self.name, _, self._inline = arg.partition("=")
            else:
                self.name, self._inline = arg, None
            yield arg, self.name

    def value(self) -> str:
        if self._inline is not None:
            return self._inline
        if not self.args:
            raise usage_error(f"{self.name} needs a value")
        return self.args.pop(0)

    def common(self, opts, name: str) -> bool:
        """The options every tool shares (--help, --version, --flow, --in); True if handled."""
        if name in ("--help", "-h"):
            opts.show = "help"
        elif name == "--version":
            opts.show = "version"
        elif name == "--flow":
            opts.flow = self.value()
        elif name == "--in":
            opts.inputs.append(self.in_pair())
        else:
            return False
        return True

    def in_pair(self) -> tuple[str, str]:
        """The `name=VALUE` of an `--in`."""
        text = self.value()
        key, sep, val = text.partition("=")
        if not sep or not key.isidentifier():
            raise usage_error(f"bad --in {text}: expected name=VALUE")
        return key, val


# maned-run's flags, as its usage line names them: the candidates of a "did you mean"
RUN_FLAGS = sorted(set(re.findall(r"--[a-z][a-z-]*", USAGE.split("maned-run devices")[0]))
                   | {"--help", "--version"})

def _flag_hint(arg: str) -> str:
    """` (did you mean '--x'?)` for the flag `arg` nearly is, its dashes left out of the
    likeness (every flag shares them)."""
    best = nearest(shown_argument(arg).lstrip("-"), [f[2:] for f in RUN_FLAGS])
    return f" (did you mean '--{best}'?)" if best else ""


DEVICE_FLAGS = {"--device": "url", "--device-user": "user", "--device-pass": "password",
                "--device-token": "token"}


def parse_args(argv: list[str]) -> RunOptions:
    opts = RunOptions()
    credentials: dict[str, str] = {}
    reader = ArgReader(argv)
    value = reader.value
    for arg, name in reader:
        if reader.common(opts, name):
            continue
        if name == "--trap-overflow":
            opts.trap_overflow = True
        elif name == "--verify":
            opts.verify = True
        elif name in ("--reference", "--engine"):
            engine = name == "--engine"
            if opts.reference is engine:
                raise MnError(Diagnostic("EUSAGE", "--reference and --engine contradict each "
                                         "other: give one"))
            opts.reference = not engine
        elif name == "--require-vm":
            opts.require_vm = True
        elif name == "--no-vm-fallback":
            pass  # upstream's; we never fall back (R29)
        elif name in ("--progress", "--no-progress"):
            opts.progress = name == "--progress"
        elif name == "--trace":
            opts.trace = value()
            if opts.trace == "-":
                raise usage_error("--trace - : give the trace a file path (stdout carries the "
                                  "flow blocks)")
        elif name == "--trace-format":
            opts.trace_format = value()
            if opts.trace_format not in ("jsonl", "chrome"):
                raise usage_error(f"--trace-format {opts.trace_format}: choose jsonl or chrome")
        elif name == "--json":
            opts.json = True
        elif name == "--out-dir":
            opts.out_dir = value()
        elif name == "--journal":
            opts.journal = value()
        elif name == "--replicas":
            opts.replicas = count_flag(name, value(), REPLICAS_MAX)
        elif name == "--probe":
            opts.probing = replace(opts.probing, probes=opts.probing.probes + (value(),))
        elif name == "--no-broadcast":
            opts.probing = replace(opts.probing, broadcast=False)
        elif name == "--discover-timeout":
            opts.probing = replace(opts.probing, window_ms=window_ms(name, value()))
        elif name in DEVICE_FLAGS:
            credentials[DEVICE_FLAGS[name]] = value()
        elif name == "--threads":
            opts.threads = count_flag(name, value(), THREADS_MAX)
        elif arg.startswith("-") and arg != "-":
            raise usage_error(f"unknown argument: {shown_argument(arg)}{_flag_hint(arg)}")
        elif opts.script is None:
            opts.script = arg
        else:
            raise usage_error(f"unknown argument: {shown_argument(arg)}")
    if opts.script is None and opts.show is None:
        raise usage_error("no script given (usage: maned-run <file.mnd> [options]; see --help)")
    opts.device = _device_override(credentials)
    if opts.trace_format != "jsonl" and opts.trace is None:
        raise usage_error("--trace-format needs --trace FILE")
    return opts


def _device_override(given: dict[str, str]) -> DeviceOverride | None:
    """--device and its credential flags, checked as a command line (values are read when
    the plan runs)."""
    if not given:
        return None
    if "url" not in given:
        flags = [f for f, k in DEVICE_FLAGS.items() if k in given]
        raise usage_error(f"{', '.join(flags)} without --device: credentials need a device "
                          "(--device http://HOST:PORT)")
    if given["url"] == "local" and len(given) > 1:
        raise usage_error("--device local takes no credentials (a Bark VM child needs none)")
    if "token" in given and ("user" in given or "password" in given):
        raise usage_error("--device-token excludes --device-user and --device-pass")
    if "password" in given and "user" not in given:
        raise usage_error("--device-pass needs --device-user")
    return DeviceOverride(**given)
