"""The Search tab: search as you type, results, a preview of the surrounding lines, the
mode line (hybrid / keyword-only and why), hidden results and the explanation view."""

from __future__ import annotations

import re

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.timer import Timer
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from clawmem.engine import SearchRequest, human

from .. import keys
from ..keys import Key
from ..words import plural
from ..present import explanation, hidden_reason, mode_line
from ..messages import IndexRequested, OpenFile, PreviewLoaded, SearchDone
from .pane import Pane, fit_beside_scroll_bar

PREVIEW_CONTEXT = 4  # lines shown above and below the matched range


def highlight(text: str, terms: list[str], style: str = "bold $text-accent underline") -> Content:
    """`text` with every occurrence of the query terms in `style` (case-insensitive); control
    characters shown visibly, never passed to the terminal."""
    text = human.printable(text)
    content = Content(text)
    low = text.lower()
    for term in sorted({t for t in terms if t}, key=len, reverse=True):
        start = 0
        while (pos := low.find(term, start)) >= 0:
            content = content.stylize(style, pos, pos + len(term))
            start = pos + len(term)
    return content


def first_match_line(lines: list[str], first: int, start: int, end: int, terms) -> int:
    """The number of the first line in start..end (1-based; `lines` begin at `first`) that holds
    a query word, else `start`: where the preview scrolls to and the File tab's cursor goes."""
    for n in range(max(start, first), min(end, first + len(lines) - 1) + 1):
        low = lines[n - first].lower()
        if any(t and t in low for t in terms):
            return n
    return start


def from_match(r: dict, terms: list[str]) -> str:
    """A result's snippet from the line it matched on."""
    from clawmem.engine import human

    return "\n".join(r["snippet"].split("\n")[human.snippet_match(r, terms):])


def _one_line(text: str, limit: int = 160) -> str:
    """`text` on one line within `limit` characters, cut between words (a cut word reads as
    another word) unless one word fills most of the line."""
    flat = re.sub(r"\s+", " ", text).strip()
    if len(flat) <= limit:
        return flat
    head = flat[: limit - 1]
    space = head.rfind(" ")
    return (head[:space] if space >= limit // 2 else head).rstrip() + "…"


class SearchPane(Pane, Vertical):
    """Search box, mode line, results beside a preview, and the hidden-results line."""

    TAB = "search"
    TAB_KEY = keys.tab_key("search", "f2", "Search tab")
    ABOUT = "finds passages as you type"
    KEYS = [
        Key("search.open", "enter", "open_result", "Open", "Open the selected result in the File tab", show=False, bound=False),
        Key("search.hidden", "f6", "toggle_hidden", "Hidden", "Show or hide the results below the score threshold"),
        Key("search.explain", "f7", "toggle_explain", "Why", "Explain the selected result's score"),
        Key("search.copy", "ctrl+y", "copy_citation", "Copy", "Copy the selected result's citation (OSC 52)"),
        Key("search.fleet", "ctrl+t", "toggle_fleet", "Fleet", "Search the fleet (every agent this one may read) or this agent's memory",
            show=False),
    ]
    PALETTE = [
        ("Show or hide results below the threshold", "Search: the results the score threshold hides", "toggle_hidden"),
        ("Explain the selected result", "Search: how its score was made", "toggle_explain"),
        ("Copy the selected result's citation", "Search: to the clipboard (OSC 52, works over SSH)", "copy_citation"),
    ]
    BINDINGS = keys.bindings(KEYS) + [("down", "focus_results", "")]
    HELP = "Type to search. Enter opens the highlighted result; ↓ moves to the list."

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.seq = 0
        self.result: dict | None = None
        self.result_query = ""
        self._recorded = ""  # the query whose hits were last recorded as recalls
        self.status: dict | None = None
        self.show_hidden = False
        self.show_explain = False
        self.fleet = False  # ctrl+t: search the fleet database instead of this agent's index
        self._timer: Timer | None = None
        self._inflight = False
        self._pending: tuple[int, str] | None = None
        self._quiet_seq = -1  # the search re-run after a sync, which must not ask for another
        self._terms: list[str] = []

    def tab_shown(self) -> None:
        self.focus_input()

    def compose(self) -> ComposeResult:
        yield Input(placeholder="Search memory… (type; Enter opens, ↓ results)", id="search-input")
        yield Static("Loading…", id="mode-line", markup=False)
        with Horizontal(id="search-body"):
            yield OptionList(id="results")
            with VerticalScroll(id="side"):
                yield Static("", id="preview")
        yield Static("", id="hidden-line", markup=False)

    def on_mount(self) -> None:
        self.query_one("#results", OptionList).border_title = "Results"
        self.query_one("#side").border_title = "Preview"
        self.query_one(Input).cursor_blink = self.host.settings.blinkingCursor
        self._show_empty_hint()

    # ------------------------------------------------------------------ searching

    @on(Input.Changed, "#search-input")
    def _query_changed(self, event: Input.Changed) -> None:
        self.seq += 1  # every keystroke makes older answers stale
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        query = event.value.strip()
        if not query:
            self.result = None
            self._render_results()
            return
        delay = self.host.settings.searchDelayMs / 1000
        seq = self.seq
        if delay <= 0:
            self._submit(seq, query)
        else:
            self._timer = self.set_timer(delay, lambda: self._submit(seq, query))

    def _submit(self, seq: int, query: str) -> None:
        """One search at a time, the latest query next: fast when idle, no pile-up when typing."""
        if self._inflight:
            self._pending = (seq, query)
            return
        self._inflight = True
        self._search(seq, query, self.show_hidden, seq != self._quiet_seq)

    def on_synced(self, finished) -> None:
        # else the same search gives the same answer (unless it said the index was behind)
        if finished.index_changed or (self.result or {}).get("stale"):
            self.refresh_search(after_sync=True)

    def on_config(self) -> None:
        self.refresh_search()

    def refresh_search(self, after_sync: bool = False) -> None:
        """Run the current query again (after an index run or a save). After a sync the
        search never asks for another one: what that sync left behind it left on purpose
        (or a newer change has its own sync coming), and asking would loop sync, search, sync."""
        query = self.query_one(Input).value.strip()
        if query:
            self.seq += 1
            self._quiet_seq = self.seq if after_sync else -1
            self._submit(self.seq, query)

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def _search(self, seq: int, query: str, show_hidden: bool, may_sync: bool) -> None:
        worker = get_current_worker()
        try:
            # search-as-you-type: half-typed words are not recalls; opening a result records one
            request = SearchRequest(explain=True, show_hidden=show_hidden, sync_on_stale=may_sync, private=True)
            engine = self.host.engine
            res = engine.fleet_search(query, request) if self.fleet else engine.search(query, request)
        except Exception as exc:  # an unreadable index, a fleet database down: say so in place of results
            if not worker.is_cancelled:
                self.post_message(SearchDone(seq, query, None, str(exc)))
            return
        if not worker.is_cancelled:
            self.post_message(SearchDone(seq, query, res))

    @on(SearchDone)
    def _search_done(self, msg: SearchDone) -> None:
        msg.stop()
        self._inflight = False
        if self._pending is not None:
            pending, self._pending = self._pending, None
            if pending[0] == self.seq:
                self._submit(*pending)
        if msg.seq != self.seq:
            return  # a slower, older answer: a newer query has been typed since
        if msg.error:
            self.result = None
            self._render_results(error=msg.error)
            return
        self.result = msg.result
        self.result_query = msg.query
        self._terms = human.query_terms(msg.query)
        self._render_results()
        # with the watcher running the engine has already asked it (which skips what it left
        # behind on purpose); without, the app indexes, unless this search came after a sync
        if msg.result and msg.result.get("stale") and msg.seq != self._quiet_seq and not self.host.engine.syncs_when_asked():
            self.post_message(IndexRequested("search found the index behind the files"))

    def on_status(self, status: dict) -> None:
        self.status = status
        if self.result is None:
            self._render_mode()
            if not self.query_one(Input).value.strip():
                self._show_empty_hint()

    # ------------------------------------------------------------------ rendering

    def _render_mode(self) -> None:
        line, keyword = mode_line(self.result, self.status)
        mode = self.query_one("#mode-line", Static)
        mode.update(line)
        mode.set_class(keyword, "-keyword")

    def _render_results(self, error: str | None = None) -> None:
        self._render_mode()
        results = self.query_one("#results", OptionList)
        results.clear_options()
        hidden_line = self.query_one("#hidden-line", Static)
        res = self.result
        if error:
            self._set_preview(Content(f"Search failed: {error}"))
            hidden_line.update("")
            return
        if res is None:
            hidden_line.update("")
            self._show_empty_hint()
            return
        for i, r in enumerate(res["results"]):
            where = f"{r['agent']}@{r['host']} " if "agent" in r else ""
            head = Content.assemble(
                (human.printable_line(f"{where}{r['path']}:{r['startLine']}-{r['endLine']}"), "bold"),
                "  ",
                (r["source"], "$text-muted"),
                "  ",
                (f"{r['score']:.2f}", "bold"),  # no colour of its own: readable on the selected row in 16 colours too
                (f" {r['band']}" if r.get("band") else "", "$text-muted"),
                ("  " + r["date"] if r.get("date") else "", "$text-muted"),
            )
            # the line it matched on leads; no colour of its own: the selected row's colours keep
            # it readable in 16 colours too
            body = highlight(_one_line(from_match(r, self._terms)), self._terms, "bold underline")
            results.add_option(Option(Content("\n").join([head, body]), id=str(i)))
        hidden = res["hidden"]
        if self.show_hidden and hidden.get("bestScore") is None:
            hidden_line.update("Nothing scored below the threshold for this search · F6 turns showing them off")
        elif self.show_hidden:
            hidden_line.update("Showing the results below the score threshold too · F6 hides them")
        elif hidden.get("reason"):  # the memory seems not to hold the answer: said, with a way to look anyway
            more = f" · F6 shows the {plural(hidden['count'], 'weak hit')}" if hidden["count"] else ""
            hidden_line.update(f"Nothing shown: {hidden_reason(hidden)}{more}")
        elif hidden["count"]:
            best = f" (best {hidden['bestScore']:.2f})" if hidden.get("bestScore") is not None else ""
            hidden_line.update(f"{plural(hidden['count'], 'result')} hidden below the score threshold{best} · F6 shows them")
        else:
            hidden_line.update("")
        if res["results"]:
            results.highlighted = 0
        else:
            msg = "No matches."
            if hidden.get("reason") and not self.show_hidden:
                msg += f"\n\nNothing shown: {hidden_reason(hidden)}."
                if hidden["count"]:
                    msg += f" Press F6 to see the {plural(hidden['count'], 'weak hit')} anyway."
            elif hidden["count"] and not self.show_hidden:
                msg += f"\n\n{plural(hidden['count'], 'result')} scored below the threshold: press F6 to see them."
            self._set_preview(Content(msg))

    def _show_empty_hint(self) -> None:
        st = self.status
        if st is None:
            self._set_preview(Content(""))
            return
        files, chunks = st["index"]["files"], st["index"]["chunks"]
        if not self.host.engine.workspace.is_dir():
            text = (f"No workspace at {self.host.shorten(str(self.host.engine.workspace))} yet.\n\nCreate it from the command "
                    "palette: ctrl+p, then \"Create the workspace\". For another folder: clawmem --workspace PATH.")
        elif not files and st["freshness"].get("job"):
            text = "Indexing your memory for the first time: the Sync tab (F4) shows how far it has got."
        elif not files:
            text = "No memory indexed yet.\n\nPress ctrl+n to write today's first note, or F3 to browse the files."
        else:
            text = f"Type to search {plural(files, 'file')} ({plural(chunks, 'chunk')})."
        self._set_preview(Content(text))

    def _set_preview(self, content: Content) -> None:
        self.query_one("#preview", Static).update(content)
        self.query_one("#side").border_title = "Preview"

    # ------------------------------------------------------------------ the selected result

    def selected(self) -> dict | None:
        if not self.result or not self.result["results"]:
            return None
        idx = self.query_one("#results", OptionList).highlighted
        if idx is None or idx >= len(self.result["results"]):
            return None
        return self.result["results"][idx]

    @on(OptionList.OptionHighlighted, "#results")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show_selected()

    def _show_selected(self) -> None:
        r = self.selected()
        if r is None:
            return
        if self.show_explain:
            self.query_one("#preview", Static).update(Content(explanation(r)))
            self.query_one("#side").border_title = "Why (F7 for the preview)"
            return
        start = max(1, r["startLine"] - PREVIEW_CONTEXT)
        count = r["endLine"] - start + 1 + PREVIEW_CONTEXT
        # a fleet hit's file is on another host: the preview is the text the fleet stores of it
        self._load_preview((r["path"], r["startLine"], r["endLine"]), r.get("ref") or r["path"], start, count)

    @work(thread=True, exclusive=True, group="preview", exit_on_error=False)
    def _load_preview(self, key, path: str, start: int, count: int) -> None:
        try:
            if path.startswith("fleet:"):
                text = self.host.engine.fleet_get(path, start, count)["text"]
            else:
                text = self.host.engine.get(path, start, count)["text"]
        except Exception as exc:
            self.post_message(PreviewLoaded(key, path, start, "", str(exc)))
            return
        self.post_message(PreviewLoaded(key, path, start, text))

    @on(PreviewLoaded)
    def _preview_loaded(self, msg: PreviewLoaded) -> None:
        msg.stop()
        r = self.selected()
        if r is None or (r["path"], r["startLine"], r["endLine"]) != msg.key or self.show_explain:
            return
        if msg.error:
            self._set_preview(Content(f"Cannot show {msg.path}: {msg.error}"))
            return
        _, s, e = msg.key
        lines = human.printable(msg.text).split("\n")
        match = r.get("matchLine")  # the engine's best line; a vector-only hit has no query word to scan for
        if not (match and msg.first_line <= match < msg.first_line + len(lines)):
            match = first_match_line(lines, msg.first_line, s, e, self._terms)
        width = len(str(msg.first_line + len(lines)))
        # a long line wraps under its text, the bar beside every row of a cited line
        side = self.query_one("#side")
        region = side.scrollable_content_region
        parts, _ = fit_beside_scroll_bar(side, region.width - (width + 2),
                                         lambda room: self._preview_rows(lines, msg.first_line, s, e, match, room),
                                         lambda parts: sum(p.plain.count("\n") + 1 for p in parts))
        self.query_one("#preview", Static).update(Content("\n").join(parts))
        self.query_one("#side").border_title = f"{msg.path}:{s}-{e}"
        self.call_after_refresh(self._scroll_preview_to, parts[: match - msg.first_line])

    def _preview_rows(self, lines: list[str], first: int, s: int, e: int, match: int, room: int) -> list[Content]:
        """Each line numbered, the cited ones barred, the matched one marked ▶; a line longer
        than `room` cells wraps between words under its text."""
        width = len(str(first + len(lines)))
        parts = []
        for n, line in enumerate(lines, start=first):
            inside = s <= n <= e
            mark = "▶" if n == match else "▌" if inside else " "
            style = "$text-accent" if inside else "$text-muted"
            gutter = Content.styled(f"{n:>{width}} {mark}", style)
            body = highlight(line, self._terms) if inside else Content.styled(line, "$text-muted")
            if n == match:
                body = body.stylize("bold")
            rows = body.wrap(room) if room >= 10 and body.cell_length > room else [body]
            under = Content.styled(" " * width + (" ▌" if inside else "  "), style)
            parts.append(Content("\n").join([(gutter if i == 0 else under) + row for i, row in enumerate(rows)]))
        return parts

    def _scroll_preview_to(self, above: list[Content], tries: int = 5) -> None:
        """Bring the matched line to the middle of the preview (rows counted as they wrap).

        The new text may not be laid out yet (the scroll range still the old one's): then the
        scroll would be cut short, so it is tried again after the next refresh."""
        side = self.query_one("#side")
        width = max(1, side.scrollable_content_region.width)
        row = sum(len(part.wrap(width)) or 1 for part in above)
        target = max(0, row - side.scrollable_content_region.height // 2)
        if target > side.max_scroll_y and tries > 1:
            self.call_after_refresh(self._scroll_preview_to, above, tries - 1)
            return
        side.scroll_to(y=target, animate=False)

    # ------------------------------------------------------------------ actions

    @on(Input.Submitted, "#search-input")
    def _submitted(self) -> None:
        self.action_open_result()

    @on(OptionList.OptionSelected, "#results")
    def _chosen(self) -> None:
        self.action_open_result()

    def action_open_result(self) -> None:
        r = self.selected()
        if r is not None and "agent" in r:
            self.app.notify(f"{r['path']} is {r['agent']}'s, on {r['host']}: the preview shows the text the fleet stores of it.")
        elif r is not None:
            if self.result and self.result_query != self._recorded:
                self._recorded = self.result_query
                self._record_recall(self.result_query, self.result["results"])
            self.post_message(OpenFile(r["path"], r["startLine"], r["endLine"], tuple(self._terms)))

    @work(thread=True, group="recall", exit_on_error=False)
    def _record_recall(self, query: str, results: list[dict]) -> None:
        self.host.engine.record_recall(query, results)

    def action_toggle_fleet(self) -> None:
        if not self.fleet and not self.host.engine.cfg["fleet.url"]:
            self.app.notify("No fleet database: set [fleet] url in the config (clawmem fleet up starts a local one).", severity="warning")
            return
        self.fleet = not self.fleet
        self.app.notify("Searching the fleet: every agent this one may read (ctrl+t: back to this agent's memory)."
                        if self.fleet else "Searching this agent's memory.")
        self.result = None
        self.refresh_search()
        if not self.query_one(Input).value.strip():
            self._render_results()

    def action_focus_results(self) -> None:
        results = self.query_one("#results", OptionList)
        if results.option_count:
            results.focus()

    def action_toggle_hidden(self) -> None:
        self.show_hidden = not self.show_hidden
        if self.result is not None and self.show_hidden and not self.result["hidden"]["count"]:
            self.app.notify("Nothing is hidden below the threshold for this search.")
        self.refresh_search()
        if not self.query_one(Input).value.strip():
            self._render_results()

    def action_toggle_explain(self) -> None:
        self.show_explain = not self.show_explain
        if self.selected() is None:
            return
        self._show_selected()

    def action_copy_citation(self) -> None:
        r = self.selected()
        if r is None:
            self.app.notify("Select a result first.", severity="warning")
            return
        citation = r.get("citation") or f"Source: {r['path']}#L{r['startLine']}-L{r['endLine']}"
        self.app.copy_to_clipboard(citation)
        self.app.notify(f"Copied: {citation}")

    def focus_input(self) -> None:
        self.query_one(Input).focus()
