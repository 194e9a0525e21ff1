"""Watcher heartbeat: how `status` knows whether a sync daemon is keeping the index fresh."""

from __future__ import annotations

import json
import os
# _thread, not threading: the same lock/local/ident, without threading's import (~1 ms of every search)
import _thread
import time
from pathlib import Path

from .. import paths

HEARTBEAT_SECONDS = 10.0


def heartbeat_path(cfg) -> Path:
    # one per index (agent and workspace): a watcher of another workspace is not this one's
    return paths.state_dir() / f"watch-{cfg.store_path().stem}.json"


def write_heartbeat(cfg, state: str = "running", dirty: bool | None = None) -> None:
    """`dirty`: whether the watcher has heard of changes it has not indexed yet (None: it does
    not watch the files, so it cannot tell)."""
    p = heartbeat_path(cfg)
    paths.private_dir(p.parent)
    tmp = p.with_suffix(f".{os.getpid()}.{_thread.get_ident()}.tmp")  # the watcher and the heartbeat threads both write
    tmp.write_text(json.dumps({"pid": os.getpid(), "at": time.time(), "state": state, "workspace": str(cfg.workspace), "dirty": dirty}))
    os.replace(tmp, p)


def clear_heartbeat(cfg) -> None:
    p = heartbeat_path(cfg)
    try:
        data = json.loads(p.read_text())
        if data.get("pid") == os.getpid():
            write_heartbeat(cfg, "stopped")
    except (OSError, ValueError):
        pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def read_heartbeat(cfg) -> str:
    """running / stopped / unknown (never seen a watcher for this agent)."""
    return _read(cfg)[0]


def watcher_says_dirty(cfg) -> bool:
    """True when a running watcher has heard of changes not indexed yet: in-place edits too,
    which a search's own cheap look (health.Health.seen_behind) cannot see."""
    state, data = _read(cfg)
    return state == "running" and data.get("dirty") is True


def _read(cfg) -> tuple[str, dict]:
    try:
        data = json.loads(heartbeat_path(cfg).read_text())
    except FileNotFoundError:
        return "unknown", {}
    except (OSError, ValueError):
        return "unknown", {}
    if not isinstance(data, dict):
        return "unknown", {}
    if data.get("state") != "running" or not _alive(int(data.get("pid", 0))):
        return "stopped", data
    if time.time() - float(data.get("at", 0)) > 3 * HEARTBEAT_SECONDS:
        return "stopped", data  # alive but not beating: a stalled watcher is not a running one
    return "running", data
