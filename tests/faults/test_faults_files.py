"""Odd things in the workspace (issue 9, fault suite): a FIFO named x.md, a folder named x.md,
a 5 MB single line, 200 levels of folders, names with a newline or invalid UTF-8 bytes, a
symlink loop and a dangling link.
Indexing completes; each is indexed or skipped with a reason; nothing blocks."""

from __future__ import annotations

import json
import os

from faultkit import fingerprint, run
from helpers import write


def search_paths(ws, query: str) -> list[str]:
    res = run("--workspace", str(ws), "search", query, "--json", timeout=60)
    assert res.returncode == 0, res.stderr
    return [r["path"] for r in json.loads(res.stdout)["results"]]


def test_odd_entries_are_indexed_or_skipped_with_a_reason(workspace):
    mem = workspace / "memory"
    os.mkfifo(mem / "fifo.md")
    write(mem / "folder.md" / "inner.md", "inside a folder named like a note, tokfolder\n")
    write(mem / "huge.md", "hugeline " * 600_000 + "tokhuge\n")  # 5.4 MB, one line
    deep = mem.joinpath(*["d"] * 200)
    write(deep / "deep.md", "the deepest note, tokdeep\n")
    write(mem / "new\nline.md", "a name with a newline, toknewline\n")
    with open(os.path.join(os.fsencode(mem), b"bad\xff\xfename.md"), "wb") as fh:
        fh.write(b"a name with invalid UTF-8, tokbadname\n")
    write(mem / "plain.md", "an ordinary note, tokplain\n")
    (mem / "loop").symlink_to(mem)  # a symlink loop, and a dangling link named like a note
    (mem / "dangling.md").symlink_to(mem / "gone.md")
    before = fingerprint(workspace)

    res = run("--workspace", str(workspace), "index", timeout=120)  # a FIFO read would hang here
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    assert "fifo.md: not a regular file; not indexed" in res.stderr
    assert "bad\\xff\\xfename.md: name is not valid UTF-8; not indexed (rename it to index it)" in res.stderr

    assert search_paths(workspace, "tokfolder") == ["memory/folder.md/inner.md"]
    assert search_paths(workspace, "tokhuge")[0] == "memory/huge.md"
    assert search_paths(workspace, "tokdeep") == ["memory/" + "d/" * 200 + "deep.md"]
    assert search_paths(workspace, "toknewline") == ["memory/new\nline.md"]
    assert search_paths(workspace, "tokplain") == ["memory/plain.md"]  # once: the loop is not followed
    assert search_paths(workspace, "tokbadname") == []

    # a second run, status and the watcher's one-shot sync all get through too
    again = run("--workspace", str(workspace), "index", "--json", timeout=60)
    assert again.returncode == 0 and json.loads(again.stdout)["files"] == 0, again.stderr
    status = run("--workspace", str(workspace), "status", "--json", timeout=60)
    assert status.returncode == 0 and "Traceback" not in status.stderr, status.stderr
    watch = run("--workspace", str(workspace), "watch", "--once", timeout=60)
    assert watch.returncode == 0 and "Traceback" not in watch.stdout + watch.stderr, watch.stderr
    assert fingerprint(workspace) == before  # nothing was written into the workspace


def test_get_never_blocks_on_a_fifo_and_refuses_a_folder(workspace):
    os.mkfifo(workspace / "memory" / "fifo.md")
    (workspace / "memory" / "folder.md").mkdir()
    res = run("--workspace", str(workspace), "get", "memory/fifo.md", timeout=30)
    assert res.returncode == 2
    assert res.stderr.strip() == "clawmem: refused 'memory/fifo.md': not a regular file (a pipe or device is never read or written)"
    res = run("--workspace", str(workspace), "get", "memory/folder.md", timeout=30)
    assert res.returncode == 2 and res.stderr.strip() == "clawmem: refused 'memory/folder.md': it is a folder"
    write(workspace / "memory" / "crlf.md", "one\r\ntwo\r\n")
    res = run("--workspace", str(workspace), "get", "memory/crlf.md", "--json", timeout=30)
    assert json.loads(res.stdout)["text"] == "one\ntwo\n"  # newlines read as before
