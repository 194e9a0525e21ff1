"""Fixtures for the app's tests: the real engine over a temporary workspace (keyword-only
unless a test asks for the tiny model); only the clock and animations are fixed.

Everything (workspace, config, index) lives under the test's HOME so the app shows it as
`~/…`: snapshots then never contain a temporary path.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import write
from tuikit import DAY_10, DAY_11, DAY_JAN, MEMORY, PROJECTS, build_app


@pytest.fixture(autouse=True)
def home_dirs(isolated, tmp_path, monkeypatch) -> Path:
    """Config, data, cache and state under HOME (shown as ~ by the app)."""
    home = tmp_path / "home"
    for var, sub in (("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share"), ("XDG_CACHE_HOME", ".cache"),
                     ("XDG_STATE_HOME", ".local/state")):
        monkeypatch.setenv(var, str(home / sub))
    # the index file is named by a hash of the workspace's real (temporary) path: pin it so
    # snapshots that show the index path do not change from run to run
    from clawmem.engine import config as config_mod

    monkeypatch.setattr(config_mod, "workspace_key", lambda workspace: "0123456789ab")
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)
    return home


@pytest.fixture
def ws(home_dirs) -> Path:
    """A small workspace: MEMORY.md, three daily logs over two months, one topic file."""
    root = home_dirs / "notes"
    write(root / "MEMORY.md", MEMORY)
    write(root / "memory" / "2026-02-10.md", DAY_10)
    write(root / "memory" / "2026-02-11.md", DAY_11)
    write(root / "memory" / "2026-01-20.md", DAY_JAN)
    write(root / "memory" / "projects.md", PROJECTS)
    return root


@pytest.fixture
def empty_ws(home_dirs) -> Path:
    root = home_dirs / "notes"
    (root / "memory").mkdir(parents=True)
    return root


@pytest.fixture
def make_app():
    made = []

    def make(workspace, **kw):
        app = build_app(workspace, **kw)
        made.append(app)
        return app

    yield make
    for app in made:
        app.engine.close()
