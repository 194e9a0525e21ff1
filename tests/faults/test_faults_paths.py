"""Fault suite, paths: every path clawmem reads or writes stays where it belongs. An index path
naming a folder or another program's database is never moved; memory files are never read or
written through a symlink out of the workspace or as a FIFO; non-ASCII names work in an ASCII
locale."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from clawmem.engine.agent import tools
from faultkit import fingerprint, one_line_error, run
from helpers import foreign_database, write
from mcpwire import exchange, request

SECRET = "root:x:0:0:the secret the agent must never see\n"


def config(tmp_path: Path, text: str) -> dict:
    path = write(tmp_path / "clawmem.toml", 'provider = "none"\n[sync]\nonSearch = false\n' + text)
    return {"CLAWMEM_CONFIG": str(path)}


@pytest.mark.parametrize("target", ["home", "workspace"])
def test_store_path_naming_a_folder_is_an_error_and_the_folder_stays(workspace, tmp_path, target):
    """`[store] path = "<a folder>"` once moved the user's home (or the workspace) aside."""
    write(workspace / "MEMORY.md", "# Memory\n- tea\n")
    folder = Path(os.environ["HOME"]) if target == "home" else workspace
    write(folder / "notes.txt", "someone's file\n")
    before = fingerprint(folder)
    env = config(tmp_path, f'[store]\npath = "{folder}"\n')
    for args in (("index",), ("status", "--fix")):
        res = run("--workspace", str(workspace), *args, env=env)
        assert res.returncode == 2, (args, res.stderr)
        line = one_line_error(res)
        assert "store.path" in line and str(folder) in line and "nothing was touched" in line
    assert fingerprint(folder) == before and folder.is_dir()
    assert not list(folder.parent.glob(folder.name + ".corrupt-*"))


def test_store_path_naming_another_programs_database_is_an_error(workspace, tmp_path):
    write(workspace / "MEMORY.md", "# Memory\n- tea\n")
    db = tmp_path / "contacts.sqlite"
    data = foreign_database(db)
    res = run("--workspace", str(workspace), "index", env=config(tmp_path, f'[store]\npath = "{db}"\n'))
    assert res.returncode == 2 and "store.path" in one_line_error(res)
    assert db.read_bytes() == data and not list(tmp_path.glob("contacts.sqlite.corrupt-*"))


def test_a_memory_folder_linked_outside_is_neither_written_nor_read(workspace, tmp_path, make_engine):
    """With `memory/` a symlink to a folder elsewhere, memory_append once wrote there."""
    outside = tmp_path / "outside"
    outside.mkdir()
    write(outside / "2026-03-04.md", SECRET)
    (workspace / "memory").rmdir()
    (workspace / "memory").symlink_to(outside)
    before = fingerprint(outside)
    eng = make_engine()
    import datetime as dt

    res = tools.memory_append(eng, "note", now=dt.datetime(2026, 3, 4, 9, 0))
    assert "symlink" in res["error"]
    got = tools.memory_get(eng, "memory/2026-03-04.md")
    assert got["text"] == "" and "symlink" in got["error"]
    res = run("--workspace", str(workspace), "get", "memory/2026-03-04.md")
    assert res.returncode != 0 and "root:x" not in res.stdout
    assert fingerprint(outside) == before


def test_context_and_resources_never_follow_a_symlink_out(workspace, tmp_path):
    """`clawmem context` and memory:// resources once served /etc/passwd through a linked MEMORY.md."""
    secret = write(tmp_path / "passwd", SECRET)
    (workspace / "MEMORY.md").symlink_to(secret)
    res = run("--workspace", str(workspace), "context", "--json")
    assert res.returncode == 0, res.stderr
    ctx = json.loads(res.stdout)
    assert "root:x" not in ctx["text"]
    assert "symlink" in ctx["files"][0]["error"]
    replies = exchange(workspace, [request(1, "resources/read", {"uri": "memory://MEMORY.md"}),
                                   request(2, "resources/read", {"uri": "memory://context"})])
    assert "root:x" not in json.dumps(replies)
    assert "symlink" in json.dumps(replies[1])


def test_a_fifo_memory_md_is_refused_without_hanging(workspace, make_engine):
    """A FIFO named MEMORY.md hung the MCP resources (and every other reader) forever."""
    os.mkfifo(workspace / "MEMORY.md")
    eng = make_engine()
    out: dict = {}
    t = threading.Thread(target=lambda: out.update(remember=tools.memory_remember(eng, "fact"),
                                                   get=tools.memory_get(eng, "MEMORY.md")), daemon=True)
    t.start()
    t.join(20)
    assert not t.is_alive(), "a FIFO blocked a memory-file reader"
    assert "not a regular file" in out["remember"]["error"] and "not a regular file" in out["get"]["error"]
    replies = exchange(workspace, [request(1, "resources/read", {"uri": "memory://MEMORY.md"}),
                                   request(2, "resources/read", {"uri": "memory://context"})], timeout=40)
    assert {1, 2} <= replies.keys(), replies
    assert "not a regular file" in replies[1]["error"]["message"]
    res = run("--workspace", str(workspace), "context", timeout=60)
    assert res.returncode == 0 and "Traceback" not in res.stderr


ASCII = {"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0"}


def test_non_ascii_names_are_indexed_and_cited_in_an_ascii_locale(workspace):
    """Under LANG=C LC_ALL=C PYTHONUTF8=0 a non-ASCII name was skipped as "not valid UTF-8" while
    status said clean, and printing a non-ASCII result died with UnicodeEncodeError."""
    write(workspace / "memory" / "café-notes.md", "un café très fort, zanzibar\n")
    write(workspace / "memory" / "日记.md", "今天 zanzibar 日记\n")
    res = run("--workspace", str(workspace), "index", env=ASCII)
    assert res.returncode == 0 and "not valid UTF-8" not in res.stderr, res.stderr
    res = run("--workspace", str(workspace), "search", "zanzibar", "--json", env=ASCII)
    assert res.returncode == 0, res.stderr
    assert sorted(r["path"] for r in json.loads(res.stdout)["results"]) == ["memory/café-notes.md", "memory/日记.md"]
    res = run("--workspace", str(workspace), "search", "zanzibar", env=ASCII)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    assert "memory/caf\\u00e9-notes.md" in res.stdout  # what an ASCII terminal can show
    res = run("--workspace", str(workspace), "get", "memory/café-notes.md", env=ASCII)
    assert res.returncode == 0 and "tr\\u00e8s fort" in res.stdout, res.stderr
    st = json.loads(run("--workspace", str(workspace), "status", "--json", env=ASCII).stdout)
    assert st["index"]["files"] == 2 and not st["freshness"]["dirty"]
