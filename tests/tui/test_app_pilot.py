"""Pilot tests of the app's flows on the real engine over a temporary workspace."""

from __future__ import annotations

import pytest
from textual.widgets import Input, OptionList, TextArea

from clawmem.tui.widgets.dialogs import ConflictScreen, CreateWorkspaceScreen, EditValueScreen, UnsavedScreen
from tuikit import FIXED_NOW, build_app, settle


async def type_query(pilot, text: str) -> None:
    pilot.app.search_pane.query_one(Input).value = ""
    await pilot.press(*text)
    await settle(pilot)


async def test_search_then_enter_opens_the_file_at_the_matched_lines(ws, make_app):
    app = make_app(ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_query(pilot, "migration rolled back")
        res = app.search_pane.result
        assert res["mode"] == "keyword"
        top = res["results"][0]
        assert top["path"] == "memory/2026-02-10.md"
        assert app.search_pane.query_one("#results", OptionList).option_count == len(res["results"])
        await pilot.press("enter")
        await settle(pilot)
        assert app.query_one("#tabs").active == "file"
        editor = app.query_one("#editor", TextArea)
        assert app.file_pane.opened.path == "memory/2026-02-10.md"
        row, col = editor.cursor_location
        assert col == 0 and top["startLine"] - 1 <= row <= top["endLine"] - 1
        assert "migration" in editor.document.get_line(row).lower()  # the first matched line in the range
        assert editor.has_focus
        assert f"lines {top['startLine']}-{top['endLine']}" in str(app.query_one("#file-header").render())


async def test_a_slower_older_result_never_replaces_a_newer_one(ws, make_app):
    from clawmem.tui.messages import SearchDone

    app = make_app(ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_query(pilot, "lasagna")
        pane = app.search_pane
        newest = pane.result
        # the answer to an earlier keystroke arrives late
        late = app.engine.search("tokyo", explain=True)
        pane.post_message(SearchDone(pane.seq - 1, "tokyo", late))
        await settle(pilot)
        assert pane.result is newest
        assert pane.result["results"][0]["snippet"].count("lasagna")


async def test_results_row_preview_and_explanation(ws, make_app):
    app = make_app(ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_query(pilot, "a828e60")
        preview = str(app.search_pane.query_one("#preview").render())
        assert "a828e60" in preview
        await pilot.press("f7")
        await settle(pilot)
        why = str(app.search_pane.query_one("#preview").render())
        assert why.startswith("Why memory/") and "keyword  rank 1" in why
        await pilot.press("ctrl+y")
        top = app.search_pane.result["results"][0]
        assert app.clipboard == top["citation"]


async def test_append_to_todays_log_is_saved_and_searchable(ws, make_app):
    app = make_app(ws)
    today = ws / "memory" / "2026-02-12.md"
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert not today.exists()
        await pilot.press("ctrl+n")
        await pilot.press(*"Ordered a zebrafish tank")
        await pilot.press("enter")
        await settle(pilot, 3)
        assert today.read_text() == "# 2026-02-12\n\n## 09:30\n\nOrdered a zebrafish tank\n"
        assert app.query_one("#tabs").active == "file"
        assert app.file_pane.opened.path == "memory/2026-02-12.md"
        await pilot.press("f2")
        await type_query(pilot, "zebrafish")
        assert [r["path"] for r in app.search_pane.result["results"]] == ["memory/2026-02-12.md"]


async def open_and_edit(pilot, app, path: str, line: str) -> TextArea:
    app.open_file(path)
    await settle(pilot)
    editor = app.query_one("#editor", TextArea)
    editor.move_cursor(editor.document.end)
    await pilot.press(*line, "enter")
    await pilot.pause()
    assert app.file_pane.dirty
    return editor


@pytest.mark.parametrize("choice", ["reload", "merge", "overwrite", "cancel"])
async def test_external_write_while_editing_asks_and_each_choice_does_what_it_says(ws, make_app, choice):
    app = make_app(ws)
    log = ws / "memory" / "2026-02-11.md"
    original = log.read_text()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        editor = await open_and_edit(pilot, app, "memory/2026-02-11.md", "my own line")
        mine = editor.text
        agent = original + "\n## 11:00\nagent appended this\n"
        log.write_text(agent)  # the agent writes while the user edits
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ConflictScreen)
        diff = "\n".join(app.screen.diff)
        assert "-agent appended this" in diff and "+my own line" in diff
        await pilot.press({"reload": "r", "merge": "m", "overwrite": "o", "cancel": "escape"}[choice])
        await settle(pilot)
        assert not isinstance(app.screen, ConflictScreen)
        on_disk = log.read_text()
        if choice == "reload":
            assert on_disk == agent and editor.text == agent and not app.file_pane.dirty
            editor.undo()  # the user's version is one undo away
            assert editor.text == mine
        elif choice == "merge":
            # both kept, each where it was written: the user's line stays in its own section,
            # not filed under the agent's new heading
            assert on_disk == mine + "\n## 11:00\nagent appended this\n"
            assert editor.text == on_disk and not app.file_pane.dirty
        elif choice == "overwrite":
            assert on_disk == mine and not app.file_pane.dirty
        else:
            assert on_disk == agent and editor.text == mine and app.file_pane.dirty


async def test_unsaved_edits_survive_tab_switches_and_are_asked_about_on_quit(ws, make_app):
    app = make_app(ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        editor = await open_and_edit(pilot, app, "MEMORY.md", "- new fact")
        mine = editor.text
        for key in ("f2", "f4", "f5", "f3"):
            await pilot.press(key)
            await pilot.pause()
        assert app.query_one("#tabs").active == "file"
        assert editor.text == mine and app.file_pane.dirty
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, UnsavedScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert app.is_running and editor.text == mine
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.press("s")  # save and quit
        await pilot.pause()
    assert "- new fact" in (ws / "MEMORY.md").read_text()


async def test_opening_another_file_with_unsaved_edits_asks_first(ws, make_app):
    app = make_app(ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await open_and_edit(pilot, app, "MEMORY.md", "- draft")
        app.open_file("memory/projects.md")
        await pilot.pause()
        assert isinstance(app.screen, UnsavedScreen)
        await pilot.press("d")
        await settle(pilot)
        assert app.file_pane.opened.path == "memory/projects.md" and not app.file_pane.dirty
        assert "- draft" not in (ws / "MEMORY.md").read_text()


async def test_tab_keys_work_while_the_editor_has_focus(ws, make_app):
    app = make_app(ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.open_file("MEMORY.md")
        await settle(pilot)
        assert app.query_one("#editor").has_focus
        for key, tab in (("f5", "config"), ("f3", "file"), ("f4", "sync"), ("f2", "search")):
            if tab == "file":
                app.query_one("#editor").focus()
            await pilot.press(key)
            await pilot.pause()
            assert app.query_one("#tabs").active == tab


async def config_edit(pilot, app, key: str, text: str) -> EditValueScreen:
    await pilot.press("f5")
    await pilot.pause()
    app.config_pane.edit(key)
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, EditValueScreen)
    screen.query_one(Input).value = text
    await pilot.press("enter")
    await settle(pilot)
    return screen


async def test_config_edit_with_a_bad_value_shows_the_error_and_saves_nothing(ws, make_app, home_dirs):
    app = make_app(ws)
    config_file = home_dirs / ".config" / "clawmem" / "config.toml"
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await config_edit(pilot, app, "query.maxResults", "0")
        assert app.screen is screen
        error = str(screen.query_one("#error").render())
        assert error.startswith("query.maxResults:") and "from 1 to 200" in error
        assert not config_file.exists()
        screen.query_one(Input).value = "8"
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is not screen
        assert "maxResults = 8" in config_file.read_text()
        assert app.engine.cfg["query.maxResults"] == 8


async def test_config_edit_keeps_comments_and_rejects_bad_ui_settings(ws, make_app, home_dirs):
    config_file = home_dirs / ".config" / "clawmem" / "config.toml"
    config_file.parent.mkdir(parents=True)
    config_file.write_text("# my settings\n[query]\n# how many\nmaxResults = 5\n")
    app = make_app(ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await config_edit(pilot, app, "ui.watch", "maybe")
        assert "ui.watch: expected true or false" in str(screen.query_one("#error").render())
        screen.query_one(Input).value = "no-such-theme"
        app.pop_screen()
        screen = await config_edit(pilot, app, "ui.theme", "no-such-theme")
        assert "no theme named 'no-such-theme'" in str(screen.query_one("#error").render())
        assert config_file.read_text() == "# my settings\n[query]\n# how many\nmaxResults = 5\n"
        screen.query_one(Input).value = "clawmem-light"
        await pilot.press("enter")
        await settle(pilot)
        assert app.theme == "clawmem-light"
        text = config_file.read_text()
        assert "# my settings" in text and "# how many" in text and 'theme = "clawmem-light"' in text


async def test_first_run_offers_to_create_the_default_workspace(home_dirs):
    app = build_app(None)  # no --workspace, no config, no OpenClaw: ~/.openclaw/workspace
    target = home_dirs / ".openclaw" / "workspace"
    assert app.engine.workspace == target
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, CreateWorkspaceScreen)
        assert "~/.openclaw/workspace" in app.screen.shown_path
        await pilot.press("c")
        await settle(pilot, 3)
        assert (target / "MEMORY.md").is_file() and (target / "memory").is_dir()
        assert app.last_status["index"]["files"] == 1
        mode = str(app.search_pane.query_one("#mode-line").render())
        assert mode.startswith("Keyword-only") and "local.modelPath" in mode
    app.engine.close()


async def test_keymap_from_settings_rebinds_by_id(ws, make_app):
    app = make_app(ws, keymap={"tab.sync": "f10", "log.append": "ctrl+g"})
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f10")
        await pilot.pause()
        assert app.query_one("#tabs").active == "sync"
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert type(app.screen).__name__ == "AppendScreen"


async def test_reindex_and_rebuild_keys_run_the_engine(ws, make_app):
    from clawmem.tui.messages import EngineEvent

    seen = []
    app = make_app(ws)
    async with app.run_test(size=(100, 30), message_hook=seen.append) as pilot:
        await settle(pilot)
        await pilot.press("f4")
        (ws / "memory" / "2026-02-09.md").write_text("# 2026-02-09\nnew file\n")
        await pilot.press("ctrl+r")
        await settle(pilot, 3)
        await pilot.press("f9")
        await settle(pilot, 3)
        log_text = "\n".join(app.sync_pane.query_one("#sync-log").lines)
    jobs = [m.event for m in seen if isinstance(m, EngineEvent) and type(m.event).__name__ == "JobFinished"]
    assert [j.job for j in jobs] == ["index", "index", "rebuild"]
    assert jobs[1].files_indexed == 1
    assert "added memory/2026-02-09.md" in log_text and "Rebuild finished" in log_text


async def test_palette_lists_our_commands_and_keeps_the_system_ones(ws, make_app):
    from textual.app import App

    from clawmem.tui.commands import ClawmemCommands

    app = make_app(ws)
    assert ClawmemCommands in app.COMMANDS and App.COMMANDS <= app.COMMANDS


async def test_stale_search_clock_is_the_fixed_one(ws, make_app):
    app = make_app(ws)
    assert app.clock() == FIXED_NOW


async def test_hidden_results_are_counted_and_shown_on_request(ws, make_app, tiny_model):
    app = make_app(ws, overrides={"provider": "local", "local.modelPath": str(tiny_model), "query.hybrid.fusion": "weighted"})
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_query(pilot, "weather forecast")
        pane = app.search_pane
        assert pane.result["mode"] == "hybrid" and pane.result["results"] == []
        assert pane.result["hidden"]["count"] == 5
        # no word of the query occurs in these notes: the line says so, and how to look anyway
        line = str(pane.query_one("#hidden-line").render())
        assert line.startswith("Nothing shown: this memory uses none of the query's words") and "F6 shows the 5 weak hits" in line
        assert str(pane.query_one("#mode-line").render()).startswith("Hybrid: local / tiny")
        await pilot.press("f6")
        await settle(pilot)
        assert len(pane.result["results"]) == 5
        assert pane.query_one("#results", OptionList).option_count == 5
        assert "Showing the results below the score threshold" in str(pane.query_one("#hidden-line").render())


async def test_markdown_view_toggle_and_read_back(ws, make_app):
    from textual.widgets import ContentSwitcher, Markdown

    app = make_app(ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.open_file("memory/projects.md")
        await settle(pilot)
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert app.query_one("#file-switcher", ContentSwitcher).current == "md-view"
        assert "Garden" in app.query_one("#markdown", Markdown).source
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert app.query_one("#editor").has_focus


async def test_tree_groups_daily_logs_by_month_newest_first(ws, make_app):
    app = make_app(ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        root = app.query_one("#file-tree").root
        labels = [str(n.label) for n in root.children]
        assert labels == ["MEMORY.md", "memory/projects.md", "Daily logs"]
        months = root.children[2].children
        assert [str(m.label) for m in months] == ["2026-02", "2026-01"]
        assert [n.data for n in months[0].children] == ["memory/2026-02-11.md", "memory/2026-02-10.md"]


async def test_file_tab_enter_opens_the_top_file_with_keys_only(ws, make_app):
    app = make_app(ws)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)
        assert app.query_one("#file-tree").has_focus
        await pilot.press("enter")
        await settle(pilot)
        assert app.file_pane.opened.path == "MEMORY.md"
        assert app.query_one("#editor").has_focus
        await pilot.press("ctrl+t", "down", "enter")
        await settle(pilot)
        assert app.file_pane.opened.path == "memory/projects.md"


async def test_the_app_keeps_searching_when_its_model_crashes(ws, make_app, tiny_model):
    """The mode line first says Hybrid; after the model's worker dies of SIGILL, the next search
    still lists results and the mode line says keyword-only, naming the crash."""
    import os
    import signal

    from helpers import gone, wait_for

    app = make_app(ws, overrides={"provider": "local", "local.modelPath": str(tiny_model)})
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_query(pilot, "weather")
        pane = app.search_pane
        assert pane.result["mode"] == "hybrid"
        host = app.engine.providers.built["local"]._model_host
        pid = host.pid
        os.kill(pid, signal.SIGILL)
        wait_for(lambda: gone(pid), what="the model to die")  # the kill is not instant under load
        await type_query(pilot, "tokyo")
        assert pane.result["mode"] == "keyword" and pane.result["results"]
        line = str(pane.query_one("#mode-line").render())
        assert "local model crashed: SIGILL" in line, line
        assert app.is_running
