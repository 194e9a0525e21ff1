"""One index per agent and workspace (SPEC §1): two workspaces under one agent id each keep
their own index; an index from before that rule is adopted by its workspace without
re-embedding; an explicit store.path is honoured and never serves another workspace's hits."""

from __future__ import annotations

import json
import os
from pathlib import Path

from clawmem.engine import load_config
from clawmem.engine.index.store import Store
from helpers import run_cli, write


def cli(ws: Path, *args: str, config: Path | None = None):
    env = {"CLAWMEM_CONFIG": str(config)} if config else None
    return run_cli("--workspace", str(ws), *args, env=env)


def search_paths(ws: Path, query: str, config: Path) -> list[str]:
    res = cli(ws, "search", query, "--json", config=config)
    assert res.returncode == 0, res.stderr
    return [r["path"] for r in json.loads(res.stdout)["results"]]


def test_two_workspaces_one_agent_keep_both_indexes(tmp_path):
    config = write(tmp_path / "clawmem.toml", 'provider = "none"\n[sync]\nonSearch = false\n')
    a, b = tmp_path / "a", tmp_path / "b"
    write(a / "memory" / "2026-01-01.md", "albatross sightings on the pier\n")
    write(b / "memory" / "2026-01-02.md", "bittern calls in the reeds\n")
    assert cli(a, "index", "--quiet", config=config).returncode == 0
    assert cli(b, "index", "--quiet", config=config).returncode == 0
    assert search_paths(a, "albatross", config) == ["memory/2026-01-01.md"]
    assert search_paths(b, "bittern", config) == ["memory/2026-01-02.md"]
    assert search_paths(b, "albatross", config) == []  # never another workspace's hits
    sa = json.loads(cli(a, "status", "--json", config=config).stdout)
    sb = json.loads(cli(b, "status", "--json", config=config).stdout)
    assert sa["index"]["path"] != sb["index"]["path"]
    assert (sa["workspace"], sa["index"]["workspace"], sa["index"]["files"]) == (str(a), str(a), 1)
    assert (sb["workspace"], sb["index"]["workspace"], sb["agentId"]) == (str(b), str(b), "main")
    assert sa["freshness"]["dirty"] is False and sb["freshness"]["dirty"] is False
    assert f"Workspace: {a}" in cli(a, "status", config=config).stdout


def test_same_workspace_through_a_symlink_is_one_index(tmp_path, workspace):
    link = tmp_path / "link"
    link.symlink_to(workspace)
    assert load_config(None, workspace=str(link)).store_path() == load_config(None, workspace=str(workspace)).store_path()


def legacy_from(eng) -> Path:
    """Turn an index built by this clawmem into one as an older clawmem left it: at
    index/<agent>.sqlite, without the workspace in its meta."""
    st = Store(eng.index_path, write=True)
    st.conn.execute("delete from meta where key = 'workspace'")
    st.close()
    legacy = eng.index_path.with_name("main.sqlite")
    os.replace(eng.index_path, legacy)
    return legacy


def test_legacy_index_is_adopted_by_its_workspace_without_embedding_again(workspace, make_engine, embed_server, tmp_path):
    write(workspace / "memory" / "2026-01-01.md", "".join(f"line {i} about cormorants\n" for i in range(50)))
    write(workspace / "MEMORY.md", "the user keeps ducks\n")
    remote = {"provider": "openai", "remote.baseUrl": f"{embed_server.url}/v1", "remote.apiKey": embed_server.api_key,
              "cache.enabled": False}  # only the adoption may spare the embedding
    eng = make_engine(remote)
    list(eng.index())
    embedded = len(embed_server.inputs())
    assert embedded > 0
    eng.close()
    legacy = legacy_from(eng)
    # another workspace under the same agent id leaves it alone and builds its own
    other = tmp_path / "other"
    write(other / "MEMORY.md", "unrelated\n")
    eng_other = make_engine(remote, ws=other)
    list(eng_other.index())
    assert legacy.exists() and eng_other.index_path != eng.index_path
    # its own workspace adopts it: a search finds it at once, the next index embeds nothing
    eng2 = make_engine(remote)
    assert eng2.search("cormorants")["mode"] == "hybrid"
    assert not legacy.exists() and eng2.index_path.exists()
    embed_server.reset()  # forget the query's embedding
    events = list(eng2.index())
    assert embed_server.inputs() == [], "adoption must not embed again"
    assert eng2.status()["index"]["workspace"] == str(workspace)
    assert not any("full rebuild" in getattr(e, "message", "") for e in events)


def test_the_writer_adopts_and_says_so(workspace, make_engine):
    write(workspace / "MEMORY.md", "egrets\n")
    eng = make_engine()
    list(eng.index())
    eng.close()
    legacy = legacy_from(eng)
    eng2 = make_engine()
    messages = [getattr(e, "message", "") for e in eng2.index()]
    assert any(f"the index at {legacy} was built for this workspace" in m for m in messages)
    assert eng2.search("egrets")["results"]


def test_explicit_store_path_is_honoured_and_never_serves_another_workspace(tmp_path):
    index = tmp_path / "idx" / "{agentId}.sqlite"
    config = write(tmp_path / "clawmem.toml", f'provider = "none"\nstore.path = "{index}"\n[sync]\nonSearch = false\n')
    a, b = tmp_path / "a", tmp_path / "b"
    write(a / "MEMORY.md", "albatross\n")
    write(b / "MEMORY.md", "bittern\n")
    assert cli(a, "index", "--quiet", config=config).returncode == 0
    assert (tmp_path / "idx" / "main.sqlite").is_file()
    assert search_paths(a, "albatross", config) == ["MEMORY.md"]
    res = cli(b, "search", "albatross", config=config)
    assert res.returncode == 3 and "Traceback" not in res.stderr
    assert f"built for workspace {a}" in res.stderr and "store.path" in res.stderr
    res = cli(b, "index", config=config)
    assert res.returncode == 0 and f"the index was built for workspace {a}" in res.stderr
    assert search_paths(b, "bittern", config) == ["MEMORY.md"]


def test_watcher_heartbeat_is_per_workspace(tmp_path):
    from clawmem.engine.index.heartbeat import read_heartbeat, write_heartbeat

    a = load_config(None, workspace=str(tmp_path / "a"))
    b = load_config(None, workspace=str(tmp_path / "b"))
    write_heartbeat(a)
    assert (read_heartbeat(a), read_heartbeat(b)) == ("running", "unknown")
