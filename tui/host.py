"""What the panes (and the command palette) read from the app that holds them.

The panes never import the app: they read through `PaneHost`, which `ClawmemApp` satisfies,
and ask the app to do things by posting messages (tui/messages.py) that it handles. So the
app depends on its panes and never the other way round.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, Callable, Protocol, runtime_checkable

if TYPE_CHECKING:  # types only
    from clawmem.engine import Engine


class PaneSettings(Protocol):
    """What a pane reads of the `[ui]` settings (settings.UISettings satisfies it). Named here,
    not imported from tui/settings.py: that module checks keymaps against the tab list, which
    holds the panes, so a pane naming it would close a circle (tabs -> panes -> host -> settings
    -> tabs)."""

    theme: str
    keymap: dict[str, str]
    watch: bool
    animation: str
    blinkingCursor: bool
    searchDelayMs: int
    logLines: int

    def names(self) -> tuple[str, ...]:
        """Every setting's name, in the Config tab's order."""
        ...

    def doc(self, name: str) -> str:
        """One line on what a setting does."""
        ...

    def as_text(self, value: Any) -> str:
        """A value written the way the Config tab's editor accepts it back."""
        ...


@runtime_checkable
class PaneHost(Protocol):
    engine: Engine
    settings: PaneSettings
    clock: Callable[[], dt.datetime]  # fixed in tests
    last_status: dict | None  # the latest engine.status(), None until it has loaded
    files: list[dict]  # the memory files as engine.list_files() gave them last

    def shorten(self, path: str) -> str:
        """A path as people read it (the home folder as ~)."""
        ...
