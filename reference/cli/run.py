"""maned-run: parse the command line, run the script through `maned.run()`, print the
report (D2, R44): status blocks, return@ lines, flow blocks, out:: lines and the verify
verdict on stdout, or the whole report as JSON with --json; notes, progress and coded
errors on stderr."""
import errno
import json
import os
import stat
import sys
from dataclasses import replace

from ..diagnostics import Diagnostic, MnError
from ..diagnostics.ledger import exit_code
from ..diagnostics.printer import mask, run_line
from ..dispatch.verify import verdict_lines
from ..io.descriptors import open_files
from ..io.files import open_for_writing
from ..pipeline.report import DiagnosticRecord, Report
from ..pipeline.run_api import run
from ..tensor import format_value
from ..dispatch.trace_export import chrome_trace
from .args import USAGE, parse_args
from ..interrupts import EXIT_INTERRUPTED, say
from .console import INTERRUPTED
from .progress import ProgressView

def main(argv: list[str], out=None, err=None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    try:
        return _main(argv, out, err)
    except KeyboardInterrupt:  # the notice, once: a hard stop may have written it (a no-op
        say(INTERRUPTED, err)   # without interrupts.install, as in a library caller's process)
        return EXIT_INTERRUPTED
    except OSError as e:  # out of open files where no refusal foresaw it: a line, not a trace
        if e.errno not in (errno.EMFILE, errno.ENFILE):
            raise
        found = open_files()
        limit = f" (ulimit -n {found[1]})" if found else ""
        return _refused([Diagnostic("ERUN", f"the run ran out of open files{limit}: raise the "
                                    "limit, or route to fewer Bark VMs")], out, err,
                        as_json="--json" in argv)


def _main(argv: list[str], out, err) -> int:
    if argv[:1] == ["devices"]:
        from . import device_listing
        return device_listing.main(argv[1:], out, err)
    try:
        opts = parse_args(argv)
    except MnError as e:
        return _refused(e.diagnostics, out, err, as_json="--json" in argv)
    if opts.show:
        from .version import version_text  # its build line reads the platform
        out.write(USAGE if opts.show == "help" else version_text("maned-run"))
        return 0
    clash = opts.trace and standard_stream(opts.trace)
    if clash:
        return _refused([Diagnostic("EUSAGE", f"--trace '{opts.trace}' is this run's {clash}, "
                                    "which carries the report: give the trace a file")],
                        out, err, as_json=opts.json)
    terminal = _is_terminal(err)
    view = ProgressView(err, opts.progress if opts.progress is not None else terminal,
                        terminal)
    trace = TraceFile(opts.trace, opts.trace_format) if opts.trace else None
    try:
        report = run(opts.script, inputs=opts.inputs, flow=opts.flow, verify=opts.verify,
                     threads=opts.threads, require_vm=opts.require_vm,
                     trap_overflow=opts.trap_overflow, reference=opts.reference, trace=trace,
                     progress=view, probing=opts.probing, device=opts.device,
                     out_dir=opts.out_dir, journal=opts.journal,
                     replicas=opts.replicas)
    finally:
        view.close()
        closed = trace.close() if trace else None
    code = report.exit_code
    if closed is not None:  # the last records could not be written
        report = replace(report, diagnostics=report.diagnostics + (DiagnosticRecord.of(closed),))
        code = max(code, exit_code([closed.code]))
    late = [d for d in report.diagnostics if d.message.startswith("out::")]
    for d in report.diagnostics:
        if d not in late:
            err.write(run_line(d.diagnostic()) + "\n")
    if opts.json:
        out.write(json.dumps(report.to_json()) + "\n")
    else:
        print_blocks(report, out, lambda: [err.write(run_line(d.diagnostic()) + "\n")
                                           for d in late])
    if opts.json:
        for d in late:
            err.write(run_line(d.diagnostic()) + "\n")
    return code


class TraceFile:
    """`--trace FILE`: opened when the run is about to start its jobs (so a refused script
    leaves an existing file alone), one JSON line per record, flushed at once; with
    `--trace-format chrome`, one Trace Event document written when the run ends."""

    def __init__(self, path: str, fmt: str = "jsonl"):
        self.path, self.fmt, self._f = path, fmt, None
        self._records: list[dict] = []

    def open(self) -> None:
        try:
            self._f = open_for_writing(self.path, encoding="utf-8")
        except (OSError, ValueError) as e:
            raise MnError(self._eio(e)) from None

    def __call__(self, record: dict) -> None:
        if self.fmt == "chrome":
            self._records.append(record)
            return
        self._f.write(json.dumps(record) + "\n")
        self._f.flush()

    def close(self) -> Diagnostic | None:
        """Close it; the EIO diagnostic when the last writes fail."""
        if self._f is None:
            return None
        try:
            if self.fmt == "chrome":
                self._f.write(json.dumps(chrome_trace(self._records)) + "\n")
            self._f.close()
        except OSError as e:
            return self._eio(e)
        return None

    def _eio(self, e: OSError | ValueError) -> Diagnostic:
        why = f"it {e}" if isinstance(e, ValueError) else e.strerror or e
        return Diagnostic("EIO", f"cannot write the trace file '{self.path}': {why}")


def standard_stream(path: str) -> str | None:
    """"stdout" or "stderr" when `path` is the file this process writes that stream to
    (/dev/stdout, /proc/self/fd/2, or the file stdout is redirected into); /dev/null and
    its kind, which keep nothing, are never a clash."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if stat.S_ISCHR(st.st_mode) and st.st_rdev == os.stat(os.devnull).st_rdev:
        return None
    for fd, name in ((1, "stdout"), (2, "stderr")):
        try:
            other = os.fstat(fd)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == (other.st_dev, other.st_ino):
            return name
    return None


def _refused(diags, out, err, as_json: bool) -> int:
    """A command line refused before any run: its coded lines (and a report with --json)."""
    for d in diags:
        err.write(run_line(d) + "\n")
    code = exit_code([d.code for d in diags])
    if as_json:
        report = Report(exit_code=code,
                        diagnostics=tuple(DiagnosticRecord.of(d) for d in diags))
        out.write(json.dumps(report.to_json()) + "\n")
    return code


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def print_blocks(report: Report, out, after_blocks=lambda: None) -> None:
    """stdout in R44's order: status blocks, return@ lines, flow blocks, out:: lines, the
    verify verdict. `after_blocks()` runs between the flow blocks and the out:: lines: the
    out:: errors print there, as they always have."""
    for block in report.statuses:
        out.write(f"device '{block.alias}' status:\n")
        for key, value in block.fields:
            # the worker's own words: one printable line each, whatever it sent
            out.write(mask(f"  {key}: {','.join(value) if key == 'ops' else value}") + "\n")
    for v in report.prints:
        out.write(format_value(v.name, v.tensor()) + "\n")
    for block in report.flows:
        out.write(f"flow '{block.flow}' outputs:\n")
        for v in block.outputs:
            out.write(format_value(v.name, v.tensor()) + "\n")
    after_blocks()
    for f in report.files:
        out.write(f"out::{f.name} -> {f.path}\n")
    if report.verify:
        for line in verdict_lines(report.verify):
            out.write(line + "\n")
