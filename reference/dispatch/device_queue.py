"""One serial queue per VM device (D9): a thread that runs the device's jobs one at a time,
lowest key first, through the child's stdio channel."""
import heapq
import threading

from bark_vm.wire.ir import compute_mnemonics

from ..diagnostics import Diagnostic
from ..lang.ast import Quant
from ..wire.job import JobError, decode_result, encode_job
from ..wire.lower import LoweringError, lower
from .jobs import Job
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
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._heap and not self._closed:
                    self._cond.wait()
                if not self._heap:
                    return
                job = heapq.heappop(self._heap)
            outputs, error = self._run(job)
            self.report(job, outputs, error)

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
