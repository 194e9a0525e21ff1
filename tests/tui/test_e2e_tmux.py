"""End to end in a real terminal (tmux, TERM=xterm-256color, keys only): open, search, open a
file at the match, append to today's log, quit."""

from __future__ import annotations

import datetime as dt

import pytest

from tmuxkit import Terminal, app_argv, app_env, have_tmux

pytestmark = pytest.mark.skipif(not have_tmux(), reason="tmux is not installed")


def keyword_only(home_dirs):
    """The app's config file: keyword-only, no watcher, so only what a test does runs."""
    config = home_dirs / ".config" / "clawmem" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('provider = "none"\n\n[ui]\nwatch = false\n')
    return config


def fake_editor(tmp_path, body: str):
    """An executable $EDITOR: a shell script whose `$f` is the file it was given (the last argument)."""
    script = tmp_path / "fake-editor.sh"
    script.write_text(f"#!/bin/sh\nfor f; do :; done\n{body}\n")
    script.chmod(0o755)
    return script


def test_open_search_open_file_append_and_quit(ws, home_dirs):
    keyword_only(home_dirs)
    term = Terminal(app_argv(ws), app_env(home_dirs))
    try:
        term.wait_for(lambda s: "Search F2" in s and "Type to search 5 files" in s)
        term.type("migration")
        screen, _ = term.wait_for(lambda s: "memory/2026-02-11.md:" in s)
        assert "Keyword-only" in screen
        term.send("Enter")
        screen, _ = term.wait_for(lambda s: "memory/2026-02-11.md · lines" in s)
        assert "Fixed the migration" in screen
        term.send("C-n")
        term.wait_for(lambda s: "New entry in memory/" in s)
        term.type("Watered the tomatoes from tmux")
        term.send("Enter")
        today = ws / "memory" / f"{dt.date.today().isoformat()}.md"
        # the typed line is on screen before Enter is handled, and the log is created before
        # it is written: wait for the file's text itself
        term.wait_for(lambda s: today.exists() and "Watered the tomatoes from tmux" in today.read_text())
        term.send("F2")
        term.wait_for(lambda s: "Hidden" in s)  # the Search tab's keys are in the footer
        term.send("C-u")  # clear the search box
        term.wait_for(lambda s: "Search memory…" in s)
        term.type("tomatoes tmux")
        term.wait_for(lambda s: f"memory/{today.name}:" in s)
        term.send("C-q")
        term.wait_for(lambda s: term.dead(), timeout=10)
    finally:
        term.close()


def test_external_editor_through_suspend(ws, home_dirs, tmp_path):
    """ctrl+o runs $EDITOR +LINE FILE with the app suspended, at the editor's line; the edit
    shows and is indexed on return."""
    argv = tmp_path / "editor-argv"
    script = fake_editor(tmp_path, f'echo "$@" > {argv}\nprintf -- "- added by the outside editor\\n" >> "$f"')
    keyword_only(home_dirs)
    term = Terminal(app_argv(ws), {**app_env(home_dirs), "EDITOR": str(script)})
    try:
        term.wait_for(lambda s: "Type to search 5 files" in s)
        term.type("tomatoes")
        term.wait_for(lambda s: "memory/projects.md:" in s)
        term.send("Enter")
        term.wait_for(lambda s: "memory/projects.md · lines" in s)
        term.send("C-o")
        term.wait_for(lambda s: "- added by the outside editor" in s)
        assert (ws / "memory" / "projects.md").read_text().endswith("- added by the outside editor\n")
        assert argv.read_text().split() == ["+4", str(ws / "memory" / "projects.md")]  # "tomatoes" is on line 4
        term.send("F2")
        term.wait_for(lambda s: "Hidden" in s)
        term.send("C-u")
        term.type("outside editor")
        term.wait_for(lambda s: "memory/projects.md:" in s)
        term.send("C-q")
        term.wait_for(lambda s: term.dead(), timeout=10)
    finally:
        term.close()


def test_config_file_edited_in_editor_is_reloaded(ws, home_dirs, tmp_path):
    """Config tab, ctrl+o: $EDITOR edits the config file; on return the app loads it again and
    applies it (the tab asks the app with a message)."""
    script = fake_editor(tmp_path, 'printf -- "\\n[query]\\nmaxResults = 9\\n" >> "$f"')
    config = keyword_only(home_dirs)
    term = Terminal(app_argv(ws), {**app_env(home_dirs), "EDITOR": str(script)})
    try:
        term.wait_for(lambda s: "Type to search 5 files" in s)
        term.send("F5")
        term.wait_for(lambda s: "Config file:" in s)
        term.send("C-o")
        term.wait_for(lambda s: "Configuration reloaded" in s)
        assert config.read_text().endswith("[query]\nmaxResults = 9\n")
        term.send("C-q")
        term.wait_for(lambda s: term.dead(), timeout=10)
    finally:
        term.close()


@pytest.mark.parametrize("how", ["hangup", "kill -9"])
def test_unsaved_text_survives_a_dropped_connection(ws, home_dirs, how):
    """Typed, never saved, then the terminal hangs up (the SSH connection drops: tmux's server
    goes away and the app gets SIGHUP) or the app is killed: the next app offers the text."""
    import json
    import os
    import signal

    from helpers import wait_for

    keyword_only(home_dirs)
    log = ws / "memory" / "2026-02-11.md"
    before = log.read_bytes()
    recovery = home_dirs / ".local/share" / "clawmem" / "recovery" / "main"
    term = Terminal(app_argv(ws), app_env(home_dirs))
    try:
        term.wait_for(lambda s: "Type to search 5 files" in s)
        term.type("migration")
        term.wait_for(lambda s: "memory/2026-02-11.md:" in s)
        term.send("Enter")
        term.wait_for(lambda s: "memory/2026-02-11.md · lines" in s)
        term.type("Typed over ssh, never saved. ")
        term.wait_for(lambda s: "unsaved (ctrl+s)" in s)

        def kept() -> bool:
            return any("Typed over ssh, never saved. " in json.loads(f.read_text())["text"]
                       for f in recovery.glob("*.json")) if recovery.is_dir() else False

        wait_for(kept, 10, "the recovery file")
        pid = term.pid()
        if how == "hangup":
            term.close()
        else:
            os.kill(pid, signal.SIGKILL)
        wait_for(lambda: not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z",
                 10, "the app to end")
    finally:
        term.close()
    assert log.read_bytes() == before  # nothing was written to the workspace
    term = Terminal(app_argv(ws), app_env(home_dirs))
    try:
        term.wait_for(lambda s: "Type to search 5 files" in s)
        term.type("migration")
        term.wait_for(lambda s: "memory/2026-02-11.md:" in s)
        term.send("Enter")
        # the dialog's title may be drawn a frame before its diff: wait for both
        term.wait_for(lambda s: "Unsaved text of memory/2026-02-11.md" in s and "+Typed over ssh, never saved." in s)
        term.send("r")
        screen, _ = term.wait_for(lambda s: "unsaved (ctrl+s)" in s and "Unsaved text of" not in s)
        assert "Typed over ssh, never saved." in screen
        term.send("C-s")
        wait_for(lambda: "Typed over ssh, never saved." in log.read_text(), 10, "the save")
        wait_for(lambda: not list(recovery.glob("*.json")), 10, "the recovery file to go")
        term.send("C-q")
        term.wait_for(lambda s: term.dead(), timeout=10)
    finally:
        term.close()


def test_daily_log_editing_keys_in_a_real_terminal(ws, home_dirs):
    """Over a real terminal: ctrl+n leaves the cursor at the end of the new entry (typing goes
    on there), ctrl+home / ctrl+end (with the text typed right behind them, in order), ctrl+g
    to a line and ctrl+f find reach the editor."""
    keyword_only(home_dirs)
    from helpers import wait_for

    today = ws / "memory" / f"{dt.date.today().isoformat()}.md"
    term = Terminal(app_argv(ws), app_env(home_dirs))
    try:
        term.wait_for(lambda s: "Type to search 5 files" in s)
        term.send("C-n")
        term.wait_for(lambda s: "New entry in memory/" in s)
        term.type("Fed the cat")
        term.send("Enter")
        term.wait_for(lambda s: f"memory/{today.name} · lines" in s)
        term.type(" at noon")
        term.wait_for(lambda s: "Fed the cat at noon" in s)
        # no pause: typing ahead (keys arriving together over SSH) must keep their order; ctrl+home
        # used to act only after the "top " typed behind it had gone in at the old cursor
        term.type(" then")
        term.send("C-Home")
        term.type("top ")
        term.wait_for(lambda s: "top # " in s)
        term.send("C-End")
        term.type("bottom")
        term.wait_for(lambda s: "bottom" in s)
        term.send("C-g")
        term.wait_for(lambda s: "Go to line" in s)
        term.type("3")
        term.send("Enter")
        term.wait_for(lambda s: "Go to line" not in s)  # back in the editor
        term.type("third ")
        term.send("C-f")
        term.wait_for(lambda s: "Find · Enter: next" in s)
        term.type("cat")
        term.wait_for(lambda s: '"cat" at line' in s)
        term.send("Escape")
        term.wait_for(lambda s: "Find · Enter" not in s)  # ESC then a key at once would read as alt+key
        term.send("C-s")
        wait_for(lambda: today.read_text().endswith("bottom"), 10, "the save")
        lines = today.read_text().split("\n")
        assert lines[0].startswith("top # ") and lines[2].startswith("third ## ") and lines[-1] == "bottom", lines
        assert "Fed the cat at noon then" in lines, lines
        term.send("C-q")
        term.wait_for(lambda s: term.dead(), timeout=10)
    finally:
        term.close()


def test_config_enter_after_down_opens_the_editor(ws, home_dirs):
    """Config tab in a real terminal: ↓ moves to the next setting and the first Enter edits it
    (it used to be swallowed)."""
    term = Terminal(app_argv(ws), app_env(home_dirs))
    try:
        term.wait_for(lambda s: "Type to search 5 files" in s)
        term.send("F5")
        term.wait_for(lambda s: "Config file:" in s and "(Enter to edit)" in s)
        term.send("Down", "Enter")  # in one burst, as a person types: no wait between the keys
        term.wait_for(lambda s: "Set agentId" in s and "Esc cancels" in s, timeout=5)
        term.send("Escape")
        term.send("C-q")
        term.wait_for(lambda s: term.dead(), timeout=10)
    finally:
        term.close()


@pytest.mark.slow
def test_80x24_keys_pilot_does_not_see(ws, home_dirs):
    """At 80×24 in a real terminal (the keys as tmux sends them, escape sequences and all):
    F4 then F2 and typing goes to the search box; F5 shows Config with its From column and
    the folded session start, F6 unfolds it; F4, F9, then PageUp pauses the log ("paused, End
    to follow") and End follows again; every line of the screen stays within 80 columns."""
    keyword_only(home_dirs)
    term = Terminal(app_argv(ws), app_env(home_dirs), size=(80, 24))
    try:
        term.wait_for(lambda s: "Search F2" in s and "Type to search 5 files" in s)
        term.send("F4")
        term.wait_for(lambda s: "Engine events" in s)
        term.send("F2")
        term.wait_for(lambda s: "Search memory…" in s)
        term.type("lasagna")
        screen, _ = term.wait_for(lambda s: "memory/2026-02-10.md:" in s)
        assert "▊  lasagna" in screen  # the search box took the keys
        term.send("F5")
        screen, _ = term.wait_for(lambda s: "Setting" in s and "From" in s and "▶ Session start:" in s)
        assert sum(1 for line in screen.splitlines() if line.rstrip(" │▁▂▃▄▅▆▇█").endswith(("default", "flag", "file"))) >= 8, screen
        term.send("F6")
        term.wait_for(lambda s: "Session start (main)" in s)
        term.send("F4")
        term.wait_for(lambda s: "Engine events" in s)
        term.send("F9")
        term.wait_for(lambda s: "Rebuild finished" in s)
        for _ in range(30):  # enough lines for the log to scroll
            term.send("C-r")
        term.wait_for(lambda s: s.count("Index finished") >= 3, timeout=60)
        term.send("PageUp")
        term.wait_for(lambda s: "paused, End to follow" in s)
        term.send("End")
        screen, _ = term.wait_for(lambda s: "paused, End to follow" not in s)
        assert all(len(line) <= 80 for line in screen.splitlines())
        term.send("C-q")
        term.wait_for(lambda s: term.dead(), timeout=10)
    finally:
        term.close()
