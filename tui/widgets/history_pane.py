"""The History tab: what changed in the memory files (the engine's journal), file by file,
as a coloured diff, who likely wrote it, and keys that restore a file or one hunk. Every
restore is itself journalled, so it shows up here and can be undone the same way."""

from __future__ import annotations

import datetime as dt
import textwrap
from dataclasses import dataclass

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from clawmem.engine import human

from .. import keys
from ..keys import Key
from ..messages import IndexRequested
from .pane import Pane, fit_beside_scroll_bar

SINCE = ("today", "yesterday", "7d", "30d", "all")
SINCE_WORDS = {"today": "today", "yesterday": "yesterday", "7d": "the last 7 days", "30d": "the last 30 days", "all": "ever"}
MAX_CHANGES = 300  # newest first; older ones stay in the journal (clawmem history)


@dataclass(frozen=True)
class Entry:
    """One change as the pane shows it (computed in a worker, read on the UI thread)."""

    version: int
    previous: int | None  # None: this version created the file
    path: str
    when: float
    writer: str
    added: int
    removed: int
    deleted: bool
    hunks: list[list[str]]

    @property
    def created(self) -> bool:
        return self.previous is None


class HistoryLoaded(Message):
    def __init__(self, entries: list[Entry], note: str | None) -> None:
        super().__init__()
        self.entries, self.note = entries, note


class RestoreDone(Message):
    def __init__(self, text: str, error: bool) -> None:
        super().__init__()
        self.text, self.error = text, error


def hanging(marker: str, body: str, width: int | None) -> list[str]:
    """One diff line as rows of at most `width` cells: wrapped between words, every row
    keeping the line's +/- marker, the continuation indented two more (a hanging indent)."""
    if not width or len(body) + 3 <= width:
        return [f"  {marker}{body}"]
    wrapper = textwrap.TextWrapper(width=max(8, width - 3), subsequent_indent="  ", break_on_hyphens=False)
    return [f"  {marker}{row}" for row in wrapper.wrap(body)] or [f"  {marker}"]


def diff_content(entry: Entry, selected: int, width: int | None = None) -> Content:
    """The change as a unified diff: additions green, removals red, the selected hunk marked;
    lines longer than `width` wrap under their marker (hanging)."""
    what = f"created in v{entry.version}" if entry.created else f"v{entry.previous} → v{entry.version}"
    lines: list[Content] = [Content.styled(human.printable_line(f"{entry.path}  {what}  by {entry.writer}"), "bold")]
    if entry.created:
        lines.append(Content.styled("the file was created (no earlier version to restore; u takes a hunk's lines out)", "$text-success"))
    if entry.deleted:
        lines.append(Content.styled("the file was deleted (r brings it back)", "$text-warning"))
    for n, hunk in enumerate(entry.hunks):
        for i, ln in enumerate(map(human.printable, hunk)):
            if i == 0:
                mark = "▶ " if n == selected else "  "
                style = "bold reverse $text-accent" if n == selected else "$text-accent"
                lines.append(Content.styled(f"{mark}{ln}  hunk {n + 1}/{len(entry.hunks)}", style))
            else:
                marker, body = (ln[:1], ln[1:]) if ln[:1] in ("+", "-", " ") else ("", ln)
                style = {"+": "$text-success", "-": "$text-error"}.get(marker, "")
                lines += [Content.styled(row, style) if style else Content(row) for row in hanging(marker, body, width)]
    return Content("\n").join(lines)


class HistoryPane(Pane, Vertical):
    TAB = "history"
    TAB_KEY = keys.tab_key("history", "f8", "History tab: what changed in the memory files")
    ABOUT = "shows what changed in the memory files, who likely wrote it, and restores a file or a hunk"
    KEYS = [
        Key("history.restore", "r", "restore_file", "Restore", "Restore the file to its version before the selected change (itself undoable)"),
        Key("history.hunk", "u", "undo_hunk", "Undo hunk", "Undo only the marked hunk, keeping everything else the file has now"),
        Key("history.next-hunk", "right_square_bracket", "next_hunk", "Next hunk", "Mark the next hunk of the diff", show=False),
        Key("history.prev-hunk", "left_square_bracket", "prev_hunk", "Prev hunk", "Mark the previous hunk of the diff", show=False),
        Key("history.since", "s", "cycle_since", "Since", "Show changes since today, yesterday, 7 days, 30 days, or all"),
    ]
    PALETTE = [
        ("Restore the file to before the selected change", "History: itself undoable", "restore_file"),
    ]
    PALETTE_HELP = "F8: what changed in the memory files, and restore"
    BINDINGS = keys.bindings(KEYS)

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.since = "yesterday"
        self.entries: list[Entry] = []
        self.hunk = 0
        self._select_newest = False  # after a restore: its own change, so r undoes it
        self._width: int | None = None  # the diff was wrapped to this width

    def tab_shown(self) -> None:
        self.query_one("#history-list").focus()
        self.reload()

    def compose(self) -> ComposeResult:
        yield Static("Loading…", id="history-line", markup=False)
        with Horizontal(id="history-body"):
            yield OptionList(id="history-list")
            with VerticalScroll(id="history-side"):
                yield Static("", id="history-diff", markup=False)

    def on_mount(self) -> None:
        self.query_one("#history-list", OptionList).border_title = "Changes"
        self.query_one("#history-side").border_title = "Diff"

    @property
    def selected(self) -> Entry | None:
        idx = self.query_one("#history-list", OptionList).highlighted
        return self.entries[idx] if idx is not None and 0 <= idx < len(self.entries) else None

    # ------------------------------------------------------------------ loading

    def reload(self) -> None:
        self._load(self.since)

    def on_synced(self, finished) -> None:
        # a sync journals the memory files it indexed; a hidden tab reloads when shown
        if self.shown and any(not p.startswith("sessions/") for p in finished.changed):
            self.reload()

    @work(thread=True, exclusive=True, group="history", exit_on_error=False)
    def _load(self, since: str) -> None:
        """What the journal holds is shown at once; the files are then checked for changes not
        yet recorded (hashing every file takes seconds on a busy machine), and the list is
        filled in again only if that found any."""
        from clawmem.engine import human

        eng = self.host.engine
        cfg = eng.cfg
        worker = get_current_worker()
        off = None if cfg["journal.enabled"] else "journal.enabled is false: no new versions are kept (F5 turns it back on)"

        def entries_of(jr) -> list[Entry]:
            changes = jr.changes(None, None if since == "all" else human.parse_since(since, self.host.clock().date()))
            out = []
            for ch in reversed(changes[-MAX_CHANGES:]):
                plus, minus = ch.counts()
                v = ch.after
                out.append(Entry(v.id, None if ch.created else ch.before.id, v.path, v.ts, v.writer, plus, minus, v.deleted, ch.hunk_lines()))
            return out

        try:
            with eng.open_journal(catch_up=False) as jr:
                ready = entries_of(jr)
                if not cfg["journal.enabled"]:
                    self.post_message(HistoryLoaded(ready, off))
                    return
                if not worker.is_cancelled:
                    self.post_message(HistoryLoaded(ready, "checking the files for changes not recorded yet…"))
                found = jr.catch_up()  # changes the watcher has not synced yet
                if not worker.is_cancelled:
                    self.post_message(HistoryLoaded(entries_of(jr) if found else ready, None))
        except Exception as exc:  # an unreadable journal is shown, never fatal
            if not worker.is_cancelled:
                self.post_message(HistoryLoaded([], off or f"journal: {exc}"))

    @on(HistoryLoaded)
    def _loaded(self, msg: HistoryLoaded) -> None:
        keep = None if self._select_newest else self.selected.version if self.selected else None
        self._select_newest = False
        self.entries = msg.entries
        olist = self.query_one("#history-list", OptionList)
        olist.clear_options()
        for e in self.entries:
            when = dt.datetime.fromtimestamp(e.when).strftime("%m-%d %H:%M")
            what = "deleted" if e.deleted else f"created +{e.added}" if e.created else f"+{e.added} -{e.removed}"
            head = Content.assemble((when, "$text-muted"), " ", (human.printable_line(e.path), "bold"))
            tail = Content.assemble(f"  v{e.version} {what} ", (e.writer, "$text-warning" if e.writer == "outside" else "$text-secondary"))
            olist.add_option(Option(Content("\n").join([head, tail]), id=str(e.version)))
        n = len(self.entries)
        words = SINCE_WORDS[self.since]
        line = (f"{n} change{'s' * (n != 1)} since {words}" if n else f"No changes to the memory files since {words}")
        line += " · s since · r restore the file · u undo the marked hunk · [ ] pick a hunk"
        if msg.note:
            line = f"{msg.note} · {line}"
        self.query_one("#history-line", Static).update(line)
        if self.entries:
            at = next((i for i, e in enumerate(self.entries) if e.version == keep), 0)
            olist.highlighted = at
            self._show(reset=keep != self.entries[at].version)
        else:
            self.query_one("#history-diff", Static).update("")

    # ------------------------------------------------------------------ showing

    def on_resize(self) -> None:
        if self.selected is not None and self.query_one("#history-side").scrollable_content_region.width != self._width:
            self._show()  # the diff wraps to the new width

    @on(OptionList.OptionHighlighted, "#history-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show(reset=True)

    def _show(self, reset: bool = False) -> None:
        entry = self.selected
        if entry is None:
            return
        if reset:
            self.hunk = 0
        self.hunk = max(0, min(self.hunk, len(entry.hunks) - 1))
        side = self.query_one("#history-side", VerticalScroll)
        region = side.scrollable_content_region
        self._width = region.width or None
        text, width = fit_beside_scroll_bar(side, self._width, lambda w: diff_content(entry, self.hunk, w),
                                            lambda text: text.plain.count("\n") + 1)
        self.query_one("#history-diff", Static).update(text)
        # keep the marked hunk in view: one title line, then the hunks' rows (wrapped ones count)
        line = 1 + (1 if entry.deleted else 0) + (1 if entry.created else 0) + sum(
            1 if i == 0 else len(hanging(ln[:1], ln[1:], width)) for h in entry.hunks[: self.hunk] for i, ln in enumerate(h))
        self.query_one("#history-side", VerticalScroll).scroll_to(y=max(0, line - 2), animate=False)

    def action_next_hunk(self) -> None:
        self.hunk += 1
        self._show()

    def action_prev_hunk(self) -> None:
        self.hunk -= 1
        self._show()

    def action_cycle_since(self) -> None:
        self.since = SINCE[(SINCE.index(self.since) + 1) % len(SINCE)]
        self.reload()

    # ------------------------------------------------------------------ restoring

    def action_restore_file(self) -> None:
        entry = self.selected
        if entry is None:
            return
        if entry.created:  # before it the file did not exist: r never deletes a file
            self.app.notify(f"{entry.path} did not exist before v{entry.version}: nothing to restore (u takes a hunk's lines out).",
                            severity="warning")
            return
        self._restore(entry, None)

    def action_undo_hunk(self) -> None:
        entry = self.selected
        if entry is None:
            return
        if entry.deleted or not entry.hunks:
            self.app.notify("This change has no hunk to undo; r restores the whole file.", severity="warning")
            return
        self._restore(entry, self.hunk)

    @work(thread=True, exclusive=True, group="history-restore", exit_on_error=False)
    def _restore(self, entry: Entry, hunk: int | None) -> None:
        from clawmem.engine import ClawmemError

        eng = self.host.engine
        try:
            if hunk is None:
                done = eng.restore(entry.path, entry.previous, catch_up=False)
                text = f"Restored {entry.path} to v{entry.previous} (now v{done['version']}; r on that change undoes it)"
            else:
                v = eng.undo_hunk(entry.path, entry.previous, entry.version, hunk)
                text = (f"Undid hunk {hunk + 1} of v{entry.version} in {entry.path} (now v{v.id})" if v
                        else f"{entry.path} already has hunk {hunk + 1} undone")
            error = False
        except (ClawmemError, OSError) as exc:  # a refusal (AccessDenied, BadValue, JournalUnavailable), a failed write
            text, error = f"Not restored: {exc}", True
        self.post_message(RestoreDone(text, error))

    @on(RestoreDone)
    def _restored(self, msg: RestoreDone) -> None:
        self.app.notify(msg.text, severity="error" if msg.error else "information", timeout=10)
        if not msg.error:
            self.post_message(IndexRequested("restored from the history"))
            self._select_newest = True
            self.reload()
