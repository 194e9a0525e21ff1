"""The File tab's banner over the editor when the open file changed on disk: what happened, and
the choices (Reload, Merge, Keep mine; Save as new when the file was deleted)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, Static

from clawmem.engine import FileSnapshot


class DiskBanner(Horizontal):
    """Hidden while `disk` (the version on disk it tells of) is None; the File tab handles its buttons."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.disk: FileSnapshot | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="banner-text", markup=False)
        yield Button("Reload", id="banner-reload", compact=True)
        yield Button("Merge", id="banner-merge", compact=True, variant="primary")
        yield Button("Save as new", id="banner-new", compact=True, variant="primary")
        yield Button("Keep mine", id="banner-keep", compact=True)

    def show(self, disk: FileSnapshot | None) -> None:
        self.disk = disk
        self.display = disk is not None
        if disk is None:
            return
        deleted = not disk.exists
        what = "Deleted on disk; your text is still here" if deleted else "Changed on disk since you opened it"
        self.query_one("#banner-text", Static).update(f"⚠ {what}")
        self.query_one("#banner-reload").display = not deleted
        self.query_one("#banner-merge").display = not deleted
        self.query_one("#banner-new").display = deleted
