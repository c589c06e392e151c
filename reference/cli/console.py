"""A tool's console entry point: its exit code, and Ctrl-C as a one-line notice with the
shells' code 130, never a traceback."""
import sys

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it


def console(main, tool: str) -> None:
    """sys.exit(main()), with KeyboardInterrupt answered by a notice naming `tool`."""
    try:
        code = main()
    except KeyboardInterrupt:
        sys.stderr.write(f"notice: {tool} interrupted (SIGINT); nothing was written\n")
        code = EXIT_INTERRUPTED
    sys.exit(code)
