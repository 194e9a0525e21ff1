"""The History tab on the real engine and journal: an outside process
overwrites a log, the tab shows it as a diff by "outside", one key restores the file (and
the restore is undoable), another undoes one hunk and keeps what was written since."""

from __future__ import annotations

import subprocess

from textual.widgets import OptionList, Static

from clawmem.engine.files import writers
from clawmem.engine.files.journal import Journal
from tuikit import DAY_10, settle


def outside_write(path, text: str) -> None:
    """Another program (not clawmem) rewrites the file."""
    subprocess.run(["sh", "-c", 'printf "%s" "$1" > "$2"', "sh", text, str(path)], check=True)


async def show_history(pilot) -> None:
    await pilot.press("f8")
    await settle(pilot)


async def test_an_outside_overwrite_shows_as_a_diff_and_r_restores_every_byte(ws, make_app):
    log = ws / "memory" / "2026-02-10.md"
    app = make_app(ws)
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)  # the startup index journals every file as its base
        outside_write(log, "# 2026-02-10\n\n(moved to another place)\n")
        await show_history(pilot)
        pane = app.history_pane
        assert app.query_one("#tabs").active == "history"
        assert [(e.path, e.writer) for e in pane.entries] == [("memory/2026-02-10.md", "outside")]
        diff = str(pane.query_one("#history-diff", Static).render())
        assert "-Rolled back and opened ticket OPS-1432." in diff and "+(moved to another place)" in diff
        assert pane.query_one("#history-list", OptionList).has_focus

        await pilot.press("r")
        await settle(pilot)
        assert log.read_text() == DAY_10
        top = pane.entries[0]
        assert top.writer.startswith("restore of v") and top.path == "memory/2026-02-10.md"
        # the restore is a change like any other: r on it undoes the restore
        await pilot.press("r")
        await settle(pilot)
        assert log.read_text() == "# 2026-02-10\n\n(moved to another place)\n"


async def test_a_file_created_after_the_startup_index_shows_as_created_and_r_never_deletes_it(ws, make_app):
    log = ws / "memory" / "2026-02-12.md"
    app = make_app(ws)
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)  # the startup index journals the files there as their base, not as created
        outside_write(log, "# 2026-02-12\n\n## 08:00\nBooked the ferry.\n")
        await show_history(pilot)
        pane = app.history_pane
        assert [(e.path, e.writer, e.created, e.added, e.removed) for e in pane.entries] == [("memory/2026-02-12.md", "outside", True, 4, 0)]
        label = str(pane.query_one("#history-list", OptionList).get_option_at_index(0).prompt)
        assert f"v{pane.entries[0].version} created +4" in label
        diff = str(pane.query_one("#history-diff", Static).render())
        assert f"memory/2026-02-12.md  created in v{pane.entries[0].version}" in diff and "the file was created" in diff
        assert "+Booked the ferry." in diff and "@@ -0,0 +1,4 @@" in diff

        await pilot.press("r")  # before it the file did not exist: refused, nothing deleted
        await settle(pilot)
        assert log.read_text() == "# 2026-02-12\n\n## 08:00\nBooked the ferry.\n"
        assert any("did not exist before" in n.message for n in app._notifications)


async def test_u_undoes_only_the_marked_hunk_and_keeps_later_writes(ws, make_app):
    log = ws / "memory" / "2026-02-10.md"
    app = make_app(ws)
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        # one outside change with two hunks: the 09:00 entry and the 17:45 one
        changed = DAY_10.replace("hotel near Shinjuku", "TODO").replace("lasagna with extra cheese", "TODO")
        outside_write(log, changed)
        await show_history(pilot)
        pane = app.history_pane
        assert len(pane.entries[0].hunks) == 2
        # then the agent appends, and the tab is shown again
        with log.open("a") as fh:
            fh.write("\n## 18:30\nBooked the ferry.\n")
        await pilot.press("f2")
        await show_history(pilot)
        assert pane.selected.version == pane.entries[-1].version  # the first change, now below the append
        pane.query_one("#history-list", OptionList).highlighted = len(pane.entries) - 1
        await settle(pilot)
        await pilot.press("right_square_bracket")
        assert "▶ @@" in str(pane.query_one("#history-diff", Static).render()).split("hotel")[-1]
        await pilot.press("u")
        await settle(pilot)
        text = log.read_text()
        assert "lasagna with extra cheese" in text  # the marked (second) hunk is undone
        assert "hotel near Shinjuku" not in text and "TODO" in text  # the first is not
        assert text.endswith("## 18:30\nBooked the ferry.\n")  # and the later append stays
        with Journal(app.engine.cfg) as jr:
            assert jr.latest("memory/2026-02-10.md").writer.startswith("restore of a hunk")


async def test_a_hunk_changed_again_since_is_refused(ws, make_app):
    log = ws / "memory" / "2026-02-10.md"
    app = make_app(ws)
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        outside_write(log, DAY_10.replace("lasagna with extra cheese", "TODO"))
        await show_history(pilot)
        outside_write(log, DAY_10.replace("lasagna with extra cheese", "soup"))
        await pilot.press("u")
        await settle(pilot)
        assert "soup" in log.read_text()  # nothing written
        assert any("changed at that place" in n.message for n in app._notifications)


async def test_the_apps_own_saves_and_notes_are_credited_to_the_app(ws, make_app, monkeypatch):
    monkeypatch.setattr(writers, "WRITER", writers.WRITER)  # the app renames this process; put it back after
    app = make_app(ws)
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        app.open_file("MEMORY.md")
        await settle(pilot)
        editor = app.query_one("#editor")
        editor.move_cursor(editor.document.end)
        await pilot.press(*"- tea, not coffee", "enter", "ctrl+s")
        await settle(pilot)
        await show_history(pilot)
        assert [(e.path, e.writer) for e in app.history_pane.entries] == [("MEMORY.md", "app")]
        assert "+- tea, not coffee" in str(app.history_pane.query_one("#history-diff", Static).render())


async def test_the_first_open_shows_what_the_journal_holds_before_checking_the_files(ws, make_app):
    """Checking every file for unrecorded changes takes seconds on a busy machine: the tab first
    shows the changes the journal already holds, saying it is checking, then fills in the one
    the check found."""
    from clawmem.tui.widgets import history_pane

    log = ws / "memory" / "2026-02-10.md"
    app = make_app(ws)
    seen = []

    class Recorded(history_pane.HistoryLoaded):  # what the loader posts, in order
        def __init__(self, entries, note):
            super().__init__(entries, note)
            seen.append(([e.path for e in entries], note))

    original = history_pane.HistoryLoaded
    history_pane.HistoryLoaded = Recorded
    try:
        async with app.run_test(size=(110, 32)) as pilot:
            await settle(pilot)
            outside_write(log, "# 2026-02-10\n\n(first outside edit)\n")
            with Journal(app.engine.cfg) as jr:
                jr.catch_up()  # recorded: the journal holds this change before the tab opens
            outside_write(ws / "memory" / "projects.md", "# Projects\n\n(second outside edit, not recorded yet)\n")
            await show_history(pilot)
            shown = [e.path for e in app.history_pane.entries]
    finally:
        history_pane.HistoryLoaded = original
    first, last = seen[0], seen[-1]
    assert first == (["memory/2026-02-10.md"], "checking the files for changes not recorded yet…")
    assert last[1] is None and sorted(last[0]) == ["memory/2026-02-10.md", "memory/projects.md"]
    assert sorted(shown) == sorted(last[0])
