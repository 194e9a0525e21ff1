"""Progress on stderr: a one-line bar for long jobs, and the lines engine events print."""

from __future__ import annotations

import sys
import time


class ProgressLine:
    """A one-line progress bar on stderr (plain lines when stderr is not a terminal)."""

    def __init__(self, quiet: bool = False):
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.last = 0.0
        self.width = 0

    def show(self, text: str, force: bool = False) -> None:
        if self.quiet:
            return
        now = time.monotonic()
        if not force and now - self.last < (0.1 if self.tty else 2.0):
            return
        self.last = now
        if self.tty:
            pad = max(0, self.width - len(text))
            sys.stderr.write("\r" + text + " " * pad)
            self.width = len(text)
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def line(self, text: str) -> None:
        if self.quiet:
            return
        if self.tty and self.width:
            sys.stderr.write("\r" + " " * self.width + "\r")
            self.width = 0
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


def bar(done: int, total: int, width: int = 24) -> str:
    frac = done / total if total else 1.0
    full = int(frac * width)
    return "[" + "#" * full + "." * (width - full) + "]"


def render_event(e, out: ProgressLine) -> None:
    from clawmem.engine import events as ev

    if isinstance(e, ev.Progress):
        unit = "files" if e.phase == "files" else "chunks embedded"
        eta = f"  eta {e.eta:.0f}s" if e.eta is not None and e.done < e.total else ""
        rate = f"{e.rate:.1f}" if e.rate < 10 else f"{e.rate:.0f}"  # a local model embeds a few chunks a second
        # a phase's first line is always shown: the embedding starts right after the files' 100 %
        out.show(f"{bar(e.done, e.total)} {e.done}/{e.total} {unit}  {rate}/s{eta}", force=e.done in (0, e.total))
    elif isinstance(e, ev.Download):
        finished = e.total is not None and e.done >= e.total
        progress = f"{bar(e.done, e.total)} " if e.total else ""
        out.show(f"{progress}{e.describe()}", force=finished or e.done == 0)
        if finished:
            out.line(f"downloaded {e.uri} ({e.total / 1e6:.1f} MB)")
    elif isinstance(e, ev.BatchProgress):
        out.show(f"{bar(e.done, e.total)} {e.describe()}", force=e.status != "in_progress")
    elif isinstance(e, (ev.Warning, ev.Error, ev.ProviderSwitched)):
        out.line(e.describe())
    elif isinstance(e, ev.JobStarted):
        out.line(e.describe())
