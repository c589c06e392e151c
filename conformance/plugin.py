"""The pytest plugin (entry point `pytest11`): the conformance options and the target
fixtures. Inert for any other tests: it adds options and fixtures, nothing that runs
unless a test asks for `local` (the exact engine), `reference`, `vm` (and `vm_abi1`, the
same worker at ABI 1) or `hardware`.

    --bark-vm CMD      the stdio worker for the `vm` target (default: this install's bark-vm)
    --bark-vm-abi1 CMD the stdio worker for `vm_abi1` (default: this install's bark-vm at
                       `--abi 1`; with --bark-vm alone, the `vm_abi1` cases are skipped,
                       since another worker's command line cannot be assumed to take --abi)
    --bark-url URL     the CDP worker for the `hardware` target (BARK_USER / BARK_PASS from
                       the environment); default: a worker container through the docker SDK,
                       or a bark-worker process where Docker is absent (a failure with
                       MANED_REQUIRE_DOCKER=1)
    --bark-boot IMAGE  the `hardware` target is a Bark machine image booted under QEMU for
                       the session (--bark-boot-mode bios|uefi|secure, --bark-boot-accel
                       auto|kvm|tcg; BARK_USER / BARK_PASS are the identity it was built with)
"""
import os
import secrets
import shlex
import warnings
from contextlib import ExitStack

import pytest
from maned_machine.modes import ACCELERATORS, MODES

from .targets import LocalUnderTest, ReferenceUnderTest, VmUnderTest, WorkerUnderTest


def pytest_addoption(parser):
    group = parser.getgroup("maned-conformance")
    group.addoption("--bark-vm", default=None, metavar="CMD",
                    help="the stdio Bark worker command of the conformance `vm` target")
    group.addoption("--bark-vm-abi1", default=None, metavar="CMD",
                    help="the stdio Bark worker command of the conformance `vm_abi1` target "
                    "(a worker at ABI 1)")
    group.addoption("--bark-url", default=os.environ.get("BARK_URL"), metavar="URL",
                    help="the CDP worker of the conformance `hardware` target (default "
                    "$BARK_URL, else a worker container)")
    group.addoption("--bark-boot", default=None, metavar="IMAGE",
                    help="boot this Bark machine image under QEMU as the `hardware` target")
    group.addoption("--bark-boot-mode", default="bios", choices=MODES)
    group.addoption("--bark-boot-accel", default="auto", choices=ACCELERATORS)


@pytest.fixture(scope="session")
def local():
    return LocalUnderTest()


@pytest.fixture(scope="session")
def reference():
    return ReferenceUnderTest()


@pytest.fixture(scope="session")
def vm(request):
    command = request.config.getoption("--bark-vm")
    target = VmUnderTest(shlex.split(command) if command else None)
    yield target
    target.close()


@pytest.fixture(scope="session")
def vm_abi1(request):
    """A worker at ABI 1 (256 slots, every non-zero constant hoisted): --bark-vm-abi1, or
    this install's bark-vm at `--abi 1` unless --bark-vm named another worker."""
    command = request.config.getoption("--bark-vm-abi1")
    if command:
        target = VmUnderTest(shlex.split(command))
    elif request.config.getoption("--bark-vm"):
        pytest.skip("--bark-vm names another worker and no --bark-vm-abi1 was given: no "
                    "ABI-1 stdio worker to run these cases on")
    else:
        target = VmUnderTest(abi=1)
    abi = target.status().ir
    if abi != 1:
        target.close()
        pytest.fail(f"the vm_abi1 worker {command!r} says ABI {abi}, not 1")
    yield target
    target.close()


@pytest.fixture(scope="session")
def hardware(request):
    url = request.config.getoption("--bark-url")
    with ExitStack() as stack:
        image = request.config.getoption("--bark-boot")
        if image is not None:
            url = _boot_machine(stack, request.config, image)
            target = WorkerUnderTest(url)
        elif url is None:
            url, user, password = _start_worker(stack, request.config.rootpath)
            target = WorkerUnderTest(url, user, password)
        else:
            try:
                target = WorkerUnderTest(url)
            except ValueError as e:  # worded without quoting the URL (it may hold a password)
                pytest.fail(f"--bark-url: {e}", pytrace=False)
        stack.callback(target.close)
        yield target


def _boot_machine(stack: ExitStack, config, image: str) -> str:
    """The machine booted for the session (powered off at its end): its forwarded URL."""
    from pathlib import Path

    from maned_machine.boot import BOOT_DEADLINE_S, Machine, accelerator
    machine = Machine(Path(image), config.getoption("--bark-boot-mode"),
                      accelerator(config.getoption("--bark-boot-accel")))
    machine.start()
    stack.callback(machine.stop)
    if not machine.wait_for("BOOT-COMPLETE", BOOT_DEADLINE_S):  # its folder kept, to be read
        pytest.fail(f"--bark-boot {image}: {machine.not_booted(BOOT_DEADLINE_S)} (see "
                    f"{machine.serial_log})", pytrace=False)
    stack.callback(machine.discard)
    return f"http://127.0.0.1:{machine.port}"


def _start_worker(stack: ExitStack, root):
    """A worker for the session: a container when Docker is here, else a process."""
    from bark_vm.container import (docker_client, worker_container, worker_image,
                                   worker_process)
    user, password = "certify", secrets.token_hex(16)
    client = docker_client()
    if client is None:
        if os.environ.get("MANED_REQUIRE_DOCKER") == "1":
            pytest.fail("MANED_REQUIRE_DOCKER=1 but Docker is not available here")
        warnings.warn("Docker is absent: the conformance `hardware` target is a bark-worker "
                      "process on loopback")
        w = stack.enter_context(worker_process("hardware", user, password))
    else:
        image = worker_image(client, root)
        w = stack.enter_context(worker_container(client, image, "hardware", user, password))
    return f"http://{w.host}:{w.port}", user, password
