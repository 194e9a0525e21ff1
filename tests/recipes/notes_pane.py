"""A tab added by following ARCHITECTURE.md's "add a tab" recipe literally: this module (step 1,
a Pane beside a Textual container declaring TAB, TAB_KEY, ABOUT, KEYS, BINDINGS and PALETTE, and
showing live state through the hooks) plus its line in tui/tabs.py (step 2), made by
tests/tui/test_tab_recipe.py. It counts the memory files and says when the index last synced."""

from textual.containers import Vertical
from textual.widgets import Static

from clawmem.tui import keys
from clawmem.tui.keys import Key
from clawmem.tui.widgets.pane import Pane


class NotesPane(Pane, Vertical):
    TAB = "notes"
    TAB_KEY = keys.tab_key("notes", "f11", "Notes tab")
    ABOUT = "counts the memory files"
    KEYS = [Key("notes.recount", "ctrl+o", "recount", "Recount", "Notes: count the memory files again")]
    BINDINGS = keys.bindings(KEYS)
    PALETTE = [("Recount the notes", "Notes: count the memory files again", "recount")]

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.recounts = 0
        self.synced = 0

    def compose(self):
        yield Static("no files yet", id="notes-count")
        yield Static("", id="notes-synced")

    def on_files(self, files: list[dict]) -> None:
        self.query_one("#notes-count", Static).update(f"{len(files)} memory files")

    def on_synced(self, finished) -> None:
        self.synced += 1
        self.query_one("#notes-synced", Static).update(f"synced {self.synced} times")

    def action_recount(self) -> None:
        self.recounts += 1
        self.on_files(self.host.files)
