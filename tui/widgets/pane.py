"""What makes a widget a tab of the app: `Pane`, the base every tab's widget derives from
beside its Textual container (`class SearchPane(Pane, Vertical)`).

A tab declares here everything the rest of the app reads about it, so adding a tab is one
such class plus its entry in tui/tabs.py: the app composes it, binds its key, lists it in the
command palette and in F1's key table from these attributes.
"""

from __future__ import annotations

from ..host import PaneHost
from ..keys import Key


class Pane:
    TAB: str  # the tab's id ("search"); its widget's id is "<TAB>-pane", its title TAB capitalized
    TAB_KEY: Key  # the key that shows the tab anywhere (keys.tab_key)
    ABOUT: str  # what the tab does, after "**Search** (F2) " in F1's opening line
    KEYS: list[Key] = []  # the tab's own keys (its BINDINGS are made from them)
    PALETTE: list[tuple[str, str, str]] = []  # (title, help, the pane's action) for the command palette
    PALETTE_HELP: str | None = None  # help of "Show the X tab" in the palette; None: the tab's key

    @property
    def host(self) -> PaneHost:
        return self.app  # type: ignore[attr-defined,return-value]

    def tab_shown(self) -> None:
        """The tab was just shown (its key, the palette): focus what the user works with first."""
