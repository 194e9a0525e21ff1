"""The log file: a rotated file in the platform state dir (`paths.log_path()`).

The engine never prints. Long-lived front ends (`clawmem watch`, the TUI, the MCP server) call
`setup()` once to send the "clawmem" loggers to the file; library use without `setup()` logs
nowhere (a NullHandler keeps Python from printing warnings to stderr over a TUI). A one-shot
command whose only log lines are its job's events (`clawmem index`, a CLI write) calls
`open_for_events()` instead: `log_event` then writes the same lines to the same file, rotated
by the same rule, without importing logging (~5 ms of every `clawmem index`).
Every line goes through the redactor first (engine/redaction.py), so an API key that
slipped into an error message never reaches the file, and a message is one line
(text.printable_line): a file name holding a newline cannot write a line of its own.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from . import events as ev
from .redaction import redact
from .text import printable_line

LOGGER = "clawmem"
MAX_BYTES = 1_000_000
BACKUPS = 3
DEBUG, INFO, WARNING, ERROR = 10, 20, 30, 40  # logging's levels
_LEVEL_NAMES = {DEBUG: "DEBUG", INFO: "INFO", WARNING: "WARNING", ERROR: "ERROR"}

_events_file: LogFile | None = None  # open_for_events()'s file


def _logging():
    """The logging module, the "clawmem" logger given its NullHandler on first use."""
    import logging

    root = logging.getLogger(LOGGER)
    if not any(isinstance(h, logging.NullHandler) for h in root.handlers):
        root.addHandler(logging.NullHandler())
    return logging


if "logging" in sys.modules:  # imported by a front that logs: the NullHandler goes on now
    _logging()


def logger(name: str = LOGGER):
    """A "clawmem…" logger, the NullHandler in place (library use without setup() stays silent)."""
    return _logging().getLogger(name)


class LogFile:
    """The log file, renamed to `.1` (the older ones to `.2` … `.backups`) before a line would
    take it to `max_bytes` (logging.handlers.RotatingFileHandler's rule), each new file
    owner-only (0600), the first one and those after a rotation alike."""

    def __init__(self, path: Path | str, max_bytes: int, backups: int):
        self.path = os.path.abspath(path)
        self.max_bytes, self.backups = max_bytes, backups
        self.stream = None

    def _open(self):
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        return open(fd, "a", encoding="utf-8")

    def write(self, line: str) -> None:
        if self.stream is None:
            self.stream = self._open()
        if self.backups > 0 and self.stream.tell() and self.stream.tell() + len(line) >= self.max_bytes:
            self._rotate()
        self.stream.write(line)
        self.stream.flush()

    def _rotate(self) -> None:
        self.stream.close()
        self.stream = None
        for i in range(self.backups - 1, 0, -1):
            older = f"{self.path}.{i}"
            if os.path.exists(older):
                os.replace(older, f"{self.path}.{i + 1}")
        os.replace(self.path, f"{self.path}.1")
        self.stream = self._open()

    def close(self) -> None:
        if self.stream is not None:
            self.stream.close()
            self.stream = None


def format_line(level: int, message: str, name: str = LOGGER, created: float | None = None) -> str:
    """What setup()'s formatter writes for one record, redacted:
    "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s", asctime as logging makes it."""
    ct = time.time() if created is None else created
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ct))
    return redact(f"{stamp},{int((ct - int(ct)) * 1000):03d} {os.getpid()} {_LEVEL_NAMES[level]} {name}: {printable_line(message)}")


_handler_class = None


def _rotating_log_class():
    global _handler_class
    if _handler_class is None:
        logging = _logging()

        class RotatingLog(logging.FileHandler):
            """The log file as a logging handler (see LogFile), without logging.handlers (it
            loads socket, pickle and queue: ~4 ms)."""

            def __init__(self, path: Path, max_bytes: int, backups: int):
                self.maxBytes, self.backupCount = max_bytes, backups
                super().__init__(path, encoding="utf-8", delay=True)
                self.file = LogFile(self.baseFilename, max_bytes, backups)

            def emit(self, record) -> None:
                try:
                    self.file.write(self.format(record) + self.terminator)
                except Exception:
                    self.handleError(record)

            def close(self) -> None:
                self.file.close()
                super().close()

        class Redacting(logging.Formatter):
            def format(self, record) -> str:
                # every line; detect_secrets (~0.1 s to import) loads only for a line that might hold
                # one of its secrets (redaction.may_hold_token), not for a job's line of counts
                return redact(super().format(record))

            def formatMessage(self, record) -> str:
                # the message is one line: a file name holding a newline cannot add a forged line
                # (a traceback, appended after this, keeps its own lines)
                record.message = printable_line(record.message)
                return super().formatMessage(record)

        RotatingLog.Redacting = Redacting
        _handler_class = RotatingLog
    return _handler_class


def __getattr__(name: str):
    if name == "RotatingLog":  # made on first use: it subclasses logging's handler
        return _rotating_log_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def setup(path: Path | None = None, level: int = INFO) -> Path:
    """Send the clawmem loggers to a rotated, owner-only file; idempotent. Returns the path."""
    global _events_file
    from .paths import log_path, private_dir

    logging = _logging()
    rotating = _rotating_log_class()
    if _events_file is not None:  # one log file per process: the newest setup wins
        _events_file.close()
        _events_file = None
    path = Path(path) if path else log_path()
    log = logging.getLogger(LOGGER)
    for h in list(log.handlers):
        if isinstance(h, rotating):
            if Path(h.baseFilename) == path.resolve():
                return path
            log.removeHandler(h)
            h.close()
    _create(path, private_dir)
    handler = rotating(path, MAX_BYTES, BACKUPS)
    handler.setFormatter(rotating.Redacting("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"))
    log.addHandler(handler)
    log.setLevel(level)
    # the fleet's driver logs its own warnings (a pipeline ended by an error): into the same file,
    # never to the root logger (the MCP SDK sends that to stderr, where no one reads it)
    driver = logging.getLogger("psycopg")
    for h in list(driver.handlers):
        if isinstance(h, rotating):
            driver.removeHandler(h)
    driver.addHandler(handler)
    driver.propagate = False
    return path


def open_for_events(path: Path | None = None) -> Path:
    """For a one-shot command whose only log lines are its job's events: `log_event` writes them
    to the log file itself (setup()'s lines, INFO and above), without the logging module."""
    global _events_file
    from .paths import log_path, private_dir

    path = Path(path) if path else log_path()
    _create(path, private_dir)
    if _events_file is not None:
        _events_file.close()
    _events_file = LogFile(path, MAX_BYTES, BACKUPS)
    return path


def _create(path: Path, private_dir) -> None:
    private_dir(path.parent)
    if not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))


def level_of(e: ev.Event) -> int:
    if isinstance(e, ev.Error):
        return ERROR
    if isinstance(e, (ev.Warning, ev.ProviderSwitched)):
        return WARNING
    if isinstance(e, ev.WatcherState) and e.state == "restarted":
        return WARNING
    if isinstance(e, ev.Progress):
        return DEBUG
    return INFO


def log_event(e: ev.Event, logger=None) -> None:
    level = level_of(e)
    if logger is None and _events_file is not None:
        if level >= INFO:
            try:
                _events_file.write(format_line(level, e.describe()) + "\n")
            except OSError:
                pass  # a log file that cannot be written never fails the job
        return
    (logger or _logging().getLogger(LOGGER)).log(level, "%s", e.describe())
