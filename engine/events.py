"""Typed events that long jobs (index, rebuild, sync, watch) yield; front ends render them.

The engine never prints: the CLI turns these into a progress bar or a log line, the TUI
into messages. Every event has a one-line `describe()` for logs.
"""

from __future__ import annotations

import time

from .results import Record


def _n(count: int, word: str) -> str:
    """"1 chunk", "2 chunks": log lines read as people write."""
    return f"{count} {word}{'' if count == 1 else 's'}"


class Event(Record):
    """What a long job reports. Each kind's fields are its annotations (see results.Record)."""

    __slots__ = ()

    def describe(self) -> str:  # pragma: no cover - overridden
        return type(self).__name__


class JobStarted(Event):
    job: str  # "index", "rebuild", "sync"
    reason: str
    files_total: int
    at: float
    __slots__ = tuple(__annotations__)
    DEFAULTS = {"at": time.time}

    def describe(self) -> str:
        return f"{self.job} started ({self.reason}): {_n(self.files_total, 'file')}"


class Progress(Event):
    """Coalescable progress of the current job."""

    phase: str  # "files" or "embed"
    done: int
    total: int
    rate: float  # items per second
    eta: float | None  # seconds
    __slots__ = tuple(__annotations__)

    def describe(self) -> str:
        eta = f", eta {self.eta:.0f}s" if self.eta is not None else ""
        return f"{self.phase}: {self.done}/{self.total} ({self.rate:.1f}/s{eta})"


class FileIndexed(Event):
    path: str
    chunks: int
    action: str  # "added", "updated", "removed", "unchanged"
    __slots__ = tuple(__annotations__)

    def describe(self) -> str:
        return f"{self.action} {self.path} ({_n(self.chunks, 'chunk')})" if self.action != "removed" else f"removed {self.path}"


class ChunksEmbedded(Event):
    count: int
    done: int
    total: int
    provider: str
    model: str
    cached: int
    __slots__ = tuple(__annotations__)
    DEFAULTS = {"cached": 0}

    def describe(self) -> str:
        return f"embedded {_n(self.count, 'chunk')} with {self.provider}/{self.model} ({self.done}/{self.total}, {self.cached} from cache)"


class BatchProgress(Event):
    """Batch-API jobs of a backfill (remote.batch.enabled): how far the provider has got."""

    provider: str
    jobs: int
    done: int  # requests finished, as the provider counts them
    total: int
    status: str  # "submitted", "in_progress", "completed", "waiting" (left for the next run)…
    __slots__ = tuple(__annotations__)

    def describe(self) -> str:
        return f"{self.provider} batch: {self.jobs} job{'s' if self.jobs != 1 else ''}, {self.done}/{self.total} embedded ({self.status})"


class ProviderSwitched(Event):
    from_provider: str | None
    to_provider: str | None  # None: keyword-only
    reason: str
    __slots__ = tuple(__annotations__)

    def describe(self) -> str:
        target = self.to_provider or "keyword-only"
        return f"provider {self.from_provider or '-'} -> {target}: {self.reason}"


class Download(Event):
    """Bytes of a model being downloaded (hf: URIs, `clawmem index` only)."""

    uri: str
    done: int
    total: int | None  # None: the server did not say
    __slots__ = tuple(__annotations__)

    def describe(self) -> str:
        of = f" of {self.total / 1e6:.1f}" if self.total else ""
        return f"downloading {self.uri}: {self.done / 1e6:.1f}{of} MB"


class Warning(Event):
    message: str
    path: str | None
    __slots__ = tuple(__annotations__)
    DEFAULTS = {"path": None}

    def describe(self) -> str:
        return f"warning: {self.path + ': ' if self.path else ''}{self.message}"


class Error(Event):
    message: str
    path: str | None
    __slots__ = tuple(__annotations__)
    DEFAULTS = {"path": None}

    def describe(self) -> str:
        return f"error: {self.path + ': ' if self.path else ''}{self.message}"


class JobFinished(Event):
    job: str
    files_indexed: int
    files_removed: int
    files_unchanged: int
    chunks_embedded: int
    seconds: float
    ok: bool
    message: str
    # the files whose rows this job wrote or removed (display paths), so a front refreshes only
    # what changed; not in as_json(): `clawmem index --json` prints counts
    changed: tuple[str, ...]
    __slots__ = tuple(__annotations__)
    DEFAULTS = {"ok": True, "message": "", "changed": ()}

    @property
    def index_changed(self) -> bool:
        """Whether a search may now answer differently: text rows written or removed, or vectors added."""
        return bool(self.files_indexed or self.files_removed or self.chunks_embedded or self.changed)

    def as_json(self) -> dict:
        """The summary `clawmem index --json` prints."""
        return {"files": self.files_indexed, "removed": self.files_removed, "unchanged": self.files_unchanged,
                "embedded": self.chunks_embedded, "seconds": round(self.seconds, 3)}

    def describe(self) -> str:
        state = "finished" if self.ok else "stopped"
        extra = f": {self.message}" if self.message else ""
        return (
            f"{self.job} {state} in {self.seconds:.1f}s: {self.files_indexed} indexed, "
            f"{self.files_removed} removed, {self.files_unchanged} unchanged, {self.chunks_embedded} chunks embedded{extra}"
        )


class FleetCaughtUp(Event):
    """A push after failed ones went out: the fleet holds what waited."""

    waited_seconds: float
    __slots__ = tuple(__annotations__)

    def describe(self) -> str:
        return f"fleet: the push that waited {self.waited_seconds:.0f}s went out; the fleet is up to date"


class WatcherState(Event):
    state: str  # "running", "stopped", "restarted"
    detail: str
    __slots__ = tuple(__annotations__)
    DEFAULTS = {"detail": ""}

    def describe(self) -> str:
        return f"watcher {self.state}{': ' + self.detail if self.detail else ''}"


class FilesChanged(Event):
    paths: tuple[str, ...]
    __slots__ = tuple(__annotations__)

    def describe(self) -> str:
        shown = ", ".join(self.paths[:3]) + (f" and {len(self.paths) - 3} more" if len(self.paths) > 3 else "")
        return f"changed: {shown}"


class RateMeter:
    """Items per second and ETA. Until the first items are done the time goes to starting up (a
    model loading, a connection opening), which says nothing of the pace after: the rate and
    the ETA count from that first report on, and there is no ETA before a second one."""

    def __init__(self, total: int):
        self.total = total
        self.start = time.monotonic()
        self.first: tuple[float, int] | None = None  # (when, done) at the first report with items done

    def progress(self, phase: str, done: int) -> Progress:
        now = time.monotonic()
        rate, eta = done / max(now - self.start, 1e-6), None
        if done and self.first is None:
            self.first = (now, done)
        elif self.first is not None and done > self.first[1]:
            rate = (done - self.first[1]) / max(now - self.first[0], 1e-6)
            eta = (self.total - done) / rate
        return Progress(phase, done, self.total, rate, eta)
