"""The worker container as a user meets it (issue 15, point 6): a container started without
a password exits 2 at once and its log says why; a good one turns healthy (the image's
HEALTHCHECK asks /api/status). Docker-gated like the other container tests."""
import os

import pytest

from bark_vm.container import docker_client
from gates import until
from support.workers import IMAGE, Workers

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def client():
    if docker_client() is None:
        if os.environ.get("MANED_REQUIRE_DOCKER") == "1":
            pytest.fail("MANED_REQUIRE_DOCKER=1 but Docker is not available here")
        pytest.skip("Docker is absent: these tests are about the container (CI requires it)")
    Workers()  # builds IMAGE
    return docker_client()


def test_a_container_without_a_password_exits_2_and_says_why(client):
    c = client.containers.run(IMAGE, detach=True, environment={"BARK_USER": "u"})
    try:
        assert c.wait(timeout=120)["StatusCode"] == 2
        assert c.logs().decode() == (
            "bark-worker: refusing to start: BARK_PASS is not set (the worker needs a user and a "
            "password in BARK_USER and BARK_PASS, or the password in the file BARK_PASS_FILE "
            "names)\n")
    finally:
        c.remove(force=True)


def test_a_good_container_turns_healthy(client):
    c = client.containers.run(IMAGE, detach=True, environment={
        "BARK_USER": "u", "BARK_PASS": "container-pass-6a"})
    try:
        def health():
            c.reload()
            return c.attrs["State"].get("Health", {}).get("Status")
        until(lambda: health() in ("healthy", "unhealthy"), "the first health verdict")
        assert health() == "healthy"
    finally:
        c.remove(force=True)
