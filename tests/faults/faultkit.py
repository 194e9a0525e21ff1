"""Shared pieces of the fault suite: a generated workspace, its fingerprint, the invariants a
search relies on after any fault, and a runner for the real `clawmem` command.

The invariant check itself is test_crash_resume.check (reused, not copied).
"""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys
from pathlib import Path

from helpers import write

ALLOWED_DATA = (".sqlite", ".sqlite-wal", ".sqlite-shm", ".sqlite.lock")
REBUILD = (".sqlite.rebuild", ".sqlite.rebuild-wal", ".sqlite.rebuild-shm", ".sqlite.rebuild-journal")


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "clawmem.tui", *args]


def run(*args: str, timeout: float = 120, env: dict | None = None, prefix: list[str] = ()) -> subprocess.CompletedProcess:
    full = dict(os.environ, **(env or {}))
    return subprocess.run([*prefix, *cli(*args)], capture_output=True, text=True, timeout=timeout, env=full)


def one_line_error(res: subprocess.CompletedProcess) -> str:
    """The error of a failed command: exactly one `clawmem: …` line, no traceback."""
    err = res.stderr.strip()
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.startswith("clawmem:")]
    assert len(lines) == 1, err
    return lines[0]


def token(i: int) -> str:
    return f"uniq{i}tok"


def generate(ws: Path, n: int, seed: int = 7) -> dict[int, str]:
    """n memory files: daily logs, topic notes and CJK notes, each holding one unique token.
    Returns {i: workspace-relative path}."""
    rnd = random.Random(seed)
    paths = {}
    for i in range(n):
        kind = i % 4
        if kind == 0:
            rel = f"memory/{2025 + i // 336}-{1 + (i // 28) % 12:02d}-{1 + i % 28:02d}-s{i}.md"
            body = [f"## 09:{j:02d}\n- met the ferry crew about the kiln schedule, step {j}" for j in range(rnd.randint(2, 12))]
        elif kind == 1:
            rel = f"memory/topics/t{i % 25}/note-{i}.md"
            body = [f"- fact {j}: the harbour timetable changed for route {i}" for j in range(rnd.randint(3, 30))]
        elif kind == 2:
            rel = f"memory/zh/笔记-{i}.md"
            body = [f"- 今天玩成语接龙游戏，第{j}条记录，서버에서 확인함" for j in range(rnd.randint(3, 20))]
        else:
            rel = f"memory/{2026}-{1 + (i // 28) % 12:02d}-{1 + i % 28:02d}.md" if i < 336 else f"memory/misc/m{i}.md"
            body = [f"- appended line {j} of {i}" for j in range(rnd.randint(1, 8))]
        if rel in paths.values():
            rel = rel.replace(".md", f"-{i}.md")
        write(ws / rel, f"# note {i}\n" + "\n".join(body) + f"\n- marker {token(i)}\n")
        paths[i] = rel
    write(ws / "MEMORY.md", "# Memory\n- the user prefers tea, token evergreen1\n")
    return paths


def fingerprint(ws: Path) -> dict[bytes, str]:
    """{path bytes: sha256} of every file in the workspace (names as bytes: odd ones too)."""
    out = {}
    root = os.fsencode(ws)
    for d, _dirs, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = hashlib.sha256(fh.read()).hexdigest()
    return out


def stray_files(data_dir: Path, rebuild_ok: bool, journal_ok: bool = False) -> list[str]:
    """Files in the index folder other than the index, its WAL files and lock (and an
    unfinished rebuild, which the next run resumes, when rebuild_ok: with the journal a kill
    leaves while it turns to rollback mode before the swap, replayed on resuming; and SQLite's rollback
    journal of the index, when journal_ok: a rebuilt index is swapped in in rollback mode, and
    a kill while the next writer turns it back to WAL leaves the journal of that one header
    write, which SQLite replays or discards on the next write)."""
    allowed = ALLOWED_DATA + (REBUILD if rebuild_ok else ()) + ((".sqlite-journal",) if journal_ok else ())
    out = []
    for p in sorted(data_dir.rglob("*")):
        if p.is_file() and not p.name.endswith(allowed):
            out.append(str(p))
    return out


def index_file(workspace: Path) -> Path:
    """The index file clawmem uses for `workspace` (named per agent and workspace) under the
    test's own data dir."""
    from clawmem.engine import load_config

    return load_config(None, workspace=str(workspace)).store_path()


# ----------------------------------------------------------------------------- servers


def free_port(host: str = "127.0.0.1") -> int:
    import socket

    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class Server:
    """A real `clawmem …` server process; its stdout and stderr lines are collected as they come."""

    def __init__(self, *args: str, env: dict | None = None):
        import threading

        self.lines: list[str] = []
        self.proc = subprocess.Popen(cli(*args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     env=dict(os.environ, **(env or {})))
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_line(self, text: str, limit: float = 60) -> str:
        from helpers import wait_for

        def found():
            if self.proc.poll() is not None and not any(text in ln for ln in self.lines):
                raise AssertionError(f"server exited ({self.proc.returncode}): {self.lines}")
            return next((ln for ln in self.lines if text in ln), None)

        return wait_for(found, limit, f"{text!r} from the server")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(30)
