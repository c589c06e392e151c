"""The console tools' entry points: SIGINT is taken (maned.interrupts) before the tool's
own modules are imported, so a Ctrl-C at any moment, the import included, ends in one
notice line and the shells' code 130, never a traceback."""
import importlib
import os
import sys

from ..interrupts import EXIT_INTERRUPTED, install, say

EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as shells report a tool whose reader went away

INTERRUPTED = ("notice: interrupted (SIGINT): the run was stopped; Bark VM children were "
               "closed and queued worker jobs cancelled")


def notice(tool: str) -> str:
    """The one line a Ctrl-C of `tool` prints."""
    return INTERRUPTED if tool == "maned-run" else (
        f"notice: {tool} interrupted (SIGINT); nothing was written")


def console(module: str, tool: str) -> None:
    """sys.exit(maned.cli.MODULE.main(argv)), with SIGINT taken first. A reader that closed
    stdout early (`maned-run ... | head -1`) ends the tool quietly, as a SIGPIPE ends a
    shell tool, with the shells' code for it, never a traceback."""
    try:
        install(notice(tool))  # a SIGINT held back until now is raised as it returns
        main = importlib.import_module(f"maned.cli.{module}").main
        code = main(sys.argv[1:])
    except KeyboardInterrupt:
        say(notice(tool))
        code = EXIT_INTERRUPTED
    except BrokenPipeError:
        # what is left in stdout's buffer would fail again at exit: it goes nowhere
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = EXIT_BROKEN_PIPE
    sys.exit(code)


def maned_run() -> None:
    console("run", "maned-run")


def maned_lint() -> None:
    console("lint", "maned-lint")


def maned_model() -> None:
    console("model", "maned-model")


def mnpk_gen() -> None:
    console("mnpk_gen", "mnpk-gen")
