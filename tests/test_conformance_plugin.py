"""The conformance pytest plugin (entry point `pytest11`): inert for other tests, and its
`vm_abi1` target honest about which worker it runs. Each check is a real pytest child."""
import subprocess
import sys
from pathlib import Path

import pytest

from maned_conformance.test_conformance import PAIRS

ROOT = Path(__file__).resolve().parent.parent
VM = f"{sys.executable} -m bark_vm.vm"


def pytest_child(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=300)


def test_the_plugin_is_inert_for_other_tests(tmp_path):
    (tmp_path / "test_other.py").write_text(
        "import pytest\n\n@pytest.fixture\ndef vm():\n    return 'mine'\n\n"
        "def test_own_fixture_wins(vm):\n    assert vm == 'mine'\n\n"
        "@pytest.mark.parametrize('n', [1, 2])\ndef test_plain(n):\n    assert n\n")
    with_plugin = pytest_child("-rA", cwd=tmp_path)
    without = pytest_child("-rA", "-p", "no:maned_conformance", cwd=tmp_path)
    assert with_plugin.returncode == without.returncode == 0, with_plugin.stdout
    summary = [ln for ln in with_plugin.stdout.splitlines() if ln.startswith("PASSED")]
    assert summary == [ln for ln in without.stdout.splitlines() if ln.startswith("PASSED")]
    assert len(summary) == 3
    assert "--bark-url" in pytest_child("--help", cwd=tmp_path).stdout


def test_another_vm_without_an_abi1_worker_skips_saying_why():
    done = pytest_child("conformance/test_conformance.py", "-rs", "-k", "vm_abi1 and relu",
                        "--bark-vm", VM)
    assert done.returncode == 0, done.stdout
    assert "no --bark-vm-abi1 was given" in done.stdout and " skipped" in done.stdout


@pytest.mark.parametrize("abi, code", [("1", 0), ("2", 1)])
def test_the_abi1_worker_must_say_abi_1(abi, code):
    done = pytest_child("conformance/test_conformance.py", "-k", "vm_abi1 and relu",
                        "--bark-vm-abi1", f"{VM} --abi {abi}")
    assert done.returncode == code, done.stdout
    relu = sum(1 for c, t, _ in PAIRS if t == "vm_abi1" and "relu" in c.id)
    assert relu >= 2 and (f"{relu} passed" in done.stdout) == (code == 0)
    assert ("says ABI 2, not 1" in done.stdout) == (code == 1)
