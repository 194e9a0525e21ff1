"""The journal: earlier versions of memory files, kept outside the
workspace, shown by `clawmem history` and put back by `clawmem restore`, on real files,
a real watcher process and real SQLite."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time

import pytest

from clawmem.engine.files import conflicts as files, writers
from clawmem.engine.agent import tools
from clawmem.engine.files.journal import Journal, journal_dir, parse_since
from helpers import run_cli, wait_for, write

# the real thing agents did: a day's log, with bytes that are not UTF-8 and CRLF line ends,
# so "every byte back" means every byte
LOG = b"# 2026-03-10\r\n\r\n## 09:00\r\nquokka seen at the lake \xff\xfe\r\n\r\n## 17:16\r\ndecided: ferry at 8\r\n"


def versions(eng, path=None):
    with Journal(eng.cfg) as jr:
        return jr.versions(path)


@pytest.mark.slow  # over 1.5 s: the full suite runs it, the fast lane does not
def test_an_outside_process_overwrites_a_log_and_restore_brings_every_byte_back(workspace, make_engine):
    log = workspace / "memory" / "2026-03-10.md"
    log.write_bytes(LOG)
    eng = make_engine({"sync.watchDebounceMs": 100})
    ws = ("--workspace", str(workspace))
    watcher = subprocess.Popen([sys.executable, "-m", "clawmem.tui", *ws, "watch"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, env={**os.environ, "CLAWMEM_PROVIDER": "none"})
    try:
        wait_for(lambda: os.path.exists(journal_dir(eng.cfg) / "journal.sqlite") and versions(eng), what="the first version kept")
        # another program (an agent gone wrong) replaces the log by a placeholder
        subprocess.run(["sh", "-c", f"printf '# 2026-03-10\\n\\n(notes moved)\\n' > '{log}'"], check=True)
        wait_for(lambda: len(versions(eng, "memory/2026-03-10.md")) == 2, what="the watcher to journal the overwrite")
    finally:
        watcher.terminate()
        watcher.wait(timeout=20)

    out = run_cli(*ws, "history", "--json")
    assert out.returncode == 0, out.stderr
    (change,) = json.loads(out.stdout)
    assert change["path"] == "memory/2026-03-10.md" and change["writer"] == "outside"
    assert "-decided: ferry at 8" in change["diff"] and "+(notes moved)" in change["diff"]
    text = run_cli(*ws, "history", "memory/2026-03-10.md", "--since", "today")
    assert f"v{change['version']}" in text.stdout and "-decided: ferry at 8" in text.stdout

    back = run_cli(*ws, "restore", "memory/2026-03-10.md", "--to", str(change["previous"]))
    assert back.returncode == 0, back.stderr
    assert log.read_bytes() == LOG
    assert f"--to v{change['version']}" in back.stdout  # how to undo it (the form history prints)
    # the restore is itself a version: undoing it brings the placeholder back
    last = versions(eng, "memory/2026-03-10.md")[-1]
    assert last.writer == f"restore of v{change['previous']}"
    assert run_cli(*ws, "restore", "memory/2026-03-10.md", "--to", str(change["version"])).returncode == 0
    assert log.read_bytes() == b"# 2026-03-10\n\n(notes moved)\n"
    # and the index followed the restore
    assert "quokka" not in run_cli(*ws, "search", "quokka").stdout


def test_the_indexer_keeps_each_version_and_files_it_indexed_before_the_journal(workspace, make_engine):
    texts = ["# Memory\n- likes tea\n", "# Memory\n- likes coffee\n", "# Memory\n- likes coffee\n- and cake\n"]
    write(workspace / "MEMORY.md", texts[0])
    eng = make_engine({"journal.enabled": False})
    eng.run_index()
    assert not (journal_dir(eng.cfg) / "journal.sqlite").exists()
    eng = make_engine()
    eng.run_index()  # nothing changed, but the journal needs a base for the next change
    (base,) = versions(eng, "MEMORY.md")
    for text in texts[1:]:
        write(workspace / "MEMORY.md", text)
        eng.run_index()
    got = versions(eng, "MEMORY.md")
    assert got[0] == base
    with Journal(eng.cfg) as jr:
        assert [jr.data(v.id).decode() for v in got] == texts
        assert [c.counts() for c in jr.changes("MEMORY.md")] == [(1, 1), (1, 0)]


def test_a_deleted_file_is_journalled_and_can_be_restored(workspace, make_engine):
    note = write(workspace / "memory" / "people.md", "Ana: allergic to nuts\n")
    eng = make_engine()
    eng.run_index()
    note.unlink()
    eng.run_index()
    got = versions(eng, "memory/people.md")
    assert got[-1].deleted
    ws = ("--workspace", str(workspace))
    assert "deleted" in run_cli(*ws, "history").stdout
    assert run_cli(*ws, "restore", "memory/people.md", "--to", str(got[0].id)).returncode == 0
    assert note.read_text() == "Ana: allergic to nuts\n"


def test_a_daily_log_created_after_the_first_index_is_listed_as_created(workspace, make_engine):
    write(workspace / "MEMORY.md", "# Memory\n- likes tea\n")
    write(workspace / "memory" / "2026-03-09.md", "# 2026-03-09\n\nold day\n")
    make_engine().run_index()
    ws = ("--workspace", str(workspace))
    # the files there at the first index are the journal's baseline, not creations
    first = run_cli(*ws, "history", "--json")
    assert first.returncode == 0 and json.loads(first.stdout) == [], first.stdout
    assert "no changes to the memory files recorded" in run_cli(*ws, "history").stdout
    # the agent starts a new day's log (another process); history's catch-up finds it
    log = workspace / "memory" / "2026-03-10.md"
    subprocess.run(["sh", "-c", f"printf '# 2026-03-10\\n\\n## 09:00\\nferry at 8\\n' > '{log}'"], check=True)
    out = run_cli(*ws, "history", "--json")
    assert out.returncode == 0, out.stderr
    (change,) = json.loads(out.stdout)
    assert (change["path"], change["created"], change["previous"], change["writer"]) == ("memory/2026-03-10.md", True, None, "outside")
    assert (change["added"], change["removed"]) == (4, 0)
    assert change["diff"][:3] == ["--- /dev/null", f"+++ memory/2026-03-10.md v{change['version']}", "@@ -0,0 +1,4 @@"]
    assert change["diff"][3:] == ["+# 2026-03-10", "+", "+## 09:00", "+ferry at 8"]
    text = run_cli(*ws, "history").stdout
    assert f"v{change['version']}" in text and "memory/2026-03-10.md  created, +4 lines, 34 bytes  by outside  (new file)" in text
    assert "+ferry at 8" in run_cli(*ws, "history", "memory/2026-03-10.md").stdout
    # a later change to it pairs with the creation, as any change does
    with log.open("a") as fh:
        fh.write("## 17:00\nback home\n")
    later = json.loads(run_cli(*ws, "history", "--json").stdout)
    assert [(c["created"], c["previous"]) for c in later] == [(True, None), (False, change["version"])]
    assert log.exists()


def test_the_first_history_of_a_workspace_lists_no_file_as_created(workspace, make_engine):
    """No index has run: history's own catch-up is the journal's first look at the files."""
    write(workspace / "MEMORY.md", "# Memory\n")
    write(workspace / "memory" / "2026-03-09.md", "# 2026-03-09\n")
    eng = make_engine()
    assert eng.history() == []
    write(workspace / "memory" / "topics.md", "# Topics\n")
    assert [(c.after.path, c.created) for c in eng.history()] == [("memory/topics.md", True)]


def test_a_journal_from_before_creations_starts_listing_them_after_its_next_full_look(workspace, make_engine):
    """A journal kept by an older clawmem has no mark of its first full look: files it had
    seen, and files recorded before its next full look, stay baselines; files after, creations."""
    write(workspace / "MEMORY.md", "# Memory\n")
    eng = make_engine()
    eng.run_index()
    with Journal(eng.cfg) as jr:
        jr.conn.execute("drop table meta")  # as an older clawmem left it
    with Journal(eng.cfg) as jr:
        assert not jr.caught_up()
        # a write journalled at once (a promote, a save) before any full look: not known new
        write(workspace / "DREAMS.md", "# Dreams\n")
        jr.observe_file("DREAMS.md", workspace / "DREAMS.md")
    assert eng.history() == []  # its catch-up is the full look
    write(workspace / "memory" / "2026-03-10.md", "# 2026-03-10\n")
    assert [(c.after.path, c.created) for c in eng.history()] == [("memory/2026-03-10.md", True)]


def test_undoing_the_hunk_of_a_creation_takes_its_lines_out_and_keeps_the_file(workspace, make_engine):
    write(workspace / "MEMORY.md", "# Memory\n")
    eng = make_engine()
    eng.run_index()
    log = write(workspace / "memory" / "2026-03-10.md", "# 2026-03-10\nferry at 8\n")
    (created,) = eng.history()
    with log.open("a") as fh:
        fh.write("back home\n")
    v = eng.undo_hunk("memory/2026-03-10.md", None, created.after.id, 0)
    assert log.read_text() == "back home\n"  # the later line stays; the file is never deleted
    assert v.writer == f"restore of a hunk before v{created.after.id}"
    with pytest.raises(ValueError, match="not the file's creation"):
        eng.undo_hunk("memory/2026-03-10.md", None, v.id, 0)


def test_who_wrote_it(workspace, make_engine, monkeypatch):
    eng = make_engine()
    write(workspace / "MEMORY.md", "# Memory\n")
    eng.run_index()
    # an agent through the MCP tools
    res = tools.memory_append(eng, "met Bo at the market")
    assert res["indexed"]
    log = versions(eng, res["path"])
    assert [v.writer for v in log] == [tools.AGENT]
    res = tools.memory_remember(eng, "Bo sells honey")
    assert versions(eng, "MEMORY.md")[-1].writer == tools.AGENT
    # the app's save (the app names itself at start)
    monkeypatch.setattr(writers, "WRITER", "app")
    files.overwrite(workspace / "MEMORY.md", "# Memory\n- tidy\n")
    eng.run_index()
    assert versions(eng, "MEMORY.md")[-1].writer == "app"
    # anything else is "outside", even after clawmem wrote the file before
    write(workspace / "MEMORY.md", "# Memory\n- tidy\n- by hand\n")
    eng.run_index()
    assert versions(eng, "MEMORY.md")[-1].writer == "outside"


def test_old_versions_are_dropped_by_age_then_size_but_never_a_files_newest(workspace, make_engine):
    eng = make_engine({"journal.maxAgeDays": 1, "journal.maxMB": 0.1})
    big = workspace / "memory" / "big.md"
    for i in range(6):
        # incompressible text, ~40 KB compressed each: six versions are over the 0.1 MB budget
        write(big, os.urandom(30_000).hex() + f"\nversion {i}\n")
        eng.run_index()
    write(workspace / "MEMORY.md", "# Memory\n")
    eng.run_index()
    got = versions(eng, "memory/big.md")
    assert 1 <= len(got) < 6 and got[-1].size == big.stat().st_size
    with Journal(eng.cfg) as jr:
        assert jr.data(got[-1].id) == big.read_bytes()
        total = jr.conn.execute("select sum(length(data)) from versions").fetchone()[0]
        assert total <= 0.1 * 1024 * 1024 + 70_000  # the newest version of each file may exceed it
        # two days later every older version is past maxAgeDays; the newest of each file stays
        jr.prune(now=time.time() + 2 * 86400)
        assert [v.path for v in jr.versions()] == ["memory/big.md", "MEMORY.md"]


def test_the_journal_is_private_and_outside_the_workspace(workspace, make_engine):
    write(workspace / "MEMORY.md", "# Memory\n")
    eng = make_engine()
    eng.run_index()
    folder = journal_dir(eng.cfg)
    assert not str(folder).startswith(str(workspace))
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(folder.parent.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "journal.sqlite").stat().st_mode) == 0o600
    assert sorted(p.name for p in workspace.rglob("*")) == ["MEMORY.md", "memory"]


def test_bad_input_is_one_line(workspace, make_engine):
    write(workspace / "MEMORY.md", "# Memory\n")
    make_engine().run_index()
    ws = ("--workspace", str(workspace))
    for args, words in (
        (("history", "--since", "last tuesday"), "--since: expected a date"),
        (("history", "../secrets.md"), "refused"),
        (("restore", "MEMORY.md", "--to", "99"), "MEMORY.md: no version 99"),
        (("restore", "MEMORY.md", "--to", "vx"), "--to"),
        (("restore", "MEMORY.md"), "--to"),
        (("--workspace", str(workspace / "nowhere"), "history"), "no workspace at"),
    ):
        out = run_cli(*ws, *args)
        assert out.returncode == 2, (args, out.stderr)
        assert out.stderr.count("\n") == 1 and words in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert (workspace / "MEMORY.md").read_text() == "# Memory\n"


@pytest.mark.parametrize("text,days", [("today", 0), ("yesterday", 1), ("7d", 7), ("2026-03-01", None)])
def test_since(text, days):
    import datetime as dt

    today = dt.date(2026, 3, 10)
    want = dt.date(2026, 3, 1) if days is None else today - dt.timedelta(days=days)
    assert parse_since(text, today) == dt.datetime.combine(want, dt.time()).timestamp()


def test_an_unusable_journal_never_stops_indexing_and_says_how_to_recover(workspace, make_engine):
    write(workspace / "MEMORY.md", "# Memory\n- likes tea\n")
    eng = make_engine()
    folder = journal_dir(eng.cfg)
    folder.mkdir(parents=True)
    (folder / "journal.sqlite").write_bytes(b"not a database, just bytes" * 100)
    ws = ("--workspace", str(workspace))
    out = run_cli(*ws, "index", env={"CLAWMEM_PROVIDER": "none"})
    assert out.returncode == 0
    assert "not a usable journal" in out.stderr and "move it aside" in out.stderr
    assert "likes tea" in run_cli(*ws, "search", "tea").stdout
    hist = run_cli(*ws, "history")
    assert hist.returncode == 3 and hist.stderr.count("\n") == 1 and "move it aside" in hist.stderr
