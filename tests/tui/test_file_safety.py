"""The File tab never loses a byte: the issue 9 path (reload, undo, save), the banner when the
open file changes or disappears on disk, a line-correct merge, and the recovery copy."""

from __future__ import annotations

import os
import stat

from textual.widgets import TextArea

from clawmem.engine.files import editing
from clawmem.tui.widgets.dialogs import ConflictScreen, DeletedScreen, RecoveryScreen
from tuikit import screen_segments, settle

LOG = "memory/2026-02-11.md"


async def open_and_type(pilot, app, path: str, line: str) -> TextArea:
    app.open_file(path)
    await settle(pilot)
    editor = app.query_one("#editor", TextArea)
    editor.move_cursor(editor.document.end)
    await pilot.press(*line, "enter")
    await pilot.pause()
    assert app.file_pane.dirty
    return editor


async def wait_until(pilot, cond, seconds: float = 5.0) -> None:
    for _ in range(int(seconds / 0.05)):
        if cond():
            return
        await pilot.pause(0.05)
    assert cond()


def banner_text(app) -> str:
    return str(app.query_one("#banner-text").render()) if app.query_one("#file-banner").display else ""


async def test_reload_then_undo_then_save_asks_again_and_keeps_the_agents_line(ws, make_app):
    """Issue 9, item 1: this saved without a dialog and the agent's line was gone."""
    app = make_app(ws)
    log = ws / LOG
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        editor = await open_and_type(pilot, app, LOG, "my own line")
        mine = editor.text
        with log.open("a") as fh:
            fh.write("agent appended this\n")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ConflictScreen)
        await pilot.press("r")
        await settle(pilot)
        assert editor.text == log.read_text()
        await pilot.press("ctrl+z")  # "ctrl+z brings yours back"
        await pilot.pause()
        assert editor.text == mine
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ConflictScreen), "saved over the agent's line without showing it"
        assert "-agent appended this" in app.screen.diff
        assert log.read_text().endswith("agent appended this\n")
        await pilot.press("m")
        await settle(pilot)
        on_disk = log.read_text()
        assert on_disk.endswith("agent appended this\nmy own line\n") and editor.text == on_disk


async def test_banner_as_soon_as_the_file_changes_and_merge_replaces_the_edited_line(ws, make_app):
    app = make_app(ws)
    log = ws / LOG
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.open_file(LOG)
        await settle(pilot)
        editor = app.query_one("#editor", TextArea)
        row = next(i for i in range(editor.document.line_count) if editor.document.get_line(i).startswith("Fixed"))
        editor.move_cursor((row, len(editor.document.get_line(row))))
        await pilot.press(*" (twice)")
        assert app.file_pane.dirty and banner_text(app) == ""
        with log.open("a") as fh:
            fh.write("\n## 11:00\nagent appended this\n")
        await wait_until(pilot, lambda: "Changed on disk" in banner_text(app))  # no save needed
        await pilot.pause()  # the banner's buttons are laid out before the click lands on one
        await pilot.click("#banner-merge")
        await wait_until(pilot, lambda: banner_text(app) == "")
        text = editor.text
        assert "Fixed the migration: the index on sessions.user_id was missing. (twice)\n" in text
        assert "was missing.\n" not in text  # replaced in place, not duplicated at the end
        assert text.endswith("## 11:00\nagent appended this\n")
        assert app.file_pane.dirty  # merged into the editor, saved by the user
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert log.read_text() == text and not app.file_pane.dirty


async def test_a_clean_buffer_follows_the_disk_and_keep_mine_still_asks_at_save(ws, make_app):
    app = make_app(ws)
    log = ws / LOG
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.open_file(LOG)
        await settle(pilot)
        editor = app.query_one("#editor", TextArea)
        with log.open("a") as fh:
            fh.write("first agent line\n")
        await wait_until(pilot, lambda: editor.text.endswith("first agent line\n"))
        assert banner_text(app) == "" and not app.file_pane.dirty
        editor.move_cursor((0, 0))
        await pilot.press(*"x")
        with log.open("a") as fh:
            fh.write("second agent line\n")
        await wait_until(pilot, lambda: "Changed on disk" in banner_text(app))
        await pilot.pause()  # the banner's buttons are laid out before the click lands on one
        await pilot.click("#banner-keep")
        await pilot.pause()
        assert banner_text(app) == ""
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ConflictScreen) and "-second agent line" in app.screen.diff


async def test_deleted_on_disk_says_so_and_saves_as_new(ws, make_app):
    app = make_app(ws)
    log = ws / LOG
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        editor = await open_and_type(pilot, app, LOG, "keep me")
        log.unlink()
        await wait_until(pilot, lambda: "Deleted on disk" in banner_text(app))
        assert not app.query_one("#banner-merge").display and app.query_one("#banner-new").display
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, DeletedScreen)
        await pilot.press("n")
        await settle(pilot)
        assert log.read_text() == editor.text and "keep me\n" in editor.text
        assert not app.file_pane.dirty and banner_text(app) == ""


async def test_unsaved_text_is_kept_privately_and_dropped_on_save(ws, make_app):
    app = make_app(ws)
    log = ws / LOG
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        editor = await open_and_type(pilot, app, LOG, "not saved yet")
        kept = editing.recovery_file(app.engine.cfg.agent_id, log)
        await wait_until(pilot, kept.exists)
        assert stat.S_IMODE(os.stat(kept).st_mode) == 0o600
        # written at most once a second while typing: the last keystrokes reach it a moment later
        await wait_until(pilot, lambda: editing.find_recovery(app.engine.cfg.agent_id, log).text == editor.text)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert not kept.exists()


async def test_a_kept_text_is_offered_on_open_and_discard_deletes_it(ws, make_app):
    log = ws / LOG
    first = make_app(ws)
    async with first.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        editor = await open_and_type(pilot, first, LOG, "typed before the connection dropped")
        kept = editing.recovery_file(first.engine.cfg.agent_id, log)
        await wait_until(pilot, lambda: (rec := editing.find_recovery("main", log)) and rec.text == editor.text)
    # the app ended without saving or discarding (run_test's end asks nothing)
    for choice in ("escape", "r", "d"):
        app = make_app(ws)
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            app.open_file(LOG)
            await settle(pilot)
            assert isinstance(app.screen, RecoveryScreen)
            assert "+typed before the connection dropped" in app.screen.diff
            await pilot.press(choice)
            await settle(pilot)
            editor = app.query_one("#editor", TextArea)
            if choice == "r":
                assert "typed before the connection dropped" in editor.text and app.file_pane.dirty
                assert "typed before" not in log.read_text()
            elif choice == "d":
                assert not kept.exists() and not app.file_pane.dirty
            else:
                assert kept.exists() and not app.file_pane.dirty


async def test_discard_on_quit_deletes_the_kept_text(ws, make_app):
    app = make_app(ws)
    log = ws / LOG
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await open_and_type(pilot, app, LOG, "thrown away")
        kept = editing.recovery_file(app.engine.cfg.agent_id, log)
        await wait_until(pilot, kept.exists)
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.press("d")
        await pilot.pause()
    assert not kept.exists() and "thrown away" not in log.read_text()


async def test_at_80x24_the_conflict_dialog_shows_its_buttons_and_names_their_keys(ws, make_app):
    """A person at 80×24 whose save meets an agent's long append sees the whole dialog: the diff
    scrolls in what room is left, and the Reload [r], Merge [m], Overwrite [o] and Cancel buttons
    stand inside the screen (they were cut off below it)."""
    app = make_app(ws)
    log = ws / LOG
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await open_and_type(pilot, app, LOG, "my own line")
        with log.open("a") as fh:
            fh.write("".join(f"agent line {i}\n" for i in range(30)))
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ConflictScreen)
        await settle(pilot)
        screen = app.screen.region
        for name in ("reload", "merge", "overwrite", "cancel"):
            button = app.screen.query_one(f"#{name}")
            assert screen.contains_region(button.region) and button.region.height >= 1, (name, button.region)
        shown = "".join(seg.text for seg in screen_segments(app))
        for label in ("Reload [r]", "Merge [m]", "Overwrite [o]", "Cancel [esc]"):
            assert label in shown, label
        await pilot.press("m")
        await settle(pilot)
        assert log.read_text().endswith("agent line 29\nmy own line\n")


async def test_restored_text_puts_the_cursor_on_it_and_saving_keeps_it_there(ws, make_app):
    """A person who restores the unsaved text sees the cursor on the first restored line, and
    after ctrl+s the cursor is still where they left it (it jumped to line 1)."""
    log = ws / LOG
    first = make_app(ws)
    async with first.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        editor = await open_and_type(pilot, first, LOG, "typed before the connection dropped")
        await wait_until(pilot, lambda: (rec := editing.find_recovery("main", log)) and rec.text == editor.text)
    app = make_app(ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.open_file(LOG)
        await settle(pilot)
        assert isinstance(app.screen, RecoveryScreen)
        await pilot.press("r")
        await settle(pilot)
        editor = app.query_one("#editor", TextArea)
        row = editor.text.splitlines().index("typed before the connection dropped")
        assert editor.cursor_location == (row, 0)
        editor.move_cursor((row, 5))
        await pilot.press("ctrl+s")
        await settle(pilot, rounds=4)
        assert "typed before the connection dropped" in log.read_text() and not app.file_pane.dirty
        assert editor.cursor_location == (row, 5)
