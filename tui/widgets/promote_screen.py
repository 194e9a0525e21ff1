"""The Promote screen (F10): the daily-log passages the agent keeps recalling, ranked as
`clawmem promote` ranks them, for a person to review one by one. Accept writes the passage
to MEMORY.md at once (one journal version, so the History tab shows it and can undo it);
reject remembers the choice so it is not offered again; edit changes the text before it is
accepted. Everything is from the keyboard."""

from __future__ import annotations

import os
import textwrap

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from clawmem.engine import ClawmemError, human

from .. import keys
from ..messages import IndexRequested
from .pane import fit_beside_scroll_bar

STATUS_WORDS = {"changed": "edited since it was recalled: it will be skipped",
                "deleted": "its file was deleted: it will be skipped"}


class Loaded(Message):
    def __init__(self, candidates: list, notes: list[str], error: str | None = None) -> None:
        super().__init__()
        self.candidates, self.notes, self.error = candidates, notes, error


class Decided(Message):
    """`drop`: the candidate leaves the list (decided, or skipped because its source changed)."""

    def __init__(self, key: str, text: str, error: bool, drop: bool, written: bool = False) -> None:
        super().__init__()
        self.key, self.text, self.error, self.drop, self.written = key, text, error, drop, written


def short_names(names: list[str], width: int) -> list[str]:
    """Each name in at most `width` cells: a name too long loses the part it shares with the
    others (shown as …) and keeps what tells it apart; one still too long ends in … too."""
    out = []
    for name in names:
        if len(name) <= width:
            out.append(name)
            continue
        common = max((len(os.path.commonprefix([name, other])) for other in names if other != name), default=0)
        distinct = name[common:]
        if len(distinct) + 1 < width:  # the start of the shared part, …, all that differs
            out.append(name[: width - 1 - len(distinct)] + "…" + distinct)
        else:
            out.append("…" + distinct[: max(1, width - 2)] + "…")
    return out


def numbered(n: int, line: str, width: int | None) -> list[Content]:
    """A source line as "   4 │ text", wrapped between words under its text (the number and
    the bar on its first row only, the bar on every row), at most `width` cells a row."""
    if not width or len(line) + 7 <= width:
        return [Content.assemble((f"{n:>4} │ ", "$text-muted"), line)]
    rows = textwrap.TextWrapper(width=max(8, width - 7), break_on_hyphens=False).wrap(line) or [""]
    return [Content.assemble((f"{n:>4} │ " if i == 0 else "     │ ", "$text-muted"), row) for i, row in enumerate(rows)]


def detail(c, width: int | None = None) -> Content:
    """One candidate: why it ranks (score, counts, the six signals), the queries, the text
    that would go to MEMORY.md and the live source lines (memory text with its control
    characters shown visibly, never passed to the terminal)."""
    parts = [
        Content.styled(human.printable_line(f"{c.path}:{c.start}-{c.end}") + f"   score {c.score:.3f}", "bold"),
        Content(f"{c.recalls} recalls · {c.unique_queries} distinct queries · {len(c.days)} day{'s' * (len(c.days) != 1)}"
                f" · last {c.last_recalled[:16].replace('T', ' ')}" + (f" · from {c.origin}" if c.origin != "clawmem" else "")),
        Content(""),
        Content("  ".join(f"{k} {v:.2f}" for k, v in c.signals.items())),
    ]
    if c.queries:
        parts.append(Content.styled(human.printable("queries: " + ", ".join(f'"{q}"' for q in c.queries[:4])), "$text-muted"))
    if c.status != "ok":
        parts.append(Content.styled(STATUS_WORDS[c.status], "$text-warning"))
    parts += [Content(""), Content.styled("Goes to MEMORY.md as", "bold"), Content(human.printable(f"- {c.text()} ({c.entry_citation})"))]
    parts += [Content.styled(human.printable(f"contradicts: {other}"), "$text-warning") for other in c.conflicts]
    if c.replaces:
        parts.append(Content.styled("s supersedes the promoted fact it contradicts: kept in MEMORY.md, struck and dated", "$text-warning"))
    parts += [Content(""), Content.styled("Source lines (as the daily log has them now)", "bold")]
    parts += [row for n, ln in enumerate(c.lines, c.start) for row in numbered(n, human.printable(ln), width)]
    return Content("\n").join(parts)


class EditScreen(ModalScreen):
    """Edit a candidate's text before it is accepted: ctrl+s accepts, Escape cancels."""

    DEFAULT_CSS = """
    EditScreen { align: center middle; }
    EditScreen > Vertical { width: 80; max-width: 95%; height: 16; border: thick $primary; background: $surface; padding: 0 1; }
    EditScreen #edit-title { text-style: bold; }
    EditScreen TextArea { height: 1fr; }
    """
    BINDINGS = [Binding("ctrl+s", "accept", "Accept"), Binding("escape", "cancel", "Cancel")]

    def __init__(self, citation: str, text: str) -> None:
        super().__init__()
        self.citation, self.text = citation, text

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"Edit before accepting ({self.citation}) · ctrl+s accept · Esc cancel", id="edit-title", markup=False)
            yield TextArea(self.text, id="edit-text", soft_wrap=True)

    def on_mount(self) -> None:
        area = self.query_one(TextArea)
        area.cursor_blink = self.app.settings.blinkingCursor  # ui.blinkingCursor holds here too
        area.move_cursor(area.document.end)  # ready to add a word of context at the end
        area.focus()

    def action_accept(self) -> None:
        self.dismiss(self.query_one(TextArea).text)

    def action_cancel(self) -> None:
        self.dismiss(None)


class PromoteScreen(Screen):
    BINDINGS = keys.bindings(keys.PROMOTE_KEYS)
    DEFAULT_CSS = """
    PromoteScreen #promote-line { height: auto; padding: 0 1; color: $text-muted; }
    PromoteScreen #promote-body { height: 1fr; }
    PromoteScreen #promote-list { width: 2fr; max-width: 56; border: round $border; }
    PromoteScreen #promote-side { width: 3fr; }
    PromoteScreen #promote-side { border: round $border; padding: 0 1; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.candidates: list = []

    def compose(self) -> ComposeResult:
        yield Static("Loading the candidates…", id="promote-line", markup=False)
        with Horizontal(id="promote-body"):
            yield OptionList(id="promote-list")
            with VerticalScroll(id="promote-side"):
                yield Static("", id="promote-detail", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#promote-list").border_title = "Candidates"
        self.query_one("#promote-side").border_title = "Why, and the source lines"
        self.query_one("#promote-list").focus()
        self.load_candidates()

    @property
    def selected(self):
        idx = self.query_one("#promote-list", OptionList).highlighted
        return self.candidates[idx] if idx is not None and 0 <= idx < len(self.candidates) else None

    @work(thread=True, exclusive=True, group="promote", exit_on_error=False)
    def load_candidates(self) -> None:
        try:
            app = self.app
            found, notes = app.engine.promotion_candidates(now=app.clock().timestamp())  # type: ignore[attr-defined]
            self.post_message(Loaded(found, notes))
        except ClawmemError as exc:  # an unreadable recall store is shown, never fatal
            self.post_message(Loaded([], [], str(exc)))
        except Exception as exc:  # the last guard: a bug is shown with its kind, never fatal
            self.post_message(Loaded([], [], f"{type(exc).__name__}: {exc}"))

    @on(Loaded)
    def _loaded(self, msg: Loaded) -> None:
        self.candidates = msg.candidates
        self._render_list(msg.error or (msg.notes[0] if msg.notes else None))

    def _render_list(self, note: str | None = None, keep: int = 0) -> None:
        olist = self.query_one("#promote-list", OptionList)
        olist.clear_options()
        inner = (olist.size.width or round(self.app.size.width * 0.4)) - 2 - 2  # border, scrollbar
        names = [human.printable_line(c.path.removeprefix("memory/")) for c in self.candidates]
        widths = [inner - 1 - len(f"{c.score:.2f} ") - len(f":{c.start}-{c.end}") for c in self.candidates]
        shown = [short_names(names, w)[i] for i, w in enumerate(widths)]
        for c, name in zip(self.candidates, shown):
            head = Content.assemble((f"{c.score:.2f} ", "bold"), name, (f":{c.start}-{c.end}", "$text-muted"))
            tail = Content(f"  {c.recalls} recalls · {c.unique_queries} queries" + ("  (skipped)" if c.status != "ok" else ""))
            olist.add_option(Option(Content("\n").join([head, tail])))
        n = len(self.candidates)
        line = (f"{n} passage{'s' * (n != 1)} the agent keeps recalling · a accept · e edit · x reject · s supersede · Esc back"
                if n else "Nothing to promote yet: passages recalled by 3+ searches with 2+ distinct queries show here · Esc back")
        self.query_one("#promote-line", Static).update(f"{note} · {line}" if note else line)
        if n:
            olist.highlighted = min(keep, n - 1)
            self._show()
        else:
            self.query_one("#promote-detail", Static).update("")

    def on_resize(self) -> None:
        if self.candidates:  # the names follow the list's width
            self._render_list(keep=self.query_one("#promote-list", OptionList).highlighted or 0)

    @on(OptionList.OptionHighlighted, "#promote-list")
    def _highlighted(self, _event) -> None:
        self._show()

    def _show(self) -> None:
        c = self.selected
        if c is not None:
            side = self.query_one("#promote-side", VerticalScroll)
            region = side.scrollable_content_region
            text, _ = fit_beside_scroll_bar(side, region.width if region.width > 20 else None, lambda w: detail(c, w),
                                            lambda text: len(text.wrap(region.width)))
            self.query_one("#promote-detail", Static).update(text)

    # ------------------------------------------------------------------ decisions

    def action_accept(self) -> None:
        c = self.selected
        if c is not None:
            self._decide(c, "accept", None)

    def action_edit(self) -> None:
        c = self.selected
        if c is None:
            return

        def done(text: str | None) -> None:
            if text is not None and text.strip():
                self._decide(c, "accept", text)

        self.app.push_screen(EditScreen(human.printable_line(c.citation), c.text()), done)

    def action_reject(self) -> None:
        c = self.selected
        if c is not None:
            self._decide(c, "reject", None)

    def action_supersede(self) -> None:
        c = self.selected
        if c is None:
            return
        if not c.replaces:
            self.app.notify("Nothing to supersede: this fact contradicts no promoted fact in MEMORY.md (a accepts it)", timeout=6)
            return
        self._decide(c, "supersede", None)

    def action_close(self) -> None:
        self.dismiss(None)

    @work(thread=True, exclusive=True, group="promote-decide", exit_on_error=False)
    def _decide(self, c, what: str, text: str | None) -> None:
        engine = self.app.engine  # type: ignore[attr-defined]
        try:
            if what == "reject":
                engine.reject_promotion(c)
                self.post_message(Decided(c.key, f"Rejected {c.citation}: it will not be offered again", False, True))
                return
            today = self.app.clock().date()  # type: ignore[attr-defined]
            [outcome] = engine.promote([c], edits={c.key: text} if text else None, confirmed={c.key},
                                       supersede={c.key} if what == "supersede" else None, today=today)
            if outcome.promoted:
                version = f" as v{outcome.version}; the History tab shows it and r there undoes it" if outcome.version else ""
                old = (f"; superseded {len(outcome.superseded)} promoted fact{'s' * (len(outcome.superseded) != 1)} "
                       "(kept, struck; clawmem promote --reinstate KEY undoes it)") if outcome.superseded else ""
                self.post_message(Decided(c.key, f"Promoted {c.citation} to MEMORY.md{version}{old}", False, True, written=True))
            else:
                self.post_message(Decided(c.key, f"Not promoted: {c.citation} was {outcome.reason}", True, True))
        except Exception as exc:  # a file that cannot be written: said, and the candidate stays
            self.post_message(Decided(c.key, f"Not promoted: {exc}", True, False))

    @on(Decided)
    def _decided(self, msg: Decided) -> None:
        self.app.notify(msg.text, severity="error" if msg.error else "information", timeout=10)
        at = next((i for i, c in enumerate(self.candidates) if c.key == msg.key), 0)
        if msg.drop:
            self.candidates = [c for c in self.candidates if c.key != msg.key]
        if msg.written:
            self.post_message(IndexRequested("promoted to MEMORY.md"))
        self._render_list(keep=at)
