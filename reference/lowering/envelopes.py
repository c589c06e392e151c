"""One routed job's bytes: the MNPK request a coordinator sends and the MNRS it gets back
(spec/wire.md §2.1-2.3, wire-golden §1.6, DESIGN D5, R5, R14).

`encode_job` sends the flow's params in declaration order, then the hoisted constants, each
rank-0 value as `[1]`, all in the envelope dtype (int8 values that do not fit are refused
naming the value and the quant range). `decode_result` checks the MNRS as wire.md §2.2 says
and turns `[1]` back into rank-0 where the compiled record says the local output is.
Errors: Refused before sending, DeviceFailure (malformed_response) for an answer.
"""
import functools

from bark_vm.wire.constants import DTYPE_INT8, MAX_RANK, WorkerError
from bark_vm.wire.dtypes import DTYPE_NAME, DTYPE_RANGE
from bark_vm.wire.envelope import (
    QuantBlock, decode_result as decode_mnrs, encode_entry, quant_block, request_head,
)

from ..failures import DeviceFailure, Refused, malformed
from ..tensor import Tensor, shape_text
from .compiled import Compiled
from .lower import Lowered


def job_quant(quant) -> QuantBlock:
    """The MNPK quant block of a script's Quant (quantres, quantmin, quantmax)."""
    try:
        return _quant_block(quant.quantres, quant.quantmin, quant.quantmax)
    except ValueError as e:
        raise Refused(str(e)) from None


_quant_block = functools.lru_cache(maxsize=64)(quant_block)  # one per script, every round


def _entry(what: str, t: Tensor, q: QuantBlock) -> tuple[tuple[int, ...], tuple]:
    shape = t.shape or (1,)
    if len(shape) > MAX_RANK:
        raise Refused(f"{what} has rank {len(shape)}; a tensor travels with "
                       f"rank 1..{MAX_RANK}")
    lo, hi = DTYPE_RANGE[q.dtype]
    for v in t.data:
        if not lo <= v <= hi:
            if q.dtype == DTYPE_INT8:
                raise Refused(f"{what} holds {v}, outside the int8 envelope "
                               f"({lo}..{hi}) that mnd::quantmin={q.quantmin}, "
                               f"mnd::quantmax={q.quantmax} and mnd::quantres={q.quantres} "
                               "choose for routed values; widen mnd::quantmin/mnd::quantmax "
                               "(a range over 8 bits travels as int32) to route it")
            raise Refused(f"{what} holds {v}, which does not fit "
                           f"{DTYPE_NAME[q.dtype]}")
    return shape, tuple(t.data)


def encode_job(lowered: Lowered, inputs: list[Tensor], quant) -> bytes:
    """The MNPK for one run of a lowered flow; `inputs` are its params in declaration order.
    A Refused says what cannot travel; the caller names the job."""
    _arity(lowered.graph.params, inputs)
    return RequestTemplate(lowered, quant).encode(inputs)


def _arity(params: tuple[str, ...], inputs: list[Tensor]) -> None:
    if len(inputs) != len(params):
        raise Refused(f"the flow takes {len(params)} parameters, got {len(inputs)}")


class RequestTemplate:
    """A lowered flow's MNPK built once (DESIGN §7): header, IR and the hoisted constants'
    entries; a job encodes only its params, and a param equal to the one the last job sent
    (a sweep's data, every round of every chain) reuses its bytes. Same bytes, and the same
    first refusal, as encoding the whole request anew."""

    def __init__(self, lowered: Lowered, quant):
        self.params = lowered.graph.params
        self.q = q = job_quant(quant)
        first = len(self.params)
        try:
            self.head = request_head(q, lowered.ir, first + len(lowered.hoisted))
        except ValueError as e:
            raise Refused(str(e)) from None
        self.tail, self._tail_refused = b"", None
        try:  # a constant that cannot travel is said after the params, as it always was
            self.tail = b"".join(
                encode_entry(first + k, _entry(f"constant {_literal(t)}", t, q), q.dtype)
                for k, t in enumerate(lowered.hoisted))
        except Refused as r:
            self._tail_refused = (r.message, r.cause)
        self._last: list[tuple[Tensor, bytes] | None] = [None] * first

    def encode(self, inputs: list[Tensor]) -> bytes:
        _arity(self.params, inputs)
        # every param is checked before any is encoded, as a whole request's were
        chosen: list[bytes | tuple[Tensor, tuple]] = []
        for name, t, last in zip(self.params, inputs, self._last):
            if last is not None and (last[0] is t or last[0] == t):  # same value, same bytes
                chosen.append(last[1])
            else:
                chosen.append((t, _entry(f"parameter '{name}'", t, self.q)))
        if self._tail_refused is not None:
            raise Refused(*self._tail_refused)  # a fresh one: nothing piles onto a kept one
        parts = [self.head]
        for k, c in enumerate(chosen):
            if isinstance(c, tuple):
                data = encode_entry(k, c[1], self.q.dtype)
                self._last[k] = (c[0], data)  # one tuple: its bytes are its tensor's
                c = data
            parts.append(c)
        parts.append(self.tail)
        return b"".join(parts)


def _literal(t: Tensor) -> str:
    if not t.shape:
        return str(t.data[0])
    return f"{shape_text(t.shape)} literal"


def decode_result(raw: bytes, compiled: Compiled, quant=None) -> dict[str, Tensor]:
    """The outputs of an MNRS, by name in return order; a `[1]` turns back into rank-0 where
    the compiled record says the local result is (R5). With `quant`, every entry must carry
    the request's dtype ([W13]). A DeviceFailure (malformed_response) says what is wrong
    with the answer; the caller names the job and the device."""
    g = compiled.graph
    names = [name for name, _ in g.outputs]
    dtype = job_quant(quant).dtype if quant is not None else None
    try:
        result = decode_mnrs(raw, dtype, dense=False)
    except WorkerError as e:
        raise _malformed(f"an MNRS that does not decode: {e.detail}") from None
    if result.status != 0:
        raise _malformed(f"the worker reported status {result.status} (nonzero = execution "
                         "error)")
    if len(result.entries) != len(names):
        raise _malformed(f"the worker returned {len(result.entries)} output tensor(s), "
                         f"expected {len(names)}")
    if result.indexes != tuple(range(len(names))):
        raise _malformed(f"the worker's output table is out of order (indexes "
                         f"{list(result.indexes)})")
    out = {}
    for name, (shape, data), r0 in zip(names, result.entries, compiled.rank0):
        out[name] = Tensor((), data) if r0 and shape == (1,) else Tensor(shape, data)
    return out


def _malformed(text: str) -> DeviceFailure:
    return malformed("", text)  # the device that sent it is named by the target


def result_entries(lowered: Lowered, values: dict[str, Tensor]) -> list[tuple]:
    """The MNRS entries of local results (mnpk-gen's expected `.mnrs`): output-table order,
    rank-0 as `[1]`."""
    g = lowered.graph
    return [((values[name].shape or (1,)), tuple(values[name].data)) for name, _ in g.outputs]
