"""maned-run's command line. Options may come before or after the script path (R27)."""
from dataclasses import dataclass, field

from ..diagnostics import Diagnostic, MnError

USAGE = """usage: maned-run <file.mnd> [--flow NAME] [--in name=VALUE]... [--verify]
                 [--require-vm] [--trap-overflow] [--threads N] [--progress | --no-progress]
                 [--trace FILE] [--json]
       maned-run --version | --help

  --flow NAME        run NAME and the flows that produce its parameters; print only NAME
  --in name=VALUE    set an input or flow parameter: 5, 3:1,2,3, 2x2:1,2,3,4, AxBxC:...
                     (raw integers); for a csv() input, a file path. Repeatable; last wins
  --verify           re-run everything on the local interpreter and compare every routed
                     output exactly
  --require-vm       send flows without @device to a Bark VM named 'vm' (Tier A round
                     flows too); a flow with a local-only op is refused
  --trap-overflow    fail at the first op result that leaves int32 instead of wrapping
                     (local runs only)
  --threads N        local flows run in a pool of N processes (default 1: inline); never
                     changes a number
  --progress         progress lines on stderr (default: on when stderr is a terminal)
  --no-progress      no progress lines
  --trace FILE       one JSON line per job start and end, flushed at once
  --json             print the run's report as one JSON document on stdout instead of
                     the blocks (docs/api.md has its schema); errors still go to stderr
  --version          print the version and a build line
  --help             print this help
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
    threads: int = 1
    verify: bool = False
    require_vm: bool = False
    progress: bool | None = None  # None: on when stderr is a terminal
    trace: str | None = None
    json: bool = False


def usage_error(msg: str) -> MnError:
    return MnError(Diagnostic("EUSAGE", msg))


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


def parse_args(argv: list[str]) -> RunOptions:
    opts = RunOptions()
    reader = ArgReader(argv)
    value = reader.value
    for arg, name in reader:
        if reader.common(opts, name):
            continue
        if name == "--trap-overflow":
            opts.trap_overflow = True
        elif name == "--verify":
            opts.verify = True
        elif name == "--require-vm":
            opts.require_vm = True
        elif name in ("--progress", "--no-progress"):
            opts.progress = name == "--progress"
        elif name == "--trace":
            opts.trace = value()
        elif name == "--json":
            opts.json = True
        elif name == "--threads":
            text = value()
            if not text.isdigit() or int(text) < 1:
                raise usage_error(f"--threads takes a whole number >= 1, not '{text}'")
            opts.threads = int(text)
        elif arg.startswith("-") and arg != "-":
            raise usage_error(f"unknown argument: {arg}")
        elif opts.script is None:
            opts.script = arg
        else:
            raise usage_error(f"unknown argument: {arg}")
    if opts.script is None and opts.show is None:
        raise usage_error("no script given (usage: maned-run <file.mnd> [options]; see --help)")
    return opts
