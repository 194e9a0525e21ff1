"""Where clawmem keeps its own files (never inside the workspace).

Config in the platform config dir, the index in the data dir, the embedding cache and
downloaded models in the cache dir, logs and watcher state in the state dir.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP = "clawmem"

# The XDG base directories, as platformdirs reads them on Linux and the BSDs; elsewhere
# platformdirs itself (importing it costs a `clawmem search` ~5 ms, a quarter of its imports).
_XDG = {"config": ("XDG_CONFIG_HOME", ".config"), "data": ("XDG_DATA_HOME", ".local/share"),
        "cache": ("XDG_CACHE_HOME", ".cache"), "state": ("XDG_STATE_HOME", ".local/state")}


def _user_dir(kind: str) -> Path:
    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        var, default = _XDG[kind]
        base = os.environ.get(var, "").strip()
        return Path(base or Path.home() / default) / APP
    import platformdirs

    return getattr(platformdirs, f"user_{kind}_path")(APP)


def config_dir() -> Path:
    return _user_dir("config")


def data_dir() -> Path:
    return _user_dir("data")


def cache_dir() -> Path:
    return _user_dir("cache")


def state_dir() -> Path:
    return _user_dir("state")


def default_config_file() -> Path:
    return config_dir() / "config.toml"


def openclaw_state_dir() -> Path:
    env = os.environ.get("OPENCLAW_STATE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".openclaw"


def private_dir(path: Path) -> Path:
    """Make `path` (and missing parents) owner-only: memory is private. Only folders created here
    get that mode; a folder that already exists keeps its own (a shared 1777 folder, the home
    folder, a system folder are the user's, never clawmem's to change)."""
    path = Path(path)
    missing = []
    cur = path
    while not os.path.lexists(cur) and cur != cur.parent:
        missing.append(cur)
        cur = cur.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            continue  # made meanwhile by someone else: theirs
        try:
            os.chmod(folder, 0o700)  # our own, whatever the umask
        except OSError:
            pass
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True)  # the error it raises names the path
    return path


def weaker_than_private(path: Path) -> str | None:
    """The mode of an existing file or folder clawmem uses but did not make, when others can
    read or write it (status --deep says so; clawmem itself never changes it)."""
    try:
        mode = os.stat(path).st_mode & 0o7777
    except OSError:
        return None
    return f"{mode:04o}" if mode & 0o077 else None


def log_path() -> Path:
    """clawmem's log file (logs.setup writes it; status shows where)."""
    return state_dir() / "clawmem.log"
