"""Incremental indexing, rebuilds and the CLI's JSON contracts (SPEC §4, §7, §8)."""

import json
import os
import subprocess
import sys
import time

from clawmem.engine import events as ev
from clawmem.engine.index.store import Store
from helpers import run_cli, write


def finished(events):
    (f,) = [e for e in events if isinstance(e, ev.JobFinished)]
    return f


def test_incremental_skip_edit_delete(workspace, make_engine):
    a = write(workspace / "memory" / "2026-01-01.md", "alpha note\n")
    write(workspace / "memory" / "2026-01-02.md", "beta note\n")
    write(workspace / "MEMORY.md", "gamma facts\n")
    eng = make_engine()
    f = finished(list(eng.index()))
    assert (f.files_indexed, f.files_unchanged, f.files_removed) == (3, 0, 0)
    f = finished(list(eng.index()))
    assert (f.files_indexed, f.files_unchanged) == (0, 3)
    # touched without a change: hash says unchanged
    os.utime(a, ns=(time.time_ns(), time.time_ns() + 10**9))
    f = finished(list(eng.index()))
    assert (f.files_indexed, f.files_unchanged) == (0, 3)
    a.write_text("alpha note, now with delta\n")
    f = finished(list(eng.index()))
    assert f.files_indexed == 1
    assert eng.search("delta")["results"][0]["path"] == "memory/2026-01-01.md"
    (workspace / "memory" / "2026-01-02.md").unlink()
    f = finished(list(eng.index()))
    assert f.files_removed == 1
    assert eng.search("beta")["results"] == []
    st = Store(eng.index_path)
    (n_chunks,) = st.conn.execute("select count(*) from chunks").fetchone()
    (n_fts,) = st.conn.execute("select count(*) from chunks_fts").fetchone()
    assert n_chunks == n_fts == 2
    st.close()


def test_changed_chunking_rebuilds_into_a_new_file(workspace, make_engine):
    write(workspace / "MEMORY.md", "\n".join(f"line {i} about kestrels" for i in range(200)) + "\n")
    eng = make_engine()
    list(eng.index())
    ino = os.stat(eng.index_path).st_ino
    n1 = eng.status()["index"]["chunks"]
    eng2 = make_engine({"chunking.tokens": 100, "chunking.overlap": 10})
    events = list(eng2.index())
    assert any(isinstance(e, ev.Warning) and "full rebuild" in e.message and "chunkTokens" in e.message for e in events)
    assert os.stat(eng2.index_path).st_ino != ino
    assert eng2.status()["index"]["chunks"] > n1
    assert not os.path.exists(str(eng2.index_path) + ".rebuild")
    assert eng2.search("kestrels")["results"]


def test_force_rebuild_keeps_the_old_index_until_done(workspace, make_engine):
    write(workspace / "MEMORY.md", "ospreys\n")
    eng = make_engine()
    list(eng.index())
    stop_after = {"n": 0}

    def stop():  # interrupt the rebuild half way
        stop_after["n"] += 1
        return stop_after["n"] > 3

    events = list(eng.index(force=True, should_stop=stop))
    assert not finished(events).ok
    assert eng.search("ospreys")["results"], "the previous index must stay usable"
    list(eng.index(force=True))
    assert eng.search("ospreys")["results"]


def test_status_json_fields(workspace):
    write(workspace / "MEMORY.md", "hello status\n")
    assert run_cli("--workspace", str(workspace), "index").returncode == 0
    proc = run_cli("--workspace", str(workspace), "status", "--json")
    assert proc.returncode == 0, proc.stderr
    st = json.loads(proc.stdout)
    assert st["workspace"] == str(workspace) and st["agentId"] == "main"
    assert {"path", "files", "chunks", "schemaVersion"} <= set(st["index"])
    assert {"lastSync", "filesOnDisk", "filesIndexed", "filesBehind", "dirty", "watcher"} <= set(st["freshness"])
    assert st["freshness"]["dirty"] is False and st["freshness"]["watcher"] in ("running", "stopped", "unknown")
    assert {"configured", "active", "model", "reason"} <= set(st["provider"])
    assert st["vector"]["backend"] in ("sqlite-vec", "numpy") and "version" in st["vector"]
    assert st["fts"]["available"] is True
    # a change while nothing runs: status must not say clean
    write(workspace / "memory" / "2026-03-01.md", "new entry\n")
    st = json.loads(run_cli("--workspace", str(workspace), "status", "--json").stdout)
    assert st["freshness"]["dirty"] is True and st["freshness"]["filesBehind"] == 1
    text = run_cli("--workspace", str(workspace), "status").stdout
    assert "1 files behind" in text


def test_search_and_get_json_contract(workspace):
    write(workspace / "memory" / "2026-02-10.md", "# 2026-02-10\n\n- 今天玩成语接龙游戏\n- chose Postgres\n")
    assert run_cli("--workspace", str(workspace), "index").returncode == 0
    proc = run_cli("--workspace", str(workspace), "search", "成语", "--json")
    res = json.loads(proc.stdout)
    assert res["mode"] == "keyword" and res["results"][0]["path"] == "memory/2026-02-10.md"
    r = res["results"][0]
    assert r["citation"] == f"Source: memory/2026-02-10.md#L{r['startLine']}-L{r['endLine']}"
    proc = run_cli("--workspace", str(workspace), "search", "nothing-matches-this", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["results"] == []
    proc = run_cli("--workspace", str(workspace), "get", "memory/2026-02-10.md", "--from", "3", "--lines", "1", "--json")
    assert json.loads(proc.stdout) == {"path": "memory/2026-02-10.md", "text": "- 今天玩成语接龙游戏"}
    proc = run_cli("--workspace", str(workspace), "search", "Postgres")
    assert proc.returncode == 0 and "memory/2026-02-10.md:" in proc.stdout and "keyword-only" in proc.stdout


def test_search_on_a_never_indexed_workspace(workspace):
    write(workspace / "MEMORY.md", "x\n")
    proc = run_cli("--workspace", str(workspace), "search", "x", "--json")
    assert proc.returncode == 0
    res = json.loads(proc.stdout)
    assert res["results"] == [] and res["stale"] is True and "clawmem index" in res["reason"]


def test_engine_never_imports_textual_or_rich():
    code = "import sys, clawmem.engine, clawmem.engine.api, clawmem.engine.search, clawmem.engine.index.indexer, clawmem.tui.cli; " \
           "bad = [m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')]; print(bad); sys.exit(1 if bad else 0)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
