"""maned-run's command line. Options may come before or after the script path (R27)."""
from dataclasses import dataclass, field

from ..diagnostics import Diagnostic, MnError

USAGE = """usage: maned-run <file.mnd> [--flow NAME] [--in name=VALUE]... [--trap-overflow]
                 [--threads N]
       maned-run --version | --help

  --flow NAME        run NAME and the flows that produce its parameters; print only NAME
  --in name=VALUE    set an input or flow parameter: 5, 3:1,2,3, 2x2:1,2,3,4, AxBxC:...
                     (raw integers); for a csv() input, a file path. Repeatable; last wins
  --trap-overflow    fail at the first op result that leaves int32 instead of wrapping
  --threads N        worker threads for local flows (default 1; never changes a number)
  --version          print the version and a build line
  --help             print this help
"""


@dataclass
class RunOptions:
    script: str | None = None
    flow: str | None = None
    inputs: list[tuple[str, str]] = field(default_factory=list)
    trap_overflow: bool = False
    threads: int = 1
    show: str | None = None  # "version" or "help"


def _usage(msg: str) -> MnError:
    return MnError(Diagnostic("EUSAGE", msg))


def parse_args(argv: list[str]) -> RunOptions:
    opts = RunOptions()
    args = list(argv)
    while args:
        arg = args.pop(0)
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")

        def value() -> str:
            if eq:
                return inline
            if not args:
                raise _usage(f"{name} needs a value")
            return args.pop(0)

        if name in ("--help", "-h"):
            opts.show = "help"
        elif name == "--version":
            opts.show = "version"
        elif name == "--flow":
            opts.flow = value()
        elif name == "--in":
            text = value()
            key, sep, val = text.partition("=")
            if not sep or not key.isidentifier():
                raise _usage(f"bad --in {text}: expected name=VALUE")
            opts.inputs.append((key, val))
        elif name == "--trap-overflow":
            opts.trap_overflow = True
        elif name == "--threads":
            text = value()
            if not text.isdigit() or int(text) < 1:
                raise _usage(f"--threads takes a whole number >= 1, not '{text}'")
            opts.threads = int(text)
        elif arg.startswith("-") and arg != "-":
            raise _usage(f"unknown argument: {arg}")
        elif opts.script is None:
            opts.script = arg
        else:
            raise _usage(f"unknown argument: {arg}")
    if opts.script is None and opts.show is None:
        raise _usage("no script given (usage: maned-run <file.mnd> [options]; see --help)")
    return opts
