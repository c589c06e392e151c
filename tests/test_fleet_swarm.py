"""The fleet on Docker swarm (issue 14, Build 5; DESIGN §11, docs/fleet.md): deploy/stack.yaml
at 3 replicas on a single-node swarm, the coordinator as a container on the stack's network
probing `tasks.worker`; a 6-configuration sweep over the pool runs on all three and
verifies; after `docker service scale` to 4 the same command, unedited, uses four and prints
the same block. Docker-gated like the other container tests (required in CI,
MANED_REQUIRE_DOCKER=1); the swarm is left as it was found."""
import json
import os
import subprocess
import uuid

import pytest

from bark_vm.container import docker_client
from maned.cli import run as run_cli

from support.cli import only_sweep_notes, run_tool
from gates import HANG_GUARD_S, until
from support.pools import N_CONFIGS, configurations_by_target, six_rate_sweep
from support.workers import IMAGE, ROOT, Workers

pytestmark = [pytest.mark.docker, pytest.mark.slow]

STACK = f"maned-fleet-test-{uuid.uuid4().hex[:8]}"  # this run's own: runs never collide
SERVICE = f"{STACK}_worker"
NETWORK = f"{STACK}_fleet"
SECRET = f"maned-fleet-test-pass-{uuid.uuid4().hex[:8]}"  # never a user's bark_pass
PASSWORD = "swarm-pass-3e7b"


def docker(*args: str, stdin: str | None = None, check: bool = True) -> str:
    p = subprocess.run(["docker", *args], input=stdin, capture_output=True, text=True,
                       timeout=HANG_GUARD_S)
    if check and p.returncode:
        raise AssertionError(f"docker {' '.join(args)} failed: {p.stderr}")
    return p.stdout


@pytest.fixture(scope="module")
def swarm():
    """A single-node swarm (initialised here only if there was none), the stack deployed at
    3 replicas, the worker image of this project; everything removed afterwards."""
    if docker_client() is None:
        if os.environ.get("MANED_REQUIRE_DOCKER") == "1":
            pytest.fail("MANED_REQUIRE_DOCKER=1 but Docker is not available here")
        pytest.skip("Docker is absent: the swarm fleet needs it (CI requires it)")
    Workers()  # builds IMAGE from this project
    state = json.loads(docker("info", "--format", "{{json .Swarm.LocalNodeState}}"))
    initialised = state != "active"
    networks_before = set(docker("network", "ls", "--format", "{{.Name}}").split())
    if initialised:
        docker("swarm", "init", "--advertise-addr", "127.0.0.1")
    try:
        docker("secret", "create", SECRET, "-", stdin=PASSWORD)
        env = dict(os.environ, MANED_WORKER_IMAGE=IMAGE, BARK_USER="fleet", BARK_SECRET=SECRET)
        subprocess.run(["docker", "stack", "deploy", "--resolve-image", "never", "-c",
                        str(ROOT / "deploy" / "stack.yaml"), STACK], env=env, check=True,
                       capture_output=True, timeout=HANG_GUARD_S)
        healthy(3)
        yield
    finally:
        docker("stack", "rm", STACK, check=False)
        try:
            until(lambda: not docker("ps", "-q", "--filter", f"label=com.docker.stack.namespace="
                                     f"{STACK}", check=False).strip(),
                  "the stack's containers gone")
            until(network_removed, "the stack's network gone")
        finally:  # the swarm is left as it was found even when the stack would not go
            docker("secret", "rm", SECRET, check=False)
            if initialised:
                docker("swarm", "leave", "--force", check=False)
                if "docker_gwbridge" not in networks_before:  # swarm init made it
                    docker("network", "rm", "docker_gwbridge", check=False)


def network_removed() -> bool:
    """Whether the stack's network is gone, removing it if it is not: `docker stack rm` tries
    once, and gives up on a network whose last endpoint is still leaving (a busy machine)."""
    def present() -> bool:
        return NETWORK in docker("network", "ls", "--format", "{{.Name}}", check=False).split()
    if present():
        docker("network", "rm", NETWORK, check=False)
    return not present()


def healthy(n: int) -> None:
    """Wait until the service runs n tasks, each container healthy."""
    def ready():
        ids = docker("ps", "-q", "--filter", f"label=com.docker.swarm.service.name={SERVICE}",
                     "--filter", "health=healthy").split()
        return len(ids) == n
    until(ready, f"{n} healthy replicas of {SERVICE}")


def coordinator(folder, *args: str) -> tuple[int, str, str]:
    """maned-run in a container of the worker image on the stack's network."""
    name = f"maned-coordinator-{uuid.uuid4().hex[:8]}"
    p = subprocess.run(["docker", "run", "--rm", "--name", name, "--network", NETWORK,
                        "-e", "P_POOL", "-v", f"{folder}:/work", "-w", "/work",
                        "--entrypoint", "maned-run", IMAGE, *args],
                       env=dict(os.environ, P_POOL=PASSWORD),  # by name: never on the argv
                       capture_output=True, text=True, timeout=HANG_GUARD_S)
    return p.returncode, p.stdout, p.stderr


def test_a_sweep_over_the_stack_grows_with_docker_service_scale(swarm, tmp_path, workdir):
    (tmp_path / "pool.mnd").write_text(six_rate_sweep(True).replace('user = "test"',
                                                                    'user = "fleet"'))
    (workdir / "six.mnd").write_text(six_rate_sweep(False))
    code, expected, _ = run_tool(run_cli, [str(workdir / "six.mnd")])
    assert code == 0
    # a long window: the wait ends as soon as every replica has answered
    command = ["pool.mnd", "--probe", "tasks.worker", "--no-broadcast", "--verify",
               "--discover-timeout", "30000"]
    os.chmod(tmp_path, 0o777)
    three = coordinator(tmp_path, *command, "--trace", "three.jsonl")
    assert three[:2] == (0, expected + "verify: PASS (compared local interpreter vs routed "
                         "targets)\n") and only_sweep_notes(three[2])
    targets = configurations_by_target(tmp_path / "three.jsonl")
    members = sorted(set().union(*targets.values()))
    assert len(members) == 3 and all(m.startswith("worker-") for m in members)
    assert targets == {i: {members[i % 3]} for i in range(N_CONFIGS)}

    docker("service", "scale", "--detach", f"{SERVICE}=4")
    healthy(4)
    four = coordinator(tmp_path, *command, "--trace", "four.jsonl")
    assert four == three
    targets = configurations_by_target(tmp_path / "four.jsonl")
    members = sorted(set().union(*targets.values()))
    assert len(members) == 4 and targets == {i: {members[i % 4]} for i in range(N_CONFIGS)}
