"""bark-worker's logins over raw HTTP (spec/wire.md §3; DESIGN D6, R18-R20): tokens, refused
and malformed logins, every job endpoint requiring a token and the protocol header, the
token table's least-recently-used eviction, and the lock-out after three failures.

A real `bark-worker serve` child on 127.0.0.1 (tests/support/workers.py), spoken to with
http.client and raw sockets only (tests/support/raw_http.py): no client code of `maned`.
Requests come from `mnpk-gen`. Nothing here measures seconds; order, states and counters
say what happened.
"""
import re

import pytest

from support.raw_http import assert_no_secret_shown, call, cdp_error, login
from support.status import status_of
from support.workers import ALIAS, PASSWORD, USER, start_worker


def test_auth_issues_32_hex_tokens_and_the_alias(worker):
    s1, d1 = login(worker)
    s2, d2 = login(worker)
    assert s1 == s2 == 200
    assert list(d1) == ["token", "alias"] and d1["alias"] == ALIAS
    assert re.fullmatch(r"[0-9a-f]{32}", d1["token"]) and d1["token"] != d2["token"]


@pytest.mark.parametrize("user, password", [(USER, "wrong"), ("mallory", PASSWORD)])
def test_auth_failed(worker, user, password):
    s, data = login(worker, user, password)
    cdp_error(s, data, "AUTH_FAILED")
    assert data["detail"] != "locked"


@pytest.mark.parametrize("body", [b"not json", b'{"username": "tester"}', b"[1, 2]",
                                  b'{"username": "tester", "password": 5}', b"[" * 3000])
def test_auth_malformed_body(worker, body):
    s, _, data = call(worker, "POST", "/api/auth", body)
    cdp_error(s, data, "BAD_ENVELOPE")


@pytest.mark.parametrize("method, path", [("POST", "/api/execute?mode=sync"),
                                          ("POST", "/api/execute"), ("GET", "/api/job?id=1"),
                                          ("GET", "/api/result?id=1"),
                                          ("DELETE", "/api/job?id=1")])
@pytest.mark.parametrize("tok", [None, "", "0" * 32, "not-a-token"])
def test_auth_required(worker, files, method, path, tok):
    body = files["matmul_relu"] if method == "POST" else None
    s, _, data = call(worker, method, path, body, token=tok)
    cdp_error(s, data, "AUTH_REQUIRED")


@pytest.mark.parametrize("method, path", [("POST", "/api/auth"),
                                          ("POST", "/api/execute?mode=sync"),
                                          ("POST", "/api/execute"), ("GET", "/api/job?id=1"),
                                          ("GET", "/api/result?id=1"),
                                          ("DELETE", "/api/job?id=1")])
@pytest.mark.parametrize("value", [None, "2", "", "1.0"])
def test_proto_version_required(worker, token, method, path, value):
    headers = {} if value is None else {"X-Maned-Proto": value}
    s, _, data = call(worker, method, path, b"{}" if method == "POST" else None, proto=False,
                      token=token, headers=headers)
    cdp_error(s, data, "PROTO_VERSION")


# --- the token table and the lock-out ---------------------------------------------------------
def test_token_lru_then_lockout(tmp):
    """The lock-out's running out is a rule about time: tested on a fake clock in
    test_worker_tables.py; here the worker's default 60 s lock-out only has to hold."""
    w = start_worker(tmp, env={"BARK_ALIAS": ""})
    try:
        assert status_of(w)["alias"] == "bark"  # the default alias
        # the token table holds 16, least recently used first out
        first = login(w)[1]["token"]
        tokens = [login(w)[1]["token"] for _ in range(15)]  # table full: first is oldest
        assert call(w, "GET", "/api/job?id=1", token=first)[0] == 404  # used: now newest
        tokens.append(login(w)[1]["token"])  # evicts tokens[0], not `first`
        assert call(w, "GET", "/api/job?id=1", token=first)[0] == 404
        s, _, data = call(w, "GET", "/api/job?id=1", token=tokens[0])
        cdp_error(s, data, "AUTH_REQUIRED")
        for tok in tokens[1:]:
            assert call(w, "GET", "/api/job?id=1", token=tok)[0] == 404
        # a success resets the count
        for _ in range(2):
            assert login(w, password="bad")[0] == 401
        assert login(w)[0] == 200
        for _ in range(2):
            assert login(w, password="bad")[0] == 401
        assert login(w)[0] == 200
        # three consecutive failures lock the name, the right password included
        for _ in range(3):
            s, data = login(w, password="bad")
            cdp_error(s, data, "AUTH_FAILED")
            assert data["detail"] != "locked"
        s, data = login(w)
        cdp_error(s, data, "AUTH_FAILED")
        assert data["detail"] == "locked"
        s, data = login(w, "someone-else", "bad")  # per name: others are not locked
        assert data["detail"] != "locked"
        assert "someone-else" in w.stderr()  # user names may be logged
    finally:
        assert w.stop() == 0
    assert PASSWORD not in w.stderr()


def test_secrets_never_in_responses_or_logs(worker):
    """Last on purpose: every response read so far, and this module's worker's stderr."""
    assert_no_secret_shown(worker)
