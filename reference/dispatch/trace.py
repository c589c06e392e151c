"""Observability (R32): `--trace FILE` JSON lines, flushed at once, and `--progress` lines."""
import json
import threading
import time


class Trace:
    """Thread-safe; a no-op when neither a trace file nor progress is asked for."""

    def __init__(self, path: str | None, progress_stream=None):
        self._lock = threading.Lock()
        self._file = open(path, "w", encoding="utf-8") if path else None
        self._progress = progress_stream
        self._t0 = time.monotonic()
        self.done = 0

    def start(self, flow: str, target: str, pid: int | None) -> None:
        self._write({"event": "start", "flow": flow, "target": target, "pid": pid})

    def end(self, flow: str, target: str, error_code: str | None) -> None:
        record = {"event": "end", "flow": flow}
        record.update({"ok": True} if error_code is None else {"ok": False,
                                                               "error": error_code})
        self._write(record)
        with self._lock:
            self.done += 1
            if self._progress:
                state = "ok" if error_code is None else f"failed [{error_code}]"
                self._progress.write(f"progress: {self.done} done: {flow} on {target} "
                                     f"{state}\n")
                self._progress.flush()

    def _write(self, record: dict) -> None:
        if self._file is None:
            return
        record["time"] = round(time.monotonic() - self._t0, 6)
        with self._lock:
            self._file.write(json.dumps(record) + "\n")
            self._file.flush()

    def close(self) -> None:
        if self._file:
            self._file.close()
