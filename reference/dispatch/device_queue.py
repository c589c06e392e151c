"""One serial queue per VM device (D9): a thread that runs the device's jobs one at a time,
lowest key first, through the child's stdio channel."""
import heapq
import threading

from bark_vm.wire.ir import compute_mnemonics

from ..diagnostics import Diagnostic
from ..lang.ast import Quant
from ..lowering.envelopes import JobError, decode_result, encode_job
from ..lowering.lower import LoweringError, lower
from .job import Job
from .preflight import PreflightFailure, preflight
from .trace import Trace
from .vm import DeviceFailure


class DeviceQueue:
    def __init__(self, device, quant: Quant, trace: Trace, report):
        """device: a VmDevice or CdpDevice (start, run, pid, alias)."""
        self.device, self.quant, self.trace, self.report = device, quant, trace, report
        self._heap: list[Job] = []
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name=f"device-{device.alias}",
                                        daemon=True)
        self._thread.start()

    def put(self, job: Job) -> None:
        with self._cond:
            heapq.heappush(self._heap, job)
            self._cond.notify()

    def close(self) -> None:
        """Run what is queued, then stop."""
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join()

    def abort(self) -> None:
        """Stop without running what is queued (Ctrl-C). The job in progress ends when the
        device itself is aborted (the fleet's part)."""
        with self._cond:
            self._closed = True
            self._heap = []
            self._cond.notify()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def _loop(self) -> None:
        job = None
        try:
            while True:
                with self._cond:
                    while not self._heap and not self._closed:
                        self._cond.wait()
                    if not self._heap:
                        return
                    job = heapq.heappop(self._heap)
                try:
                    outputs, error = self._run(job)
                except Exception as e:  # a bug or a lying device: the job still gets an answer
                    outputs, error = None, Diagnostic(
                        "ERUN", f"flow '{job.name}': device '{self.device.alias}': internal "
                        f"error {type(e).__name__}: {e}")
                self.report(job, outputs, error)
                job = None
        finally:
            # Only a BaseException gets here with work left: answer it rather than leave the
            # scheduler waiting on jobs nobody will report.
            with self._cond:
                left, self._heap = ([job] if job else []) + self._heap, []
            for j in left:
                self.report(j, None, Diagnostic("ERUN", f"flow '{j.name}': device "
                                                f"'{self.device.alias}': its queue stopped"))

    def _run(self, job: Job):
        """Lower at the device's ABI, pre-flight, send, decode. (outputs, None) or
        (None, Diagnostic) naming the job's flow."""
        alias = self.device.alias
        try:
            status = self.device.start()
            lowered = lower(job.graph, status.ir)
            inputs = [job.inputs[p] for p in job.graph.params]
            request = encode_job(lowered, inputs, self.quant)
            preflight(alias, status, compute_mnemonics(lowered.module), len(request),
                      len(job.graph.nodes), job.round_flow)
        except (LoweringError, JobError, PreflightFailure) as e:
            return None, Diagnostic("EPLAN", f"flow '{job.name}': {e}")
        except DeviceFailure as e:
            return None, Diagnostic("ERUN", f"flow '{job.name}': {e.message}")
        self.trace.start(job.name, alias, self.device.pid)
        try:
            raw = self.device.run(request)
            outputs = decode_result(raw, lowered, [n for n, _ in job.graph.outputs],
                                    inputs=inputs, quant=self.quant)
        except DeviceFailure as e:
            self.trace.end(job.name, alias, e.code or "ERUN")
            return None, Diagnostic("ERUN", f"flow '{job.name}': {e.message}")
        except JobError as e:
            self.trace.end(job.name, alias, "ERUN")
            return None, Diagnostic("ERUN", f"flow '{job.name}': device '{alias}': {e}")
        self.trace.end(job.name, alias, None)
        return outputs, None
