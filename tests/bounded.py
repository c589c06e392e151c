"""Work bounded by counting, not by a clock: interpreted lines (sys.settrace) and the peak of
traced memory (tracemalloc), so a check holds on a fast machine and a slow one alike."""
import sys
import tracemalloc
from contextlib import contextmanager


class TooMuchWork(AssertionError):
    pass


@contextmanager
def bounded(lines: int, peak_bytes: int):
    """Fail once the code inside runs more than `lines` Python lines or its traced memory
    peaks above `peak_bytes`. Yields a dict that holds both counts afterwards."""
    counts = {"lines": 0, "peak": 0}

    def tracer(frame, event, arg):
        if event == "line":
            counts["lines"] += 1
            if counts["lines"] > lines:
                raise TooMuchWork(f"more than {lines} lines executed")
        return tracer

    old = sys.gettrace()
    tracemalloc.start()
    sys.settrace(tracer)
    try:
        yield counts
    finally:
        sys.settrace(old)
        counts["peak"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    if counts["peak"] > peak_bytes:
        raise TooMuchWork(f"traced memory peaked at {counts['peak']} bytes (> {peak_bytes})")
