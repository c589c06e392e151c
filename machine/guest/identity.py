"""The machine's identity (alias, user, password): bark.conf on the stick's FAT partition
labelled BARK, which a user edits on any computer after writing the stick. An image without
a complete identity is in setup mode: it asks on the consoles (alias, user, the password
twice, never echoed) and keeps the answer in bark.conf. The password goes to a root-only
file for the worker (BARK_PASS_FILE): never to a console, the journal, the kernel command
line or a process's arguments."""
import json
import os
import select
import subprocess
import termios
import time

from bark_vm.wire.alias import ALIAS_MAX, worker_alias
from bark_vm.wire.login import fits

from .consoles import devices, say

LABEL_PATH = "/dev/disk/by-label/BARK"
STICK = "/run/bark/stick"
RUN = "/run/bark"
IDENTITY = f"{RUN}/identity.json"  # alias and user, for the worker's launcher
PASS_FILE = f"{RUN}/pass"  # mode 0600
FIELDS = ("alias", "user", "password")
SETUP_MODE = "IDENTITY: setup mode"  # the console line of an image without identity (boot.py)
STICK_WAIT_S = 60  # udev names the partition once the USB or disk driver has found it
HEADER = ("# The Bark machine's identity (docs/machine.md). Edit it on any computer after\n"
          "# writing the stick: alias (letters, digits, _ and single hyphens), user and\n"
          "# password. Left empty, the machine asks on its console at first boot.\n")


BLANKS = " \t"  # what parse drops around a key and a value


def template(alias: str = "", user: str = "", password: str = "") -> str:
    """bark.conf's text: three `key = value` lines under the header (each value as it is:
    `unkeepable` says which values cannot be read back the same)."""
    return HEADER + f"alias = {alias}\nuser = {user}\npassword = {password}\n"


def parse(text: str) -> dict[str, str]:
    """The known keys of `key = value` lines, the exact inverse of template for every value
    it can keep (unkeepable): lines end at "\n" only (a CRLF's CR dropped), and only the
    blanks (space, tab) around the key and the value are dropped; a BOM, blank lines and #
    comments are allowed."""
    found = {}
    for line in text.removeprefix("\ufeff").split("\n"):
        key, sep, value = line.removesuffix("\r").partition("=")
        key = key.strip(BLANKS)
        if sep and not key.startswith("#") and key in FIELDS:
            found[key] = value.strip(BLANKS)
    return found


def unkeepable(value: str) -> str | None:
    """Why `value` would not read back from bark.conf, or the worker's password file, as it
    is (template, then parse; the pass file drops a leading byte-order mark), or None: a
    line break, a blank (space, tab) first or last, a CR last, a byte-order mark first."""
    if "\n" in value:
        return "it holds a line break"
    if value.startswith("\ufeff"):
        return "it starts with a byte-order mark (U+FEFF)"
    if value != value.strip(BLANKS):
        return "it starts or ends with a blank (a space or a tab)"
    if value.endswith("\r"):
        return "it ends with a carriage return"
    return None


def read_conf(raw: bytes) -> tuple[dict[str, str], str | None]:
    """bark.conf's bytes as (identity, why it cannot run a worker or None)."""
    try:
        identity = parse(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return {}, "bark.conf is not UTF-8 text; save it as UTF-8"
    return identity, problem(identity)


def problem(identity: dict[str, str]) -> str | None:
    """Why `identity` cannot run a worker (never quoting the password), or None."""
    alias, user, password = (identity.get(k, "") for k in FIELDS)
    if not (alias and user and password):
        return "incomplete: " + ", ".join(k for k in FIELDS if not identity.get(k))
    if not worker_alias(alias):
        return (f"the alias {alias[:40]!r} is not one a script can name (letters, digits and "
                f"_, joined by single hyphens, not starting with a digit, at most {ALIAS_MAX})")
    if not user.isprintable() or " " in user:
        return "the user name must be printable, without spaces"
    if not fits(user, password):
        return "the password is too long for a login (4,096 bytes of JSON)"
    why = unkeepable(password)
    if why:
        return f"the password cannot be kept in bark.conf as it is: {why}"
    return None


def main() -> int:
    os.makedirs(RUN, mode=0o700, exist_ok=True)
    if not _mount():
        say("IDENTITY: FAIL (no partition labelled BARK was found)")
        return 1
    try:
        with open(os.path.join(STICK, "bark.conf"), "rb") as f:
            identity, why = read_conf(f.read())
    except OSError:
        identity, why = {}, problem({})
    if why:
        shown = why.split(":")[0] if why.startswith("incomplete") else why
        say(f"{SETUP_MODE} ({shown}): answer on this console")
        identity = ask()
        _keep(identity)
    _publish(identity)
    say(f"IDENTITY: PASS (alias {identity['alias']}, user {identity['user']})")
    return 0


def _mount() -> bool:
    """The BARK partition mounted read-only at STICK."""
    give_up = time.monotonic() + STICK_WAIT_S
    while not os.path.exists(LABEL_PATH):
        if time.monotonic() > give_up:
            return False
        time.sleep(0.2)
    os.makedirs(STICK, exist_ok=True)
    return subprocess.run(["mount", "-t", "vfat", "-o", "ro,nodev,nosuid,noexec", LABEL_PATH,
                           STICK]).returncode == 0


def _publish(identity: dict[str, str]) -> None:
    fd = os.open(PASS_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(fd, "w", encoding="utf-8") as f:
        f.write(identity["password"] + "\n")
    with open(IDENTITY, "w", encoding="utf-8") as f:
        json.dump({"alias": identity["alias"], "user": identity["user"]}, f)


def _keep(identity: dict[str, str]) -> None:
    """Write the answer to bark.conf (the only write the stick ever gets)."""
    subprocess.run(["mount", "-o", "remount,rw", STICK], check=True)
    try:
        path = os.path.join(STICK, "bark.conf")
        with open(path, "w", encoding="utf-8") as f:
            f.write(template(*(identity[k] for k in FIELDS)))
            f.flush()
            os.fsync(f.fileno())
    finally:
        subprocess.run(["mount", "-o", "remount,ro", STICK])


# --- setup mode: the questions, on every console at once; the first to finish wins ---------
QUESTIONS = (("alias", "alias: "), ("user", "user: "), ("password", "password: "),
             ("again", "password again: "))
SECRET_KEYS = ("password", "again")  # the questions whose answers are never echoed


def set_echo(fd: int, on: bool) -> None:
    """The terminal on `fd` echoes what is typed, or not."""
    modes = termios.tcgetattr(fd)
    modes[3] = modes[3] | termios.ECHO if on else modes[3] & ~termios.ECHO
    termios.tcsetattr(fd, termios.TCSANOW, modes)


class _Asking:
    """One console's progress through QUESTIONS."""

    def __init__(self, path: str):
        self.path = path
        self.fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        self.answers: dict[str, str] = {}
        self.step = 0
        self.buffer = b""
        try:
            self._saved = termios.tcgetattr(self.fd) if os.isatty(self.fd) else None
        except termios.error:
            os.close(self.fd)
            raise

    def prompt(self) -> None:
        key, text = QUESTIONS[self.step]
        self._echo(key not in SECRET_KEYS)
        os.write(self.fd, text.encode())

    def feed(self) -> dict[str, str] | None:
        """Read what the console typed; the identity once every question is answered.
        OSError when the console is gone (EOF or EIO: hung up)."""
        chunk = os.read(self.fd, 1024)
        if not chunk:
            raise OSError(f"{self.path} hung up")
        self.buffer += chunk
        while b"\n" in self.buffer or b"\r" in self.buffer:
            cut = min(i for i in (self.buffer.find(b"\n"), self.buffer.find(b"\r")) if i >= 0)
            line, self.buffer = self.buffer[:cut], self.buffer[cut + 1:].lstrip(b"\r\n")
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError:
                done = self._again("that answer is not UTF-8 text", self.step)
            else:
                done = self._answer(text)
            if done:
                return done
            self.prompt()
        return None

    def _answer(self, text: str) -> dict[str, str] | None:
        """One line typed: kept as typed for the password (bark.conf keeps it so), without
        the blanks around it for the alias and user (which have none)."""
        key = QUESTIONS[self.step][0]
        if key in SECRET_KEYS:
            os.write(self.fd, b"\n")  # the Enter the terminal did not echo
        else:
            text = text.strip(BLANKS)
        self.answers[key] = text
        self.step += 1
        if key == "again":
            if self.answers["again"] != self.answers["password"]:
                return self._again("the two passwords differ", 2)
            identity = {k: self.answers[k] for k in FIELDS}
            why = problem(identity)
            if why:
                return self._again(why, 0)
            return identity
        if key in ("alias", "user"):
            why = problem({**{k: "x" for k in FIELDS}, **{key: text}} if key == "alias"
                          else {"alias": "x", "user": text, "password": "x"})
            if why:
                return self._again(why, self.step - 1)
        return None

    def _again(self, why: str, step: int) -> None:
        os.write(self.fd, f"{why}; again\n".encode())
        self.step = step
        return None

    def _echo(self, on: bool) -> None:
        if self._saved is not None:
            set_echo(self.fd, on)

    def close(self, note: str | None = None) -> None:
        """The console's modes back, and its fd closed (a console gone is only closed)."""
        try:
            if note:
                os.write(self.fd, f"\n{note}\n".encode())
            if self._saved is not None:
                termios.tcsetattr(self.fd, termios.TCSANOW, self._saved)
        except (OSError, termios.error):
            pass
        os.close(self.fd)


REOPEN_S = 1.0  # every console gone: they are opened again this often (one may come back)


def _open_all() -> list[_Asking]:
    asking = []
    for path in devices():
        try:
            asking.append(_Asking(path))
            asking[-1].prompt()
        except (OSError, termios.error):
            if asking and asking[-1].path == path:
                asking.pop().close()
    return asking


def ask() -> dict[str, str]:
    """The identity typed on whichever console finishes first; a console that hangs up
    (EOF or EIO) is dropped and the others go on."""
    asking: list[_Asking] = []
    first = True
    try:
        while True:
            if not asking:
                if not first:
                    time.sleep(REOPEN_S)
                asking, first = _open_all(), False
                if not asking:
                    continue
            ready, _, _ = select.select([a.fd for a in asking], [], [])
            for a in [a for a in asking if a.fd in ready]:
                try:
                    identity = a.feed()
                except (OSError, termios.error):  # hung up: the others go on
                    asking.remove(a)
                    a.close()
                    continue
                if identity:
                    for other in asking:
                        other.close(None if other is a else f"answered on {a.path}")
                    asking = []
                    return identity
    finally:
        for a in asking:
            a.close()


if __name__ == "__main__":
    raise SystemExit(main())
