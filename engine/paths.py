"""Where clawmem keeps its own files (never inside the workspace).

Config in the platform config dir, the index in the data dir, the embedding cache and
downloaded models in the cache dir, logs and watcher state in the state dir.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP = "clawmem"


def config_dir() -> Path:
    return platformdirs.user_config_path(APP)


def data_dir() -> Path:
    return platformdirs.user_data_path(APP)


def cache_dir() -> Path:
    return platformdirs.user_cache_path(APP)


def state_dir() -> Path:
    return platformdirs.user_state_path(APP)


def default_config_file() -> Path:
    return config_dir() / "config.toml"


def openclaw_state_dir() -> Path:
    env = os.environ.get("OPENCLAW_STATE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".openclaw"


def private_dir(path: Path) -> Path:
    """Create `path` (and parents) readable by the owner only: memory is private."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        os.chmod(path, 0o700)
    except OSError:
        pass
    return path
