"""The real bark-worker with one change: encoding a result runs out of memory, as a job
whose output is larger than the machine's memory does (issue 13, defect 1), so the test
does not need a machine with too little memory.

    python oom_worker.py serve [bark-worker options]"""
from bark_vm import request_handling
from bark_vm.server import cli


def _out_of_memory(entries, dtype, status=0):
    raise MemoryError()


request_handling.encode_result = _out_of_memory
if __name__ == "__main__":
    cli.main()
