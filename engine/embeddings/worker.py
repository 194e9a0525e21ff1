"""The local model runs in a worker process of its own, so a native crash cannot take clawmem down.

llama.cpp is C++: an instruction the CPU lists but the (virtual) machine does not allow, an
assertion, or the kernel's out-of-memory killer ends the whole process that holds the model.
Here that process is a worker (`python -m clawmem.engine.embeddings.worker`) that owns one
model; the app, `watch`, the MCP server and the CLI talk to it over a pipe, and it ends when
that pipe closes. Every engine in a process shares one worker per model file (`local.host_for`), so
ten agents cost one loaded model. With `[local] residentMinutes` > 0 (the default) the worker
is instead the user's resident one, shared by every clawmem process (resident.py); the same
frames then travel over its Unix socket.

When the worker dies or stops answering, the caller gets a ProviderError saying what happened
("local model crashed: SIGILL in llama.cpp …"), which the indexer and search already turn into
a disclosed keyword fallback. The failure is written to clawmem's state folder with a time
before which nobody tries again (growing with each failure), so a model that crashes on every
call is not restarted in a loop by every `clawmem search`; a success clears it.

Wire format, both ways: frames of a 4-byte big-endian length and a payload. A request is one
JSON frame; a reply is a JSON frame, and for `embed` a second frame with the vectors as raw
float32 (only for the texts whose `present` flag is true).
"""

from __future__ import annotations

import _thread
import json
import os
import select
from array import array
import sys
import time
from collections import deque
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from .base import ProviderError

if TYPE_CHECKING:
    import subprocess

# signal, subprocess, struct and threading load where they are used: a search that reaches a
# warm resident model (resident.py) needs none of them (~3 ms of imports on every search)

TROUBLESHOOT = "see docs/troubleshooting.md"
# A slow worker on a starved machine is not a hung one: a request is given up when the worker
# has used no CPU for STALL_TIMEOUT (stopped, deadlocked, waiting on something that never comes)
# or, busy or not, after REQUEST_TIMEOUT ("5 min for local work"; 4 passages take ~0.3 s idle).
STALL_TIMEOUT = 60.0
REQUEST_TIMEOUT = 300.0
PASSAGES_PER_REQUEST = 4  # a query waits for at most this many passages (~0.3 s with e5-small)
RETRY_AFTER = (60, 300, 1800, 3600)  # seconds before trying a failed model again, by failures so far

HEADER = 4  # bytes of a frame's length, big-endian


# ---------------------------------------------------------------------------- the worker side


def _send(fd: int, payload: bytes) -> None:
    data = len(payload).to_bytes(HEADER, "big") + payload
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _read_frame(fd: int, watch: "Callable[[], None] | None" = None) -> bytes | None:
    """One frame's payload, None at end of file; `watch` as for _read_n (None: wait forever)."""
    head = _read_n(fd, HEADER, watch)
    return None if head is None else _read_n(fd, int.from_bytes(head, "big"), watch)


def _read_n(fd: int, n: int, watch: "Callable[[], None] | None") -> bytes | None:
    """n bytes from fd, None at end of file; `watch` is called every second while nothing
    comes and raises TimeoutError to give up."""
    chunks, got = [], 0
    while got < n:
        if watch is not None:
            while not select.select([fd], [], [], 1.0)[0]:
                watch()
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def serve() -> None:
    """The worker's loop: load once, then embed until the pipe closes."""
    import signal

    from .llama_model import Embedder, LoadError

    # No PR_SET_PDEATHSIG: Linux sends it when the *thread* that started the worker ends (a
    # Textual or anyio worker thread), not the process. The pipe is enough: when clawmem exits,
    # however it exits, stdin reaches end of file and the loop below ends.
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is clawmem's to handle, not ours
    proto_in, proto_out = os.dup(0), os.dup(1)
    os.dup2(2, 1)  # whatever llama.cpp prints must not corrupt the replies
    model: Embedder | None = None
    while True:
        raw = _read_frame(proto_in)
        if raw is None:
            break
        req = json.loads(raw)
        op = req.get("op")
        try:
            if op == "load":
                model = Embedder(req["path"], req.get("threads") or 1)
                reply = {"ok": True, "dims": model.dims, "limit": model.limit, "system": model.system_info()}
                _send(proto_out, json.dumps(reply).encode())
            elif op == "embed" and model is not None:
                head, body = embed_reply(model, req)
                _send(proto_out, head)
                if body is not None:
                    _send(proto_out, body)
            else:
                _send(proto_out, json.dumps({"ok": False, "error": f"unknown request {op!r}"}).encode())
        except LoadError as exc:
            _send(proto_out, json.dumps({"ok": False, "load": True, "error": str(exc)}).encode())
    if model is not None:
        model.close()


def embed_reply(model, req: dict) -> tuple[bytes, bytes | None]:
    """The reply frames to an embed request: the JSON head, and the vectors (None on an error)."""
    import numpy as np

    from .base import one_line

    try:
        model.use_threads(req.get("threads") or 1)
        vecs, tokens = [], []
        for text in req["texts"]:
            v, n = model.embed(text)
            vecs.append(v)
            tokens.append(n)
    except (ValueError, RuntimeError) as exc:  # llama-cpp-python's own errors: the process is fine
        return json.dumps({"ok": False, "error": one_line(exc)}).encode(), None
    present = [v is not None for v in vecs]
    body = b"".join(np.asarray(v, dtype=np.float32).tobytes() for v in vecs if v is not None)
    return json.dumps({"ok": True, "present": present, "tokens": tokens}).encode(), body


# ---------------------------------------------------------------------------- failures, shared


def build_identity() -> str:
    """Which llama-cpp-python build is installed (its libraries' sizes and times), read without
    importing it: rebuilding it is how a crash gets fixed, and must clear the crash record."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("llama_cpp")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.origin:
        return "none"
    lib = Path(spec.origin).parent / "lib"
    try:
        entries = sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in os.scandir(lib) if e.is_file())
    except OSError:
        return "unknown"
    return ",".join(f"{n}:{s}:{m}" for n, s, m in entries)


class Failures:
    """Crash records in the state folder: {key: {reason, at, retryAt, count}}, key = model + build."""

    def __init__(self, path: Path | None = None):
        if path is None:
            from .. import paths

            path = paths.state_dir() / "local-model-failures.json"
        self.path = path
        self._lock = _thread.allocate_lock()

    def _read(self) -> dict:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def _write(self, data: dict) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:
            pass  # the record only saves restarts; failing to keep it costs a retry, nothing else

    def get(self, key: str) -> dict | None:
        rec = self._read().get(key)
        return rec if isinstance(rec, dict) else None

    @staticmethod
    def holds(rec: dict) -> bool:
        """Whether the failure still keeps the model from being started."""
        return rec.get("retryAt", 0) > time.time()

    def all(self) -> dict:
        return self._read()

    def record(self, key: str, reason: str) -> dict:
        with self._lock:
            data = self._read()
            count = int((data.get(key) or {}).get("count", 0)) + 1
            now = time.time()
            wait = RETRY_AFTER[min(count, len(RETRY_AFTER)) - 1]
            data[key] = {"reason": reason, "at": now, "retryAt": now + wait, "count": count}
            self._write(data)
            return data[key]

    def clear(self, key: str) -> None:
        with self._lock:
            data = self._read()
            if data.pop(key, None) is not None:
                self._write(data)


def describe_exit(returncode: int | None, stderr_tail: str) -> str:
    """Why the worker died, in one line a user can act on."""
    import signal

    last = next((line.strip() for line in reversed(stderr_tail.splitlines()) if line.strip()), "")
    if returncode is not None and returncode < 0:
        sig = -returncode
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        if sig == signal.SIGILL:
            return (f"local model crashed: SIGILL in llama.cpp (an instruction this machine does not allow; "
                    f"rebuild llama-cpp-python portably); {TROUBLESHOOT}")
        if sig == signal.SIGKILL:
            return f"local model process was killed (SIGKILL; out of memory?); {TROUBLESHOOT}"
        if sig in (signal.SIGSEGV, signal.SIGBUS):  # what a native build on a VM that hides AVX-512/AMX often does
            return f"local model crashed: {name} in llama.cpp (if every embedding crashes, rebuild llama-cpp-python portably); {TROUBLESHOOT}"
        detail = f": {last[:160]}" if last and sig == signal.SIGABRT else ""
        return f"local model crashed: {name} in llama.cpp{detail}; {TROUBLESHOOT}"
    detail = f": {last[:160]}" if last else ""
    return f"local model process exited unexpectedly (code {returncode}){detail}; {TROUBLESHOOT}"


# ---------------------------------------------------------------------------- the client side


def cpu_seconds(pid: int | None) -> float | None:
    """CPU time a process has used so far (Linux), None where it cannot be read: the watchdog's
    sign that a slow worker is working, not hung."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, TypeError):
        return None


class Turns:
    """One request at a time, and a query (urgent) goes before the next slice of passages: a
    search typed while indexing waits for a few chunks, not a batch. The resident worker uses
    the same rule across the processes it serves.

    A condition variable made of _thread locks (what threading.Condition is): a one-shot
    search takes one turn, and threading's import cost it ~1 ms."""

    def __init__(self) -> None:
        self._lock = _thread.allocate_lock()  # guards the three fields
        self._busy = False
        self._urgent = 0  # queries waiting for their turn
        self._waiting: list = []  # a held lock per waiting thread; a turn's end releases them all

    @contextmanager
    def turn(self, urgent: bool):
        with self._lock:
            self._urgent += urgent
        try:
            while True:
                with self._lock:
                    if not self._busy and (urgent or not self._urgent):
                        self._busy = True
                        break
                    gate = _thread.allocate_lock()
                    gate.acquire()
                    self._waiting.append(gate)
                gate.acquire()  # until a turn ends; then look again
        finally:
            with self._lock:
                self._urgent -= urgent
        try:
            yield
        finally:
            with self._lock:
                self._busy = False
                waiting, self._waiting = self._waiting, []
            for gate in waiting:
                gate.release()


class ModelHost:
    """One worker process serving one model file, shared by every provider of this process."""

    resident = False

    def __init__(self, path: Path, identity: str, failures: Failures | None = None):
        self.path = path
        self.identity = identity
        self.key = f"{identity}|{path.name}|{build_identity()}"
        self.failures = failures or Failures()
        self.users = 0
        self.proc: subprocess.Popen | None = None
        self.info: dict = {}  # the load reply: dims, limit, system
        self._turns = Turns()
        self._stderr: deque[str] = deque(maxlen=40)
        self._load_error: str | None = None
        self._clear_on_success = False

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc and self.proc.poll() is None else None

    def _check_held(self) -> None:
        """Before a start: ProviderError while a recorded failure holds the model back. A start
        after a recorded failure clears the record on its first success (read once here, not on
        every request)."""
        held = self.failures.get(self.key)
        self._clear_on_success = held is not None
        if held and self.failures.holds(held):
            when = time.strftime("%H:%M:%S", time.localtime(held["retryAt"]))
            raise ProviderError(f"{held['reason']} (not retried before {when})")

    def _start(self, threads: int) -> None:
        import subprocess
        import threading

        self._check_held()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "clawmem.engine.embeddings.worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
        )
        self._stderr.clear()
        threading.Thread(target=self._drain, args=(self.proc,), name="clawmem-model-stderr", daemon=True).start()
        reply, _ = self._ask({"op": "load", "path": str(self.path), "threads": threads}, REQUEST_TIMEOUT, with_body=False)
        if not reply.get("ok"):
            self._load_error = f"local: {reply.get('error')}"
            self.stop()
            raise ProviderError(self._load_error)
        self.info = reply

    def _drain(self, proc: subprocess.Popen) -> None:
        for line in iter(proc.stderr.readline, b""):
            self._stderr.append(line.decode("utf-8", "replace"))

    def _worker_pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def _cpu_seconds(self) -> float | None:
        return cpu_seconds(self._worker_pid())

    def _watchdog(self, limit: float) -> Callable[[], None]:
        start = last_progress = time.monotonic()
        last_cpu = self._cpu_seconds()

        def watch() -> None:
            nonlocal last_progress, last_cpu
            now = time.monotonic()
            cpu = self._cpu_seconds()
            if cpu is None or cpu != last_cpu:
                last_cpu, last_progress = cpu, now
            if now - last_progress > STALL_TIMEOUT:
                raise TimeoutError(f"local model stopped working (no CPU time for {STALL_TIMEOUT:.0f} s) and was stopped")
            if now - start > limit:
                raise TimeoutError(f"local model did not answer within {limit:.0f} s and was stopped")

        return watch

    def _fds(self) -> tuple[int, int]:
        """(write, read) file descriptors of the conversation with the worker."""
        return self.proc.stdin.fileno(), self.proc.stdout.fileno()

    def _ask(self, req: dict, timeout: float, with_body: bool) -> tuple[dict, bytes]:
        wfd, rfd = self._fds()
        watch = self._watchdog(timeout)
        try:
            _send(wfd, json.dumps(req).encode())
            payload = _read_frame(rfd, watch) if self._read_owed(rfd, watch) else None
            reply = json.loads(payload) if payload is not None else None
            body = b""
            if reply is not None and with_body and reply.get("ok"):
                body = _read_frame(rfd, watch)
                if body is None:
                    reply = None
        except TimeoutError as exc:
            self._fail(f"{exc}; {TROUBLESHOOT}", kill=True)
        except (BrokenPipeError, ValueError, OSError):
            reply = None
        if reply is None:
            self._fail(self._death(), kill=True)
        return reply, body or b""

    def _read_owed(self, rfd: int, watch: Callable[[], None]) -> bool:
        """Read the replies owed to requests sent ahead of this one (resident.py's hello);
        False if the worker hung up instead."""
        return True

    def _death(self) -> str:
        """Why the worker stopped answering, once it has."""
        import subprocess

        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        time.sleep(0.05)  # let the stderr reader catch the last words
        return describe_exit(code, "".join(self._stderr))

    def _kill(self) -> None:
        self.stop(force=True)

    def _fail(self, reason: str, kill: bool) -> None:
        if kill:
            self._kill()
        self.failures.record(self.key, reason)
        raise ProviderError(reason)

    def _turn(self, urgent: bool):
        return self._turns.turn(urgent)

    def embed(self, texts: list[str], threads: int, urgent: bool = False) -> tuple[list, list[int]]:
        """(vectors as array('f') or None per text, tokens per text); passages go
        PASSAGES_PER_REQUEST at a time."""
        if self._load_error:
            raise ProviderError(self._load_error)
        vectors: list = []
        tokens: list[int] = []
        for i in range(0, len(texts), PASSAGES_PER_REQUEST):
            with self._turn(urgent):
                v, t = self._embed_now(texts[i : i + PASSAGES_PER_REQUEST], threads, urgent)
            vectors += v
            tokens += t
        return vectors, tokens

    def _ensure(self, threads: int) -> None:
        """A running worker, started if there is none."""
        if self.proc is not None and self.proc.poll() is not None:  # died between two requests
            self._fail(describe_exit(self.proc.returncode, "".join(self._stderr)), kill=True)
        if self.proc is None:
            self._start(threads)

    def _embed_now(self, texts: list[str], threads: int, urgent: bool = False) -> tuple[list, list[int]]:
        self._ensure(threads)
        # `urgent`: a resident worker, serving several processes, also lets queries go first
        reply, body = self._ask({"op": "embed", "texts": texts, "threads": threads, "urgent": urgent}, REQUEST_TIMEOUT, with_body=True)
        if not reply.get("ok"):
            raise ProviderError(f"local: {self.path.stem} failed to embed: {reply.get('error')}")
        if self._clear_on_success:
            self.failures.clear(self.key)
            self._clear_on_success = False
        # array('f') rows, not numpy: a one-shot search's query vector never needs it (~0.1 s)
        step, at, vectors = 4 * self.info["dims"], 0, []
        for ok in reply["present"]:
            vectors.append(array("f", body[at : at + step]) if ok else None)
            at += step if ok else 0
        return vectors, reply["tokens"]

    def stop(self, force: bool = False) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        import subprocess

        try:
            if force:
                proc.kill()
            else:
                proc.stdin.close()  # the worker ends its loop at end of file
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        for f in (proc.stdin, proc.stdout, proc.stderr):
            try:
                f.close()
            except OSError:
                pass


if __name__ == "__main__":
    serve()
