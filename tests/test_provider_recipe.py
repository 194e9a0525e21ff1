"""ARCHITECTURE.md's "add an embedding provider" recipe holds when followed literally: a module
with a Provider subclass (tests/recipes/echo_provider.py) plus one registry entry, and the
config accepts it, the plan builds it through the same door as the built-in providers, the key
is found in its own environment variable, and a real index and search use its vectors. Also:
every built-in provider is a complete Provider, and docs/embeddings.md's provider table is the one the
classes make."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import write

TESTS = Path(__file__).parent
EMBEDDINGS_PAGE = TESTS.parent / "docs" / "embeddings.md"

# a whole process: the registry entry is in place before the config reads the names, as it is
# when the entry is written in engine/provider_registry.py
PROBE = """
import json, sys
sys.path.insert(0, {tests!r})
import clawmem.engine.provider_registry as registry
registry.PROVIDERS["echo"] = "recipes.echo_provider:EchoProvider"
registry.NAMES = tuple(registry.PROVIDERS)
from clawmem.engine import Engine, load_config
cfg = load_config({config!r}, workspace={workspace!r})
eng = Engine(cfg)
try:
    list(eng.index())
    res = eng.search("herons nesting by the river")
    status = eng.status(deep=True)
    print(json.dumps({{"mode": res["mode"], "provider": res["provider"], "top": res["results"][0]["path"] if res["results"] else None,
                      "candidates": status["provider"]["candidates"]}}))
finally:
    eng.close()
"""


def test_a_provider_added_by_the_recipe_serves_an_index_and_a_search(embed_server, workspace, tmp_path):
    write(workspace / "memory" / "2026-03-01.md", "# birds\n\nherons nesting by the river again\n")
    write(workspace / "memory" / "2026-03-02.md", "# code\n\nthe build broke on the release branch\n")
    config = write(tmp_path / "echo.toml", f'provider = "echo"\n[remote]\nbaseUrl = "{embed_server.url}/v1"\n')
    env = {"ECHO_API_KEY": embed_server.api_key}
    probe = PROBE.format(tests=str(TESTS), config=str(config), workspace=str(workspace))
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, **env})
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert got["mode"] == "hybrid" and got["top"] == "memory/2026-03-01.md"
    assert got["provider"].startswith("echo")
    (echo,) = [c for c in got["candidates"] if c["name"] == "echo"]
    assert echo["usable"] and echo["keySource"] == "env ECHO_API_KEY" and echo["model"] == "echo-embed-1"
    assert {r["body"]["model"] for r in embed_server.embedding_requests()} == {"echo-embed-1"}


def test_every_registered_provider_is_a_complete_provider():
    from clawmem.engine.embeddings.base import Provider
    from clawmem.engine.provider_registry import NAMES, provider_classes

    classes = provider_classes()
    assert [c.name for c in classes] == list(NAMES)
    for cls in classes:
        assert issubclass(cls, Provider) and not getattr(cls, "__abstractmethods__", None), cls
        assert cls.config_keys and cls.request, cls.name  # the docs table's row


def test_a_provider_is_named_by_its_name_without_setting_id():
    """The recipe does not ask for `id`: it is the class's `name` (it once stayed "?" in the
    index, status and events when a provider that is not a RemoteProvider left it out)."""
    from clawmem.engine.embeddings.base import Provider
    from clawmem.engine.provider_registry import provider_classes

    class Plain(Provider):
        name = "plain"

        @classmethod
        def candidate(cls, cfg, *, primary, explicit):
            raise NotImplementedError

        def embed_passages(self, texts):
            return []

        def embed_query(self, text):
            return None

    class Renamed(Plain):
        name = "renamed"

    assert Plain().id == "plain" and Renamed().id == "renamed" and Plain().label() == "plain/?"
    assert {cls.name: cls.id for cls in provider_classes()} == {cls.name: cls.name for cls in provider_classes()}


def test_a_provider_that_leaves_out_a_method_cannot_be_made():
    from clawmem.engine.embeddings.base import Provider

    class Half(Provider):
        name = "half"

        def embed_query(self, text):
            return None

    with pytest.raises(TypeError, match="abstract"):
        Half()


def test_the_docs_provider_table_is_the_one_the_classes_make():
    from clawmem.engine.embeddings import provider_table

    assert provider_table() in EMBEDDINGS_PAGE.read_text(encoding="utf-8")


def test_the_recipe_names_every_file_a_new_provider_touches():
    """The module, the registry entry and the docs table: the three places a provider must be
    written (the docs table test above fails on a provider the page does not show)."""
    page = (TESTS.parent / "ARCHITECTURE.md").read_text(encoding="utf-8")
    recipe = page[page.index("## Recipe: add an embedding provider"):page.index("## Recipe: add a tab")]
    steps = [line.split("`")[1] for line in recipe.splitlines() if line[:3] in ("1. ", "2. ", "3. ", "4. ")]
    assert steps == ["engine/embeddings/<name>.py", "engine/provider_registry.py", "docs/embeddings.md"]
    assert "(three files)" in recipe.splitlines()[0]
