"""ARCHITECTURE.md's "add a tab" recipe holds when followed literally: tests/recipes/notes_pane.py
(step 1) and its import and entry in tui/tabs.py (step 2, applied to the real file's text in a
fresh process), and the tab bar, its key, the command palette's entries, F1's key table and
the keymap check all know the tab, and the app hands it live state."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import clawmem.tui

TESTS = Path(__file__).resolve().parents[1]
TABS_PY = Path(clawmem.tui.__file__).parent / "tabs.py"

PROBE = """
import asyncio, importlib.util, json, sys
sys.path.insert(0, {tests!r})
sys.path.insert(0, {tui_tests!r})
source = {source!r}
spec = importlib.util.spec_from_loader("clawmem.tui.tabs", loader=None, origin={origin!r})
tabs = importlib.util.module_from_spec(spec)
tabs.__package__ = "clawmem.tui"
tabs.__file__ = {origin!r}
sys.modules["clawmem.tui.tabs"] = tabs
exec(compile(source, {origin!r}, "exec"), tabs.__dict__)

from tuikit import build_app, settle
from clawmem.tui.commands import ACTIONS
from clawmem.tui import settings

async def main():
    app = build_app({workspace!r}, watch=True)
    out = {{}}
    try:
        async with app.run_test(size=(110, 32)) as pilot:
            await settle(pilot)
            await pilot.press("f11")
            await settle(pilot)
            pane = app.pane("notes")
            out["active"] = app.query_one("#tabs").active
            out["count"] = str(pane.query_one("#notes-count").render())
            out["synced"] = pane.synced
            await pilot.press("ctrl+o")
            await settle(pilot)
            out["recounts_by_key"] = pane.recounts
            await app.run_action("pane('notes', 'recount')")
            out["recounts_by_palette"] = pane.recounts
            out["palette"] = [title for title, _, _ in ACTIONS if "otes" in title]
    finally:
        app.engine.close()
    out["help_table"] = "| `ctrl+o` | Notes: count the memory files again | `notes.recount` |" in tabs.help_table()
    out["known"] = "notes.recount" in tabs.KNOWN_IDS and "tab.notes" in tabs.KNOWN_IDS
    try:
        settings.from_table({{"keymap": {{"notes.recount": "f11"}}}})
        out["collision"] = None
    except Exception as exc:
        out["collision"] = str(exc)
    print(json.dumps(out))

asyncio.run(main())
"""


def follow_the_recipe(source: str) -> str:
    """Step 2 as written: import the pane in tui/tabs.py and add it to TABS."""
    line = "TABS: list[type[Pane]] = [SearchPane, FilePane, SyncPane, ConfigPane, HistoryPane]"
    assert line in source, "tui/tabs.py's TABS line changed: update this test and the recipe"
    return source.replace("from .widgets.sync_pane import SyncPane\n",
                          "from .widgets.sync_pane import SyncPane\nfrom recipes.notes_pane import NotesPane\n").replace(
        line, line.replace("HistoryPane]", "HistoryPane, NotesPane]"))


@pytest.mark.slow  # over 1.5 s: the full suite runs it, the fast lane does not
def test_a_tab_added_by_the_recipe_is_everywhere_the_tabs_are(ws):
    probe = PROBE.format(tests=str(TESTS), tui_tests=str(TESTS / "tui"), source=follow_the_recipe(TABS_PY.read_text(encoding="utf-8")),
                         origin=str(TABS_PY), workspace=str(ws))
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=240)
    assert res.returncode == 0, res.stderr[-3000:]
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert got["active"] == "notes"  # its key shows it
    assert got["count"] == "5 memory files"  # on_files: live state
    assert got["synced"] >= 1  # on_synced: the watcher's first sync
    assert got["recounts_by_key"] == 1 and got["recounts_by_palette"] == 2  # its key and its palette entry run its action
    assert got["palette"] == ["Recount the notes", "Show the Notes tab"]
    assert got["help_table"] and got["known"]  # F1's table and the keymap's ids
    assert got["collision"] and "collides with tab.notes" in got["collision"]  # the keymap check knows its key


def test_the_recipe_names_the_two_files_a_tab_touches():
    page = (TESTS.parent / "ARCHITECTURE.md").read_text(encoding="utf-8")
    recipe = page[page.index("## Recipe: add a tab"):page.index("## Tests")]
    steps = [line.split("`")[1] for line in recipe.splitlines() if line[:3] in ("1. ", "2. ", "3. ")]
    assert steps == ["tui/widgets/<name>_pane.py", "tui/tabs.py"]
