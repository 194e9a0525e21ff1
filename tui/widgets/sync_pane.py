"""The Sync tab: live indexing progress, the engine's event log, freshness, watcher, provider
and vector state, and the re-index / rebuild keys."""

from __future__ import annotations

import textwrap
import time

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Log, ProgressBar, Static

from clawmem.engine import events as ev
from clawmem.engine import human

from .. import keys
from ..keys import Key
from ..present import status_lines
from ..messages import IndexRequested
from ..words import plural
from .pane import Pane


def duration(seconds: float) -> str:
    return "<1s" if seconds < 1 else f"{seconds:.0f}s" if seconds < 120 else f"{seconds / 60:.0f} min"


class EtaMeter:
    """Rate and ETA from the last few seconds of a job, not from its start: a resumed rebuild
    skips its finished files in a blink, and a rate over the whole run would promise far too
    little time left. No ETA until the window spans a second of real progress."""

    WINDOW = 10.0  # seconds of samples kept

    def __init__(self) -> None:
        self.samples: list[tuple[float, int]] = []
        self.phase = ""

    def add(self, phase: str, done: int, total: int, now: float | None = None) -> tuple[float | None, float | None]:
        """(items per second, seconds left) after this sample; None while unknown."""
        now = time.monotonic() if now is None else now
        if phase != self.phase:  # files, then embedding: a new count
            self.phase, self.samples = phase, []
        self.samples.append((now, done))
        while len(self.samples) > 2 and now - self.samples[1][0] >= self.WINDOW:
            self.samples.pop(0)  # keep one sample at least WINDOW old as the base
        t0, d0 = self.samples[0]
        if now - t0 < 1.0 or done <= d0:
            return None, None
        rate = (done - d0) / (now - t0)
        return rate, max(total - done, 0) / rate


class TailLog(Log):
    """The engine's event log: follows the newest line unless the user scrolls up (then its
    title says "paused, End to follow"; End, or scrolling back to the bottom, follows again).
    Long lines wrap between words, their continuation indented under the text after the time."""

    INDENT = 9  # "09:30:00 "

    def __init__(self, **kw) -> None:
        super().__init__(auto_scroll=False, **kw)
        self.following = True

    def add(self, text: str) -> None:
        width = self.scrollable_content_region.width or max(20, self.app.size.width - 6)
        parts = textwrap.wrap(text, width, subsequent_indent=" " * self.INDENT, break_on_hyphens=False) or [""]
        self.write_lines(parts, scroll_end=False)
        if self.following:
            self.scroll_end(animate=False, immediate=True, x_axis=False)

    def follow(self) -> None:
        if self.following:
            self.scroll_end(animate=False, immediate=True, x_axis=False)

    def _set_following(self, following: bool) -> None:
        if following != self.following:
            self.following = following
            self.border_subtitle = "" if following else "paused, End to follow"

    # the user's move up pauses at once: a line arriving before the scroll is drawn must not
    # take the view back to the end
    def action_page_up(self) -> None:
        self._set_following(False)
        super().action_page_up()

    def action_scroll_up(self) -> None:
        self._set_following(False)
        super().action_scroll_up()

    def action_scroll_home(self) -> None:
        self._set_following(False)
        super().action_scroll_home()

    def action_scroll_end(self) -> None:  # End
        super().action_scroll_end()
        self._set_following(True)

    def _on_mouse_scroll_up(self, event) -> None:
        self._set_following(False)
        super()._on_mouse_scroll_up(event)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value >= self.max_scroll_y:  # back at the end (End, or scrolled down to it): follow
            self._set_following(True)
        elif new_value < old_value:  # dragged up by its scroll bar
            self._set_following(False)


class SyncPane(Pane, Vertical):
    TAB = "sync"
    TAB_KEY = keys.tab_key("sync", "f4", "Sync tab")
    ABOUT = "shows the index at work"
    KEYS = [
        Key("index.run", "ctrl+r", "reindex", "Re-index", "Bring the index up to date now"),
        Key("index.rebuild", "f9", "rebuild", "Rebuild", "Rebuild the whole index (into a new file, swapped in when done)"),
    ]
    PALETTE = [
        ("Re-index now", "Sync: bring the index up to date", "reindex"),
        ("Rebuild the whole index", "Sync: into a new file, swapped in when complete", "rebuild"),
    ]
    BINDINGS = keys.bindings(KEYS)
    HELP = "ctrl+r re-indexes what changed; F9 rebuilds the whole index into a new file."

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.running: str | None = None  # job name while one runs
        self.watcher = "off"
        self._status: dict | None = None
        self.meter = EtaMeter()
        self.progress: str | None = None  # "Rebuild: 750/3001 files · ETA 19s" while a job runs

    def tab_shown(self) -> None:
        log = self.query_one("#sync-log", TailLog)
        log.focus()
        self.call_after_refresh(log.follow)  # lines written while the tab was hidden: show the newest

    def compose(self) -> ComposeResult:
        yield Static("Loading…", id="sync-status", markup=False)
        yield Static("Watcher   off", id="watcher-line", markup=False)
        yield Static("No index job running (ctrl+r re-indexes, F9 rebuilds)", id="job-line", markup=False)
        yield ProgressBar(total=None, show_eta=False, id="job-progress")
        yield TailLog(id="sync-log", max_lines=self.host.settings.logLines)

    def on_mount(self) -> None:
        self.query_one("#sync-log").border_title = "Engine events"
        self.query_one("#job-progress").display = False

    def on_status(self, st: dict) -> None:
        self._status = st
        self._render_status()

    def _render_status(self) -> None:
        if self._status is None:
            return
        running = self.progress and self.progress[0].lower() + self.progress[1:].replace(":", " running:", 1)
        self.query_one("#sync-status", Static).update("\n".join(status_lines(self._status, self.host.shorten, running)))
        self._render_watcher()

    def on_watcher(self, state: str) -> None:
        self.watcher = state
        self._render_watcher()

    def _render_watcher(self) -> None:
        text = f"Watcher   {self.watcher}"
        if self._status is not None:
            daemon = self._status["freshness"].get("watcher")
            if daemon == "running" and self.watcher != "running":
                text += " · a `clawmem watch` daemon keeps this index fresh"
            if self._status["freshness"].get("job"):
                text += f" · {self._status['freshness']['job']}"
        self.query_one("#watcher-line", Static).update(text)

    def log_line(self, text: str) -> None:
        stamp = self.host.clock().strftime("%H:%M:%S")
        self.query_one("#sync-log", TailLog).add(human.printable_line(f"{stamp} {text}"))  # file names too can hold escapes

    def on_engine_event(self, e: ev.Event) -> None:
        bar = self.query_one("#job-progress", ProgressBar)
        line = self.query_one("#job-line", Static)
        if isinstance(e, ev.JobStarted):
            self.running = e.job
            self.meter = EtaMeter()
            self.progress = f"{e.job.capitalize()}: 0/{e.files_total} files"
            bar.display = True
            bar.update(total=max(e.files_total, 1), progress=0)
            line.update(f"{e.job.capitalize()} ({e.reason}): {plural(e.files_total, 'file')} to check")
            self.log_line(e.describe())
            self._render_status()
        elif isinstance(e, ev.FileIndexed):
            if e.action != "unchanged":
                self.log_line(e.describe())
        elif isinstance(e, ev.JobFinished):
            self.running = None
            self.progress = None
            bar.display = False
            state = "finished" if e.ok else "stopped"
            summary = (f"{e.job.capitalize()} {state} in {duration(e.seconds)}: {e.files_indexed} indexed, "
                       f"{e.files_removed} removed, {e.files_unchanged} unchanged, "
                       f"{plural(e.chunks_embedded, 'chunk')} embedded")
            if e.message:
                summary += f" ({e.message})"
            line.update(summary)
            self.log_line(summary)
        elif isinstance(e, ev.WatcherState):
            self.on_watcher(e.state)
            self.log_line(e.describe())
        else:
            self.log_line(e.describe())

    def on_progress(self, p: ev.Progress, now: float | None = None) -> None:
        bar = self.query_one("#job-progress", ProgressBar)
        bar.display = True
        bar.update(total=max(p.total, 1), progress=p.done)
        unit = "files" if p.phase == "files" else "chunks embedded"
        rate, eta = self.meter.add(p.phase, p.done, p.total, now)
        speed = f" · {rate:.0f}/s" if rate is not None else ""
        left = f" · ETA {duration(eta)}" if eta is not None and p.done < p.total else ""
        self.progress = f"{(self.running or 'index').capitalize()}: {p.done}/{p.total} {unit}{left}"
        self.query_one("#job-line", Static).update(f"{(self.running or 'index').capitalize()}: {p.done}/{p.total} {unit}{speed}{left}")
        self._render_status()

    def worker_failed(self, error: str) -> None:
        self.running = None
        self.progress = None
        self.query_one("#job-progress", ProgressBar).display = False
        self.query_one("#job-line", Static).update(f"Index failed: {error} · ctrl+r to try again")
        self.log_line(f"error: {error}")

    def action_reindex(self) -> None:
        self.post_message(IndexRequested("manual"))

    def action_rebuild(self) -> None:
        self.post_message(IndexRequested("rebuild", force=True))
