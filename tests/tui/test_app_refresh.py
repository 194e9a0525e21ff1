"""After an index job the app asks again only for what the job changed: the status always (its
counts and last sync are new), the file tree only when a file came or went, the promotion
count only when a memory file changed, the search only when the index answers differently.
A save in the File tab indexes that one file."""

from __future__ import annotations

import pytest
from textual.widgets import TextArea

from clawmem.engine import events as ev
from clawmem.engine.files.journal import Journal
from tuikit import settle, until

pytestmark = pytest.mark.slow  # each drives the real app for several seconds


def count_calls(app, *names: str) -> dict[str, int]:
    """Count the app's calls of its own refresh methods (each still runs)."""
    counts = dict.fromkeys(names, 0)
    for name in names:
        original = getattr(app, name)

        def counted(*args, _name=name, _original=original, **kw):
            counts[_name] += 1
            return _original(*args, **kw)

        setattr(app, name, counted)
    return counts


async def test_a_job_that_changed_nothing_asks_only_for_the_status(ws, make_app):
    app = make_app(ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press(*"migration")
        await settle(pilot)
        searches = app.search_pane.seq
        counts = count_calls(app, "load_status", "load_files", "load_promote_count")
        app.post_engine_event(ev.JobFinished("index", 0, 0, 5, 0, 0.1))
        await settle(pilot)
        assert counts == {"load_status": 1, "load_files": 0, "load_promote_count": 0}
        assert app.search_pane.seq == searches  # the same search would give the same answer
        app.post_engine_event(ev.JobFinished("index", 1, 0, 4, 0, 0.1, changed=("memory/2026-02-13.md",)))
        await settle(pilot)
        assert counts == {"load_status": 2, "load_files": 1, "load_promote_count": 1}  # a new file
        assert app.search_pane.seq == searches + 1
        app.post_engine_event(ev.JobFinished("index", 1, 0, 4, 0, 0.1, changed=("sessions/a.jsonl",)))
        await settle(pilot)
        assert counts["load_promote_count"] == 1  # a transcript is no promotion source


async def test_a_save_journals_at_once_and_indexes_that_file_only(ws, make_app):
    app = make_app(ws)
    finished: list[ev.JobFinished] = []
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        post = app.post_engine_event

        def spy(e):
            if isinstance(e, ev.JobFinished):
                finished.append(e)
            post(e)

        app.post_engine_event = spy
        (ws / "memory" / "2026-02-13.md").write_text("# 2026-02-13\n\nwritten beside the app\n")  # no watcher runs
        app.open_file("memory/2026-02-11.md")
        await settle(pilot)
        editor = app.query_one("#editor", TextArea)
        editor.move_cursor(editor.document.end)
        await pilot.press(*"a kingfisher", "enter")
        counts = count_calls(app, "load_files")
        await pilot.press("ctrl+s")
        saved = (ws / "memory" / "2026-02-11.md").read_bytes()
        with Journal(app.engine.cfg) as jr:
            assert jr.latest("memory/2026-02-11.md").size == len(saved)  # before any index job
        await until(pilot, lambda: finished, what="the save's index job")
        await settle(pilot)
        assert [e.changed for e in finished] == [("memory/2026-02-11.md",)]
        assert counts["load_files"] == 0  # no file came or went
        assert "memory/2026-02-13.md" not in app.engine.reader().file_rows()  # not looked at


async def test_an_engine_event_while_the_panes_are_gone_is_let_pass(ws, make_app):
    """A sync that ends while the app is closing (its panes already taken down) posts its
    events all the same, from the syncer's thread, and so do the workers that read the status
    and count promotions: the app raised NoMatches for "#search-pane" out of run_test (seen in
    CI under load). With no pane to show it, each is let pass."""
    from textual.widgets import TabbedContent

    from clawmem.tui.messages import IndexWorkerDone, PromoteCounted, StatusLoaded

    app = make_app(ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert len(app.panes()) == 5
        await app.query_one(TabbedContent).remove()
        assert app.panes() == []
        app.post_engine_event(ev.JobStarted("index", "watcher", 5))
        app.post_engine_event(ev.JobFinished("index", 1, 1, 4, 0, 0.1, changed=("memory/2026-02-13.md",)))
        app.post_message(StatusLoaded(app.last_status))
        app.post_message(PromoteCounted(2))
        app.post_message(IndexWorkerDone("disk full"))
        await settle(pilot)  # a handler's exception would leave run_test raising it
