"""Small filesystem helpers: atomic writes that keep permissions; paths as stored text; the private
SQLite databases' opener and what their owners share (busy timeout, owner-only creation, a damaged
file recognised and moved aside)."""

from __future__ import annotations

import errno
import os
from pathlib import Path


def atomic_write(path: Path, text: str, *, mode: int | None = None, durable: bool = True) -> None:
    """Write `text` (UTF-8) to `path` atomically: see atomic_write_bytes."""
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode, durable=durable)


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None, durable: bool = True) -> None:
    """Write `data` to `path` via a temporary file in the same folder, fsync, rename.

    The existing file's permission bits are kept; a new file gets `mode` (default 0o600
    for our own files is chosen by the caller). A crash leaves either the old or the new
    content, never a mix. `durable=False` skips the two fsyncs, for a hint whose loss after a
    power cut only costs work (a crash may then leave the old file, or an empty one, or none).
    """
    path = Path(path)
    try:
        keep = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        keep = mode
    fd, tmp = _new_temp(path.parent, path.name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
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
    if durable:
        sync_dir(path.parent)


_TEMP_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_"
_TEMP_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _new_temp(folder: Path, name: str) -> tuple[int, str]:
    """A new owner-only file `.<name>.<8 random>.tmp` in `folder`, created exclusively (never an
    existing file, never through a symlink): tempfile.mkstemp's names and flags, which
    memfile.leftovers() knows, without importing tempfile (random, shutil, bz2, lzma: ~4 ms of
    every `clawmem index`, whose intact record is written this way)."""
    for _ in range(100):
        tmp = os.path.join(folder, f".{name}.{''.join(_TEMP_CHARS[b % 37] for b in os.urandom(8))}.tmp")
        try:
            return os.open(tmp, _TEMP_FLAGS, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary file name", str(folder))


def builtin_sha256(data: bytes):
    """hashlib.sha256(data) without importing hashlib (its OpenSSL binding costs ~3 ms): the
    builtin module hashlib itself falls back to."""
    try:
        from _sha256 import sha256  # Python 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # Python 3.12+
        except ImportError:
            from hashlib import sha256
    return sha256(data)


_openssl_sha256 = None
_builtin_hashed = 0  # bytes this process hashed with the builtin SHA-256 so far


def sha256_hex(data: bytes) -> str:
    """SHA-256 of `data`, in hex. With the builtin module (the one hashlib itself falls back to)
    until this process has hashed a megabyte: importing hashlib's OpenSSL binding costs ~3 ms,
    while a no-op or one-file index hashes a few kilobytes; past that, a full index gets
    OpenSSL's hashing, about five times faster. Both give the same digest."""
    global _openssl_sha256, _builtin_hashed
    if _openssl_sha256 is None:
        _builtin_hashed += len(data)
        if _builtin_hashed < 1 << 20:
            return builtin_sha256(data).hexdigest()
        import hashlib

        _openssl_sha256 = hashlib.sha256
    return _openssl_sha256(data).hexdigest()


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


BUSY_TIMEOUT_MS = 10_000  # how long a private database waits for another writer
SIDE_FILES = ("-wal", "-shm", "-journal")  # SQLite's files beside a database: a rollback journal
# is left by a kill during the one header write that turns a file from rollback mode to WAL or back


def create_private_file(path: Path) -> None:
    """Create a private database file (the index, the embedding cache) owner-only; an existing
    file (and its folder) keeps its mode."""
    from ..paths import private_dir

    private_dir(path.parent)
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600))
    except FileExistsError:
        pass


def file_is_damaged(exc: Exception) -> bool:
    """True when SQLite says the file itself is bad (corrupt, not a database). A full disk, a
    read-only file or folder, an I/O error say nothing about the file: it must not be moved aside."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name:
        return name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))
    return "malformed" in str(exc) or "not a database" in str(exc)


def move_aside(path: Path, why: str) -> Path:
    """Move a bad database file (and its side files) out of the way; never delete it."""
    import time

    stamp = time.strftime("%Y%m%d-%H%M%S")
    dest = path.with_name(f"{path.name}.{why}-{stamp}")
    n = 1
    while dest.exists():
        dest = path.with_name(f"{path.name}.{why}-{stamp}-{n}")
        n += 1
    os.replace(path, dest)
    for suffix in SIDE_FILES:
        side = Path(str(path) + suffix)
        if side.exists():
            os.replace(side, Path(str(dest) + suffix))
    return dest
