"""Snapshots of each tab and of the key states, on the real engine over a temporary workspace.

Deterministic by construction: the clock is fixed (tuikit.FIXED_NOW), animations and cursor
blinking are off, the theme is fixed, and every path lives under the test's HOME so the app
shows it as `~/…`. Each docstring says what a person should see; look at the report before
accepting a change with --snapshot-update.
"""

from __future__ import annotations

import pytest

from textual.widgets import Input, TextArea

from clawmem.engine import events as ev
from clawmem.tui.widgets import sync_pane
from tuikit import build_app, seed_recalls, settle


@pytest.fixture(autouse=True)
def steady_durations(monkeypatch):
    """The real start-up index of these few notes is logged as "finished in <1s"; on a loaded
    machine it can take a second or two, which is not what these pictures are about."""
    real = sync_pane.duration
    monkeypatch.setattr(sync_pane, "duration", lambda seconds: real(0.0) if seconds < 5 else real(seconds))

SIZE = (100, 30)


def run(*keys: str, then=None):
    """A run_before that lets the startup index finish, presses keys, and settles again."""

    async def run_before(pilot) -> None:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot, 1)
        if then is not None:
            await then(pilot)
        await settle(pilot)

    return run_before


def typed(text: str) -> list[str]:
    return list(text)


def test_search_results(ws, snap_compare):
    """Search tab after typing "migration": the mode line says keyword-only and why, with how
    to add a model; two results (2026-02-11 and 2026-02-10) with path:lines, source, score, its
    band ("high"), date and a snippet that starts at the line that matched ("Fixed the migration…",
    not the heading), "migration" bold and underlined, cut between words; the preview on the right
    shows the first result's lines with line numbers, a bar beside the matched lines and ▶ at the
    first line that holds the word (line 4, in bold)."""
    assert snap_compare(build_app(ws), run_before=run(*typed("migration")), terminal_size=SIZE)


def test_search_explain_view(ws, snap_compare):
    """After "a828e60" then F7: the right pane is titled "Why (F7 for the preview)" and lists
    the keyword rank, BM25, how all terms matched, "keyword-only, by rank", and how the score is
    the hit's own evidence (the passage holds 100 % of the query's term weight; it names the rare
    identifier 'a828e60'); each row starts at the line holding a828e60."""
    assert snap_compare(build_app(ws), run_before=run(*typed("a828e60"), "f7"), terminal_size=SIZE)


def test_search_empty_workspace(empty_ws, snap_compare):
    """A workspace with no notes yet: an empty search box, the keyword-only line, and in the
    preview "No memory indexed yet" with the hint to press ctrl+n for today's first note."""
    assert snap_compare(build_app(empty_ws), run_before=run(), terminal_size=SIZE)


def test_search_no_results_with_hidden_hits(ws, tiny_model, snap_compare):
    """Hybrid mode with the tiny test model (weighted fusion): the mode line reads
    "Hybrid: local / tiny"; no word of "weather forecast" occurs in these notes, so the results
    are empty, the preview says "No matches." and why ("Nothing shown: this memory uses none of
    the query's words ('weather', 'forecast')") with F6 to see the 5 weak hits anyway,
    and the line under the results says the same."""
    app = build_app(ws, overrides={"provider": "local", "local.modelPath": str(tiny_model), "query.hybrid.fusion": "weighted"})
    assert snap_compare(app, run_before=run(*typed("weather forecast")), terminal_size=SIZE)


def test_search_80x24_keyword_only(ws, snap_compare):
    """The smallest supported terminal, 80×24: search for "Priya" still shows the tabs, the
    search box, the (wrapped) keyword-only line, results beside the preview (each row from its
    matched line: "- Priya leads the platform team…"), and the footer."""
    assert snap_compare(build_app(ws), run_before=run(*typed("Priya")), terminal_size=(80, 24))


def test_file_tab_tree_and_editor(ws, snap_compare):
    """File tab after opening a search result for "lasagna": the tree shows MEMORY.md and
    memory/projects.md on top, then Daily logs with 2026-02 (open, newest day first) above
    2026-01; the header reads "memory/2026-02-10.md · lines …"; the editor shows the log with
    Markdown highlighting and line numbers, the cursor line on "Dinner ideas: lasagna…", the
    first line of the matched range that holds the query word."""
    assert snap_compare(build_app(ws), run_before=run(*typed("lasagna"), "enter"), terminal_size=SIZE)


async def _edit(pilot) -> None:
    pilot.app.open_file("MEMORY.md")
    await settle(pilot)
    editor = pilot.app.query_one("#editor", TextArea)
    editor.move_cursor(editor.document.end)
    await pilot.press(*typed("- Likes long walks"))


def test_file_editor_dirty(ws, snap_compare):
    """MEMORY.md with an unsaved line "- Likes long walks" at the end: the header says
    "MEMORY.md · ● unsaved (ctrl+s)" in the warning colour and the footer's Save key is lit."""
    assert snap_compare(build_app(ws), run_before=run(then=_edit), terminal_size=SIZE)


async def _conflict(pilot) -> None:
    await _edit(pilot)
    ws = pilot.app.engine.workspace
    (ws / "MEMORY.md").write_text((ws / "MEMORY.md").read_text() + "- Agent: birthday is 3 May\n")
    await pilot.press("ctrl+s")


def test_conflict_prompt(ws, snap_compare):
    """Saving after the agent appended to MEMORY.md: a dialog "MEMORY.md changed on disk since
    you opened it" with the difference (the agent's line in red, the user's line in green), what
    each choice does with its key ("r Reload: … · m Merge: … · o Overwrite: …"), and the buttons Reload [r], Merge [m] (focused), Overwrite [o], Cancel [esc].
    Behind it, under the header, the yellow banner "⚠ Changed on disk since you opened it" with
    Reload, Merge and Keep mine."""
    assert snap_compare(build_app(ws), run_before=run(then=_conflict), terminal_size=SIZE)


async def _changed_banner(pilot) -> None:
    await _edit(pilot)
    ws = pilot.app.engine.workspace
    with (ws / "MEMORY.md").open("a") as fh:
        fh.write("- Agent: birthday is 3 May\n")
    pilot.app.file_pane._check_disk()  # what the one-second timer does


def test_changed_on_disk_banner(ws, snap_compare):
    """MEMORY.md with an unsaved line "- Likes long walks" at the end, then the agent appends to
    it: without any save, a yellow banner under the header says "⚠ Changed on disk since you
    opened it" with the buttons Reload, Merge and Keep mine; the editor still shows the user's text."""
    assert snap_compare(build_app(ws), run_before=run(then=_changed_banner), terminal_size=SIZE)


async def _recovery_offer(pilot) -> None:
    import json

    from clawmem.engine.files import editing, conflicts as files

    path = pilot.app.engine.workspace / "MEMORY.md"
    disk = files.read_file(path)
    target = editing.recovery_file("main", path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"path": str(path), "baseHash": disk.hash, "base": disk.text,
                                  "text": disk.text + "- Typed before the connection dropped\n",
                                  "time": "2026-02-12T09:12:40"}))
    pilot.app.open_file("MEMORY.md")


def test_recovery_offer(ws, snap_compare):
    """Opening MEMORY.md with unsaved text kept from a session that was cut off: a dialog
    "Unsaved text of MEMORY.md from 2026-02-12 09:12:40", both sizes (9 lines against 8), the
    difference (the unsaved line in green), what each choice does, and the buttons Restore [r]
    (focused), Discard [d] and Later [esc]."""
    assert snap_compare(build_app(ws), run_before=run(then=_recovery_offer), terminal_size=SIZE)


def test_sync_tab_after_start(ws, snap_compare):
    """Sync tab after the startup index: 5 files, 5 chunks, up to date, last sync just now,
    keyword-only provider, sqlite-vec, watcher off; the job line and the event log at 09:30:00
    say the index finished in <1s with 5 files indexed."""
    assert snap_compare(build_app(ws), run_before=run("f4"), terminal_size=SIZE)


async def _indexing(pilot) -> None:
    # a long index run in progress, as the engine reports it (real event objects, fixed numbers)
    app = pilot.app
    for event in (
        ev.JobStarted("index", "asked (ctrl+r)", 400, at=0.0),
        ev.FileIndexed("memory/2026-02-09.md", 3, "added"),
        ev.FileIndexed("MEMORY.md", 2, "updated"),
        ev.Warning("invalid UTF-8 at byte 12; indexed with replacement characters", "memory/old.md"),
    ):
        app.post_engine_event(event)
    await pilot.pause()
    # two progress reports two seconds apart (the pane's clock given): 20 files in 2 s
    app.sync_pane.on_progress(ev.Progress("files", 100, 400, 35.0, 8.0), now=10.0)
    app.sync_pane.on_progress(ev.Progress("files", 120, 400, 35.0, 8.0), now=12.0)
    app._render_topbar()


def test_sync_indexing_in_progress(ws, snap_compare):
    """Sync tab while an index runs: the header leads with "Index: 120/400 files · ETA 28s" (on
    every tab); the Index line says "index running: 120/400 files · ETA 28s" and the index
    path; above a progress bar at 30 % the job line reads "Index: 120/400 files · 10/s · ETA
    28s" (the last seconds' rate, not the engine's 35/s since the start); the log lists the
    start, an added and an updated file and a warning."""
    assert snap_compare(build_app(ws), run_before=run("f4", then=_indexing), terminal_size=SIZE)


async def _filter(pilot, text: str) -> None:
    pilot.app.config_pane.query_one("#config-filter", Input).value = text
    await settle(pilot, 1)
    pilot.app.config_pane.query_one("#config-table").focus()


def test_config_tab(ws, home_dirs, snap_compare):
    """Config tab with the filter "ui.": the config file line, the provider and vector line,
    the filter box, and the app's own settings with their values and where they came from
    (theme and animation from the file, the rest defaults), the first row highlighted and its
    documentation below; under a line, the session-start section: the caps (20,000 chars a
    file, 60,000 in all, OpenClaw's defaults), MEMORY.md 181 chars, today's log "not there
    yet", yesterday's 140 chars, each with an empty-looking meter, and the total "· nothing
    cut". (Filtered so that engine keys added later do not change the picture.)"""
    config = home_dirs / ".config" / "clawmem" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('# mine\n[ui]\ntheme = "clawmem-dark"\nanimation = "none"\n')

    async def then(pilot):
        await _filter(pilot, "ui.")

    assert snap_compare(build_app(ws), run_before=run("f5", then=then), terminal_size=SIZE)


async def _bad_value(pilot) -> None:
    await _filter(pilot, "maxResults")
    await pilot.press("enter")
    await pilot.pause()
    pilot.app.screen.query_one(Input).value = "500"
    await pilot.press("enter")


def test_config_bad_value(ws, snap_compare):
    """Editing query.maxResults (Enter on the filtered row) to 500: the dialog stays open and
    shows in red "query.maxResults: expected an integer from 1 to 200, got 500"; nothing is saved."""
    assert snap_compare(build_app(ws), run_before=run("f5", then=_bad_value), terminal_size=SIZE)


def test_first_run_offers_to_create_the_workspace(home_dirs, snap_compare):
    """First run with nothing configured: a "Welcome to clawmem" dialog offering to create
    ~/.openclaw/workspace with MEMORY.md and memory/, buttons Create [c] and Not now."""
    assert snap_compare(build_app(None), run_before=run(), terminal_size=SIZE)


def test_high_contrast_theme(ws, snap_compare):
    """The search results for "Tokyo" in the high-contrast theme: black background, white text,
    yellow focus borders and highlighted matches."""
    assert snap_compare(build_app(ws, theme="clawmem-contrast"), run_before=run(*typed("Tokyo")), terminal_size=SIZE)


def test_light_theme_file_tab(ws, snap_compare):
    """The File tab in the light theme, MEMORY.md open: dark text on white, readable tree."""

    async def open_memory(pilot):
        pilot.app.open_file("MEMORY.md")

    assert snap_compare(build_app(ws, theme="clawmem-light"), run_before=run(then=open_memory), terminal_size=SIZE)


def test_help_screen(ws, snap_compare):
    """F1: the help in a frame titled "Help" whose bottom edge says "esc, F1 or q closes"; its
    first line says so too, then what each tab and the Promote screen (F10) do, and the key
    table with ids."""
    assert snap_compare(build_app(ws), run_before=run("f1"), terminal_size=SIZE)


async def _overwritten_log(pilot) -> None:
    """An outside program replaces a log by a placeholder; the journal's times are set to the
    fixed clock so the snapshot does not depend on when it runs."""
    import subprocess

    from clawmem.engine.files.journal import Journal
    from tuikit import FIXED_NOW

    app = pilot.app
    log = app.engine.workspace / "memory" / "2026-02-10.md"
    subprocess.run(["sh", "-c", 'printf "# 2026-02-10\\n\\n(notes moved)\\n" > "$1"', "sh", str(log)], check=True)
    with Journal(app.engine.cfg) as jr:
        jr.catch_up()
        jr.conn.execute("update versions set ts = ?", (FIXED_NOW.timestamp() - 3600,))
        jr.conn.execute("update versions set ts = ? where id = (select max(id) from versions)", (FIXED_NOW.timestamp() - 600,))
    await pilot.press("f8")


def test_history_tab(ws, snap_compare):
    """History (F8) after an outside program replaced memory/2026-02-10.md by "(notes moved)":
    one line says "1 change since yesterday" and the keys; the list shows 02-12 09:20, the path,
    "v6 +1 -10" and the writer "outside" in the warning colour; the diff on the right is titled
    "v3 → v6 by outside", the marked hunk header ("▶ @@ … hunk 1/1") in reverse, the log's
    lines in red and the placeholder in green; the footer shows r Restore, u Undo hunk, s Since."""
    assert snap_compare(build_app(ws), run_before=run(then=_overwritten_log), terminal_size=SIZE)


def test_search_preview_scrolls_to_the_match_in_a_short_file(ws, snap_compare):
    """"quokka" is on line 19 of a 24-line file (one chunk, lines 1-24): the preview on the
    right is scrolled so that line 19, marked ▶ and in bold with "quokka" underlined, sits in
    its middle, not below the bottom edge."""
    from helpers import write

    write(ws / "memory" / "animals.md", "# Animals\n\n" + "".join(f"- note {n}: nothing special today\n" for n in range(3, 19))
          + "- Saw a quokka on Rottnest island\n" + "".join(f"- note {n}: more filler\n" for n in range(20, 25)))
    assert snap_compare(build_app(ws), run_before=run(*typed("quokka"), then=_preview_scrolled), terminal_size=SIZE)


async def _preview_scrolled(pilot) -> None:
    """The preview scrolls after its text is laid out, which a loaded machine delays."""
    from tuikit import preview_on_screen, until

    await until(pilot, lambda: "quokka" in preview_on_screen(pilot.app), what="the preview to show the match")


async def _find(pilot) -> None:
    pilot.app.open_file("memory/2026-02-10.md")
    await settle(pilot)
    await pilot.press("ctrl+f", *typed("priya"))


def test_file_find_bar(ws, snap_compare):
    """File tab, memory/2026-02-10.md open, ctrl+f then "priya": a find bar under the editor,
    titled "Find · Enter: next · Esc: back to the text", holds "priya"; in the editor "Priya" on
    line 7 is selected; the header reads "memory/2026-02-10.md · "priya" at line 7"."""
    assert snap_compare(build_app(ws), run_before=run(then=_find), terminal_size=SIZE)


def test_welcome_not_now_leaves_the_way_back(home_dirs, snap_compare):
    """First run, "Not now" (Esc) on the welcome: the Search tab's preview says "No workspace at
    ~/.openclaw/workspace yet." and how to create it later (ctrl+p, then "Create the
    workspace") or open another folder; a warning toast says the same."""
    assert snap_compare(build_app(None), run_before=run("escape"), terminal_size=SIZE)


async def _selected_row(pilot) -> None:
    await pilot.press("down")  # into the list: the selected row in its focused colours


def _sixteen_colours(theme: str, ws, snap_compare) -> None:
    from tuikit import limit_colours

    app = limit_colours(build_app(ws, theme=theme), "standard")
    assert snap_compare(app, run_before=run(*typed("migration"), then=_selected_row), terminal_size=SIZE)


def test_16_colours_dark(ws, snap_compare):
    """The default dark theme as a 16-colour terminal shows it (Rich's downgrade, its default
    palette): results for "migration" with the first row selected; its score "1.00" and the
    underlined "migration" are as readable as the rest of the row (dark on light grey)."""
    _sixteen_colours("clawmem-dark", ws, snap_compare)


def test_16_colours_light(ws, snap_compare):
    """The light theme in 16 colours: the selected row is white bold text on grey, its score
    "1.00" and the underlined "migration" included."""
    _sixteen_colours("clawmem-light", ws, snap_compare)


def test_16_colours_contrast(ws, snap_compare):
    """The high-contrast theme in 16 colours: the selected row is dark bold text on a strong
    highlight; the score and the underlined "migration" keep the row's colours (not accent on
    accent)."""
    _sixteen_colours("clawmem-contrast", ws, snap_compare)


def test_promote_screen(ws, snap_compare):
    """F10 after three days of recalls: the Promote screen's top line says how many passages
    the agent keeps recalling and the keys (a accept, e edit, x reject, Esc back); on the left
    the candidates, best first, each with its score, file:lines and recall and query counts; on
    the right, for the selected one, its score, counts and last recall, the six signals, the
    queries that recalled it, the numbered source lines from the daily log (a long one wraps
    under its text, "     │ with ANA, hotel near Shinjuku."), and the bullet that would go to
    MEMORY.md."""
    seed_recalls(ws)
    assert snap_compare(build_app(ws), run_before=run("f10"), terminal_size=SIZE)


# ---------------------------------------------------------------- 80×24: every tab and dialog
# The terminal a fresh SSH session, a tmux pane or a phone gives. Each tab is laid out for it
# first; nothing is cut mid-word without an ellipsis.

SMALL = (80, 24)


def test_80x24_file_tab(ws, snap_compare):
    """File tab at 80×24 with MEMORY.md open: the tree (MEMORY.md, memory/projects.md, Daily
    logs by month) takes about a quarter of the width, the header "MEMORY.md · …" and the
    editor with line numbers the rest; the footer shows Save, View, $EDITOR, Find."""

    async def open_memory(pilot):
        pilot.app.open_file("MEMORY.md")

    assert snap_compare(build_app(ws), run_before=run(then=open_memory), terminal_size=SMALL)


def test_80x24_sync_tab_after_rebuild(ws, snap_compare):
    """Sync tab at 80×24 after F9: the job line reads "Rebuild finished in <1s: 5 indexed, …"
    and the event log, following its newest line, ends with the same summary (wrapped under
    its time, not cut); the rebuild's "added …" lines are above it."""
    assert snap_compare(build_app(ws), run_before=run("f4", "f9"), terminal_size=SMALL)


def test_80x24_config_tab(ws, snap_compare):
    """Config tab at 80×24, filtered to "query.": the config file and provider lines, the
    one-line filter, at least eight settings with their value and the From column (default)
    whole, long values ending in "…"; the highlighted setting's documentation; the
    session-start section folded to one line ("▶ Session start: 321 of 60,000 chars, 2 files,
    nothing cut · F6 unfolds")."""

    async def then(pilot):
        await _filter(pilot, "query.")

    assert snap_compare(build_app(ws), run_before=run("f5", then=then), terminal_size=SMALL)


async def _long_line_change(pilot) -> None:
    """An outside program adds a long line to a log (journal times pinned to the fixed clock)."""
    import subprocess

    from clawmem.engine.files.journal import Journal
    from tuikit import FIXED_NOW

    app = pilot.app
    log = app.engine.workspace / "memory" / "2026-02-11.md"
    line = "- Decided to keep the staging database on the old schema until the migration of the sessions table is reviewed by Priya"
    subprocess.run(["sh", "-c", 'printf "%s\\n" "$2" >> "$1"', "sh", str(log), line], check=True)
    with Journal(app.engine.cfg) as jr:
        jr.catch_up()
        jr.conn.execute("update versions set ts = ?", (FIXED_NOW.timestamp() - 3600,))
        jr.conn.execute("update versions set ts = ? where id = (select max(id) from versions)", (FIXED_NOW.timestamp() - 600,))
    await pilot.press("f8")


def test_80x24_history_tab_wraps_with_the_marker(ws, snap_compare):
    """History at 80×24 after an outside program added a long line to memory/2026-02-11.md:
    the list shows the change by "outside"; in the diff the added line wraps between words,
    every row of it starting with "+" in green and the continuation indented two more."""
    assert snap_compare(build_app(ws), run_before=run(then=_long_line_change), terminal_size=SMALL)


def test_80x24_promote_screen(ws, snap_compare):
    """F10 at 80×24: the top line "2 passages the agent keeps recalling · a accept · e edit ·
    x reject · Esc back" whole; the candidates list (score, file:lines, counts) beside the
    detail, which wraps between words; the footer's keys."""
    seed_recalls(ws)
    assert snap_compare(build_app(ws), run_before=run("f10"), terminal_size=SMALL)


def test_80x24_promote_edit_dialog(ws, snap_compare):
    """F10 then e at 80×24: the "Edit before accepting (memory/2026-02-10.md#L…) · ctrl+s
    accept · Esc cancel" dialog with the passage's text in an editor, inside the screen."""
    seed_recalls(ws)
    assert snap_compare(build_app(ws), run_before=run("f10", "e"), terminal_size=SMALL)


def test_80x24_help_screen(ws, snap_compare):
    """F1 at 80×24: the help over the app, its frame saying "esc, F1 or q closes", its text
    (first "Esc, F1 or q closes this help") wrapped to the width, the key table's start in
    view and scrollable."""
    assert snap_compare(build_app(ws), run_before=run("f1"), terminal_size=SMALL)


def test_80x24_append_dialog(ws, snap_compare):
    """ctrl+n at 80×24: "New entry in memory/2026-02-12.md at 09:30" and the input "What
    should be remembered? (Enter adds it, Esc cancels)", with the cursor in it."""
    assert snap_compare(build_app(ws), run_before=run("ctrl+n"), terminal_size=SMALL)


def test_80x24_conflict_prompt(ws, snap_compare):
    """The save conflict at 80×24: "MEMORY.md changed on disk since you opened it", the
    difference (scrolling in the rows left), what each choice does with its key (r, m, o),
    and the four buttons Reload [r], Merge [m], Overwrite [o], Cancel [esc], all inside the screen."""
    assert snap_compare(build_app(ws), run_before=run(then=_conflict), terminal_size=SMALL)


def test_80x24_recovery_offer(ws, snap_compare):
    """The recovery offer at 80×24: unsaved text of MEMORY.md from 2026-02-12 09:12:40, the
    difference and the buttons Restore, Discard and Later, inside the screen."""
    assert snap_compare(build_app(ws), run_before=run(then=_recovery_offer), terminal_size=SMALL)


def test_80x24_edit_value_dialog(ws, snap_compare):
    """Editing query.maxResults to 500 at 80×24: the dialog shows its documentation and, in
    red, "query.maxResults: expected an integer from 1 to 200, got 500", wrapped, not cut."""
    assert snap_compare(build_app(ws), run_before=run("f5", then=_bad_value), terminal_size=SMALL)


def test_80x24_welcome(home_dirs, snap_compare):
    """First run at 80×24: the "Welcome to clawmem" dialog offering to create
    ~/.openclaw/workspace, its buttons Create [c] and Not now inside the screen."""
    assert snap_compare(build_app(None), run_before=run(), terminal_size=SMALL)


def test_80x24_unsaved_on_quit(ws, snap_compare):
    """ctrl+q with an unsaved line in MEMORY.md at 80×24: the dialog asks what to do with the
    unsaved edits of MEMORY.md, its buttons inside the screen."""

    async def then(pilot):
        await _edit(pilot)
        await pilot.press("ctrl+q")

    assert snap_compare(build_app(ws), run_before=run(then=then), terminal_size=SMALL)


def test_80x24_search_results_list_focused(ws, snap_compare):
    """Search for "migration" at 80×24, then ↓: the results list has the focus (its border in
    the primary colour) and its first row in the selection colours; the preview beside it."""
    assert snap_compare(build_app(ws), run_before=run(*typed("migration"), "down"), terminal_size=SMALL)
