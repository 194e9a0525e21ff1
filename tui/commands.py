"""The command palette (ctrl+p): every action of the app and "open" for every memory file,
beside Textual's own system commands (theme, keys, quit)."""

from __future__ import annotations

from functools import partial
from typing import Callable

from textual.command import DiscoveryHit, Hit, Hits, Provider

from .host import PaneHost
from .messages import OpenFile
from .tabs import TABS

# (title, help, action on the app); actions are App.run_action strings so keys and palette agree
ACTIONS: list[tuple[str, str, str]] = [
    ("Search", "Go to the search box", "focus_search"),
    ("Append to today's log", "Add a timestamped entry to memory/<today>.md", "append_today"),
    *((title, help, f"pane('{tab.TAB}', '{action}')") for tab in TABS for title, help, action in tab.PALETTE),
    *((f"Show the {tab.TAB.capitalize()} tab", tab.PALETTE_HELP or tab.TAB_KEY.keys.upper(), tab.TAB_KEY.action) for tab in TABS),
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
