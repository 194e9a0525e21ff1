"""Messages between the app's worker threads and its widgets, from the panes to the app, and
the one bridge from engine events to messages.

Workers never touch widgets: they post these (thread-safe) and handlers on the UI thread
apply them. Progress is coalesced: a queued progress message is replaced by a newer one,
so a fast index never floods a slow SSH link. The panes never call the app: they post the
requests below (IndexRequested, SaveSetting, ReloadConfig, OpenFile) and the app handles them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from textual.message import Message

from clawmem.engine import events as ev


class EngineEvent(Message):
    """Any engine event worth a line in the Sync log."""

    def __init__(self, event: ev.Event) -> None:
        super().__init__()
        self.event = event


class IndexProgress(Message):
    """The current job's progress; only the latest one matters."""

    def __init__(self, progress: ev.Progress) -> None:
        super().__init__()
        self.progress = progress

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, IndexProgress) and message.progress.phase == self.progress.phase


def to_message(event: ev.Event) -> Message:
    """The bridge: every engine event reaches the UI through here."""
    if isinstance(event, ev.Progress):
        return IndexProgress(event)
    return EngineEvent(event)


class IndexWorkerDone(Message):
    """An index run started by the app ended (after its JobFinished, or with an error)."""

    def __init__(self, error: str | None = None) -> None:
        super().__init__()
        self.error = error


@dataclass
class StatusLoaded(Message):
    status: dict


@dataclass
class PromoteCounted(Message):
    count: int  # promotion candidates whose source is unchanged


@dataclass
class FilesListed(Message):
    files: list[dict]


@dataclass
class SearchDone(Message):
    seq: int
    query: str
    result: dict | None
    error: str | None = None


@dataclass
class PreviewLoaded(Message):
    key: Any
    path: str
    first_line: int
    text: str
    error: str | None = None


@dataclass
class OpenFile(Message):
    """Open a memory file in the File tab, at a line range when given."""

    path: str
    start: int | None = None
    end: int | None = None
    terms: tuple[str, ...] = ()  # the query's words: the cursor goes to the first line with one


@dataclass
class FilesBehind(Message):
    """The freshness check found files the index does not have yet (indexed unless a run is on)."""

    reason: str


@dataclass
class IndexRequested(Message):
    """Bring the index up to date: now, or right after the run in progress."""

    reason: str
    force: bool = False  # a full rebuild
    paths: tuple | None = None  # the files just written (absolute): index only those


@dataclass
class SaveSetting(Message):
    """Validate, write and apply one setting; `answer` is called with the error line, or None once saved."""

    key: str
    text: str
    answer: Callable[[str | None], None]


class ReloadConfig(Message):
    """The config file was edited outside the app: load it again and apply it."""


@dataclass
class ContextLoaded(Message):
    """What an agent loads at session start (engine.context), or why it cannot be shown."""

    context: dict | None
    error: str | None = None
