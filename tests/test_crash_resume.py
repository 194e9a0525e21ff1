"""kill -9 at any point of indexing leaves a consistent index, and the next run resumes (SPEC §6).

The indexer is a real subprocess killed with SIGKILL: at exact points (a driver process
kills itself after the Nth committed file or embedding batch) and at timed points that can
land inside a transaction.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest


from clawmem.engine.index.store import Store
from helpers import run_cli, write

# Runs Engine.index and SIGKILLs its own process after the Nth event of a kind (no cleanup, no finally).
DRIVER = """
import os, signal, sys
from clawmem.engine import Engine, events as ev
kind, n, ws, config = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
eng = Engine.open(workspace=ws, config_path=config)
kinds = {"files": ev.FileIndexed, "embedded": ev.ChunksEmbedded}
seen = 0
for e in eng.index(reason="cli"):
    if isinstance(e, kinds[kind]):
        seen += 1
        if seen >= n:
            os.kill(os.getpid(), signal.SIGKILL)
print("finished without being killed", flush=True)
"""


def kill_after(kind: str, n: int, workspace: Path, config: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", DRIVER, kind, str(n), str(workspace), str(config)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stdout, proc.stderr)


def index_json(workspace: Path, config: Path) -> dict:
    res = run_cli("--workspace", str(workspace), "--config", str(config), "index", "--json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def make_config(tmp_path: Path, text: str = 'provider = "none"\n') -> Path:
    # no background index from a stale search: these tests decide when indexing runs
    return write(tmp_path / "clawmem.toml", text + "[sync]\nonSearch = false\n")


def index_file(tmp_path: Path) -> Path:
    from clawmem.engine import load_config

    return load_config(tmp_path / "clawmem.toml", workspace=str(tmp_path / "ws")).store_path()


def check(index: Path) -> dict:
    """The invariants a search relies on; returns counts."""
    st = Store(index)
    try:
        c = st.conn
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        (chunks,) = c.execute("select count(*) from chunks").fetchone()
        (fts,) = c.execute("select count(*) from chunks_fts").fetchone()
        assert chunks == fts, (chunks, fts)
        assert c.execute("select count(*) from chunks_fts where rowid not in (select id from chunks)").fetchone()[0] == 0
        assert c.execute("select count(*) from chunks where path not in (select path from files)").fetchone()[0] == 0
        # a file's chunk count is what its row says: no half-written or doubled files
        bad = c.execute("select f.path from files f where f.chunks != (select count(*) from chunks c where c.path = f.path)").fetchall()
        assert bad == []
        dups = c.execute("select path, start_line, end_line, hash, count(*) from chunks group by 1, 2, 3, 4 having count(*) > 1").fetchall()
        assert dups == []
        vectors = {}
        for m in st.models():
            (n,) = c.execute(f"select count(*) from vectors_{m['id']}").fetchone()
            (orph,) = c.execute(f"select count(*) from vectors_{m['id']} where chunk_id not in (select id from chunks)").fetchone()
            assert orph == 0
            if st.has_vec_table(m["id"]):
                (nv,) = c.execute(f"select count(*) from vec_{m['id']}").fetchone()
                assert nv == n
            vectors[m["model"]] = n
        (files,) = c.execute("select count(*) from files").fetchone()
        return {"files": files, "chunks": chunks, "vectors": vectors}
    finally:
        st.close()


def notes(workspace: Path, n: int, lines: int = 12) -> None:
    for i in range(n):
        body = "\n".join(f"- note {i} line {j}: the kiln reached temperature, token k{i}x{j}" for j in range(lines))
        write(workspace / "memory" / f"2026-{1 + i // 28:02d}-{1 + i % 28:02d}-n{i}.md", body + "\n")


def searchable(workspace: Path, config: Path, token: str) -> list[str]:
    res = run_cli("--workspace", str(workspace), "--config", str(config), "search", token, "--json")
    assert res.returncode == 0, res.stderr
    return [r["path"] for r in json.loads(res.stdout)["results"]]


def test_killed_after_exact_files_then_resumed(workspace, tmp_path):
    notes(workspace, 200)
    config = make_config(tmp_path)
    kill_after("files", 1, workspace, config)
    assert check(index_file(tmp_path))["files"] == 1
    kill_after("files", 60, workspace, config)  # a second kill, later in the next run
    counts = check(index_file(tmp_path))
    assert counts["files"] == 61
    # every search still works on the partial index
    assert searchable(workspace, config, "kiln temperature")
    done = index_json(workspace, config)
    assert (done["files"], done["unchanged"]) == (200 - 61, 61)  # committed work is not redone
    assert check(index_file(tmp_path))["files"] == 200
    assert index_json(workspace, config)["files"] == 0


def test_killed_while_removing_deleted_files(workspace, tmp_path):
    notes(workspace, 120)
    config = make_config(tmp_path)
    assert index_json(workspace, config)["files"] == 120
    for p in sorted((workspace / "memory").iterdir())[:80]:
        p.unlink()
    kill_after("files", 30, workspace, config)
    assert check(index_file(tmp_path))["files"] == 120 - 30
    done = index_json(workspace, config)
    assert (done["files"], done["removed"], done["unchanged"]) == (0, 50, 40)
    assert check(index_file(tmp_path))["files"] == 40


def committed_files(index: Path) -> int:
    try:
        st = Store(index)
    except FileNotFoundError:
        return 0
    try:
        return st.conn.execute("select count(*) from files").fetchone()[0] if st.has_schema() else 0
    except Exception:
        return 0
    finally:
        st.close()


def test_killed_at_timed_points_inside_transactions(workspace, tmp_path):
    notes(workspace, 700, lines=30)
    config = make_config(tmp_path)
    index = index_file(tmp_path)
    committed = 0
    for target in (100, 300, 500):
        proc = subprocess.Popen([sys.executable, "-m", "clawmem.tui", "--workspace", str(workspace), "--config", str(config), "index", "--quiet"])
        # kill when another process sees the target committed: the writer is somewhere in a later file
        while proc.poll() is None and committed_files(index) < target:
            time.sleep(0.002)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        counts = check(index)
        assert counts["files"] >= committed
        committed = counts["files"]
    assert committed < 700, "the indexer finished before it was killed"
    done = index_json(workspace, config)
    assert (done["files"], done["unchanged"]) == (700 - committed, committed)
    assert check(index)["files"] == 700
    assert searchable(workspace, config, "k699x29") == [f"memory/2026-{1 + 699 // 28:02d}-{1 + 699 % 28:02d}-n699.md"]


def test_killed_rebuild_keeps_the_old_index_and_resumes(workspace, tmp_path):
    notes(workspace, 150, lines=40)
    config = make_config(tmp_path)
    index_json(workspace, config)
    index = index_file(tmp_path)
    before = check(index)
    # new chunking: a full rebuild into <index>.rebuild
    config = make_config(tmp_path, 'provider = "none"\n[chunking]\ntokens = 100\noverlap = 10\n')
    kill_after("files", 50, workspace, config)
    assert check(index) == before  # the old index is untouched and searchable
    assert searchable(workspace, config, "k149x39")
    rebuild = Path(str(index) + ".rebuild")
    assert rebuild.exists() and check(rebuild)["files"] == 50
    done = index_json(workspace, config)
    assert (done["files"], done["unchanged"]) == (100, 50)  # the rebuild resumed
    assert not rebuild.exists()
    after = check(index)
    assert after["files"] == 150 and after["chunks"] > before["chunks"]


@pytest.mark.slow  # over 1.5 s: the full suite runs it, the fast lane does not
def test_killed_while_embedding_resumes_without_embedding_twice(workspace, tmp_path, embed_server):
    notes(workspace, 60, lines=30)
    embed_server.delay = 0.02
    config = make_config(tmp_path, (
        'provider = "openai"\n[remote]\n'
        f'baseUrl = "{embed_server.url}/v1"\napiKey = "{embed_server.api_key}"\n'
        "[cache]\nenabled = false\n"  # only the index's own resume is under test
    ))
    kill_after("embedded", 2, workspace, config)
    counts = check(index_file(tmp_path))
    assert counts["files"] == 60
    (committed,) = counts["vectors"].values()
    assert 0 < committed < counts["chunks"]
    embed_server.reset()
    index_json(workspace, config)
    assert len(embed_server.inputs()) == counts["chunks"] - committed  # nothing embedded twice
    final = check(index_file(tmp_path))
    assert list(final["vectors"].values()) == [final["chunks"]]
