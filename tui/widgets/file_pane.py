"""The File tab: a tree of the memory files, an editor with Markdown highlighting and a
Markdown view. Saving is atomic, re-indexes at once and never overwrites what the agent
wrote meanwhile without showing it first (the engine's edit session does the file work). A banner says
when the open file changes on disk; unsaved text is kept in a recovery file until saved."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, ContentSwitcher, Input, Static, TextArea, Tree

from clawmem.engine import ChangedOnDisk, EditSession, FileSnapshot, Merged, human

from .. import keys
from ..keys import Key
from ..messages import IndexRequested
from .dialogs import ConflictScreen, DeletedScreen, RecoveryScreen, UnsavedScreen
from .file_banner import DiskBanner
from .file_editor import EDGES, FileBar, MemoryEditor, find_in, run_external_editor
from .file_tree import FileTree
from .pane import Pane


NO_FILE = "No file open: Enter opens the file under the cursor; ctrl+n writes in today's log."
DISK_CHECK_SECONDS = 1.0  # how often the open file's stat is compared (cheap)
RECOVERY_SECONDS = 1.0  # unsaved text reaches its recovery file at most this long after a keystroke


@dataclass
class OpenedFile:
    path: str  # as shown and as the index knows it
    abspath: object | None  # pathlib.Path; None for session transcripts
    session: EditSession | None  # None for read-only session transcripts
    read_only: bool


class FilePane(Pane, Horizontal):
    TAB = "file"
    TAB_KEY = keys.tab_key("file", "f3", "File tab")
    ABOUT = "reads and edits the memory files"
    KEYS = [
        Key("file.save", "ctrl+s", "save", "Save", "Save the file (atomic) and re-index it"),
        Key("file.view", "ctrl+l", "toggle_view", "View", "Switch between the editor and the Markdown view"),
        Key("file.external-editor", "ctrl+o", "external_editor", "$EDITOR", "Edit the file in $EDITOR"),
        Key("file.tree", "ctrl+t", "focus_tree", "Files", "Go to the file tree", show=False),
        # ctrl+f finds in the file here; elsewhere it still goes to the search box
        Key("file.find", "ctrl+f", "find", "Find", "Find in the file (Enter: next match; Esc: back to the text)"),
        # f8 is the History tab; F12 is free in the File tab and reaches it over plain SSH
        Key("file.find-next", "f12", "find_next", "Next", "Find the next match of the last search", show=False),
        Key("file.goto", "ctrl+g", "goto_line", "Line", "Go to a line number", show=False),
        Key("file.top", "ctrl+home", "edge('top')", "Top", "Go to the start of the file", show=False),
        Key("file.bottom", "ctrl+end", "edge('bottom')", "End", "Go to the end of the file", show=False),
    ]
    PALETTE = [
        ("Save the file", "File: atomic save, then re-index", "save"),
        ("Switch editor / Markdown view", "File", "toggle_view"),
        ("Edit the file in $EDITOR", "File: at the cursor's line", "external_editor"),
        ("Find in the file", "File: as you type; Enter and F12 find the next", "find"),
        ("Go to a line", "File", "goto_line"),
    ]
    BINDINGS = keys.bindings(KEYS)
    HELP = "Pick a file in the tree (Enter). ctrl+s saves, ctrl+l switches to the Markdown view."

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.opened: OpenedFile | None = None
        self._entries: list[dict] = []
        self._recovery_timer = None
        self._find_query = ""
        self._find_from = 0  # where the search started when the find bar opened

    @property
    def dirty(self) -> bool:
        o = self.opened
        return bool(o and o.session and o.session.dirty)

    def tab_shown(self) -> None:
        (self.query_one("#editor") if self.opened else self.query_one("#file-tree")).focus()

    def compose(self) -> ComposeResult:
        tree: Tree[str | None] = FileTree("Memory", id="file-tree")
        tree.show_root = False
        tree.guide_depth = 2
        yield tree
        with Vertical(id="file-main"):
            yield Static(NO_FILE, id="file-header", markup=False)
            yield DiskBanner(id="file-banner")
            with ContentSwitcher(initial="editor", id="file-switcher"):
                yield MemoryEditor(
                    "", id="editor", language="markdown", soft_wrap=True, show_line_numbers=True, tab_behavior="focus",
                    read_only=True, on_text=self._text_changed, edge_keys=self._edge_keys,
                )
                yield VerticalScroll(id="md-view")  # the Markdown view mounts on first use: _show_markdown
            yield FileBar(id="file-bar")

    def on_mount(self) -> None:
        self.query_one("#file-tree").border_title = "Files"
        editor = self.query_one("#editor", TextArea)
        editor.cursor_blink = self.host.settings.blinkingCursor
        self.query_one("#file-bar", FileBar).cursor_blink = self.host.settings.blinkingCursor  # ui.blinkingCursor holds here too
        self.query_one("#file-banner").display = False
        self.query_one("#file-bar").display = False
        self.set_interval(DISK_CHECK_SECONDS, self._check_disk)

    # ------------------------------------------------------------------ the tree

    def on_files(self, entries: list[dict]) -> None:
        if entries == self._entries:
            return
        self._entries = entries
        self.query_one("#file-tree", FileTree).show_files(entries, self.opened.path if self.opened else None)

    @on(Tree.NodeSelected, "#file-tree")
    def _tree_selected(self, event: Tree.NodeSelected) -> None:
        if event.node.data:
            self.open(event.node.data, focus_editor=True)

    # ------------------------------------------------------------------ opening

    def open(self, path: str, start: int | None = None, end: int | None = None, *, focus_editor: bool = True,
             terms: tuple[str, ...] = ()) -> None:
        """Open `path` at a line range; asks first when another file has unsaved edits."""
        if self.opened and self.dirty and path != self.opened.path:
            def answer(choice: str | None) -> None:
                if choice == "save":
                    if self.save():
                        self._load(path, start, end, focus_editor, terms)
                elif choice == "discard":
                    self.discard_recovery()
                    self._load(path, start, end, focus_editor, terms)

            self.app.push_screen(UnsavedScreen(self.opened.path, f"open {path}"), answer)
            return
        if self.opened and path == self.opened.path and self.dirty:
            self._goto(start, end, focus_editor, terms)  # keep the edits, just move to the lines
            return
        self._load(path, start, end, focus_editor, terms)

    def _load(self, path: str, start: int | None, end: int | None, focus_editor: bool, terms: tuple[str, ...] = ()) -> None:
        engine = self.host.engine
        try:
            if path.startswith("sessions/"):
                text = engine.get(path)["text"]
                opened = OpenedFile(path, None, None, True)
            else:
                session = engine.edit(path)
                text = session.text
                opened = OpenedFile(session.rel, session.path, session, False)
        except Exception as exc:
            self.app.notify(f"Cannot open {path}: {exc}", severity="error", timeout=8)
            return
        self._stop_recovery_timer()
        self.opened = opened
        self._show_banner(None)
        editor = self.query_one("#editor", TextArea)
        editor.read_only = opened.read_only
        editor.load_text(text)
        self._update_header(start, end)
        self.query_one("#file-tree", FileTree).select_path(opened.path)
        switcher = self.query_one("#file-switcher", ContentSwitcher)
        if switcher.current == "md-view":
            self._show_markdown(text)
        self._goto(start, end, focus_editor, terms)
        if opened.session is not None:
            self._offer_recovery(opened)

    def _goto(self, start: int | None, end: int | None, focus_editor: bool, terms: tuple[str, ...] = ()) -> None:
        editor = self.query_one("#editor", TextArea)
        last = editor.document.line_count - 1
        line = max(0, min((start or 1) - 1, last))
        if terms and start is not None:
            # the cursor goes to the first line of the range that holds a query word
            for n in range(line, min((end or start) - 1, last) + 1):
                low = editor.document.get_line(n).lower()
                if any(t in low for t in terms):
                    line = n
                    break
        editor.move_cursor((line, 0))
        editor.call_after_refresh(editor.scroll_cursor_visible, center=True, animate=False)
        if start is not None:
            self._update_header(start, end)
        if focus_editor and self.query_one("#file-switcher", ContentSwitcher).current == "editor":
            editor.focus()

    def cursor_to_line_end(self, line: int) -> None:
        editor = self.query_one("#editor", TextArea)
        row = max(0, min(line - 1, editor.document.line_count - 1))
        editor.move_cursor((row, len(editor.document.get_line(row))))
        editor.call_after_refresh(editor.scroll_cursor_visible, animate=False)

    def _update_header(self, start: int | None = None, end: int | None = None) -> None:
        header = self.query_one("#file-header", Static)
        o = self.opened
        if o is None:
            header.update(NO_FILE)
            return
        parts = [o.path]
        if start is not None:
            parts.append(f"lines {start}-{end or start}")
        if o.read_only:
            parts.append("read-only (session transcript)")
        elif o.session is not None and not o.session.base.exists:
            parts.append("new file")
        if self.dirty:
            parts.append("● unsaved (ctrl+s)")
        header.update(human.printable_line(" · ".join(parts)))
        header.set_class(self.dirty, "-dirty")
        self.refresh_bindings()

    def _text_changed(self, text: str) -> None:
        """Every change of the editor's text, as it happens (MemoryEditor)."""
        o = self.opened
        if o is None or o.session is None:
            return
        was_dirty = o.session.dirty
        o.session.edit(text)
        if o.session.dirty:
            if self._recovery_timer is None:
                self._recovery_timer = self.set_timer(RECOVERY_SECONDS, self._keep_recovery)
        elif was_dirty:
            self.discard_recovery()
        if o.session.dirty != was_dirty:
            self._update_header()

    def _replace_text(self, text: str) -> None:
        """Replace the whole text as one undoable step of its own (ctrl+z brings the old back)."""
        editor = self.query_one("#editor", TextArea)
        cursor = editor.cursor_location
        editor.history.checkpoint()
        editor.replace(text, (0, 0), editor.document.end)
        editor.history.checkpoint()
        row = min(cursor[0], editor.document.line_count - 1)
        editor.move_cursor((row, min(cursor[1], len(editor.document.get_line(row)))))

    # ------------------------------------------------------------------ recovery copies

    def _keep_recovery(self) -> None:
        self._recovery_timer = None
        o = self.opened
        if o is None or o.session is None or not o.session.dirty:
            return
        try:
            self.host.engine.keep_recovery(o.session)
        except OSError as exc:
            self.app.notify(f"No recovery copy of {o.path}: {exc.strerror or exc}", severity="warning", timeout=8)

    def _stop_recovery_timer(self) -> None:
        if self._recovery_timer is not None:
            self._recovery_timer.stop()
            self._recovery_timer = None

    def discard_recovery(self) -> None:
        """Saved, back to what is on disk, or the user chose to drop the unsaved text."""
        self._stop_recovery_timer()
        o = self.opened
        if o is not None and o.session is not None:
            try:
                self.host.engine.drop_recovery(o.session.path)
            except OSError:
                pass  # nothing to lose: at worst it is offered again next time

    def _offer_recovery(self, opened: OpenedFile) -> None:
        session = opened.session
        assert session is not None
        rec = self.host.engine.find_recovery(session.path)
        if rec is None:
            return
        if rec.text == session.text:  # nothing unsaved after all
            self.host.engine.drop_recovery(session.path)
            return
        moved = "" if rec.base_hash == session.base.hash else "; the file changed on disk since"
        sizes = (f"Unsaved: {len(rec.text.splitlines())} lines, {len(rec.text)} characters; on disk: "
                 f"{len(session.text.splitlines())} lines, {len(session.text)} characters{moved}")
        diff = human.unified_diff(session.text, rec.text, opened.path)

        def answer(choice: str | None) -> None:
            if self.opened is not opened:
                return
            if choice == "restore":
                before = session.text.splitlines()
                session.restore(rec)
                self._replace_text(rec.text)
                # the cursor to the first line the restore brought back, where the user was writing
                restored = rec.text.splitlines()
                row = next((i for i, (a, b) in enumerate(zip(before, restored)) if a != b), min(len(before), len(restored)))
                editor = self.query_one("#editor", TextArea)
                editor.move_cursor((min(row, editor.document.line_count - 1), 0))
                editor.call_after_refresh(editor.scroll_cursor_visible, center=True, animate=False)
                self._update_header()
                self.app.notify(f"Restored your unsaved text of {opened.path} (ctrl+s saves it)")
            elif choice == "discard":
                self.discard_recovery()

        self.app.push_screen(RecoveryScreen(opened.path, rec.time.replace("T", " "), sizes, diff), answer)

    # ------------------------------------------------------------------ changes on disk

    def _check_disk(self) -> None:
        """On a timer: tell the user at once when the open file changes on disk."""
        o = self.opened
        if o is None or o.session is None:
            return
        disk = o.session.disk_changed()
        if disk is None:
            return
        if not o.session.dirty and disk.exists:
            self._take_disk(disk)  # nothing unsaved in the way: just show it
            return
        self._show_banner(disk)

    def _show_banner(self, disk: FileSnapshot | None) -> None:
        self.query_one(DiskBanner).show(disk)

    def _take_disk(self, disk: FileSnapshot) -> None:
        o = self.opened
        assert o is not None and o.session is not None
        o.session.reload(disk)
        self._replace_text(disk.text)
        self._show_banner(None)
        self._update_header()

    @on(Button.Pressed, "#file-banner Button")
    def _banner_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        disk, o = self.query_one(DiskBanner).disk, self.opened
        if disk is None or o is None or o.session is None:
            return
        if event.button.id == "banner-reload":
            self._take_disk(disk)
            self.app.notify(f"Reloaded {o.path} from disk (ctrl+z brings yours back; saving it then asks first)")
        elif event.button.id == "banner-merge":
            merged = o.session.merge(disk)
            self._replace_text(merged.text)
            self._show_banner(None)
            self._update_header()
            self._tell_merged(merged, saved=False)
        elif event.button.id == "banner-new":
            self.save_as_new(disk)
        else:
            self._show_banner(None)  # keep mine: saving will still show the difference first
        self.query_one("#editor").focus()

    def _tell_merged(self, merged: Merged, saved: bool) -> None:
        path = self.opened.path if self.opened else ""
        if merged.conflicts:
            self.app.notify(f"Merged {path}: {merged.conflicts} place(s) where both sides changed the same lines keep "
                            "both versions between <<<<<<< and >>>>>>> marks; edit them, then ctrl+s.",
                            severity="warning", timeout=15)
        else:
            self.app.notify(f"Merged the disk changes into {path}" + ("" if saved else " (ctrl+s saves)"))

    # ------------------------------------------------------------------ saving

    def save(self) -> bool:
        """Save atomically if the disk still holds what the text derives from (else ask); True once saved."""
        o = self.opened
        if o is None or o.read_only or o.session is None:
            self.app.notify("Nothing to save here." if o is None else "This file is read-only.", severity="warning")
            return False
        try:
            snap = o.session.save()
        except ChangedOnDisk as exc:
            self._conflict(exc.disk)
            return False
        except OSError as exc:
            self.app.notify(f"Not saved: {o.path}: {exc.strerror or exc}", severity="error", timeout=10)
            return False
        self._saved(snap)
        return True

    def _saved(self, snap: FileSnapshot, how: str = "Saved") -> None:
        assert self.opened is not None
        self.discard_recovery()
        self._show_banner(None)
        self._update_header()
        self.app.notify(f"{how} {self.opened.path}")
        self.post_message(IndexRequested(f"saved {self.opened.path}", paths=(self.opened.abspath,)))

    def save_as_new(self, shown: FileSnapshot) -> None:
        o = self.opened
        assert o is not None and o.session is not None
        try:
            self._saved(o.session.save_over(shown), "Saved as new:")
        except ChangedOnDisk as again:
            self._conflict(again.disk)  # it came back meanwhile
        except OSError as exc:
            self.app.notify(f"Not saved: {o.path}: {exc.strerror or exc}", severity="error", timeout=10)

    def _conflict(self, disk: FileSnapshot) -> None:
        """The disk no longer holds what the text derives from: show it and let the user choose."""
        o = self.opened
        assert o is not None and o.session is not None
        session = o.session
        self._show_banner(disk)
        if not disk.exists:
            self.app.push_screen(DeletedScreen(o.path), lambda choice: self.save_as_new(disk) if choice == "new" else None)
            return

        def answer(choice: str | None) -> None:
            if self.opened is not o:
                return
            try:
                if choice == "reload":
                    self._take_disk(disk)
                    self.app.notify(f"Reloaded {o.path} from disk (ctrl+z brings yours back; saving it then asks first)")
                elif choice == "merge":
                    merged = session.merge(disk)
                    self._replace_text(merged.text)
                    self._show_banner(None)
                    self._update_header()
                    if merged.conflicts:
                        self._tell_merged(merged, saved=False)
                    else:
                        self._saved(session.save(), "Merged and saved")
                elif choice == "overwrite":
                    self._saved(session.save_over(disk), "Overwrote")
            except ChangedOnDisk as again:
                self._conflict(again.disk)  # it changed once more while the user chose
            except OSError as exc:
                self.app.notify(f"Not saved: {o.path}: {exc.strerror or exc}", severity="error", timeout=10)

        self.app.push_screen(ConflictScreen(o.path, human.unified_diff(disk.text, session.text, o.path)), answer)

    # ------------------------------------------------------------------ actions

    def action_save(self) -> None:
        self.save()

    def _show_markdown(self, text: str) -> None:
        view = self.query_one("#md-view", VerticalScroll)
        shown = view.query("#markdown")
        text = human.printable(text)  # a view only: what is saved is the editor's text
        if shown:
            shown.first().update(text)
            return
        from textual.widgets import Markdown  # markdown-it loads when the view is first used, not at every start

        view.mount(Markdown(text, id="markdown"))

    def action_toggle_view(self) -> None:
        switcher = self.query_one("#file-switcher", ContentSwitcher)
        if switcher.current == "editor":
            self._show_markdown(self.query_one("#editor", TextArea).text)
            switcher.current = "md-view"
            self.query_one("#md-view").focus()
        else:
            switcher.current = "editor"
            self.query_one("#editor").focus()

    def _editor_ready(self) -> TextArea | None:
        if self.opened is None:
            self.app.notify("Open a memory file first.", severity="warning")
            return None
        switcher = self.query_one("#file-switcher", ContentSwitcher)
        if switcher.current != "editor":
            self.action_toggle_view()
        return self.query_one("#editor", TextArea)

    def _open_bar(self, mode: str, placeholder: str, value: str) -> None:
        bar = self.query_one("#file-bar", FileBar)
        bar.mode, bar.placeholder, bar.value = mode, placeholder, value
        bar.border_title = "Find · Enter: next · Esc: back to the text" if mode == "find" else "Go to line · Esc: back"
        bar.display = True
        bar.focus()

    def action_find(self) -> None:
        editor = self._editor_ready()
        if editor is None:
            return
        self._find_from = editor.document.get_index_from_location(editor.selection.start)
        self._open_bar("find", "Find in the file (Enter: next match, Esc: back to the text)", self._find_query)

    def action_find_next(self) -> None:
        editor = self._editor_ready()
        if editor is None:
            return
        if not self._find_query:
            self.action_find()
            return
        self._find(editor.document.get_index_from_location(editor.selection.end))

    def action_goto_line(self) -> None:
        editor = self._editor_ready()
        if editor is not None:
            self._open_bar("line", f"Go to line (1-{editor.document.line_count}), Enter", "")

    def _edge_keys(self) -> dict[str, str]:
        """key -> "top" / "bottom" for the editor, from the keymap in use."""
        keymap = self.host.settings.keymap
        return {key: EDGES[k.id] for k in self.KEYS if k.id in EDGES for key in keys.keys_of(k, keymap)}

    def action_edge(self, where: str) -> None:
        self.query_one("#editor", MemoryEditor).go_to_edge(where)

    def _find(self, start: int) -> bool:
        editor = self.query_one("#editor", TextArea)
        query = self._find_query
        pos = find_in(editor.text, query, start) if query else None
        if pos is None:
            if query:
                self.app.notify(f"Not found in {self.opened.path if self.opened else 'the file'}: {query}", severity="warning")
            return False
        doc = editor.document
        editor.move_cursor(doc.get_location_from_index(pos))
        editor.move_cursor(doc.get_location_from_index(pos + len(query)), select=True)
        editor.call_after_refresh(editor.scroll_cursor_visible, center=True, animate=False)
        row = doc.get_location_from_index(pos)[0] + 1
        self.query_one("#file-header", Static).update(f"{self.opened.path if self.opened else ''} · \"{query}\" at line {row}"
                                                      + (" (from the top)" if pos < start else ""))
        return True

    @on(Input.Changed, "#file-bar")
    def _bar_changed(self, event: Input.Changed) -> None:
        event.stop()
        bar = self.query_one("#file-bar", FileBar)
        if bar.mode == "find" and event.value:
            self._find_query = event.value
            self._find(self._find_from)  # as you type, from where the search began

    @on(Input.Submitted, "#file-bar")
    def _bar_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        bar = self.query_one("#file-bar", FileBar)
        editor = self.query_one("#editor", TextArea)
        if bar.mode == "find":
            if event.value:
                self._find_query = event.value
                self._find(editor.document.get_index_from_location(editor.selection.end))
            return
        text = event.value.strip()
        last = editor.document.line_count
        if not text.isdigit() or not 1 <= int(text) <= last:
            self.app.notify(f"Go to line: expected a number from 1 to {last}, got {text!r}", severity="warning")
            return
        bar.action_close()
        self._goto(int(text), None, True)

    def action_focus_tree(self) -> None:
        self.query_one("#file-tree").focus()

    def action_external_editor(self) -> None:
        o = self.opened
        if o is None or o.read_only:
            self.app.notify("Open a memory file first." if o is None else "This file is read-only.", severity="warning")
            return
        if self.dirty:
            self.app.notify("Save first (ctrl+s): $EDITOR works on the file on disk.", severity="warning")
            return
        line = self.query_one("#editor", TextArea).cursor_location[0] + 1
        run_external_editor(self.app, str(o.abspath), lambda: self._load(o.path, line, None, True),
                            lambda reason: self.post_message(IndexRequested(reason)), line=line)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "save":
            return True if self.dirty else None  # dimmed while there is nothing to save
        return True

