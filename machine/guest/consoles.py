"""The machine's consoles: every console the kernel was given (`console=tty0
console=ttyS0,115200`: the screen and the serial port), written together, so the boot log
lines and the faceplate show on a laptop's screen and on a QEMU serial capture alike."""
import os

ACTIVE = "/sys/class/tty/console/active"


def devices() -> list[str]:
    """The device path of each active console (tty0, the screen, is shown as tty1)."""
    try:
        with open(ACTIVE) as f:
            names = f.read().split()
    except OSError:
        names = ["console"]
    return [f"/dev/{'tty1' if n == 'tty0' else n}" for n in names]


def say(line: str, where: list[str] | None = None) -> None:
    """One line on every console (or `where`); a console that cannot be written is skipped."""
    for path in where or devices():
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            os.write(fd, (line.rstrip("\n") + "\n").encode("utf-8", "replace"))
        except OSError:
            pass
        finally:
            os.close(fd)
