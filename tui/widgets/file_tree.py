"""The File tab's tree of memory files: MEMORY.md and topic files first, daily logs by month
(newest first), extra paths, then the read-only session transcripts."""

from __future__ import annotations

from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from rich.text import Text

from clawmem.engine import human


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
        if path.startswith("memory/") and human.DATED_RE.match(name):
            months.setdefault(name[:7], []).append(path)
        elif path in ("MEMORY.md", "memory.md") or path.startswith("memory/"):
            top.append(path)
        else:
            extra.append(path)
    top.sort(key=lambda p: (p not in ("MEMORY.md", "memory.md"), p))
    ordered = {m: sorted(months[m], key=lambda p: p.rsplit("/", 1)[-1], reverse=True) for m in sorted(months, reverse=True)}
    return top, ordered, sorted(sessions, reverse=True), sorted(extra)


class FileTree(Tree):
    """The file tree; a leaf's data is its path. Names too long for its width end in "…"
    instead of scrolling sideways. A name is text, never markup nor terminal codes: an escape
    or a bidi override in a file name is shown visibly (engine.printable)."""

    def process_label(self, label):
        return super().process_label(Text(human.printable_line(label)) if isinstance(label, str) else label)

    def render_label(self, node, base_style, style):
        label = super().render_label(node, base_style, style)
        width = self.scrollable_content_region.width
        depth, parent = 0, node.parent
        while parent is not None and parent is not self.root:
            depth, parent = depth + 1, parent.parent
        room = max(width - depth * self.guide_depth, 2)
        if width > 0 and label.cell_len > room:
            if node.allow_expand or label.cell_len != len(label.plain):  # a folder's start names it
                label.truncate(room, overflow="ellipsis")  # (and wide characters are cut by cells)
            else:  # a file: its end tells it from its neighbours (the day of a log: "…02-11.md")
                label = Text("…", style=label.style) + label[len(label.plain) - room + 1:]
        return label

    def on_resize(self) -> None:
        self._invalidate()  # the labels are cut to the width

    def show_files(self, entries: list[dict], open_path: str | None) -> None:
        """Rebuild the tree from the file listing; the cursor stays on its file, else goes to
        the open file, else to the top."""
        current = self.cursor_node.data if self.cursor_node else None
        self.clear()
        top, months, sessions, extra = group_files(entries)
        root = self.root
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
        target = current or open_path
        if target:
            self.select_path(target)
        else:
            self.call_after_refresh(setattr, self, "cursor_line", 0)  # Enter opens the top file at once

    def select_path(self, path: str | None) -> None:
        """Put the cursor on `path`'s leaf, expanding the folders above it."""
        if not path:
            return

        def walk(node: TreeNode) -> TreeNode | None:
            for child in node.children:
                if child.data == path:
                    return child
                found = walk(child)
                if found is not None:
                    return found
            return None

        node = walk(self.root)
        if node is not None:
            parent = node.parent
            while parent is not None:
                parent.expand()
                parent = parent.parent
            self.call_after_refresh(self.move_cursor, node)
