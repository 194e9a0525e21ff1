"""The File tab's text editing: the editor that reports every text it shows, the find /
go-to-line bar, and running $EDITOR on a file."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from typing import Callable

from textual.binding import Binding
from textual.widgets import Input, TextArea

from clawmem.engine import human


class MemoryEditor(TextArea):
    """A TextArea that reports its text after every edit, undo and redo, at once (not via a
    message, which may come after several edits): the edit session must see every text the
    undo history can bring back to know which disk version it derives from."""

    def __init__(self, *args, on_text: Callable[[str], None], edge_keys: Callable[[], dict[str, str]] | None = None, **kw) -> None:
        super().__init__(*args, **kw)
        self._on_text = on_text
        self._edge_keys = edge_keys

    async def _on_key(self, event) -> None:
        # ctrl+home / ctrl+end (file.top / file.bottom, as the keymap has them) act here, in turn
        # with the typed characters: as bindings they acted only once the key had bubbled up to the
        # app, after the text typed right behind them (typing ahead over SSH) had gone in at the
        # old cursor
        where = self._edge_keys().get(event.key) if self._edge_keys else None
        if where:
            event.stop()
            event.prevent_default()
            self.go_to_edge(where)
            return
        await super()._on_key(event)

    def render_line(self, y: int):
        """The line as the terminal gets it: each control, bidi or zero-width character shown as
        one visible sign (the text itself, and what is saved, stay as they are). OSC 52 in a
        memory file once set the clipboard from here, OSC 0 the window title."""
        strip = super().render_line(y)
        if not any(_HIDDEN.search(seg.text) for seg in strip):
            return strip
        from rich.segment import Segment
        from textual.strip import Strip

        shown = Strip([Segment(_HIDDEN.sub(_sign, seg.text), seg.style, seg.control) for seg in strip])
        return shown.crop(0, strip.cell_length) if shown.cell_length > strip.cell_length else shown

    def go_to_edge(self, where: str) -> None:
        """The cursor to the start ("top") or the end ("bottom") of the text, in view."""
        self.move_cursor((0, 0) if where == "top" else self.document.end)
        self.call_after_refresh(self.scroll_cursor_visible, animate=False)

    def edit(self, edit):
        result = super().edit(edit)
        self._on_text(self.text)
        return result

    def undo(self) -> None:
        super().undo()
        self._on_text(self.text)

    def redo(self) -> None:
        super().redo()
        self._on_text(self.text)


# what engine.printable makes visible (the one list, human.HIDDEN, plus CR: an editor's line
# holds no line end, so any CR in it is a stray one); here one sign each, so a line keeps its
# length: a C0 control as its Control Pictures sign (␛ for ESC), anything else as U+FFFD
_HIDDEN = re.compile(f"[\r{human.HIDDEN}]")


def _sign(m: re.Match) -> str:
    c = ord(m.group())
    return chr(0x2400 + c) if c < 0x20 else "\u2421" if c == 0x7F else "\ufffd"


EDGES = {"file.top": "top", "file.bottom": "bottom"}  # binding id -> MemoryEditor.go_to_edge's argument


class FileBar(Input):
    """The one-line bar under the editor for find (ctrl+f) and go-to-line (ctrl+g)."""

    BINDINGS = [Binding("escape", "close", "Back to the text")]

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.mode = "find"

    def action_close(self) -> None:
        self.display = False
        self.app.query_one("#editor").focus()


def find_in(text: str, query: str, start: int) -> int | None:
    """Index of the next case-insensitive `query` in `text` from `start`, wrapping to the top."""
    low, q = text.lower(), query.lower()
    pos = low.find(q, start)
    if pos < 0:
        pos = low.find(q)
    return None if pos < 0 else pos




def run_external_editor(app, path: str, after: Callable[[], None], request_index: Callable[[str], None],
                        line: int | None = None) -> None:
    """Open `path` in $VISUAL/$EDITOR with the app suspended (works over SSH; not in a browser),
    at `line` with the `+LINE` argument vi, vim, nano, emacs, micro and kakoune understand."""
    if getattr(app, "is_web", False):
        app.notify("$EDITOR is not available in a browser session.", severity="warning")
        return
    command = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        with app.suspend():
            subprocess.call([*shlex.split(command), *([f"+{line}"] if line else []), path])
    except Exception as exc:  # SuspendNotSupported, a missing editor…
        app.notify(f"Cannot run {command}: {exc}", severity="error", timeout=8)
        return
    after()
    request_index(f"edited {path} in $EDITOR")
