"""The app and the index file: a corrupt index is repaired at start and the user told where
the old file went; a rebuild left unfinished shows on the Sync tab; quitting during a rebuild
asks first, and the rebuild it stops is resumed later."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from textual.widgets import Static

from clawmem.engine import events as ev
from clawmem.engine.index.store import rebuild_path
from clawmem.tui.widgets.dialogs import RebuildRunningScreen
from helpers import wait_for
from tuikit import settle, until


async def test_a_corrupt_index_is_moved_aside_at_start_and_the_user_told(ws, make_app):
    app = make_app(ws)
    index = app.engine.index_path
    index.parent.mkdir(parents=True)
    index.write_bytes(b"not an index at all\n" * 50)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        (aside,) = index.parent.glob("*.corrupt-*")
        assert aside.read_bytes() == b"not an index at all\n" * 50
        notes = [n.message for n in app._notifications]
        assert any("not a usable clawmem index" in m and f"moved it to {aside}" in m for m in notes), notes
        res = app.engine.search("migration")
        assert res["results"] and not app.last_status["index"]["error"]


async def test_an_unusable_index_shows_its_one_line_in_search_and_sync(ws, make_app):
    app = make_app(ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        # replaced by something else while the app runs (watching is off: nothing repairs it)
        bad = app.engine.index_path.with_name("bad")
        bad.write_bytes(b"garbage" * 100)
        os.replace(bad, app.engine.index_path)
        for side in ("-wal", "-shm"):  # else SQLite reads the old pages from the old WAL
            Path(str(app.engine.index_path) + side).unlink(missing_ok=True)
        app.load_status()
        app.search_pane.query_one("Input").value = "migration"
        await settle(pilot)
        line = app.last_status["index"]["error"]
        assert str(app.engine.index_path) in line and "`clawmem index` repairs it" in line
        status = str(app.sync_pane.query_one("#sync-status", Static).render())
        assert "error: " in status and "not a usable clawmem index" in status
        assert "`clawmem index` repairs it" in str(app.search_pane.query_one("#preview").render())


def stop_a_rebuild(engine, after: int = 2) -> None:
    seen = [0]
    for e in engine.index(force=True, should_stop=lambda: seen[0] >= after):
        if isinstance(e, ev.FileIndexed):
            seen[0] += 1


@pytest.mark.slow  # over 1.5 s: the full suite runs it, the fast lane does not
async def test_sync_tab_shows_a_rebuild_left_unfinished(ws, make_app, make_engine):
    app = make_app(ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        other = make_engine(ws=ws)  # another process's rebuild, stopped half way
        stop_a_rebuild(other)
        assert rebuild_path(app.engine.index_path).exists()
        app.load_status()
        await settle(pilot)
        status = str(app.sync_pane.query_one("#sync-status", Static).render())
        assert "Rebuild   left unfinished (2 files done) · the next index (ctrl+r) resumes it" in status
        await pilot.press("f4", "ctrl+r")
        await settle(pilot)
        assert not rebuild_path(app.engine.index_path).exists()
        assert "Rebuild" not in str(app.sync_pane.query_one("#sync-status", Static).render())


@pytest.mark.slow  # over 1.5 s: the full suite runs it, the fast lane does not
async def test_quit_during_a_rebuild_asks_first(ws, make_app, embed_server):
    app = make_app(ws, overrides={"provider": "openai", "remote.baseUrl": f"{embed_server.url}/v1",
                                  "remote.apiKey": embed_server.api_key, "cache.enabled": False})
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        embed_server.gate = threading.Event()  # the rebuild's embedding waits until the app has quit
        await pilot.press("f4", "f9")
        await until(pilot, lambda: app.sync_pane.running == "rebuild", what="the rebuild to start")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, RebuildRunningScreen), what="the question")
        await pilot.press("escape")  # keep it running
        await until(pilot, lambda: not isinstance(app.screen, RebuildRunningScreen), what="the question to close")
        assert app.is_running and app.sync_pane.running == "rebuild"
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, RebuildRunningScreen), what="the question again")
        await pilot.press("q")
        await pilot.pause(0.1)
    assert app.return_code == 0
    embed_server.gate.set()
    # the rebuild stopped where it was: its file is left for the next index, the old index serves
    tmp = rebuild_path(app.engine.index_path)
    wait_for(lambda: tmp.exists() and app.engine.status()["index"]["rebuild"]["running"] is False, what="the stopped rebuild")
    assert app.engine.search("migration")["results"]


async def test_quit_without_a_rebuild_does_not_ask(ws, make_app):
    app = make_app(ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+q")
        await pilot.pause(0.1)
    assert not app.is_running
