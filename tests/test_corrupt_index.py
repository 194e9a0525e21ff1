"""A corrupt file at the index path: readers say so in one line and exit 3; a writer moves a
damaged index in clawmem's own data folder aside (never deletes it), says where, and rebuilds
from the Markdown. A folder or another program's database there is never clawmem's to move:
every command says so in one line naming store.path, and nothing is touched."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from clawmem.engine import load_config
from helpers import as_unprivileged, run_cli, write

DAMAGED = ("garbage", "truncated", "truncated-late")
NOT_OURS = ("foreign", "directory")
KINDS = DAMAGED + NOT_OURS


def notes(ws: Path, n: int = 60) -> None:
    for i in range(n):
        write(ws / "memory" / f"2026-01-{1 + i % 28:02d}-n{i}.md", "".join(f"note {i} line {j} about herons h{i}x{j}\n" for j in range(40)))


def cli(ws: Path, *args: str, prefix: list[str] = ()):
    # no background index from a search: only the commands under test write
    return run_cli("--workspace", str(ws), *args, env={"CLAWMEM_CONFIG": str(ws.parent / "clawmem.toml")}, prefix=prefix)


@pytest.fixture
def indexed(workspace) -> tuple[Path, Path, bytes]:
    """A workspace, its index path and the bytes of its healthy index."""
    write(workspace.parent / "clawmem.toml", 'provider = "none"\n[sync]\nonSearch = false\n')
    notes(workspace)
    assert cli(workspace, "index", "--quiet").returncode == 0
    path = load_config(workspace.parent / "clawmem.toml", workspace=str(workspace)).store_path()
    return workspace, path, path.read_bytes()


def damage(path: Path, good: bytes, kind: str) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    if kind == "garbage":
        path.write_bytes(b"this is not a database\n" * 100)
    elif kind == "truncated":
        path.write_bytes(good[:5000])
    elif kind == "truncated-late":  # the first pages (schema, meta) read fine; the chunks do not
        path.write_bytes(good[: len(good) // 2])
    elif kind == "foreign":
        con = sqlite3.connect(path)
        con.execute("create table contacts (name text, phone text)")
        con.execute("insert into contacts values ('Ada', '555-0100')")
        con.commit()
        con.close()
    elif kind == "directory":
        path.mkdir()
        write(path / "keep.txt", "someone's folder\n")


def one_line_error(res, path: Path, kind: str = "garbage", code: int = 3) -> str:
    assert res.returncode == code, (res.returncode, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert str(path) in lines[0]
    if kind in NOT_OURS:
        assert "store.path" in lines[0] and "nothing was touched" in lines[0], lines[0]
    else:
        assert "`clawmem index` repairs it" in lines[0]
    return lines[0]


@pytest.mark.parametrize("kind", KINDS)
def test_readers_say_what_where_and_what_repairs_it(indexed, kind):
    ws, path, good = indexed
    damage(path, good, kind)
    one_line_error(cli(ws, "search", "herons"), path, kind)
    one_line_error(cli(ws, "search", "herons", "--json"), path, kind)
    res = cli(ws, "status")
    one_line_error(res, path, kind)
    assert "error: " in res.stdout  # the rest of the status is still shown
    res = cli(ws, "status", "--json")
    one_line_error(res, path, kind)
    assert str(path) in json.loads(res.stdout)["index"]["error"]


@pytest.mark.parametrize("kind", DAMAGED)
def test_index_moves_it_aside_and_rebuilds(indexed, kind):
    ws, path, good = indexed
    damage(path, good, kind)
    before = sorted(p.name for p in path.parent.iterdir())
    res = cli(ws, "index")
    assert res.returncode == 0, res.stderr
    (aside,) = [p for p in path.parent.iterdir() if p.name not in before]
    assert aside.name.startswith(path.name + ".corrupt-")
    assert f"moved it to {aside}" in res.stderr  # the user is told where it went
    assert aside.read_bytes() in (good[:5000], good[: len(good) // 2], b"this is not a database\n" * 100)
    res = cli(ws, "search", "h59x39", "--json")
    assert res.returncode == 0, res.stderr
    assert [r["path"] for r in json.loads(res.stdout)["results"]][:1] == ["memory/2026-01-04-n59.md"]
    assert json.loads(cli(ws, "status", "--json").stdout)["index"]["files"] == 60


@pytest.mark.parametrize("kind", NOT_OURS)
def test_index_never_moves_what_is_not_clawmems(indexed, kind):
    """A folder or another program's database at the index path: `clawmem index` and
    `status --fix` stop with one line naming store.path (exit 2) and leave it exactly as it was."""
    ws, path, good = indexed
    damage(path, good, kind)
    before = sorted(p.name for p in path.parent.iterdir())
    for args in (("index",), ("status", "--fix")):
        one_line_error(cli(ws, *args), path, kind, code=2)
    assert sorted(p.name for p in path.parent.iterdir()) == before
    if kind == "directory":
        assert (path / "keep.txt").read_text() == "someone's folder\n"
    else:
        assert sqlite3.connect(path).execute("select name from contacts").fetchall() == [("Ada",)]


def test_an_empty_file_is_an_empty_index(indexed):
    ws, path, good = indexed
    damage(path, good, "foreign")
    path.write_bytes(b"")  # what a crash before the first write can leave
    res = cli(ws, "search", "herons", "--json")
    assert res.returncode == 0 and "Traceback" not in res.stderr
    assert "the index is empty" in json.loads(res.stdout)["reason"]
    assert cli(ws, "index", "--quiet").returncode == 0
    assert json.loads(cli(ws, "search", "h1x1", "--json").stdout)["results"]
    assert not [p for p in path.parent.iterdir() if ".corrupt-" in p.name]


def test_damage_found_by_a_long_lived_engine(workspace, make_engine):
    """The engine the app and the MCP server keep open: a search on a file damaged under it
    raises IndexUnavailable with the same line (the app shows it in place of results)."""
    from clawmem.engine.api import IndexUnavailable

    notes(workspace, 10)
    eng = make_engine(persistent=True)
    list(eng.index())
    assert eng.search("herons")["results"]
    good = eng.index_path.read_bytes()
    eng.close()
    damage(eng.index_path, good, "garbage")
    with pytest.raises(IndexUnavailable, match="`clawmem index` repairs it"):
        eng.search("herons")
    st = eng.status()
    assert "not a usable clawmem index" in st["index"]["error"] and st["freshness"]["dirty"]
    list(eng.index())
    assert eng.search("herons")["results"]


def test_an_unreadable_index_is_not_called_corrupt(indexed):
    ws, path, _ = indexed
    path.chmod(0)
    unprivileged = as_unprivileged()
    try:
        res = cli(ws, "search", "herons", prefix=unprivileged)
        assert res.returncode == 3 and "permission denied" in res.stderr and "Traceback" not in res.stderr
        res = cli(ws, "index", prefix=unprivileged)
        assert res.returncode == 3 and "permission" in res.stderr
        assert not [p for p in path.parent.iterdir() if ".corrupt-" in p.name]  # not moved: fixing permissions is enough
    finally:
        path.chmod(0o600)


def test_a_reader_never_sees_a_half_created_index(make_engine, workspace):
    """The first index of a workspace is created while the watcher's searches already read it
    (CI caught a search calling the new index foreign: it had tables but not yet its marker).
    Probe with a fresh reader before every statement the writer runs: each sees an empty index
    or a whole one, never an error."""
    from clawmem.engine.index.store import Store

    write(workspace / "memory" / "2026-01-02.md", "# herons\nthe herons came back\n")
    eng = make_engine()
    writer = Store(eng.index_path, write=True, load_vec=False)
    writer.prepare_writer()
    seen: list[str] = []

    def probe(statement: str) -> None:  # SQLite swallows a callback's exceptions: keep them
        eng.close()  # drop the cached reader: open the file afresh
        try:
            out = eng.search("herons", stale_check=False)
            seen.append("ok" if out["results"] == [] else f"hits {out['results']}")
        except Exception as exc:
            seen.append(f"{statement[:30]!r}: {exc}")

    writer.conn.set_trace_callback(probe)
    writer.ensure_schema(workspace=str(workspace), agentId="main")
    writer.conn.set_trace_callback(None)
    writer.close()
    assert len(seen) >= 8, seen  # every table, the marker and the defaults were probed
    assert set(seen) == {"ok"}, seen
    assert eng.search("herons", stale_check=False)["results"] == []
