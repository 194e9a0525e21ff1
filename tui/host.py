"""What the panes (and the command palette) read from the app that holds them.

The panes never import the app: they read through `PaneHost`, which `ClawmemApp` satisfies,
and ask the app to do things by posting messages (tui/messages.py) that it handles. So the
app depends on its panes and never the other way round.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Callable, Protocol, runtime_checkable

if TYPE_CHECKING:  # types only: settings validates keymaps against the tabs, whose panes read this
    from clawmem.engine import Engine

    from .settings import UISettings


@runtime_checkable
class PaneHost(Protocol):
    engine: Engine
    settings: UISettings
    clock: Callable[[], dt.datetime]  # fixed in tests
    last_status: dict | None  # the latest engine.status(), None until it has loaded
    files: list[dict]  # the memory files as engine.list_files() gave them last

    def shorten(self, path: str) -> str:
        """A path as people read it (the home folder as ~)."""
        ...
