"""The log file: a rotated file in the platform state dir (`paths.log_path()`).

The engine never prints. Long-lived front ends (`clawmem watch`, the TUI) call `setup()`
once to send the "clawmem" loggers to the file; library use without `setup()` logs
nowhere (a NullHandler keeps Python from printing warnings to stderr over a TUI).
Every message goes through the redactor first (engine/redaction.py), so an API key that
slipped into an error message never reaches the file.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from . import events as ev
from .redaction import redact

LOGGER = "clawmem"
MAX_BYTES = 1_000_000
BACKUPS = 3

logging.getLogger(LOGGER).addHandler(logging.NullHandler())


class _Redacting(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        # every line; detect_secrets (~0.1 s to import) loads only for a line that might hold
        # one of its secrets (redaction.may_hold_token), not for a job's line of counts
        return redact(super().format(record))


class RotatingLog(logging.FileHandler):
    """The log file, renamed to `.1` (the older ones to `.2` … `.backups`) before a line would
    take it to `max_bytes`: logging.handlers.RotatingFileHandler's rule without importing that
    module (it loads socket, pickle and queue: ~4 ms of every `clawmem index`), and each new
    file owner-only (0600), the first one and those after a rotation alike."""

    def __init__(self, path: Path, max_bytes: int, backups: int):
        self.maxBytes, self.backupCount = max_bytes, backups
        super().__init__(path, encoding="utf-8")

    def _open(self):
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        return open(fd, "a", encoding=self.encoding, errors=self.errors)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record) + self.terminator
            if self.stream is None:
                self.stream = self._open()
            if self.backupCount > 0 and self.stream.tell() and self.stream.tell() + len(line) >= self.maxBytes:
                self._rotate()
            self.stream.write(line)
            self.flush()
        except Exception:
            self.handleError(record)

    def _rotate(self) -> None:
        self.stream.close()
        self.stream = None
        for i in range(self.backupCount - 1, 0, -1):
            older = f"{self.baseFilename}.{i}"
            if os.path.exists(older):
                os.replace(older, f"{self.baseFilename}.{i + 1}")
        os.replace(self.baseFilename, f"{self.baseFilename}.1")
        self.stream = self._open()


def setup(path: Path | None = None, level: int = logging.INFO) -> Path:
    """Send the clawmem loggers to a rotated, owner-only file; idempotent. Returns the path."""
    from .paths import log_path, private_dir

    path = Path(path) if path else log_path()
    logger = logging.getLogger(LOGGER)
    for h in list(logger.handlers):
        if isinstance(h, RotatingLog):
            if Path(h.baseFilename) == path.resolve():
                return path
            logger.removeHandler(h)  # one log file per process: the newest setup wins
            h.close()
    private_dir(path.parent)
    if not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    handler = RotatingLog(path, MAX_BYTES, BACKUPS)
    handler.setFormatter(_Redacting("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(level)
    return path


def level_of(e: ev.Event) -> int:
    if isinstance(e, ev.Error):
        return logging.ERROR
    if isinstance(e, (ev.Warning, ev.ProviderSwitched)):
        return logging.WARNING
    if isinstance(e, ev.WatcherState) and e.state == "restarted":
        return logging.WARNING
    if isinstance(e, ev.Progress):
        return logging.DEBUG
    return logging.INFO


def log_event(e: ev.Event, logger: logging.Logger | None = None) -> None:
    (logger or logging.getLogger(LOGGER)).log(level_of(e), "%s", e.describe())
