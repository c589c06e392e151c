"""bark-worker's job table and authenticator on a fake clock (DESIGN R20, R21, R43): the
300 s expiry and the lock-out period, which the HTTP suite cannot wait for."""
import re

import pytest
from hypothesis import example, given, strategies as st

from bark_vm.server.auth import Authenticator
from bark_vm.server.job_table import JobTable
from bark_vm.wire.constants import LOCKOUT_FAILURES, WorkerError


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def code_of(fn, *args):
    with pytest.raises(WorkerError) as e:
        fn(*args)
    return e.value.code, e.value.detail


def test_done_result_expires_after_300_s():
    clock = Clock()
    t = JobTable(clock=clock)
    job = t.submit(b"req")
    assert t.start(job.id) == b"req"
    t.finish(job.id, result=b"MNRS")
    clock.now += 299.9
    assert t.occupied() == 1 and t.poll(job.id)["state"] == "done"
    clock.now += 0.1
    assert t.occupied() == 0
    assert code_of(t.take_result, job.id)[0] == "NO_SUCH_JOB"
    assert code_of(t.poll, job.id)[0] == "NO_SUCH_JOB"


def test_error_slot_freed_by_poll_record_kept_until_read_or_ttl():
    clock = Clock()
    t = JobTable(clock=clock)
    a, b = t.submit(b"a"), t.submit(b"b")
    for job in (a, b):
        t.start(job.id)
        t.finish(job.id, error=WorkerError("EXEC_FAILED", "boom"))
    assert t.occupied() == 2
    assert t.poll(a.id) == {"job": a.id, "state": "error", "code": "EXEC_FAILED",
                            "detail": "boom"}
    assert t.occupied() == 1
    assert code_of(t.take_result, a.id)[0] == "EXEC_FAILED"
    assert code_of(t.take_result, a.id)[0] == "NO_SUCH_JOB"
    clock.now += 300
    assert t.occupied() == 0  # never polled nor read: freed by the TTL
    assert code_of(t.poll, b.id)[0] == "NO_SUCH_JOB"


def test_busy_cancel_and_running_refusals():
    clock = Clock()
    t = JobTable(clock=clock)
    jobs = [t.submit(bytes([k])) for k in range(4)]
    assert code_of(t.submit, b"x")[0] == "BUSY"
    assert code_of(t.check_free)[0] == "BUSY"
    t.start(jobs[0].id)
    assert code_of(t.cancel, jobs[0].id)[0] == "NOT_READY"
    assert code_of(t.take_result, jobs[0].id)[0] == "NOT_READY"
    assert t.cancel(jobs[1].id) == {"job": jobs[1].id, "state": "cancelled"}
    assert t.cancel(jobs[1].id)["state"] == "cancelled"
    assert t.start(jobs[1].id) is None  # the executor skips it
    assert code_of(t.take_result, jobs[1].id)[0] == "NO_SUCH_JOB"
    assert t.occupied() == 3
    t.finish(jobs[0].id, result=b"r")
    assert code_of(t.cancel, jobs[0].id)[0] == "NOT_READY"  # finished
    assert t.take_result(jobs[0].id) == b"r"
    clock.now += 300
    assert code_of(t.poll, jobs[1].id)[0] == "NO_SUCH_JOB"  # the cancelled record expired
    assert t.occupied() == 2
    ids = [j.id for j in jobs] + [t.submit(b"y").id]
    assert ids == sorted(set(ids))  # ids are never reused


def test_lockout_runs_out_and_success_resets():
    clock = Clock()
    a = Authenticator("u", "secret", lockout_s=60, clock=clock)
    for _ in range(3):
        assert code_of(a.login, "u", "nope") == ("AUTH_FAILED", "bad username or password")
    assert code_of(a.login, "u", "secret") == ("AUTH_FAILED", "locked")
    assert a.is_locked("u") and not a.is_locked("v")
    clock.now += 59.9
    assert code_of(a.login, "u", "secret") == ("AUTH_FAILED", "locked")
    clock.now += 0.1
    assert re.fullmatch(r"[0-9a-f]{32}", a.login("u", "secret"))
    for _ in range(2):
        code_of(a.login, "u", "nope")
    a.login("u", "secret")
    for _ in range(2):
        code_of(a.login, "u", "nope")
    assert not a.is_locked("u")


@pytest.mark.parametrize("victim_failures_first", [1, 2])
def test_failures_under_other_names_never_unlock_the_user(victim_failures_first):
    """Issue 13, defect 3: failing logins under thousands of other names (more than the
    failure table holds) must not drop the real user's count: its third failure still locks
    it, and a locked name stays locked however many names fail after it."""
    from bark_vm.server.auth import MAX_TRACKED_NAMES
    clock = Clock()
    a = Authenticator("u", "secret", lockout_s=60, clock=clock)
    for _ in range(victim_failures_first):
        code_of(a.login, "u", "guess")
    for k in range(MAX_TRACKED_NAMES + 4):
        code_of(a.login, f"other{k}", "guess")
    for _ in range(3 - victim_failures_first):
        code_of(a.login, "u", "guess")
    assert a.is_locked("u")
    for k in range(MAX_TRACKED_NAMES + 4):
        code_of(a.login, f"again{k}", "guess")
    assert code_of(a.login, "u", "secret") == ("AUTH_FAILED", "locked")
    clock.now += 60
    assert re.fullmatch(r"[0-9a-f]{32}", a.login("u", "secret"))


def test_the_user_locks_even_when_every_other_tracked_name_is_locked(monkeypatch):
    """Once the table is full of locked other names, the user's own failures must still
    count (its record is never the one that goes)."""
    import bark_vm.server.auth as auth
    monkeypatch.setattr(auth, "MAX_TRACKED_NAMES", 3)
    a = Authenticator("u", "secret", lockout_s=60, clock=Clock())
    for k in range(4):
        for _ in range(3):
            code_of(a.login, f"other{k}", "guess")
    for _ in range(3):
        code_of(a.login, "u", "guess")
    assert a.is_locked("u") and len(a._failures) <= 3 + 1
    assert code_of(a.login, "u", "secret") == ("AUTH_FAILED", "locked")


def test_the_failure_table_stays_bounded():
    from bark_vm.server.auth import MAX_TRACKED_NAMES
    a = Authenticator("u", "secret", clock=Clock())
    for k in range(MAX_TRACKED_NAMES * 2):
        code_of(a.login, f"n{k}", "guess")
    assert len(a._failures) <= MAX_TRACKED_NAMES + 1  # and the user's own record


def test_token_table_is_lru_of_16_and_secrets_stay_out_of_reprs():
    a = Authenticator("u", "secret-value", clock=Clock())
    tokens = [a.login("u", "secret-value") for _ in range(16)]
    assert a.check(tokens[0]) == "u"  # refreshed
    new = a.login("u", "secret-value")
    assert code_of(a.check, tokens[1])[0] == "AUTH_REQUIRED"
    assert a.check(tokens[0]) == a.check(new) == "u"
    assert code_of(a.check, None)[0] == "AUTH_REQUIRED"
    assert code_of(a.check, "")[0] == "AUTH_REQUIRED"
    text = repr(a) + str(vars(WorkerError("AUTH_FAILED", "locked")))
    assert "secret-value" not in text and tokens[0] not in repr(a)


LOCKOUT_S = 60


def _model_login(table: dict, name: str, good: bool, now: float, bound: int) -> str:
    """The failure table's rule written the plain way (every record looked at on each drop):
    what a login answers, and the table after it."""
    record = table.get(name)
    if record is not None and record[1] is not None:
        if now < record[1]:
            return "locked"
        record[0], record[1] = 0, None
    if name == "u" and good:
        table.pop(name, None)
        return "ok"
    record = table.pop(name, None) or [0, None]
    table[name] = record
    record[0] += 1
    if record[0] >= LOCKOUT_FAILURES:
        record[1] = now + LOCKOUT_S
    if len(table) > bound + 1:
        others = [k for k in table if k != "u"]
        unlocked = [k for k in others if k != name and (table[k][1] is None
                                                        or table[k][1] <= now)]
        del table[unlocked[0] if unlocked else name if name != "u" else others[0]]
    return "failed"


STEPS = st.lists(st.tuples(st.sampled_from(["u", "a", "b", "c", "d"]), st.booleans(),
                           st.sampled_from([0, 0, 0, 0, 0, 1, LOCKOUT_S])), max_size=60)
THREE_LOCKED = [(n, False, 0) for n in "abc" for _ in range(LOCKOUT_FAILURES)]  # table full


@given(STEPS)
@example(THREE_LOCKED + [("d", False, 0)])  # a new name is not tracked
@example(THREE_LOCKED + [("u", False, 0)])  # the user's failure: the oldest locked name goes
@example(THREE_LOCKED + [("a", False, LOCKOUT_S), ("d", False, 0)])  # a's lock runs out
def test_the_failure_table_drops_what_the_plain_rule_drops(steps):
    """With room for 2 other names, any run of logins (good or bad, the clock moving by 0, 1
    or 60 s, the lock-out) gives the answers and leaves the records of the plain rule, in
    its order."""
    import bark_vm.server.auth as auth
    clock, model = Clock(), {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(auth, "MAX_TRACKED_NAMES", 2)
        a = Authenticator("u", "secret", lockout_s=LOCKOUT_S, clock=clock)
        for name, good, tick in steps:
            clock.now += tick
            try:
                a.login(name, "secret" if good else "guess")
                answer = "ok"
            except WorkerError as e:
                answer = "locked" if e.detail == "locked" else "failed"
            assert answer == _model_login(model, name, good, clock.now, 2)
            assert [(k, r.count, r.locked_until) for k, r in a._failures.items()] == \
                [(k, c, t) for k, (c, t) in model.items()]
