"""The File tab: a tree of the memory files, an editor with Markdown highlighting and a
Markdown view. Saving is atomic, re-indexes at once and never overwrites what the agent
wrote meanwhile without asking (engine.files does the file work)."""

from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import ContentSwitcher, Markdown, Static, TextArea, Tree
from textual.widgets.tree import TreeNode

from clawmem.engine import files as fileops
from clawmem.engine.workspace import DATED_RE

from .. import keys
from .dialogs import ConflictScreen, UnsavedScreen

if TYPE_CHECKING:
    from ..app import ClawmemApp


NO_FILE = "No file open: Enter opens the file under the cursor; ctrl+n writes in today's log."


@dataclass
class OpenedFile:
    path: str  # as shown and as the index knows it
    abspath: object | None  # pathlib.Path; None for session transcripts
    base: fileops.FileSnapshot | None  # what the editor started from
    read_only: bool


def group_files(entries: list[dict]) -> tuple[list[str], dict[str, list[str]], list[str], list[str]]:
    """(top files, daily logs by month newest first, sessions, extra) for the tree."""
    top: list[str] = []
    months: dict[str, list[str]] = {}
    sessions: list[str] = []
    extra: list[str] = []
    for e in entries:
        path = e["path"]
        if e["source"] == "sessions":
            sessions.append(path)
            continue
        name = path.rsplit("/", 1)[-1]
        if path.startswith("memory/") and DATED_RE.match(name):
            months.setdefault(name[:7], []).append(path)
        elif path in ("MEMORY.md", "memory.md") or path.startswith("memory/"):
            top.append(path)
        else:
            extra.append(path)
    top.sort(key=lambda p: (p not in ("MEMORY.md", "memory.md"), p))
    ordered = {m: sorted(months[m], key=lambda p: p.rsplit("/", 1)[-1], reverse=True) for m in sorted(months, reverse=True)}
    return top, ordered, sorted(sessions, reverse=True), sorted(extra)


class FilePane(Horizontal):
    BINDINGS = keys.bindings(keys.FILE_KEYS)
    HELP = "Pick a file in the tree (Enter). ctrl+s saves, ctrl+l switches to the Markdown view."

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.opened: OpenedFile | None = None
        self.dirty = False
        self._entries: list[dict] = []

    @property
    def cm(self) -> "ClawmemApp":
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        tree: Tree[str | None] = Tree("Memory", id="file-tree")
        tree.show_root = False
        tree.guide_depth = 2
        yield tree
        with Vertical(id="file-main"):
            yield Static(NO_FILE, id="file-header", markup=False)
            with ContentSwitcher(initial="editor", id="file-switcher"):
                yield TextArea(
                    "", id="editor", language="markdown", soft_wrap=True, show_line_numbers=True, tab_behavior="focus",
                    read_only=True,
                )
                with VerticalScroll(id="md-view"):
                    yield Markdown("", id="markdown")

    def on_mount(self) -> None:
        self.query_one("#file-tree").border_title = "Files"
        editor = self.query_one("#editor", TextArea)
        editor.cursor_blink = self.cm.settings.blinkingCursor

    # ------------------------------------------------------------------ the tree

    def set_files(self, entries: list[dict]) -> None:
        if entries == self._entries:
            return
        self._entries = entries
        tree: Tree[str | None] = self.query_one("#file-tree", Tree)
        current = tree.cursor_node.data if tree.cursor_node else None
        tree.clear()
        top, months, sessions, extra = group_files(entries)
        root = tree.root
        for p in top:
            root.add_leaf(p, data=p)
        if months:
            logs = root.add("Daily logs", expand=True)
            for i, (month, paths) in enumerate(months.items()):
                node = logs.add(month, expand=i == 0)
                for p in paths:
                    node.add_leaf(p.rsplit("/", 1)[-1], data=p)
        if extra:
            node = root.add("Extra paths", expand=True)
            for p in extra:
                node.add_leaf(p, data=p)
        if sessions:
            node = root.add("Sessions (read-only)", expand=False)
            for p in sessions:
                node.add_leaf(p.rsplit("/", 1)[-1], data=p)
        if not entries:
            root.add_leaf("(no memory files yet: ctrl+n)", data=None)
        target = current or (self.opened.path if self.opened else None)
        if target:
            self._move_tree_to(target)
        else:
            tree.call_after_refresh(setattr, tree, "cursor_line", 0)  # Enter opens the top file at once

    def _move_tree_to(self, path: str | None) -> None:
        if not path:
            return
        tree: Tree[str | None] = self.query_one("#file-tree", Tree)

        def walk(node: TreeNode) -> TreeNode | None:
            for child in node.children:
                if child.data == path:
                    return child
                found = walk(child)
                if found is not None:
                    return found
            return None

        node = walk(tree.root)
        if node is not None:
            parent = node.parent
            while parent is not None:
                parent.expand()
                parent = parent.parent
            tree.call_after_refresh(tree.move_cursor, node)

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
                    self._load(path, start, end, focus_editor, terms)

            self.app.push_screen(UnsavedScreen(self.opened.path, f"open {path}"), answer)
            return
        if self.opened and path == self.opened.path and self.dirty:
            self._goto(start, end, focus_editor, terms)  # keep the edits, just move to the lines
            return
        self._load(path, start, end, focus_editor, terms)

    def _load(self, path: str, start: int | None, end: int | None, focus_editor: bool, terms: tuple[str, ...] = ()) -> None:
        engine = self.cm.engine
        try:
            if path.startswith("sessions/"):
                text = engine.get(path)["text"]
                self.opened = OpenedFile(path, None, None, True)
            else:
                rel, abspath = engine.resolve_allowed(path)
                snap = fileops.read_file(abspath)
                text = snap.text
                self.opened = OpenedFile(rel, abspath, snap, False)
        except Exception as exc:
            self.app.notify(f"Cannot open {path}: {exc}", severity="error", timeout=8)
            return
        editor = self.query_one("#editor", TextArea)
        editor.read_only = self.opened.read_only
        editor.load_text(text)
        self.dirty = False
        self._update_header(start, end)
        self._move_tree_to(self.opened.path)
        switcher = self.query_one("#file-switcher", ContentSwitcher)
        if switcher.current == "md-view":
            self.query_one("#markdown", Markdown).update(text)
        self._goto(start, end, focus_editor, terms)

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
        elif o.base is not None and not o.base.exists:
            parts.append("new file")
        if self.dirty:
            parts.append("● unsaved (ctrl+s)")
        header.update(" · ".join(parts))
        header.set_class(self.dirty, "-dirty")
        self.cm.refresh_bindings()

    @on(TextArea.Changed, "#editor")
    def _edited(self) -> None:
        o = self.opened
        dirty = bool(o and not o.read_only and o.base is not None and self.query_one("#editor", TextArea).text != o.base.text)
        if dirty != self.dirty:
            self.dirty = dirty
            self._update_header()

    # ------------------------------------------------------------------ saving

    def save(self) -> bool:
        """Save atomically unless the file changed on disk (then ask); True once saved."""
        o = self.opened
        if o is None or o.read_only or o.base is None:
            self.app.notify("Nothing to save here." if o is None else "This file is read-only.", severity="warning")
            return False
        text = self.query_one("#editor", TextArea).text
        try:
            snap = fileops.save_if_unchanged(o.abspath, text, o.base.hash)
        except fileops.ChangedOnDisk as exc:
            self._conflict(text, exc.disk)
            return False
        except OSError as exc:
            self.app.notify(f"Not saved: {o.path}: {exc.strerror or exc}", severity="error", timeout=10)
            return False
        self._saved(snap)
        return True

    def _saved(self, snap: fileops.FileSnapshot, how: str = "Saved") -> None:
        assert self.opened is not None
        self.opened.base = snap
        self.dirty = self.query_one("#editor", TextArea).text != snap.text
        self._update_header()
        self.app.notify(f"{how} {self.opened.path}")
        self.cm.request_index(f"saved {self.opened.path}")

    def _conflict(self, mine: str, disk: fileops.FileSnapshot) -> None:
        o = self.opened
        assert o is not None and o.base is not None
        diff = fileops.unified_diff(disk.text, mine, o.path)
        base_text = o.base.text

        def answer(choice: str | None) -> None:
            editor = self.query_one("#editor", TextArea)
            try:
                if choice == "reload":
                    # an edit, not a reload: ctrl+z still brings the user's text back
                    editor.replace(disk.text, (0, 0), editor.document.end)
                    o.base = disk
                    self.dirty = False
                    self._update_header()
                    self.app.notify(f"Reloaded {o.path} from disk (ctrl+z restores your version)")
                elif choice == "merge":
                    merged = fileops.merge_appending(base_text, mine, disk.text)
                    snap = fileops.save_if_unchanged(o.abspath, merged, disk.hash)
                    editor.replace(merged, (0, 0), editor.document.end)
                    self._saved(snap, "Merged and saved")
                elif choice == "overwrite":
                    self._saved(fileops.overwrite(o.abspath, mine), "Overwrote")
            except fileops.ChangedOnDisk as again:
                self._conflict(mine, again.disk)  # it changed once more while the user chose
            except OSError as exc:
                self.app.notify(f"Not saved: {o.path}: {exc.strerror or exc}", severity="error", timeout=10)

        self.app.push_screen(ConflictScreen(o.path, diff), answer)

    def reload_if_clean(self, path: str) -> None:
        """After an append from the app, show the new text when nothing unsaved is in the way."""
        if self.opened and self.opened.path == path and not self.dirty:
            self._load(path, None, None, focus_editor=False)

    # ------------------------------------------------------------------ actions

    def action_save(self) -> None:
        self.save()

    def action_toggle_view(self) -> None:
        switcher = self.query_one("#file-switcher", ContentSwitcher)
        if switcher.current == "editor":
            self.query_one("#markdown", Markdown).update(self.query_one("#editor", TextArea).text)
            switcher.current = "md-view"
            self.query_one("#md-view").focus()
        else:
            switcher.current = "editor"
            self.query_one("#editor").focus()

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
        run_external_editor(self.app, str(o.abspath), lambda: self._load(o.path, None, None, True), self.cm.request_index)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "save":
            return True if self.dirty else None  # dimmed while there is nothing to save
        return True


def run_external_editor(app, path: str, after: Callable[[], None], request_index: Callable[[str], None]) -> None:
    """Open `path` in $VISUAL/$EDITOR with the app suspended (works over SSH; not in a browser)."""
    if getattr(app, "is_web", False):
        app.notify("$EDITOR is not available in a browser session.", severity="warning")
        return
    command = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        with app.suspend():
            subprocess.call([*shlex.split(command), path])
    except Exception as exc:  # SuspendNotSupported, a missing editor…
        app.notify(f"Cannot run {command}: {exc}", severity="error", timeout=8)
        return
    after()
    request_index(f"edited {path} in $EDITOR")
