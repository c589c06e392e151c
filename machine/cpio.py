"""The initramfs archive: cpio "newc" (the only format the kernel unpacks), written from a
folder in sorted order with fixed owners and times, so the same tree gives the same bytes."""
import os
import stat

TRAILER = "TRAILER!!!"
MAGIC = b"070701"


def _header(name: bytes, mode: int, size: int, ino: int, nlink: int, rdev: int) -> bytes:
    fields = [ino, mode, 0, 0, nlink, 0, size, 0, 0, os.major(rdev), os.minor(rdev),
              len(name) + 1, 0]  # uid, gid, mtime, dev major/minor 0: reproducible
    head = MAGIC + b"".join(b"%08X" % f for f in fields) + name + b"\0"
    return head + b"\0" * (-len(head) % 4)


def _entries(root: str):
    """(archive name, path) of every entry under `root`, parents first, sorted."""
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        rel = os.path.relpath(folder, root)
        if rel != ".":
            yield rel, folder
        for name in sorted(files):
            yield os.path.normpath(os.path.join(rel, name)), os.path.join(folder, name)
        for name in dirs:  # a symlink to a folder is listed by walk but not entered
            path = os.path.join(folder, name)
            if os.path.islink(path):
                yield os.path.normpath(os.path.join(rel, name)), path


def write(root: str, out) -> int:
    """Write every file, folder, link and device under `root` to the binary stream `out` as
    one newc archive; returns the number of entries."""
    count = 0
    for ino, (name, path) in enumerate(_entries(root), start=1):
        st = os.lstat(path)
        data = b""
        if stat.S_ISLNK(st.st_mode):
            data = os.readlink(path).encode()
        elif stat.S_ISREG(st.st_mode):
            with open(path, "rb") as f:
                data = f.read()
        out.write(_header(name.encode(), st.st_mode, len(data), ino,
                          2 if stat.S_ISDIR(st.st_mode) else 1, st.st_rdev))
        out.write(data + b"\0" * (-len(data) % 4))
        count += 1
    out.write(_header(TRAILER.encode(), 0, 0, 0, 1, 0))
    return count
