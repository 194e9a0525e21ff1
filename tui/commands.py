"""The command palette (ctrl+p): every action of the app and "open" for every memory file,
beside Textual's own system commands (theme, keys, quit)."""

from __future__ import annotations

from functools import partial
from typing import Callable

from textual.command import DiscoveryHit, Hit, Hits, Provider

from .host import PaneHost
from .messages import OpenFile

# (title, help, action on the app); actions are App.run_action strings so keys and palette agree
ACTIONS: list[tuple[str, str, str]] = [
    ("Search", "Go to the search box", "focus_search"),
    ("Append to today's log", "Add a timestamped entry to memory/<today>.md", "append_today"),
    ("Show or hide results below the threshold", "Search: the results the score threshold hides", "pane('search', 'toggle_hidden')"),
    ("Explain the selected result", "Search: how its score was made", "pane('search', 'toggle_explain')"),
    ("Copy the selected result's citation", "Search: to the clipboard (OSC 52, works over SSH)", "pane('search', 'copy_citation')"),
    ("Save the file", "File: atomic save, then re-index", "pane('file', 'save')"),
    ("Switch editor / Markdown view", "File", "pane('file', 'toggle_view')"),
    ("Edit the file in $EDITOR", "File: at the cursor's line", "pane('file', 'external_editor')"),
    ("Find in the file", "File: as you type; Enter and F12 find the next", "pane('file', 'find')"),
    ("Go to a line", "File", "pane('file', 'goto_line')"),
    ("Re-index now", "Sync: bring the index up to date", "pane('sync', 'reindex')"),
    ("Rebuild the whole index", "Sync: into a new file, swapped in when complete", "pane('sync', 'rebuild')"),
    ("Edit the config file in $EDITOR", "Config: then reload it", "pane('config', 'edit_file')"),
    ("Show the Search tab", "F2", "show_tab('search')"),
    ("Show the File tab", "F3", "show_tab('file')"),
    ("Show the Sync tab", "F4", "show_tab('sync')"),
    ("Show the Config tab", "F5", "show_tab('config')"),
    ("Show the History tab", "F8: what changed in the memory files, and restore", "show_tab('history')"),
    ("Restore the file to before the selected change", "History: itself undoable", "pane('history', 'restore_file')"),
    ("Promote what the agent keeps recalling", "F10: review candidates for MEMORY.md; accept, edit or reject", "promote"),
    ("Help", "Keys and what each tab does (F1)", "help"),
]


class ClawmemCommands(Provider):
    @property
    def host(self) -> PaneHost:
        return self.app  # type: ignore[return-value]

    def _all(self) -> list[tuple[str, str, Callable[[], object]]]:
        out = [(title, help, partial(self.app.run_action, action)) for title, help, action in ACTIONS]
        if not self.host.engine.workspace.is_dir():  # after "Not now" on the welcome
            out.insert(0, ("Create the workspace", f"MEMORY.md and memory/ in {self.host.shorten(str(self.host.engine.workspace))}",
                           partial(self.app.run_action, "create_workspace")))
        for entry in self.host.files:
            out.append((f"Open {entry['path']}", "File tab", partial(self.app.post_message, OpenFile(entry["path"]))))
        return out

    async def discover(self) -> Hits:
        for title, help, call in self._all():
            if not title.startswith("Open "):
                yield DiscoveryHit(title, call, help=help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help, call in self._all():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), call, help=help)
