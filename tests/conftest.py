"""Shared fixtures: every test runs with its own config, data, cache and state folders and
its own HOME, so nothing reads or writes the developer's real files (or ../shared)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from pathlib import Path

import pytest

ENV_KEYS = ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "VOYAGE_API_KEY", "MISTRAL_API_KEY", "OLLAMA_API_KEY", "CLAWMEM_CONFIG",
            "CLAWMEM_WORKSPACE", "CLAWMEM_AGENT", "OPENCLAW_STATE_DIR", "HF_ENDPOINT", "NO_COLOR", "TEXTUAL_THEME")


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var, sub in (("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_CACHE_HOME", "cache"), ("XDG_STATE_HOME", "state"),
                     ("XDG_RUNTIME_DIR", "run")):
        monkeypatch.setenv(var, str(tmp_path / sub))
    for key in ENV_KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("TZ", "UTC")
    import time

    time.tzset()
    yield
    if (tmp_path / "run" / "clawmem").exists():  # no resident model outlives its test
        from clawmem.engine.embeddings.resident import stop_resident_models

        stop_resident_models()


@pytest.fixture
def workspace(tmp_path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    return ws


@pytest.fixture
def make_engine(workspace):
    """Engine over the test workspace; keyword-only unless overrides name a provider."""
    from clawmem.engine import Engine, load_config

    made = []

    def make(overrides: dict | None = None, *, config_path=None, persistent=False, ws: Path | None = None):
        cfg = load_config(config_path, workspace=str(ws or workspace), overrides={"provider": "none", **(overrides or {})})
        eng = Engine(cfg, persistent=persistent)
        made.append(eng)
        return eng

    yield make
    for eng in made:
        eng.close()


# ----------------------------------------------------------------------------- embeddings


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """A tiny real BERT GGUF (bag-of-words similarities), generated once per session."""
    from tinymodel import make

    return make(tmp_path_factory.mktemp("model") / "tiny-bert.gguf")


@pytest.fixture
def embed_server():
    """Our own OpenAI/Gemini/Voyage-speaking embeddings server on 127.0.0.1."""
    from embed_server import EmbedServer

    server = EmbedServer()
    yield server
    server.close()


# ----------------------------------------------------------------------------- the fleet's PostgreSQL


class FleetServer:
    """The session's PostgreSQL: the owner's URL, and `clawmem fleet` run where it keeps its data."""

    def __init__(self, url: str, env: dict):
        self.url, self.env = url, env

    def cli(self, *args: str):
        from helpers import run_cli

        return run_cli(*args, env=self.env)


@pytest.fixture(scope="session")
def pg():
    """One PostgreSQL for the session, started and stopped with the real `clawmem fleet` commands,
    as a user's are: its config names the server's folder ([fleet] serverDir), which `fleet up`
    creates (as root: with a copy of the wheel's programs, given to the server's user) and
    `fleet down --purge` removes. The test's home is private (0700) and nothing opens it: the
    server never has to reach into it, nor into this clone's virtual environment."""
    root = Path(tempfile.mkdtemp(prefix="clawmem-fleet-test-"))
    server_dir = Path(tempfile.gettempdir()) / f"clawmem-fleet-test-server-{uuid.uuid4().hex[:12]}"
    env = {"HOME": str(root), **{var: str(root / sub) for var, sub in (("XDG_DATA_HOME", "data"), ("XDG_STATE_HOME", "state"),
                                                                       ("XDG_CONFIG_HOME", "config"), ("XDG_CACHE_HOME", "cache"))}}
    (root / "config" / "clawmem").mkdir(parents=True)
    (root / "config" / "clawmem" / "config.toml").write_text(f'[fleet]\nserverDir = "{server_dir}"\n')
    server = FleetServer("", env)
    try:
        up = server.cli("fleet", "up", "--json")
        assert up.returncode == 0, up.stderr
        server.url = json.loads(up.stdout)["url"]
        yield server
    finally:
        down = server.cli("fleet", "down", "--purge")
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(server_dir, ignore_errors=True)  # only when --purge failed (said below)
    assert down.returncode == 0 and not server_dir.exists(), down.stderr


@pytest.fixture
def db(pg):
    """A fresh, empty database on the session's server (the first push or grant creates the
    extension and the tables): the owner's URL."""
    import psycopg

    name = "t" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute(f"create database {name}")
    url = pg.url.rsplit("/", 1)[0] + "/" + name
    yield url
    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute(f"drop database {name} with (force)")


@pytest.fixture
def uid():
    """A suffix for agent names: roles are shared by every database of the server."""
    return uuid.uuid4().hex[:6]


# ----------------------------------------------------------------------------- the fast lane

# `pytest -m "not slow"` is the loop of a change; CI runs everything. Slow are whole files whose
# every test drives a real app, terminal, browser, server or process kill, and any test that
# drives the app or starts a real model worker or PostgreSQL (by the fixture it takes), plus
# single tests marked `@pytest.mark.slow` where they are.
SLOW_FILES = {
    "tui/test_snapshots.py", "tui/test_e2e_tmux.py", "tui/test_serve.py", "tui/test_app_pilot.py", "tui/test_file_safety.py",
    "tui/test_app_daily.py", "tui/test_history.py", "tui/test_promote_screen.py", "tui/test_small_terminal.py",
    "test_local_worker.py", "test_mcp.py", "test_sync_processes.py", "test_resident_model.py", "test_crash_resume.py",
}
SLOW_FIXTURES = {"tiny_model", "pg", "db", "make_app"}
TESTS = Path(__file__).parent


def pytest_collection_modifyitems(config, items):
    for item in items:
        rel = Path(str(item.fspath)).relative_to(TESTS).as_posix()
        if rel.startswith("faults/") or rel in SLOW_FILES or SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
