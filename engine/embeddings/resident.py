"""One resident model per user: a worker that every clawmem process of this user shares.

A `clawmem search` that loads the model into a fresh worker pays ~1.5 s and ~500 MB for one
query. With `[local] residentMinutes` > 0 the first process that needs the model starts a
worker detached from itself (its own session, so it outlives a CLI call) that listens on a
Unix socket; the CLI, the app, `watch`, `serve` and `clawmem mcp` all talk to it, and it exits
after residentMinutes without a request.

Where: `$XDG_RUNTIME_DIR/clawmem/` (else clawmem's state folder `run/`), a folder only its
owner may enter (0700, refused if it is not), one socket per model file + llama.cpp build
(`m-<hash>.sock`, 0600), beside it the start lock, the worker's log and the model file's
identity as its starter hashed it (`f-<hash>.json`: a search of the unchanged file reads it
instead of hashing the file's first MB). The peer's credentials
are checked on both sides (SO_PEERCRED: same uid); a symlink where the socket should be is
refused, never followed; a stale socket (its worker killed) is replaced by the next start.
Paths go through a handle on the folder (`/proc/self/fd/N/name`): no check-then-open on the
path, and no limit from the 108 bytes a socket address may hold.

What the per-process worker guarantees carries over: a crash ends the worker, not clawmem
(the worker's log gets the crash's name from faulthandler, so every client can say "SIGILL in
llama.cpp"); the failure record and its back-off are the same file; queries go before the next
slice of any process's batch (worker.Turns, here across connections); a client gives up on a
worker only when it has used no CPU for STALL_TIMEOUT or after REQUEST_TIMEOUT.
"""

from __future__ import annotations

import _socket  # the socket module's C core: a client needs nothing of socket.py (~2 ms of imports, enums)
import json
import os
import re
import stat
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .base import ProviderError
from . import worker as w

if TYPE_CHECKING:
    import subprocess

# The server, the spawn and the crash reports load signal, socket, subprocess and threading
# where they need them: a search that finds the worker up connects, asks and reads, no more
# (tests/test_resident_model.py checks what such a search loads).

PROTOCOL = 1
_FATAL = {  # faulthandler's words for the signal that ended the worker
    "Illegal instruction": "SIGILL", "Segmentation fault": "SIGSEGV", "Bus error": "SIGBUS",
    "Aborted": "SIGABRT", "Floating-point exception": "SIGFPE",
}
_EXITING = "clawmem model worker exiting"
_KILLED = "clawmem stopped this worker:"  # what a client that kills it writes last in its log, for the others


class Refused(ProviderError):
    """The socket or its folder is not safe to use; a configuration matter, not a crash."""


def runtime_dir() -> Path:
    base = os.environ.get("XDG_RUNTIME_DIR", "").strip()
    if base:
        return Path(base) / "clawmem"
    from .. import paths

    return paths.state_dir() / "run"


def open_folder(folder: Path, create: bool) -> int:
    """A handle on the private folder; Refused if it is not ours alone or is a symlink."""
    if create:
        folder.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise Refused(f"local: cannot use the resident model's folder {folder}: {exc.strerror}; "
                      "remove it, or set local.residentMinutes = 0") from None
    st = os.fstat(fd)
    if st.st_uid != os.getuid() or st.st_mode & 0o077:
        os.close(fd)
        raise Refused(f"local: the resident model's folder {folder} is not private to you (mode {stat.S_IMODE(st.st_mode):o}, "
                      f"owner uid {st.st_uid}); remove it, or set local.residentMinutes = 0")
    return fd


def _at(dfd: int, name: str) -> str:
    return f"/proc/self/fd/{dfd}/{name}"


def unix_socket() -> _socket.socket:
    return _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM | _socket.SOCK_CLOEXEC)


def peer(sock: _socket.socket) -> tuple[int, int]:
    """(pid, uid) of the process at the other end."""
    pid, uid, _ = memoryview(sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)).cast("i")  # struct ucred
    return pid, uid


def same_user(uid: int) -> bool:
    """The peer-credentials rule, both sides: only this user's processes talk to each other."""
    return uid == os.getuid()


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


def _wait_gone(pids: list[int | None], seconds: float) -> None:
    """Until none of these processes is alive (our own children reaped), `seconds` at most."""
    end = time.monotonic() + seconds
    while any(_alive(pid) for pid in pids) and time.monotonic() < end:
        _reap()
        time.sleep(0.02)


def _rss(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def _tail(dfd: int, name: str) -> str:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)
    except OSError:
        return ""
    try:
        size = os.fstat(fd).st_size  # the log starts anew with each worker: its crash is in the last 64 KB
        os.lseek(fd, max(0, size - 65536), os.SEEK_SET)
        return os.read(fd, 65536).decode("utf-8", "replace")
    finally:
        os.close(fd)


def _record_name(path: Path) -> str:
    from ..files.fsutil import builtin_sha256

    return f"f-{builtin_sha256(f'{PROTOCOL}|{path.resolve()}'.encode()).hexdigest()[:16]}.json"


def recorded_identity(path: Path, key: tuple) -> str | None:
    """The model file's identity as recorded by the process that started its resident worker,
    if the file is still in the state it recorded (device, inode, size, mtime, ctime): what
    spares every search from hashing the file's first MB. None when there is no such record."""
    try:
        dfd = open_folder(runtime_dir(), create=False)
    except Refused:
        return None
    try:
        fd = os.open(_record_name(path), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)
    except OSError:
        return None
    finally:
        os.close(dfd)
    try:
        rec = json.loads(os.read(fd, 4096)) if os.fstat(fd).st_uid == os.getuid() else {}
    except (OSError, ValueError):
        rec = {}
    finally:
        os.close(fd)
    ident = rec.get("identity") if isinstance(rec, dict) and rec.get("file") == list(key) else None
    return ident if isinstance(ident, str) else None


def _record_identity(dfd: int, path: Path, identity: str, state: tuple | None) -> None:
    """Beside the socket: the file in `state` has this identity, if the file is still in that
    state (a file changed since is left for the next hash)."""
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
    except OSError:
        return
    key = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    if state is None or list(state) != key:
        return
    name = _record_name(path)
    tmp = f".{name}.{os.getpid()}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dfd)
        try:
            os.write(fd, json.dumps({"file": key, "identity": identity}).encode())
        finally:
            os.close(fd)
        os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except OSError:
        pass  # the record only spares a hash; without it the next search hashes


# ---------------------------------------------------------------------------- the worker side


def serve(folder: str, name: str, model_path: str, idle_seconds: float) -> None:
    """The resident worker: load the model, listen, answer every same-user client, exit when
    idle, when told to, or when its socket is no longer the one in the folder."""
    import faulthandler
    import queue
    import signal
    import socket
    import threading

    from .llama_model import Embedder, LoadError

    faulthandler.enable(all_threads=False)  # stderr is the log: a crash leaves its name there for the clients
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    ready = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # llama.cpp's prints go nowhere, never into a reply
    dfd = open_folder(Path(folder), create=False)
    try:
        model = Embedder(model_path, 1)
    except LoadError as exc:
        w._send(ready, json.dumps({"ok": False, "load": True, "error": str(exc)}).encode())
        return
    info = {"ok": True, "dims": model.dims, "limit": model.limit, "system": model.system_info(), "pid": os.getpid(),
            "model": Path(model_path).name, "idleLimit": idle_seconds}
    os.umask(0o177)  # the socket is born 0600
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    tmp = f".{name}.{os.getpid()}"
    srv.bind(_at(dfd, tmp))
    srv.listen(16)
    os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)  # replaces a stale socket in one step
    mine = os.stat(name, dir_fd=dfd, follow_symlinks=False).st_ino
    w._send(ready, json.dumps(info).encode())
    os.close(ready)

    turns = w.Turns()
    lock = threading.Lock()
    state = {"last": time.monotonic(), "active": 0, "clients": 0}

    def leave(why: str) -> None:
        try:
            if os.stat(name, dir_fd=dfd, follow_symlinks=False).st_ino == mine:
                os.unlink(name, dir_fd=dfd)
        except OSError:
            pass
        print(f"{_EXITING} ({why})", file=sys.stderr, flush=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, lambda *_: leave("SIGTERM"))

    def handle(conn: socket.socket) -> None:
        with conn:
            _, uid = peer(conn)
            if not same_user(uid):
                print(f"refused a connection from uid {uid}", file=sys.stderr, flush=True)
                return
            with lock:
                state["clients"] += 1
            fd = conn.fileno()
            try:
                while True:
                    raw = w._read_frame(fd)
                    if raw is None:
                        break
                    req = json.loads(raw)
                    op = req.get("op")
                    if op == "hello":
                        w._send(fd, json.dumps(info).encode())
                    elif op == "status":
                        with lock:
                            idle = 0.0 if state["active"] else time.monotonic() - state["last"]
                            reply = {**info, "rssBytes": _rss(os.getpid()), "idleSeconds": idle, "clients": state["clients"] - 1}
                        reply.pop("system", None)
                        w._send(fd, json.dumps(reply).encode())
                    elif op == "stop":
                        w._send(fd, json.dumps({"ok": True}).encode())
                        leave("stopped by `clawmem model stop`")
                    elif op == "embed":
                        with lock:
                            state["active"] += 1
                        try:
                            with turns.turn(bool(req.get("urgent"))):
                                head, body = w.embed_reply(model, req)
                        finally:
                            with lock:
                                state["active"] -= 1
                                state["last"] = time.monotonic()
                        w._send(fd, head)
                        if body is not None:
                            w._send(fd, body)
                    else:
                        w._send(fd, json.dumps({"ok": False, "error": f"unknown request {op!r}"}).encode())
            except (OSError, ValueError):
                pass
            finally:
                with lock:
                    state["clients"] -= 1

    # A thread already waits for the next connection: starting one when a client connects cost
    # each search 0.5-2 ms of latency on a busy 2-core machine (thread start and its GIL hand-offs)
    waiting: queue.SimpleQueue = queue.SimpleQueue()

    def take() -> None:
        handle(waiting.get())

    threading.Thread(target=take, daemon=True).start()
    srv.settimeout(1.0)
    while True:
        try:
            conn, _ = srv.accept()
        except socket.timeout:
            with lock:
                idle = not state["active"] and time.monotonic() - state["last"] > idle_seconds
            if idle:
                leave(f"idle for {idle_seconds:.0f} s")
            try:
                if os.stat(name, dir_fd=dfd, follow_symlinks=False).st_ino != mine:
                    leave("its socket was replaced")
            except OSError:
                leave("its socket or folder was removed")
            continue
        conn.settimeout(None)
        waiting.put(conn)
        threading.Thread(target=take, daemon=True).start()  # the next connection's


# ---------------------------------------------------------------------------- the client side


class _Gone(Exception):
    """The worker left on purpose (idle, stopped): start or reach a new one, not a failure."""


_STARTED: list[subprocess.Popen] = []  # workers this process started: reaped here, never waited for


def _reap() -> None:
    for p in list(_STARTED):
        if p.poll() is not None:
            _STARTED.remove(p)


class ResidentHost(w.ModelHost):
    """The ModelHost interface over the user's resident worker; one connection per process."""

    resident = True

    def __init__(self, path: Path, identity: str, idle_minutes: float, failures: w.Failures | None = None,
                 state: tuple | None = None):
        super().__init__(path, identity, failures)
        self.state = state  # the model file's state `identity` was taken from (local.file_identity)
        from ..files.fsutil import builtin_sha256

        self.idle_seconds = idle_minutes * 60
        self.folder = runtime_dir()
        digest = builtin_sha256(f"{PROTOCOL}|{self.key}|{path.resolve()}".encode()).hexdigest()[:16]
        self.name = f"m-{digest}.sock"
        self.log = f"m-{digest}.log"
        self.sock: _socket.socket | None = None
        self._hello_owed = False  # a hello sent whose reply is not read yet (_read_owed)
        self.server_pid: int | None = None
        self._started: subprocess.Popen | None = None

    @property
    def pid(self) -> int | None:
        return self.server_pid if self.sock is not None and _alive(self.server_pid) else None

    def _fds(self) -> tuple[int, int]:
        fd = self.sock.fileno()
        return fd, fd

    def _worker_pid(self) -> int | None:
        return self.server_pid

    def _ensure(self, threads: int) -> None:
        if self.sock is not None and self._hung_up():
            # it went between two of our requests: a crash (its log names it) is recorded like
            # one seen mid-request; leaving when idle or told to, or a kill, is not: start anew
            self._close()
            crash = self._crash_in_log()
            if crash and not self.failures.holds(self.failures.get(self.key) or {}):
                self._fail(crash, kill=False)
        if self.sock is None:
            self._start(threads)

    def _hung_up(self) -> bool:
        import select

        if not select.select([self.sock], [], [], 0)[0]:
            return False
        try:
            return self.sock.recv(1, _socket.MSG_PEEK | _socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True

    def _start(self, threads: int) -> None:
        _reap()
        self._check_held()
        dfd = open_folder(self.folder, create=True)
        try:
            if self._connect(dfd):
                return
            import fcntl

            lock = os.open(self.name[:-5] + ".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dfd)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be starting it right now
                if not self._connect(dfd):
                    self._spawn(dfd)
                    if not self._connect(dfd):
                        raise ProviderError(f"local: the resident model did not open its socket in {self.folder}; {w.TROUBLESHOOT}")
            finally:
                os.close(lock)
        finally:
            os.close(dfd)

    def _connect(self, dfd: int) -> bool:
        """Connected to a live worker of ours (True), nothing to connect to (False), or Refused."""
        where = self.folder / self.name
        try:
            st = os.stat(self.name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        if stat.S_ISLNK(st.st_mode):
            raise Refused(f"local: {where} is a symbolic link; clawmem never follows one there (remove it, "
                          "or set local.residentMinutes = 0)")
        if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.getuid():
            raise Refused(f"local: {where} is not a socket of yours; remove it, or set local.residentMinutes = 0")
        s = unix_socket()
        try:
            s.connect(_at(dfd, self.name))
        except (ConnectionRefusedError, FileNotFoundError):
            s.close()
            return False  # stale: its worker is gone; the next start replaces it
        pid, uid = peer(s)
        if not same_user(uid):
            s.close()
            raise Refused(f"local: {where} is served by another user (uid {uid}); refused")
        # the hello's reply is read with the first request's: one round trip, not two (each one
        # waits for both processes to be scheduled, milliseconds on a busy machine)
        try:
            w._send(s.fileno(), b'{"op": "hello"}')
        except OSError:
            s.close()
            return False
        self.sock, self.server_pid, self._hello_owed = s, pid, True
        return True

    def _read_owed(self, rfd: int, watch) -> bool:
        if not self._hello_owed:
            return True
        self._hello_owed = False
        raw = w._read_frame(rfd, watch)
        if raw is None:
            return False
        self.info = json.loads(raw)
        return True

    def _spawn(self, dfd: int) -> None:
        import subprocess

        log = os.open(self.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dfd)
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "clawmem.engine.embeddings.resident", "--resident",
                 str(self.folder), self.name, str(self.path), str(self.idle_seconds)],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, start_new_session=True,
                cwd="/",  # it outlives this process: it must not keep our folder (a mount, a removed one) busy
            )
        finally:
            os.close(log)
        _STARTED.append(proc)
        self._started, self.server_pid = proc, proc.pid
        watch = self._watchdog(w.REQUEST_TIMEOUT)
        try:
            payload = w._read_frame(proc.stdout.fileno(), watch)
        except TimeoutError as exc:
            proc.kill()
            self._fail(f"{exc}; {w.TROUBLESHOOT}", kill=False)
        finally:
            proc.stdout.close()
        reply = json.loads(payload) if payload else None
        if reply is None:
            try:
                code = proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                code = None
            self._fail(w.describe_exit(code, _tail(dfd, self.log)), kill=False)
        if not reply.get("ok"):
            self._load_error = f"local: {reply.get('error')}"
            raise ProviderError(self._load_error)
        _record_identity(dfd, self.path, self.identity, self.state)

    def _ask(self, req: dict, timeout: float, with_body: bool) -> tuple[dict, bytes]:
        try:
            return super()._ask(req, timeout, with_body)
        except _Gone:  # it left between two requests: reach (or start) the next one, once
            self._close()
            self._start(1)
        try:
            return super()._ask(req, timeout, with_body)
        except _Gone:
            self._close()
            raise ProviderError(f"local: the resident model keeps exiting; {w.TROUBLESHOOT}") from None

    def _log_tail(self) -> str:
        try:
            dfd = open_folder(self.folder, create=False)
        except Refused:
            return ""
        try:
            return _tail(dfd, self.log)
        finally:
            os.close(dfd)

    def _crash_in_log(self, tail: str | None = None) -> str | None:
        """The crash the worker's log names (faulthandler's last words), if it crashed."""
        tail = self._log_tail() if tail is None else tail
        m = re.search(r"Fatal Python error: ([A-Za-z -]+)", tail)
        if m and m.group(1).strip() in _FATAL:
            import signal

            return w.describe_exit(-getattr(signal, _FATAL[m.group(1).strip()]), tail)
        return None

    def _death(self) -> str:
        """Why the worker stopped answering: _Gone when it left on purpose, else its crash."""
        pid = self.server_pid
        _wait_gone([pid], 5)
        tail = self._log_tail()
        lines = [line for line in tail.splitlines() if line.strip()]
        if lines and lines[-1].startswith(_EXITING):
            raise _Gone
        crash = self._crash_in_log(tail)
        if crash:
            return crash
        if lines and lines[-1].startswith(_KILLED):  # another client's watchdog, not the kernel
            return f"local model stopped answering and was stopped ({lines[-1][len(_KILLED):].strip()}); {w.TROUBLESHOOT}"
        if _alive(pid):
            return f"local model stopped answering and was stopped; {w.TROUBLESHOOT}"
        import signal

        return w.describe_exit(-signal.SIGKILL, tail)

    def _kill(self) -> None:
        pid = self.server_pid
        if _alive(pid):
            import signal

            self._note_kill()
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            _wait_gone([pid], 5)
        self._close()

    def _note_kill(self) -> None:
        """Say in the worker's log that clawmem kills it: a client waiting on it meanwhile then
        names that, not a SIGKILL from the kernel ("out of memory?")."""
        try:
            dfd = open_folder(self.folder, create=False)
        except Refused:
            return
        try:
            fd = os.open(self.log, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)
            try:
                os.write(fd, f"\n{_KILLED} it stopped answering, and clawmem pid {os.getpid()} stopped it\n".encode())
            finally:
                os.close(fd)
        except OSError:
            pass
        finally:
            os.close(dfd)

    def _close(self) -> None:
        self._hello_owed = False
        s, self.sock = self.sock, None
        if s is not None:
            s.close()

    def stop(self, force: bool = False) -> None:
        """This process lets go of the worker; the worker stays for the others (see _kill)."""
        self._close()


# ---------------------------------------------------------------------------- seeing and stopping


def _each(command: str) -> list[dict]:
    """Send `command` to every resident worker of this user; what each answers."""
    folder = runtime_dir()
    try:
        dfd = open_folder(folder, create=False)
    except Refused:
        return []
    out = []
    try:
        for name in sorted(os.listdir(dfd)):
            if not (name.startswith("m-") and name.endswith(".sock")):
                continue
            try:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISSOCK(st.st_mode):
                continue
            s = unix_socket()
            end = time.monotonic() + 5

            def watch() -> None:  # a stopped (SIGSTOP) worker does not hold `status` up
                if time.monotonic() > end:
                    raise TimeoutError

            try:
                s.connect(_at(dfd, name))
                pid, uid = peer(s)
                if not same_user(uid):
                    continue
                w._send(s.fileno(), json.dumps({"op": command}).encode())
                raw = w._read_frame(s.fileno(), watch)
                if raw:
                    out.append({**json.loads(raw), "pid": pid, "socket": str(folder / name)})
            except (OSError, ValueError, TimeoutError):
                continue
            finally:
                s.close()
    finally:
        os.close(dfd)
    return out


def resident_models() -> list[dict]:
    """The resident workers up now: pid, model, rssBytes, idleSeconds, idleLimit, clients, socket."""
    return _each("status")


def stop_resident_models(wait: float = 5.0) -> list[dict]:
    """End every resident worker of this user; the ones that were told to stop."""
    stopped = _each("stop")
    _wait_gone([s["pid"] for s in stopped], wait)
    return stopped


if __name__ == "__main__":  # started by ResidentHost._spawn: --resident FOLDER NAME MODEL IDLE_SECONDS
    serve(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]))
