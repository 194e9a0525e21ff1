"""What makes a widget a tab of the app: `Pane`, the base every tab's widget derives from
beside its Textual container (`class SearchPane(Pane, Vertical)`).

A tab declares here everything the rest of the app reads about it, so adding a tab is one
such class plus its entry in tui/tabs.py: the app composes it, binds its key, lists it in the
command palette and in F1's key table from these attributes, and hands every tab the app's
live state through the hooks below (it calls each hook on every tab, in TABS order).
"""

from __future__ import annotations

from clawmem.engine import events as ev

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
        """The tab was just shown (its key, the palette): focus what the user works with first,
        so typing goes somewhere and the tab's keys work (they work while focus is inside it).
        By default the first widget that takes focus, else the pane itself."""
        widget = self  # type: ignore[assignment]
        first = next((w for w in widget.query("*") if w.focusable), None)  # type: ignore[attr-defined]
        if first is None:
            widget.can_focus = True  # type: ignore[attr-defined]
            first = widget
        first.focus()  # type: ignore[union-attr]

    # ---- live state: the app calls these on every tab; override the ones the tab shows

    def on_status(self, status: dict) -> None:
        """A new engine.status() (the index, provider, freshness); also in `host.last_status`."""

    def on_files(self, files: list[dict]) -> None:
        """The memory files as engine.list_files() lists them now; also in `host.files`."""

    def on_engine_event(self, event: ev.Event) -> None:
        """Every event of an index job or of the watcher (started, file indexed, warning…)."""

    def on_progress(self, progress: ev.Progress) -> None:
        """A running job's progress (coalesced: only the latest reaches the tabs)."""

    def on_watcher(self, state: str) -> None:
        """How the app keeps the index fresh now: "running", "off", "polling (…)"."""

    def on_synced(self, finished: ev.JobFinished) -> None:
        """An index job finished (after its event went to on_engine_event). `finished.changed`
        names the files whose rows it wrote or removed (memory files are journalled too);
        `finished.index_changed` says whether a search may answer differently. `self.shown`
        says whether the tab is on screen."""

    def on_config(self) -> None:
        """The configuration or the app's settings changed (saved in the Config tab, reloaded
        from disk, a theme picked in the palette): `host.engine.cfg` and `host.settings` are new."""

    @property
    def shown(self) -> bool:
        """The tab is the one on screen (its TabPane is the switcher's current child)."""
        return bool(self.parent is not None and self.parent.display)  # type: ignore[attr-defined]


def fit_beside_scroll_bar(side, width: int | None, render, rows):
    """(render(width), the width used) for a scrollable side panel: rendered again 2 cells
    narrower when it is taller than the view while no scroll bar shows yet, since the bar it
    brings takes 2 cells (else a line exactly as wide as the view would be cut). `rows(out)`:
    how many rows `out` takes; `width` None: no width to narrow, rendered once."""
    out = render(width)
    if width is not None and not side.show_vertical_scrollbar and rows(out) > side.scrollable_content_region.height:
        width -= 2
        out = render(width)
    return out, width
