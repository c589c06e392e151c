"""The warm parent of Bark VM children (DESIGN D7): a process that has imported the VM and
its executor (numpy included) once, and forks a child per request, so that N children cost
one numpy import.

    python -m bark_vm.fork_server SOCKET_FD COORDINATOR_PID

The coordinator starts it with one end of a SOCK_SEQPACKET socket pair and asks it to fork
a child (three fds with the message: the child's stdin, stdout, stderr; the child runs
`bark-vm ARG...` on them) or to kill one; it answers with each child's pid and, when the
child ends, its exit code. The messages and their codec are bark_vm/wire/fork_socket.py.

It reaps its children and reports each end. It lives no longer than its coordinator: when
the socket is shut or the coordinator process ends (a pidfd on it), it kills its children,
reaps them and exits; each child has PR_SET_PDEATHSIG = SIGKILL, so a warm parent that is
killed takes its children with it. Linux only (pidfd_open, prctl)."""
import ctypes
import gc
import os
import select
import signal
import socket
import sys

from .wire.fork_socket import EXITED, FAILED, FORKED, KILL, answer, read_request

PR_SET_PDEATHSIG, PR_SET_NAME = 1, 15
MAX_MESSAGE = 64 * 1024
USAGE = "usage: python -m bark_vm.fork_server SOCKET_FD COORDINATOR_PID"


class ForkServer:
    def __init__(self, sock: socket.socket, coordinator: int, sigint):
        """coordinator: a pidfd on it; sigint: the SIGINT handler a child starts with."""
        self.sock, self.coordinator, self.sigint = sock, coordinator, sigint
        self.children: dict[int, tuple[int, int]] = {}  # pidfd -> (N, pid)
        self.by_number: dict[int, int] = {}  # N -> pid, while the child lives
        self.libc = ctypes.CDLL(None, use_errno=True)

    def serve(self) -> None:
        poller = select.poll()
        poller.register(self.sock, select.POLLIN)
        poller.register(self.coordinator, select.POLLIN)
        while True:
            for fd, _ in poller.poll():
                if fd == self.coordinator:
                    return  # the coordinator ended
                if fd == self.sock.fileno():
                    if not self._message(poller):
                        return
                elif fd in self.children:
                    poller.unregister(fd)
                    self._reap(fd)

    def _message(self, poller) -> bool:
        """One request; False when the coordinator shut the socket."""
        try:
            data, fds, _, _ = socket.recv_fds(self.sock, MAX_MESSAGE, 3)
        except OSError:
            return False
        if not data:
            return False
        verb, number, argv = read_request(data)
        if verb == KILL:
            pid = self.by_number.get(number)
            if pid is not None:  # not reaped yet (only this thread reaps): still our child
                os.kill(pid, signal.SIGKILL)
            return True
        try:
            self._fork(number, argv, fds, poller)
        except OSError as e:
            self.sock.send(answer(FAILED, number, f"{type(e).__name__}: {e}"))
        finally:
            for fd in fds:
                os.close(fd)
        return True

    def _fork(self, number: int, argv: list[str], fds: list[int], poller) -> None:
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            self._child(parent, argv, fds)
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:  # out of fds: a child nobody could watch is not left running
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise
        self.children[pidfd] = (number, pid)
        self.by_number[number] = pid
        poller.register(pidfd, select.POLLIN)
        self.sock.send(answer(FORKED, number, pid))

    def _child(self, parent: int, argv: list[str], fds: list[int]) -> None:
        """In the child: bark-vm on the three fds, dying with the warm parent. Never returns."""
        code = 1
        try:
            self.libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != parent:  # the warm parent died before prctl took effect
                os._exit(1)
            self.libc.prctl(PR_SET_NAME, b"bark-vm")
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
            for fd in [*fds, self.sock.fileno(), self.coordinator, *self.children]:
                os.close(fd)
            signal.signal(signal.SIGINT, self.sigint)
            sys.stdin = open(0, "r", closefd=False)
            sys.stdout = open(1, "w", closefd=False)
            sys.stderr = open(2, "w", buffering=1, closefd=False, errors="backslashreplace")
            from .vm import main
            main(argv)  # ends the process itself (os._exit)
        except SystemExit as e:  # argparse: --help, --version, a bad option
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
        except BaseException:
            import traceback
            traceback.print_exc()
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)

    def _reap(self, pidfd: int) -> None:
        number, pid = self.children.pop(pidfd)
        os.close(pidfd)
        del self.by_number[number]
        _, status = os.waitpid(pid, 0)
        self.sock.send(answer(EXITED, number, os.waitstatus_to_exitcode(status)))

    def end(self) -> None:
        """Kill every child and reap it: nothing is left behind."""
        for pidfd, (_, pid) in self.children.items():
            os.kill(pid, signal.SIGKILL)
        for pidfd, (_, pid) in self.children.items():
            os.waitpid(pid, 0)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    try:
        fd, coordinator = (int(a) for a in args)
        sock = socket.socket(fileno=fd)
    except (ValueError, OSError) as e:  # started by hand: a usage line, not a traceback
        sys.stderr.write(f"{USAGE}\nerror: {e}\n")
        sys.exit(2)
    try:
        watch = os.pidfd_open(coordinator)
    except OSError:
        os._exit(1)  # the coordinator is gone already
    if os.getppid() != coordinator:
        os._exit(1)
    sigint = signal.getsignal(signal.SIGINT)  # as a `python -m bark_vm.vm` would start
    # A Ctrl-C at the terminal reaches the whole process group: the coordinator handles it
    # (it kills the children and closes the socket); the warm parent only follows.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # What each child would otherwise import: the executor (numpy), and what bark-vm's
    # argument parser pulls in (shutil, for the terminal's width).
    import bark_vm.executor  # noqa: F401
    from . import vm
    vm._parser()
    gc.freeze()  # what is loaded now stays out of the children's collections (and shared)
    parent = ForkServer(sock, watch, sigint)
    try:
        parent.serve()
    finally:
        parent.end()
        os._exit(0)  # no interpreter teardown (numpy's costs ~30 ms)


if __name__ == "__main__":
    main()
