"""One writer at a time, across processes: an flock on `<index>.lock` in clawmem's data folder
(beside the index when the index is there, else `locks/index-<hash of its path>.lock`: never a
file beside one the user chose).

The lock file also says who holds it (pid, command, since), so a second writer can wait
or tell the user exactly which process to look at. The kernel drops an flock when its
holder dies, so a killed indexer never leaves a stale lock behind.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from pathlib import Path

from ..errors import ClawmemError


class LockBusy(ClawmemError):
    def __init__(self, holder: dict | None, waited: float):
        self.holder = holder or {}
        self.waited = waited
        who = describe_holder(self.holder)
        super().__init__(f"the index is being written by {who}; waited {waited:.0f}s (try again when it finishes)")


def describe_holder(holder: dict) -> str:
    if not holder:
        return "another process"
    return f"pid {holder.get('pid', '?')} ({holder.get('command', '?')}, since {time.strftime('%H:%M:%S', time.localtime(holder.get('since', 0)))})"


def lock_path(index_path: Path) -> Path:
    from ..paths import data_dir

    index_path = Path(index_path)
    data = os.path.realpath(data_dir())
    real = os.path.realpath(index_path.parent) + os.sep + index_path.name
    if real.startswith(data + os.sep):
        return Path(str(index_path) + ".lock")
    import hashlib

    key = hashlib.sha256(os.fsencode(real)).hexdigest()[:24]
    return data_dir() / "locks" / f"index-{key}.lock"


def read_holder(index_path: Path) -> dict | None:
    try:
        text = lock_path(index_path).read_text()
        return json.loads(text) if text.strip() else None
    except (OSError, ValueError):
        return None


def current_holder(index_path: Path) -> dict | None:
    """Who holds the writer lock right now, or None when nobody does.

    Unlike read_holder, this asks the kernel: a writer killed with SIGKILL leaves its
    holder info in the file, but not its flock.
    """
    try:
        fd = os.open(lock_path(index_path), os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return read_holder(index_path) or {}
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


SUBCOMMANDS = ("index", "watch", "search", "status", "get", "archive", "mcp")


def this_command() -> str:
    """What to call this process in "the index is being written by …": `clawmem watch`, not
    `__main__.py --workspace`."""
    argv = sys.argv or [""]
    name = os.path.basename(argv[0]) or "python"
    if name in ("__main__.py", "clawmem"):
        sub = next((a for a in argv[1:] if a in SUBCOMMANDS), None)
        return f"clawmem {sub}" if sub else "clawmem (terminal app)"
    return "python -c" if name == "-c" else name


class WriterLock:
    def __init__(self, index_path: Path, command: str | None = None):
        self.index_path = Path(index_path)
        self.path = lock_path(index_path)
        self.command = command or this_command()
        self.fd: int | None = None

    def try_acquire(self) -> bool:
        from ..paths import private_dir

        private_dir(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self.fd = fd  # held from here: a failure below must not leak an fd that keeps the lock
        try:
            os.ftruncate(fd, 0)
            os.write(fd, json.dumps({"pid": os.getpid(), "command": self.command, "since": time.time()}).encode())
        except OSError:
            pass  # a full data folder: the lock holds without its holder's name (who it is only informs)
        return True

    def acquire(self, timeout: float, on_wait=None) -> None:
        """Wait up to `timeout` seconds; `on_wait(holder)` is called once if we have to wait."""
        start = time.monotonic()
        told = False
        while not self.try_acquire():
            waited = time.monotonic() - start
            if waited >= timeout:
                raise LockBusy(read_holder(self.index_path), waited)
            if not told and on_wait is not None:
                on_wait(read_holder(self.index_path))
                told = True
            time.sleep(0.1)

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            os.ftruncate(self.fd, 0)
            fcntl.flock(self.fd, fcntl.LOCK_UN)
        finally:
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> "WriterLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()
