"""Issue 12 (parts 1, 2 and 4): see the match, an editor fit for daily logs, honest state.
Pilot tests on the real engine over a temporary workspace."""

from __future__ import annotations

import pytest
from textual.geometry import Region
from textual.widgets import Input, TextArea

from helpers import write
from tuikit import build_app, preview_on_screen, settle, until

ANIMALS = "# Animals\n\n" + "".join(f"- note {n}: nothing special today\n" for n in range(3, 19)) + \
    "- Saw a quokka on Rottnest island\n" + "".join(f"- note {n}: more filler\n" for n in range(20, 25))


async def type_query(pilot, text: str) -> None:
    pilot.app.search_pane.query_one(Input).value = ""
    await pilot.press(*text)
    await settle(pilot)


def tree_on_screen(tree) -> str:
    return "\n".join(tree.render_line(y).text for y in range(tree.scrollable_content_region.height))


def editor_on_screen(editor) -> str:
    return "\n".join(strip.text for strip in editor.render_lines(Region(0, 0, editor.size.width, editor.size.height)))


async def test_preview_and_editor_show_the_matched_line_of_a_short_file(ws, make_app):
    write(ws / "memory" / "animals.md", ANIMALS)
    app = make_app(ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_query(pilot, "quokka")
        top = app.search_pane.result["results"][0]
        assert top["path"] == "memory/animals.md" and top["startLine"] < 19 <= top["endLine"]
        await settle(pilot)
        rows = str(app.search_pane.query_one("#preview").render()).split("\n")
        assert next(line for line in rows if "quokka" in line).lstrip().startswith("19 ▶")
        await until(pilot, lambda: "quokka" in preview_on_screen(app), what="the preview to scroll to line 19")
        await pilot.press("enter")
        await settle(pilot)
        editor = app.query_one("#editor", TextArea)
        assert editor.cursor_location == (18, 0)
        await until(pilot, lambda: "quokka" in editor_on_screen(editor), what="the editor to scroll to line 19")


async def test_after_ctrl_n_the_cursor_is_at_the_end_of_the_new_entry(ws, make_app):
    app = make_app(ws)
    log = ws / "memory" / "2026-02-11.md"
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+n", *"Fed the cat", "enter")
        await settle(pilot, 3)
        assert app.file_pane.opened.path == "memory/2026-02-12.md"
        editor = app.query_one("#editor", TextArea)
        assert editor.has_focus
        await pilot.press(*" at noon")
        assert editor.text == "# 2026-02-12\n\n## 09:30\n\nFed the cat at noon\n"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert (ws / "memory" / "2026-02-12.md").read_text() == editor.text
    assert log.read_text().startswith("# 2026-02-11")


async def test_editor_keys_for_long_logs(ws, make_app):
    """ctrl+end / ctrl+home, ctrl+g go-to-line, ctrl+f find as you type, Enter and F12 for the
    next match (wrapping to the top), Esc back to the text."""
    write(ws / "memory" / "animals.md", ANIMALS)
    app = make_app(ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.open_file("memory/animals.md")
        await settle(pilot)
        editor = app.query_one("#editor", TextArea)
        last = editor.document.line_count - 1
        await pilot.press("ctrl+end")
        assert editor.cursor_location == (last, 0)  # the file ends with a newline: an empty last line
        await pilot.press("ctrl+home")
        assert editor.cursor_location == (0, 0)
        await pilot.press("ctrl+g", *"19", "enter")
        await pilot.pause()
        assert editor.cursor_location[0] == 18 and editor.has_focus
        await pilot.press("ctrl+g", *"999", "enter")
        await pilot.pause()
        assert editor.cursor_location[0] == 18  # refused: out of range
        await pilot.press("escape")
        await pilot.press("ctrl+home", "ctrl+f", *"note 2")
        await pilot.pause()
        assert editor.selected_text == "note 2" and editor.selection.start == (19, 2)  # "- note 20" on line 20
        await pilot.press("enter")
        assert editor.selection.start == (20, 2)
        await pilot.press("escape")
        assert editor.has_focus and not app.query_one("#file-bar").display
        await pilot.press("f12", "f12", "f12")
        assert editor.selection.start == (23, 2)  # note 24, the last
        await pilot.press("f12")
        assert editor.selection.start == (19, 2)  # wrapped to the top
        assert "from the top" in str(app.query_one("#file-header").render())
        await pilot.press("ctrl+p", *"Go to a line")  # the same from the command palette
        await settle(pilot)
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("3", "enter")
        await pilot.pause()
        assert editor.cursor_location == (2, 0)


async def test_tree_width_follows_the_terminal_and_long_file_names_keep_their_end(ws, make_app):
    """At 80 columns the tree shows "…-garden-tomatoes.md": a file name too long is cut at its
    start (its end tells it from its neighbours), never scrolled sideways; wider, it is whole."""
    name = "memory/a-very-long-topic-file-about-garden-tomatoes.md"
    write(ws / name, "# Garden\n")
    app = make_app(ws)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)
        tree = app.query_one("#file-tree")
        narrow = tree.size.width
        shown = tree_on_screen(tree)
        assert "…" in shown and "garden-tomatoes.md" in shown and "memory/a-very-long" not in shown
        assert tree.virtual_size.width <= tree.scrollable_content_region.width  # no sideways scrolling
        await pilot.resize_terminal(200, 40)
        await settle(pilot)
        assert tree.size.width > narrow
        assert "memory/a-very-long-topic-file-about-garden-tomatoes.md" in tree_on_screen(tree)


def test_the_default_keys_collide_nowhere_and_a_history_key_is_checked_too():
    """The shipped keymap passes its own check (History's F8 once took the File tab's
    find-next); a History key that shadows an everywhere-key is refused like any other."""
    from clawmem.tui import tabs as keys

    assert keys.keymap_problem({}) is None
    assert "collides with tab.search" in keys.keymap_problem({"history.since": "f2"})


def test_a_colliding_keymap_or_a_ui_typo_is_one_line_at_start(ws, home_dirs):
    from helpers import run_cli

    config = home_dirs / ".config" / "clawmem" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    env = {"HOME": str(home_dirs)}
    for table, expected in (
        ('[ui.keymap]\n"search.focus" = "ctrl+q"\n', 'ui.keymap: search.focus = "ctrl+q" collides with app.quit (Quit); pick another key'),
        ('[ui.keymap]\n"app.quit" = " , "\n', 'app.quit = " , ": an empty key'),
        ('[ui]\nthem = "clawmem-light"\n', "ui.them: unknown setting; did you mean 'theme'?"),
        ('[ui.keymap]\n"file.sav" = "f10"\n', "unknown binding id 'file.sav'; did you mean 'file.save'?"),
    ):
        config.write_text(table)
        done = run_cli("--workspace", str(ws), env=env, timeout=60)
        assert done.returncode == 2, done
        assert expected in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert "Traceback" not in done.stderr


async def test_keymap_edits_are_checked_and_tab_labels_show_the_keys(ws, make_app, home_dirs):
    config = home_dirs / ".config" / "clawmem" / "config.toml"
    app = make_app(ws, keymap={"tab.sync": "f10"})
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        tabs = app.query_one("#tabs")
        assert str(tabs.get_tab("sync").label) == "Sync F10"
        await pilot.press("f5")
        app.config_pane.edit("ui.keymap")
        await pilot.pause()
        screen = app.screen
        screen.query_one(Input).value = '{ "search.focus" = "ctrl+q" }'
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is screen
        assert "collides with app.quit" in str(screen.query_one("#error").render())
        assert not config.exists() or "ctrl+q" not in config.read_text()
        screen.query_one(Input).value = '{ "tab.file" = "f11" }'
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is not screen
        assert str(tabs.get_tab("file").label) == "File F11" and str(tabs.get_tab("sync").label) == "Sync F4"
        await pilot.press("f11")
        await pilot.pause()
        assert tabs.active == "file"


def test_eta_comes_from_the_recent_rate_not_the_whole_run():
    """A resumed rebuild: 400 of 1000 files were done and are skipped in half a second, then
    each file takes 0.1 s. The ETA is the 600 files left at 10 per second, not the 1 s a rate
    over the whole run (800 files/s at first) would promise."""
    from clawmem.tui.widgets.sync_pane import EtaMeter

    meter = EtaMeter()
    assert meter.add("files", 400, 1000, now=0.5) == (None, None)  # no ETA from one sample
    assert meter.add("files", 405, 1000, now=1.0) == (None, None)  # nor before a second of progress
    rate, eta = meter.add("files", 420, 1000, now=2.5)
    assert eta == pytest.approx(580 / 10) and rate == pytest.approx(10)
    for n in range(1, 20):  # later, only the last ten seconds count
        rate, eta = meter.add("files", 420 + 5 * n, 1000, now=2.5 + n)
    assert rate == pytest.approx(5) and eta == pytest.approx((1000 - 515) / 5)
    assert meter.add("embed", 10, 100, now=30.0) == (None, None)  # a new phase starts over


async def test_at_80_columns_the_header_still_shows_the_running_job(ws, make_app):
    """The header's end is cut at 80 columns: the job leads it, so a long workspace path and
    the model's name are what is cut, never "Rebuild: 770/3001 files"."""
    import shutil

    from clawmem.engine import events as ev

    deep = ws.parent / "projects" / "assistant-memory-workspaces" / "personal-notes"
    shutil.copytree(ws, deep)  # a workspace path as long as many people's
    app = make_app(deep)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.post_engine_event(ev.JobStarted("rebuild", "asked (F9)", 3001, at=0.0))
        await pilot.pause()
        app.sync_pane.on_progress(ev.Progress("files", 770, 3001, 900.0, 2.0), now=102.0)
        app._render_topbar()
        await pilot.pause()
        text = str(app.query_one("#topbar").render())
        visible = text[: 80 - 2]  # the bar's width less its padding
        assert "Rebuild: 770/3001 files" in visible, text


async def test_header_shows_indexing_progress_on_every_tab_and_the_sync_tab_follows(ws, make_app):
    from clawmem.engine import events as ev

    app = make_app(ws)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        topbar = app.query_one("#topbar")
        assert "files" not in str(topbar.render())
        app.post_engine_event(ev.JobStarted("rebuild", "asked (F9)", 3001, at=0.0))
        await pilot.pause()
        app.sync_pane.on_progress(ev.Progress("files", 750, 3001, 900.0, 2.0), now=100.0)
        app.sync_pane.on_progress(ev.Progress("files", 770, 3001, 900.0, 2.0), now=102.0)  # 10 files/s lately
        app._render_topbar()
        for tab in ("f2", "f3", "f4", "f5"):
            await pilot.press(tab)
            await pilot.pause()
            assert "Rebuild: 770/3001 files · ETA 4 min" in str(topbar.render())
        status = str(app.sync_pane.query_one("#sync-status").render())
        assert status.startswith("Index     rebuild running: 770/3001 files · ETA 4 min · ~/.local")
        app.post_engine_event(ev.JobFinished("rebuild", 3001, 0, 0, 5, 3.0))
        await settle(pilot)
        assert "rebuild" not in str(topbar.render()).lower()
        assert str(app.sync_pane.query_one("#sync-status").render()).startswith("Index     5 files, 5 chunks · ~/.local")


async def test_not_now_on_the_welcome_leaves_a_way_to_create_the_workspace(home_dirs):
    from clawmem.tui.widgets.dialogs import CreateWorkspaceScreen

    app = build_app(None)
    target = home_dirs / ".openclaw" / "workspace"
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            assert isinstance(app.screen, CreateWorkspaceScreen)
            await pilot.press("escape")
            await settle(pilot)
            preview = str(app.search_pane.query_one("#preview").render())
            assert "No workspace at ~/.openclaw/workspace yet" in preview and '"Create the workspace"' in preview
            await pilot.press("ctrl+p")
            await pilot.pause()
            await pilot.press(*"Create the workspace")
            await settle(pilot)
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, CreateWorkspaceScreen)
            await pilot.press("c")
            await settle(pilot, 3)
            assert (target / "MEMORY.md").is_file()
            assert "Type to search 1 file (1 chunk)." in str(app.search_pane.query_one("#preview").render())
    finally:
        app.engine.close()


async def test_f6_with_nothing_hidden_says_so(ws, make_app):
    app = make_app(ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_query(pilot, "lasagna")
        line = app.search_pane.query_one("#hidden-line")
        assert str(line.render()) == ""
        await pilot.press("f6")
        await settle(pilot)
        assert str(line.render()).startswith("Nothing scored below the threshold for this search")
        await pilot.press("f6")
        await settle(pilot)
        assert str(line.render()) == ""


async def test_config_tab_shows_what_an_agent_loads_at_session_start(ws, make_app, home_dirs):
    """MEMORY.md within its cap, today's log missing, yesterday's (2026-02-11) over a per-file
    cap of 300 chars set in OpenClaw's config: the cut is named in chars and lines."""
    import json

    openclaw = home_dirs / ".openclaw" / "openclaw.json"
    write(openclaw, json.dumps({"agents": {"defaults": {"bootstrapMaxChars": 300, "workspace": str(ws)}}}))
    write(ws / "memory" / "2026-02-11.md", "# 2026-02-11\n" + "".join(f"- line {n} of a long day\n" for n in range(40)))
    app = make_app(ws)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await settle(pilot)
        lines = str(app.config_pane.query_one("#context-view").render()).split("\n")
        assert lines[0].startswith("Session start (main): what an agent loads") and "300 chars a file" in lines[0]
        memory = next(line for line in lines if "MEMORY.md" in line)
        assert f"{len((ws / 'MEMORY.md').read_text()):,} chars" in memory and "cut" not in memory
        assert "not there yet" in next(line for line in lines if "2026-02-12.md" in line)
        yesterday = next(line for line in lines if "2026-02-11.md" in line)
        assert "yesterday" in yesterday and "cut:" in yesterday and "over the per-file cap of 300 chars" in yesterday
        assert lines[-1].lstrip().startswith("total") and lines[-1].endswith("1 file cut")
        # a new note for today shows up after the next index run
        await pilot.press("ctrl+n", *"Wrote today", "enter")
        await settle(pilot, 3)
        app.load_status()
        await settle(pilot, 2)
        today = next(line for line in str(app.config_pane.query_one("#context-view").render()).split("\n")
                     if "2026-02-12.md" in line)
        assert "not there yet" not in today and " chars " in today


@pytest.mark.parametrize("theme", ["clawmem-dark", "clawmem-light", "clawmem-contrast"])
@pytest.mark.parametrize("colours", ["standard", "256"])
async def test_the_selected_rows_score_and_match_are_readable_in_16_and_256_colours(ws, make_app, theme, colours):
    from tuikit import contrast, screen_segments

    app = make_app(ws, theme=theme)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_query(pilot, "migration")
        await pilot.press("down")  # the list has focus: its selected row in the focused colours
        await settle(pilot)
        top = app.search_pane.result["results"][0]
        segments = screen_segments(app, colours)
        score = next(s for s in segments if s.text.strip() == f"{top['score']:.2f}")
        word = next(s for s in segments if s.text.lower() == "migration" and s.style.bgcolor == score.style.bgcolor)
        for seg in (score, word):
            assert contrast(seg.style) >= 3.0, (seg, contrast(seg.style))


async def test_counts_of_one_read_as_one(empty_ws, make_app):
    write(empty_ws / "MEMORY.md", "# Memory\n- one fact\n")
    app = make_app(empty_ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert "Type to search 1 file (1 chunk)." in str(app.search_pane.query_one("#preview").render())
        log = "\n".join(app.sync_pane.query_one("#sync-log").lines)
        assert "index started (start): 1 file\n" in log + "\n" and "added MEMORY.md (1 chunk)" in log
        assert str(app.sync_pane.query_one("#sync-status").render()).startswith("Index     1 file, 1 chunk ·")
