"""Shared fixtures: every test runs with its own config, data, cache and state folders and
its own HOME, so nothing reads or writes the developer's real files (or ../shared)."""

from __future__ import annotations

from pathlib import Path

import pytest

ENV_KEYS = ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "VOYAGE_API_KEY", "MISTRAL_API_KEY", "OLLAMA_API_KEY", "CLAWMEM_CONFIG",
            "CLAWMEM_WORKSPACE", "CLAWMEM_AGENT", "OPENCLAW_STATE_DIR", "HF_ENDPOINT", "NO_COLOR", "TEXTUAL_THEME")


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var, sub in (("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_CACHE_HOME", "cache"), ("XDG_STATE_HOME", "state")):
        monkeypatch.setenv(var, str(tmp_path / sub))
    for key in ENV_KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("TZ", "UTC")
    import time

    time.tzset()
    yield


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
