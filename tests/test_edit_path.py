"""The direct edit path: `Engine.edit(path)` resolves the path itself, a save is journalled at
once, the index is asked for that one file (no listing of every source), and the job's
JobFinished names the files it changed. Real files, a real index and journal, a real watcher."""

from __future__ import annotations

import threading
import time

import pytest

from clawmem.engine import AccessDenied, events as ev
from clawmem.engine.files.journal import Journal


def write(p, text: str) -> None:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")


def indexed_paths(eng) -> set[str]:
    return set(eng.reader().file_rows())


@pytest.fixture
def eng(workspace, make_engine):
    write(workspace / "MEMORY.md", "# Memory\n\n- herons nest by the lake\n")
    write(workspace / "memory" / "2026-02-10.md", "# birds\n\nthe herons came back\n")
    e = make_engine()
    e.run_index()
    return e


def test_edit_resolves_the_path_as_the_fronts_name_it(eng, workspace):
    session = eng.edit("MEMORY.md")
    assert (session.rel, session.path) == ("MEMORY.md", workspace / "MEMORY.md")
    assert eng.edit(str(workspace / "memory" / "2026-02-10.md")).rel == "memory/2026-02-10.md"
    with pytest.raises(AccessDenied):
        eng.edit("../outside.md")
    with pytest.raises(AccessDenied):
        eng.edit("notes.txt")


def test_a_save_is_journalled_at_once(eng):
    """No index job runs between the save and the look: the version is there already, credited
    to the process that saved it."""
    session = eng.edit("MEMORY.md")
    session.edit(session.text + "- the kingfisher is back\n")
    snap = session.save()
    with Journal(eng.cfg) as jr:
        latest = jr.latest("MEMORY.md")
    assert latest is not None and latest.hash == snap.hash
    assert eng.search("kingfisher").hits == []  # the index is not written by the save itself


def test_a_save_with_the_journal_off_writes_no_version(eng, make_engine, workspace):
    off = make_engine({"journal.enabled": False})
    with Journal(off.cfg) as jr:
        before = jr.latest("MEMORY.md")
    session = off.edit("MEMORY.md")
    session.edit(session.text + "- one more line\n")
    session.save()
    with Journal(off.cfg) as jr:
        assert jr.latest("MEMORY.md") == before


def test_the_index_job_of_a_save_touches_only_that_file(eng, workspace):
    """A file written on disk meanwhile (not through the editor) is not looked at: the job
    lists nothing but the saved file; the next full index finds the other one."""
    write(workspace / "memory" / "2026-02-11.md", "# more\n\nthe otters are back\n")
    session = eng.edit("memory/2026-02-10.md")
    session.edit(session.text + "a kingfisher too\n")
    session.save()
    events = list(eng.index(reason="saved", paths=[session.path]))
    started = [e for e in events if isinstance(e, ev.JobStarted)]
    finished = [e for e in events if isinstance(e, ev.JobFinished)]
    assert [e.files_total for e in started] == [1]
    assert finished[0].changed == ("memory/2026-02-10.md",) and finished[0].files_indexed == 1
    assert [r["path"] for r in eng.search("kingfisher").hits] == ["memory/2026-02-10.md"]
    assert "memory/2026-02-11.md" not in indexed_paths(eng)
    full = eng.run_index()
    assert full.changed == ("memory/2026-02-11.md",)
    assert "memory/2026-02-11.md" in indexed_paths(eng)


def test_a_path_only_job_of_an_unchanged_file_changes_nothing(eng, workspace):
    finished = eng.run_index(paths=[workspace / "MEMORY.md"])
    assert finished.changed == () and not finished.index_changed and finished.files_unchanged == 1


def test_a_file_no_plain_source_falls_back_to_the_full_listing(eng, workspace):
    """DREAMS.md may be read but is not indexed; memory.md beside MEMORY.md is the listing's
    call: for either the job lists every source, as before."""
    write(workspace / "memory" / "2026-02-11.md", "# more\n\nthe otters are back\n")
    write(workspace / "DREAMS.md", "# dreams\n")
    finished = eng.run_index(paths=[workspace / "DREAMS.md"])
    assert finished.changed == ("memory/2026-02-11.md",)
    assert "DREAMS.md" not in indexed_paths(eng)


def test_job_finished_names_removed_files(eng, workspace):
    (workspace / "memory" / "2026-02-10.md").unlink()
    assert eng.run_index().changed == ("memory/2026-02-10.md",)


def test_the_watcher_indexes_only_the_saved_file_when_asked_with_its_path(workspace, make_engine):
    """The app with a watcher: a save's request names the file, and the sync indexes that file
    only (sync.watch off here, so no file event can start a sync of its own)."""
    write(workspace / "MEMORY.md", "# Memory\n\n- herons nest by the lake\n")
    eng = make_engine({"sync.watch": False}, persistent=True)
    finished: list[ev.JobFinished] = []
    done = threading.Event()

    def on_event(e):
        if isinstance(e, ev.JobFinished):
            finished.append(e)
            done.set()

    syncer = eng.watch(on_event=on_event)
    try:
        assert done.wait(30)  # the start sync
        done.clear()
        write(workspace / "memory" / "2026-02-11.md", "# more\n\nthe otters are back\n")
        session = eng.edit("MEMORY.md")
        session.edit(session.text + "- a kingfisher\n")
        session.save()
        syncer.request("saved MEMORY.md", [session.path])
        assert done.wait(30)
        assert finished[-1].changed == ("MEMORY.md",)
        assert "memory/2026-02-11.md" not in indexed_paths(eng)
    finally:
        syncer.stop()


def layout_stamp(eng, folder) -> int | None:
    from clawmem.engine.files.sources import LAYOUT_KEY

    return eng.reader().get_meta_json(LAYOUT_KEY)["dirs"].get(str(folder))


def test_a_saved_files_folder_is_restamped_when_it_holds_only_what_the_index_knows(eng, workspace):
    """A save renames over its file, which moves its folder's mtime: the path-only job stamps
    the folder again when it holds just the indexed files, so searches keep their cheap look
    (seen_behind without comparing every file); with a stranger in it the old stamp stays and
    a search sees the index behind."""
    import os

    folder = workspace / "memory"
    before = layout_stamp(eng, folder)
    session = eng.edit("memory/2026-02-10.md")
    session.edit(session.text + "a kingfisher too\n")
    session.save()
    time.sleep(0.05)  # a folder changed within the clock's tick is not trusted
    eng.run_index(paths=[session.path])
    assert layout_stamp(eng, folder) == os.stat(folder).st_mtime_ns != before
    assert not eng.seen_behind()

    write(folder / "2026-02-12.md", "# stranger\n")
    session.edit(session.text + "and a heron\n")
    session.save()
    time.sleep(0.05)
    stamped = layout_stamp(eng, folder)
    eng.run_index(paths=[session.path])
    assert layout_stamp(eng, folder) == stamped  # not vouched for: the new file is not indexed
    eng.freshness_check.forget()
    assert eng.seen_behind()


def test_an_agents_write_indexes_the_file_it_wrote_only(eng, workspace):
    import datetime as dt

    write(workspace / "memory" / "2026-02-11.md", "# more\n\nthe otters are back\n")
    out = eng.append("a kingfisher by the bridge", now=dt.datetime(2026, 2, 12, 9, 30))
    assert out["indexed"] is True and out["path"] == "memory/2026-02-12.md"
    assert [h.path for h in eng.search("kingfisher").hits] == ["memory/2026-02-12.md"]
    assert "memory/2026-02-11.md" not in indexed_paths(eng)  # not listed: the watcher's business
    remembered = eng.remember("the heron's name is Gus")
    assert remembered["indexed"] is True and [h.path for h in eng.search("Gus").hits] == ["MEMORY.md"]
