"""A run's journal (`--journal FILE`; docs/fleet.md, "Resume"): every completed round of a
calc::ml:: chain, appended as it lands and on the disk before the round counts as done, so
that the same command run again with the same FILE (after Ctrl-C, SIGKILL or a power cut)
goes on from each chain's last journaled round, and a finished one prints without running
a round. The outputs are exact integers: a resumed chain is the chain that was not cut.

The file is JSON lines. The first says what the journal belongs to:

    {"maned_journal": 1, "version": V, "script": SHA256, "inputs": SHA256}

(the script's text, and the input values the run loaded). Then one line a round:

    {"round": "fit#c1#r5", "first": F, "count": K, "outputs": [[NAME, SHAPE, DATA], ...],
     "sha256": S}

`first` and `count` are the round's steps, the outputs in the round flow's order, and S the
SHA-256 of the line's JSON without "sha256" (keys sorted, no spaces). A last line cut short
(no newline, not JSON, or S wrong) is a torn write: ignored, and cut off before this run
appends. Any other line that is not a record refuses the journal, as a journal of another
script, other inputs or another version does: before anything runs, the file untouched."""
import hashlib
import json
import math
import os
import threading

from bark_vm.version import __version__

from ..diagnostics import Diagnostic, MnError
from ..failures import Refused, TargetFailure
from ..io.files import open_to_update
from ..numeric.int32 import INT32_MAX, INT32_MIN
from ..tensor import Tensor

FORMAT = 1


def digest(value) -> str:
    """SHA-256 of `value` as canonical JSON (keys sorted, no spaces)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":"))
                          .encode()).hexdigest()


def identity(script: str, inputs: dict[str, Tensor]) -> dict:
    """The header of a journal of this script with these input values."""
    values = {name: [list(t.shape), list(t.data)] for name, t in sorted(inputs.items())}
    return {"maned_journal": FORMAT, "version": __version__,
            "script": hashlib.sha256(script.encode()).hexdigest(), "inputs": digest(values)}


def _whole(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _well_formed(body: dict) -> bool:
    """A record's fields as this module writes them: a round name, its steps, and each
    output a name, a shape of whole numbers and int32 values as many as the shape holds."""
    if set(body) != {"round", "first", "count", "outputs"} or not isinstance(body["round"], str) \
            or not (_whole(body["first"]) and _whole(body["count"])) \
            or not isinstance(body["outputs"], list):
        return False
    for entry in body["outputs"]:
        if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str)
                and isinstance(entry[1], list) and isinstance(entry[2], list)
                and all(_whole(d) and d >= 0 for d in entry[1])
                and all(_whole(v) and INT32_MIN <= v <= INT32_MAX for v in entry[2])
                and len(entry[2]) == math.prod(entry[1])):
            return False
    return True


def _refused(path: str, why: str) -> MnError:
    return MnError(Diagnostic("EUSAGE", f"--journal {path}: {why}; it was left as it was "
                              "(give another file to start a new journal)"))


class Journal:
    def __init__(self, path: str, header: dict):
        """The journal at `path` for a run whose header is `header`: read (its records kept
        for the run to resume from) or made; MnError (EUSAGE) when it belongs to another
        run or is damaged, the file untouched."""
        self.path, self._lock = path, threading.Lock()
        self.rounds: dict[str, dict] = {}
        try:  # a FIFO, a folder or a device is refused, never waited on
            self._file = open_to_update(path)
        except ValueError as e:
            raise _refused(path, f"it {e}") from None
        except OSError as e:
            raise _refused(path, f"cannot be opened ({e.strerror or e})") from None
        try:
            end = self._read(self._file.readall(), header)
            if end is None:
                self._end = 0
                self._write(header)
            else:
                self._file.truncate(end)  # a torn last line, cut off
                self._file.seek(end)
                self._end = end
        except OSError as e:
            self._file.close()
            raise _refused(path, f"cannot be read or written ({e.strerror or e})") from None
        except BaseException:
            self._file.close()
            raise

    def _read(self, data: bytes, header: dict) -> int | None:
        """The records of an existing journal; the offset its good lines end at (None: no
        journal yet, or an empty file)."""
        if not data:
            return None
        lines, end = data.split(b"\n"), 0
        complete = lines[:-1]  # the last piece has no newline: empty, or torn
        if not complete:
            raise _refused(self.path, "is no journal of maned-run (no header line)")
        try:
            first = json.loads(complete[0])
        except ValueError:
            first = None
        if not isinstance(first, dict) or first.get("maned_journal") is None:
            raise _refused(self.path, "is no journal of maned-run")
        for key, what in (("maned_journal", "another journal format"),
                          ("version", "another version of maned"),
                          ("script", "another script"), ("inputs", "other input values")):
            if first.get(key) != header[key]:
                raise _refused(self.path, f"was made by {what}")
        end = len(complete[0]) + 1
        for n, line in enumerate(complete[1:], 2):
            record = self._record(line)
            if record is None:
                if n == len(complete) and not lines[-1]:
                    break  # the last line: torn
                raise _refused(self.path, f"is damaged at line {n}")
            self.rounds[record["round"]] = record
            end += len(line) + 1
        return end

    @staticmethod
    def _record(line: bytes) -> dict | None:
        try:
            record = json.loads(line)
            body = {k: v for k, v in record.items() if k != "sha256"}
            if record.get("sha256") != digest(body) or not _well_formed(body):
                return None
        except (ValueError, AttributeError, KeyError, TypeError):
            return None
        return record

    def _write(self, value: dict) -> None:
        """One line, on the disk before this returns (written whole and fdatasync'd). A
        line the disk refuses is cut off again, so that the file ends with its last good
        line (a crash meanwhile leaves a torn line, which the next run cuts)."""
        line = memoryview(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()
                          + b"\n")
        try:
            while line:
                line = line[self._file.write(line):]
            os.fdatasync(self._file.fileno())
        except OSError:
            try:
                self._file.truncate(self._end)
                self._file.seek(self._end)
            except OSError:
                pass
            raise
        self._end = self._file.tell()

    def done(self, name: str, first: int, count: int) -> list | None:
        """The outputs of round `name` ([[NAME, SHAPE, DATA], ...]) when the journal holds
        it over the same steps; None when it does not hold it. Refused when it holds it over
        other steps (its rounds were cut otherwise: other devices' sync limits)."""
        record = self.rounds.get(name)
        if record is None:
            return None
        if (record["first"], record["count"]) != (first, count):
            raise Refused(f"--journal {self.path}: its round '{name}' ran {record['count']} "
                          f"steps from step {record['first']}, this run's runs {count} from "
                          f"{first} (rounds are cut by the devices' sync limits): resume with "
                          "the same devices, or start a new journal")
        return record["outputs"]

    def record(self, name: str, first: int, count: int, outputs: list) -> None:
        """Round `name` completed with `outputs` ([[NAME, SHAPE, DATA], ...]); a write that
        fails (a full disk) is the round's TargetFailure, EIO: not journaled, not done."""
        body = {"round": name, "first": first, "count": count, "outputs": outputs}
        with self._lock:
            try:
                self._write({**body, "sha256": digest(body)})
            except OSError as e:
                raise TargetFailure(Diagnostic("EIO", f"flow '{name}': --journal {self.path}: "
                                               f"cannot be written ({e.strerror or e}); the "
                                               "round is not journaled")) from None

    def close(self) -> None:
        self._file.close()
