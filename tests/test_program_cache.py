"""The worker's cache of validated programs (bark_vm/request_handling.py `Programs`): a hit is the
same module a miss would give, the key includes the ABI, and nothing that fails is kept."""
import pytest

from bark_vm.request_handling import Programs, WorkerConfig, check_request, handle
from bark_vm.wire.constants import WorkerError
from maned.lowering.fixtures import build_fixture
from maned.io.cli_values import parse_value
from maned.pipeline.intake import compile_script

from support.scripts import H0 as HEAD


def request(body: str, inputs: list[str]) -> tuple[bytes, bytes]:
    checked = compile_script(HEAD + f"calc::lambda_flow f(a) {{\n    {body}\n}} return r;\n")
    _, mnpk, mnrs, _, _ = build_fixture(checked.program, checked.graphs["f"],
                                        [parse_value(v) for v in inputs], 2)
    return mnpk, mnrs


def test_a_hit_answers_exactly_what_a_miss_answers():
    mnpk, mnrs = request("a a add b = b {shape: [4]} reshape r =", ["2x2:1,2,3,-4"])
    programs = Programs()
    first = programs.checked(check_request(mnpk, WorkerConfig())[0].ir, WorkerConfig())
    again = programs.checked(check_request(mnpk, WorkerConfig())[0].ir, WorkerConfig())
    assert again is first
    assert handle(mnpk, WorkerConfig()) == handle(mnpk, WorkerConfig()) == mnrs


def test_the_abi_is_part_of_the_key():
    """A program validated at ABI 2 is still refused by an ABI-1 worker (reshape)."""
    mnpk, _ = request("a {shape: [4]} reshape r =", ["2x2:1,2,3,4"])
    programs = Programs()
    ir = check_request(mnpk, WorkerConfig())[0].ir
    programs.checked(ir, WorkerConfig(abi=2))
    with pytest.raises(WorkerError) as e:
        programs.checked(ir, WorkerConfig(abi=1))
    assert e.value.code in ("UNSUPPORTED_OP", "BAD_ENVELOPE")


def test_a_refused_program_is_not_kept_and_the_cache_is_bounded():
    mnpk, _ = request("a {shape: [4]} reshape r =", ["2x2:1,2,3,4"])
    ir = check_request(mnpk, WorkerConfig())[0].ir
    programs = Programs(size=2)
    for _ in range(2):  # refused each time, the same way
        with pytest.raises(WorkerError):
            programs.checked(ir, WorkerConfig(abi=1))
    assert not programs._known
    others = [request(f"a {k} add r =", ["2:1,2"])[0] for k in (1, 2, 3)]
    for raw in others:
        programs.checked(check_request(raw, WorkerConfig())[0].ir, WorkerConfig())
    assert len(programs._known) == 2


def test_a_cached_program_still_checks_each_requests_tensors():
    """The same IR with tensors its program cannot take: refused although the program is
    cached (the cache holds programs, never a request's verdict)."""
    from maned.lowering.fixtures import mutate

    checked = compile_script(HEAD + "calc::lambda_flow f(a, b) {\n    a b matmul r =\n} "
                             "return r;\n")
    lowered, mnpk, mnrs, _, _ = build_fixture(checked.program, checked.graphs["f"],
                                              [parse_value("2x2:1,2,3,4")] * 2, 2)
    assert handle(mnpk, WorkerConfig()) == mnrs  # now cached
    with pytest.raises(WorkerError) as e:
        handle(mutate(mnpk, "bad_shape", lowered.module), WorkerConfig())
    assert e.value.code == "SHAPE_MISMATCH"


def test_a_job_out_of_memory_is_a_coded_answer_on_every_worker(monkeypatch):
    """Issue 13, defect 1, at the request handling both workers run (bark-vm and bark-worker): a
    MemoryError while encoding the result is EXEC_FAILED, never an escaped exception."""
    from bark_vm import request_handling
    mnpk, _ = request("a a add r =", ["2:1,2"])

    def out_of_memory(entries, dtype, status=0):
        raise MemoryError()
    monkeypatch.setattr(request_handling, "encode_result", out_of_memory)
    with pytest.raises(WorkerError) as e:
        handle(mnpk, WorkerConfig())
    assert e.value.code == "EXEC_FAILED" and "out of memory" in e.value.detail
