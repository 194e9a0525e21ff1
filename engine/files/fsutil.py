"""Small filesystem helpers: atomic writes that keep permissions; paths as stored text."""

from __future__ import annotations

import os
from pathlib import Path


def atomic_write(path: Path, text: str, *, mode: int | None = None) -> None:
    """Write `text` (UTF-8) to `path` atomically: see atomic_write_bytes."""
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write `data` to `path` via a temporary file in the same folder, fsync, rename.

    The existing file's permission bits are kept; a new file gets `mode` (default 0o600
    for our own files is chosen by the caller). A crash leaves either the old or the new
    content, never a mix.
    """
    path = Path(path)
    try:
        keep = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        keep = mode
    import tempfile  # here: a search never writes, and tempfile loads random, weakref, …

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if keep is not None:
            os.chmod(tmp, keep)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    sync_dir(path.parent)


def sync_dir(folder: Path) -> None:
    """fsync a folder, so a rename or link in it survives a power cut (best effort)."""
    try:
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def path_text(path) -> str:
    """A path as UTF-8 text for the index and the journal, whatever encoding Python gave the
    filesystem (under LANG=C a non-ASCII name arrives as lone surrogates SQLite cannot store)."""
    return os.fsencode(path).decode("utf-8", "surrogateescape")


def os_path(text: str) -> str:
    """The path the OS wants for a path stored by path_text."""
    return os.fsdecode(text.encode("utf-8", "surrogateescape"))


# ------------------------------------------------------------------ clawmem's private SQLite databases


def sqlite_driver(extensions: bool = False):
    """The SQLite module for one of clawmem's private databases. `extensions` (the index and
    the embedding cache: FTS5, sqlite-vec; the recall log, written beside every search, so a
    search loads one driver): sqlean.py, which bundles them on every platform, else the
    stdlib's. The journal uses the stdlib's sqlite3, whose exceptions its callers have always
    caught. Loaded on first use only: a keyword search
    pays for one driver, never for probing both."""
    if extensions:
        try:
            import sqlean

            return sqlean
        except ImportError:
            pass
    import sqlite3

    return sqlite3


def open_database(target, *, timeout: float, extensions: bool = False, uri: bool = False):
    """The one opener of clawmem's private databases (index, embedding cache, journal, recall
    log): autocommit (every transaction is explicit), shareable between threads, waiting up
    to `timeout` seconds for another writer. Making the file owner-only stays with its owner,
    which knows whether it may create it."""
    db = sqlite_driver(extensions)
    return db.connect(str(target), uri=uri, timeout=timeout, isolation_level=None, check_same_thread=False)


def database_errors() -> tuple[type[Exception], ...]:
    """The Error class of every SQLite driver loaded in this process: what a caller catches to
    handle a failure of any private database (`except database_errors():` costs nothing until
    an exception arrives, and imports no driver)."""
    import sys

    return tuple(module.Error for name in ("sqlite3", "sqlean") if (module := sys.modules.get(name)) is not None)
