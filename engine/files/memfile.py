"""The one reader and writer of memory files: every front that reads or writes one comes here.

    read(workspace, rel, *, extra_paths=(), cap=READ_CAP) -> FileSnapshot(path, rel, text, hash)
    read_text(workspace, rel, *, extra_paths=()) -> str  (newlines as a text file reads them)
    append(workspace, rel, compose, *, writer=None, cap=None) -> Receipt
        compose(tail: bytes) -> str: the block to add, given the file's last two bytes
        (b"" for a new or empty file), so the caller can choose its separator.
    rewrite(workspace, rel, transform, expected_hash=None, *, writer=None) -> Receipt
        transform(text: str) -> str | bytes | None: the new content (None: leave the file as it
        is, and delete it if it is missing anyway). With `expected_hash` (files.MISSING for "no
        file") the write happens only if the disk still holds that version; ChangedOnDisk otherwise.
    remove(workspace, rel, *, writer=None) -> Receipt
    create_new(workspace, folder_rel, stem, text, *, writer=None) -> Receipt  (stem.md, stem-2.md, …)

`rel` is workspace-relative ("MEMORY.md", "memory/2026-02-10.md") or an absolute path inside an
allowed extra path. Every call enforces the same rules:

- the real path stays inside the workspace (or the extra path): no symlink on the way, so a
  `memory/` linked to a folder elsewhere is refused, for reading as for writing. The check is
  not trusted alone: the workspace is opened once and that handle held for the process's life
  (its device and inode recorded; a path that no longer names that folder is refused, never
  re-created), each operation opens each folder under it with O_NOFOLLOW | O_DIRECTORY relative
  to the one before (dir_fd), and the file, its temporary, the rename and the unlink all happen
  in that last folder, so a folder (or a parent of the workspace) swapped for a symlink between
  the check and the write cannot redirect it; an extra path below a symlinked folder is refused;
- regular files only (a FIFO, device or folder is refused without blocking on it), and never
  one with a second hard link (it may be a file outside the workspace): checked with fstat on the
  descriptor written, whose name is checked to still hold it; a replaced file keeps the mode
  fstat gave of the file read, never one a stat of the name answers;
- size caps: READ_CAP for a file read or rewritten, `cap` bytes for one appended block;
- one lock per file (an flock on a lock file in clawmem's data folder, never in the workspace),
  held across read, compare, write and rename, so two clawmem writers never overwrite each other.
  A writer outside clawmem (an editor) is detected by the file's identity changing between the
  read and the rename: the write is redone on the new content, or answered as ChangedOnDisk.

Kills: a rewrite goes to a temporary file (`.<name>.<random>.tmp` beside it), fsync, rename, so
the file holds the old or the new version. An append writes in place (O_APPEND: bytes someone
else appends at the same time are never overwritten) after recording its offset, length and
hash in a pending record next to the lock; a writer killed mid-append leaves that record, and
the next access to the file (or `clawmem status --fix`) cuts the torn bytes off: the entry is
whole or absent. `leftovers()` lists temporaries and pending records a kill left behind.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import stat
import sys
import _thread
import time
from contextlib import contextmanager
from pathlib import Path

TYPE_CHECKING = False  # typing's constant without importing typing: an index job never needs it (~3 ms)
if TYPE_CHECKING:
    from typing import Callable, Iterable

from ..errors import ClawmemError
from ..results import Record
from .fsutil import sha256_hex

READ_CAP = 16 * 1024 * 1024  # the indexer's cap too: a memory file is notes, not a data dump
APPEND_CAP = 64 * 1024  # one agent write (mcp.maxWriteBytes changes it)
MISSING = ""  # the hash of a file that does not exist (files.MISSING)
ATTEMPTS = 20


class Refused(ClawmemError, ValueError):
    """The path or the file is not one clawmem reads or writes; the message says why."""


class TooLarge(Refused):
    """Over a size cap; the message says which and how to change it."""


class FileSnapshot(Record):
    """A memory file as it was at one moment: the one snapshot type of every reader, writer and
    editor. `text` is shown (invalid UTF-8 replaced), `hash` identifies the bytes (MISSING: no
    such file), so a save can name the version it started from."""

    path: Path
    rel: str  # as the caller named it (relative to the workspace, or to the file's folder)
    text: str
    hash: str
    __slots__ = tuple(__annotations__)

    @classmethod
    def of(cls, path: Path, rel: str, data: bytes | None) -> "FileSnapshot":
        """The snapshot of `data` as read (None: no such file)."""
        if data is None:
            return cls(path, rel, "", MISSING)
        return cls(path, rel, data.decode("utf-8", "replace"), content_hash(data))

    @property
    def exists(self) -> bool:
        return self.hash != MISSING


class ChangedOnDisk(ClawmemError):
    """The file is not the version the write was based on; `disk` is what is there now. The
    one conflict type: an agent's write, a promotion and the editor's save all raise it."""

    def __init__(self, disk: FileSnapshot):
        super().__init__(f"{disk.rel}: changed on disk since it was read")
        self.disk = disk


class Receipt(Record):
    path: Path
    rel: str
    bytes: int  # the file's size after the write
    hash: str
    start: int  # 1-based lines of what was written (an append's block; 0 for a rewrite)
    end: int
    lines: int  # the file's line count after the write
    changed: bool
    __slots__ = tuple(__annotations__)
    DEFAULTS = {"changed": True}


def content_hash(data: bytes) -> str:
    return sha256_hex(data)


# ------------------------------------------------------------------------------ paths


def resolve(workspace: Path, rel: str | Path, extra_paths: Iterable = ()) -> tuple[str, Path]:
    """(display path, absolute path) of a memory file, or Refused when any folder or link on the
    way leaves the workspace (or the extra path that holds it)."""
    shown, target, _ = _locate(workspace, rel, extra_paths)
    return shown, target


def _locate(workspace: Path, rel: str | Path, extra_paths: Iterable = ()) -> tuple[str, Path, Path]:
    """resolve's answer plus the folder it is anchored in (the workspace or an extra path's)."""
    try:
        return _locate_once(workspace, rel, extra_paths)
    except OSError as exc:
        if exc.errno in _SWAPPED:  # a folder on the way renamed or swapped while its real path was read
            raise Refused(f"refused {os.fspath(rel)!r}: a folder on its way changed while it was opened ({exc.strerror}); "
                          "nothing was read or written, try again") from None
        # not a race (a name too long, no permission): say what the system said, not "changed"
        raise Refused(f"refused {os.fspath(rel)!r}: {exc.strerror or exc}; nothing was read or written") from None


_SWAPPED = {errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.ESTALE}  # what a folder replaced mid-walk gives


def _locate_once(workspace: Path, rel: str | Path, extra_paths: Iterable) -> tuple[str, Path, Path]:
    workspace = Path(workspace)
    raw = os.fspath(rel)
    if "\x00" in raw:
        raise Refused(f"refused {raw!r}: a path never holds a NUL character")
    if sys.getfilesystemencoding().lower() not in ("utf-8", "utf8"):
        # paths are UTF-8 text here (the index's, the agent's); the OS wants its own encoding
        raw = os.fsdecode(raw.encode("utf-8", "surrogateescape"))
    p = Path(raw)
    target = Path(os.path.normpath(p if p.is_absolute() else workspace / p))
    extras = [Path(os.path.normpath(workspace / Path(e).expanduser())) for e in extra_paths]
    for anchor in [workspace, *extras]:
        if target == anchor and anchor is not workspace:
            anchor = anchor.parent  # an extra path naming one file
        if target != anchor and target.is_relative_to(anchor):
            break
    else:
        raise Refused(f"refused {raw!r}: it is outside the workspace")
    cur = target
    while cur != anchor:
        if cur.is_symlink():
            shown = os.path.relpath(cur, workspace)
            raise Refused(f"refused {raw!r}: {shown} is a symlink, and memory files are never read or written through symlinks")
        cur = cur.parent
    real_anchor = Path(os.path.realpath(anchor))
    if anchor is not workspace and real_anchor != anchor:
        # an extra path below a symlinked folder: the listing refuses it too (status names it)
        raise Refused(f"refused {raw!r}: its extra path {anchor} is below a symlinked folder; name the real folder ({real_anchor})")
    if not Path(os.path.realpath(target)).is_relative_to(real_anchor):
        raise Refused(f"refused {raw!r}: its real path leaves the workspace")
    shown = os.path.relpath(target, workspace).replace(os.sep, "/") if target.is_relative_to(workspace) else str(target)
    return shown, target, anchor


# anchor (the workspace, or an extra path's folder) -> (fd, st_dev, st_ino): opened once, on its first
# use, and held for the process's life. Every later operation opens its folders from that fd, after
# checking that the path still names the same folder: a parent swapped for a symlink, or the workspace
# moved away, can then never redirect a write to another folder, nor make clawmem re-create it.
_HELD: dict[str, tuple[int, int, int]] = {}
_HELD_MAX = 64  # a test run or a fleet host opens many workspaces; a real process uses one or two
_HELD_LOCK = _thread.allocate_lock()  # _thread: an index job never imports threading


def _held(anchor: Path, shown: str) -> int | None:
    """A new fd on `anchor` opened from the one held for the process's life (opened now on its
    first use; the caller closes the new one), or None when it does not exist and was never
    opened. Refused when the path no longer names the folder first opened."""
    with _HELD_LOCK:  # no thread opens from a held fd while another evicts (closes) it
        return _held_locked(anchor, shown)


def _held_locked(anchor: Path, shown: str) -> int | None:
    key = str(anchor)
    held = _HELD.get(key)
    try:
        now = os.stat(anchor)
    except FileNotFoundError:
        now = None
    except OSError as exc:
        raise Refused(f"refused {shown!r}: the folder {anchor} cannot be opened ({exc.strerror}); nothing was read "
                      "or written") from None
    if held is None:
        if now is None:
            return None
        fd = os.open(anchor, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        st = os.fstat(fd)
        real = os.path.realpath(anchor)
        try:
            again = os.stat(anchor)
        except OSError:
            again = now
        if not (st.st_dev, st.st_ino) == (now.st_dev, now.st_ino) == (again.st_dev, again.st_ino) or real != key:
            # swapped between the stat and the open, or a folder on its path is a symlink now (the
            # workspace's path is resolved once, when the config is read): refuse rather than guess
            os.close(fd)
            raise Refused(f"refused {shown!r}: the folder {anchor} changed while it was opened; nothing was read or "
                          "written, try again")
        if len(_HELD) >= _HELD_MAX:
            old = next(iter(_HELD))
            os.close(_HELD.pop(old)[0])
        _HELD[key] = held = (fd, st.st_dev, st.st_ino)
    if now is None or (now.st_dev, now.st_ino) != held[1:]:
        raise Refused(f"refused {shown!r}: {anchor} is no longer the folder clawmem opened (it was moved, removed or "
                      "replaced, or a folder above it is now a symlink); nothing was read or written, and nothing is "
                      "created in its place: put the folder back, or restart clawmem to use the one there now")
    return os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=held[0])


def _folder(anchor: Path, target: Path, shown: str, *, create: bool) -> int | None:
    """An fd on the folder that holds `target`, reached from the held fd of `anchor` one component
    at a time (openat with O_NOFOLLOW | O_DIRECTORY): a folder swapped for a symlink between a
    check and the open cannot redirect the read or write; None when a folder is missing
    (create=False). The anchor itself (the workspace) is never created here."""
    fd = _held(anchor, shown)
    if fd is None:
        if create:
            raise Refused(f"refused {shown!r}: there is no folder {anchor}; create the workspace first (the app offers to), "
                          "nothing was written")
        return None
    try:
        for name in target.parent.relative_to(anchor).parts:
            try:
                nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    os.close(fd)
                    return None
                nfd = _make_folder(fd, name, shown)
            except OSError as exc:
                raise _folder_refusal(exc, name, shown) from None
            os.close(fd)
            fd = nfd
    except BaseException:
        os.close(fd)
        raise
    return fd


def _make_folder(fd: int, name: str, shown: str, attempts: int = 3) -> int:
    """Make folder `name` under `fd` and open it. Another process may remove or swap it between
    the mkdir and the open: try again a few times, then refuse (never follow what is there)."""
    for _ in range(attempts):
        try:
            os.mkdir(name, 0o700, dir_fd=fd)
        except FileExistsError:
            pass
        try:
            return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise _folder_refusal(exc, name, shown) from None
    raise Refused(f"refused {shown!r}: the folder {name} kept disappearing while it was opened "
                  "(another process is moving it); try again")


def _folder_refusal(exc: OSError, name: str, shown: str) -> Exception:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        return Refused(f"refused {shown!r}: {name} is a symlink or not a folder, and memory files are never "
                       "read or written through symlinks")
    return exc


def _open(path: Path, flags: int, shown: str | None = None, dir_fd: int | None = None) -> int | None:
    """An fd on a regular file (never a FIFO or device: opened non-blocking, then checked; never
    one with another hard link, which could be a file outside the workspace), or None when it
    does not exist. With `dir_fd`, `path`'s name is opened in that folder, and the name is checked
    to still hold the file opened once its link count is read: a hard link put at the name for
    an instant (then renamed over) is never the file written. `shown`: the path as the refusal
    names it."""
    shown = shown or path.name
    for _ in range(ATTEMPTS):
        fd = _open_once(path, flags, shown, dir_fd)
        if fd is None or dir_fd is None:
            return fd
        st = os.fstat(fd)
        try:
            now = os.stat(path.name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            now = None
        if now is not None and (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino) and os.fstat(fd).st_nlink == 1:
            return fd
        os.close(fd)  # the name moved on between the open and the check: open what is there now
        if flags & os.O_CREAT == 0 and now is None:
            return None
    raise Refused(f"refused {shown!r}: it kept being replaced while it was opened (another process is swapping it); "
                  "nothing was read or written, try again")


def _open_once(path: Path, flags: int, shown: str, dir_fd: int | None) -> int | None:
    try:
        fd = os.open(path.name if dir_fd is not None else path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o600,
                     dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused(f"refused {shown!r}: it is a symlink, and memory files are never written through symlinks") from None
        if exc.errno == errno.EISDIR:
            raise Refused(f"refused {shown!r}: it is a folder") from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        kind = "it is a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file (a pipe or device is never read or written)"
        raise Refused(f"refused {shown!r}: {kind}")
    if st.st_nlink > 1:
        os.close(fd)
        raise Refused(f"refused {shown!r}: it has {st.st_nlink} hard links, and a memory file is never read or written "
                      "through a hard link (it may be a file outside the workspace); copy it to make it a file of its own")
    os.set_blocking(fd, True)
    return fd


def _read_fd(fd: int, path: Path, cap: int) -> bytes:
    size = os.fstat(fd).st_size
    if size > cap:
        raise TooLarge(f"{path.name}: {size} bytes, over the {cap}-byte limit for a memory file; split it")
    chunks, got = [], 0
    while True:
        block = os.read(fd, 1 << 20)
        if not block:
            return b"".join(chunks)
        got += len(block)
        if got > cap:
            raise TooLarge(f"{path.name}: over the {cap}-byte limit for a memory file; split it")
        chunks.append(block)


# ------------------------------------------------------------------------------ locks


def _state_dir(create: bool = True) -> Path:
    from ..paths import data_dir, private_dir

    return private_dir(data_dir() / "locks") if create else data_dir() / "locks"


def _key(path: Path) -> str:
    """The lock's name for `path`: its path under the held workspace (a parent swapped for a
    symlink meanwhile changes no lock), else its real path."""
    text = str(path)
    if not any(text.startswith(anchor + os.sep) for anchor in tuple(_HELD)):  # tuple: one step, whatever other threads add
        try:
            text = os.path.realpath(path.parent) + os.sep + path.name
        except OSError as exc:  # its folder is being swapped right now: no lock can name it
            raise Refused(f"refused {path.name!r}: its folder changed while it was opened ({exc.strerror}); "
                          "nothing was read or written, try again") from None
    return sha256_hex(os.fsencode(text))[:24]


@contextmanager
def _locked(path: Path, anchor: Path | None = None):
    if anchor is not None:
        fd = _held(anchor, path.name)  # first: the lock is named under the held workspace
        if fd is not None:
            os.close(fd)
    try:
        lock = open(_state_dir() / f"memory-{_key(path)}.lock", "a")
    except OSError as exc:  # the memory file may be fine: name the folder that is not
        from ..paths import data_dir

        raise Refused(f"refused {path.name!r}: clawmem's data folder cannot hold the file's lock ({exc.strerror}: "
                      f"{data_dir()}); nothing was written: make that folder writable (or point XDG_DATA_HOME "
                      "elsewhere)") from None
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _repair(path)
        yield


def _pending(path: Path, create: bool = True) -> Path:
    return _state_dir(create) / f"memory-{_key(path)}.pending"


def _repair(path: Path) -> str | None:
    """Finish what a killed append left (the caller holds the file's lock): an entry written in
    full stays; a torn one is cut off. Returns what was done, or None."""
    rec_file = _pending(path)
    try:
        rec = json.loads(rec_file.read_text())
    except (OSError, ValueError):
        return None
    done = None
    try:  # through the folder the append was anchored in, never a path a symlink could redirect
        dfd = _folder(Path(rec.get("anchor") or path.parent), path, path.name, create=False)
        try:
            fd = _open(path, os.O_RDWR, dir_fd=dfd) if dfd is not None else None
        finally:
            if dfd is not None:
                os.close(dfd)
    except (Refused, OSError):
        fd = None
    if fd is not None:
        try:
            st = os.fstat(fd)
            offset, length = rec["offset"], rec["length"]
            if st.st_ino == rec["ino"] and st.st_size > offset:
                written = os.pread(fd, length, offset)
                if len(written) == length and content_hash(written) == rec["hash"]:
                    done = None  # the whole entry reached the file before the kill
                elif st.st_size <= offset + length:
                    os.ftruncate(fd, offset)  # only our torn bytes follow the offset
                    os.fsync(fd)
                    done = f"{path.name}: cut off {st.st_size - offset} bytes of an append that was killed halfway"
        finally:
            os.close(fd)
    rec_file.unlink(missing_ok=True)
    return done


# the temporaries clawmem's writers make (`.<name>.<8 random>.tmp`: _temp_name, tempfile.mkstemp), and no other name
_TEMP = re.compile(r"^\.(.+)\.[a-z0-9_]{8}\.tmp$")


def leftovers(files: Iterable[Path]) -> list[tuple[Path, str]]:
    """(path, what) for each temporary a killed rewrite left beside `files`' folders, and each
    killed append not yet repaired."""
    out, seen = [], set()
    for f in files:
        folder = Path(f).parent
        if folder in seen:
            continue
        seen.add(folder)
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in sorted(names):
            if _TEMP.match(name):
                p = folder / name
                out.append((p, f"temporary file of an interrupted write ({os.lstat(p).st_size} bytes)"))
    try:
        for rec in sorted(_state_dir().glob("memory-*.pending")):
            try:
                out.append((Path(json.loads(rec.read_text())["path"]), "append interrupted by a kill"))
            except (OSError, ValueError, KeyError):
                out.append((rec, "unreadable record of an interrupted append"))
    except OSError:
        pass
    return out


def clean_leftovers(found: list[tuple[Path, str]]) -> list[str]:
    """Remove temporaries and repair interrupted appends, each under its file's lock: a write
    still running holds that lock, so only what a dead writer left is touched."""
    done = []
    for path, what in found:
        if what.startswith("temporary"):
            target = path.parent / _TEMP.match(path.name).group(1)
            if not target.name.endswith(".md"):  # an archive's temporary (no lock): only once it is old
                if time.time() - os.lstat(path).st_mtime < 60:
                    continue
                path.unlink(missing_ok=True)
            else:
                with _locked(target):
                    path.unlink(missing_ok=True)
            done.append(f"removed {path}")
        elif what.startswith("append"):
            with _locked(path):
                pass  # _locked repairs
            done.append(f"repaired {path}")
        else:
            path.unlink(missing_ok=True)
    return done


# ------------------------------------------------------------------------------ the calls


def read(workspace: Path, rel: str | Path, *, extra_paths: Iterable = (), cap: int = READ_CAP) -> FileSnapshot:
    """The file's bytes (None when it does not exist). A killed append is repaired first."""
    shown, path, anchor = _locate(workspace, rel, extra_paths)
    if _pending(path, create=False).exists():  # a reader only looks: no folder made, no lock taken
        with _locked(path, anchor):
            pass
    dfd = _folder(anchor, path, shown, create=False)
    if dfd is None:
        return FileSnapshot.of(path, shown, None)
    try:
        fd = _open(path, os.O_RDONLY, shown, dir_fd=dfd)
    finally:
        os.close(dfd)
    if fd is None:
        return FileSnapshot.of(path, shown, None)
    try:
        return FileSnapshot.of(path, shown, _read_fd(fd, path, cap))
    finally:
        os.close(fd)


def read_any(path: Path, shown: str, cap: int = READ_CAP) -> bytes | None:
    """The bytes of a file outside the workspace clawmem reads (a session transcript) by the same
    rules: no symlink as its name, a regular file only (a FIFO never blocks), the size cap; None
    when it does not exist."""
    fd = _open(Path(path), os.O_RDONLY, shown)
    if fd is None:
        return None
    try:
        return _read_fd(fd, Path(path), cap)
    finally:
        os.close(fd)


def read_text(workspace: Path, rel: str | Path, *, extra_paths: Iterable = ()) -> str:
    """The file as text for people and agents: invalid UTF-8 replaced, CRLF and CR read as
    newlines (as Python's text files do); "" when it does not exist."""
    text = read(workspace, rel, extra_paths=extra_paths).text
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _receipt(path: Path, shown: str, data: bytes, start: int = 0, end: int = 0, changed: bool = True) -> Receipt:
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    return Receipt(path, shown, len(data), content_hash(data), start, end, lines, changed)


def _note(path: Path, writer: str | None) -> None:
    from . import writers

    writers.note_write(path, writer)


def append(workspace: Path, rel: str | Path, compose: Callable[[bytes], str], *, writer: str | None = None,
           cap: int | None = None) -> Receipt:
    """Append the block `compose(tail)` returns; `start`/`end` are its 1-based lines as written."""
    shown, path, anchor = _locate(workspace, rel)
    with _locked(path, anchor), _at_folder(anchor, path, shown) as dfd:
        fd = _open(path, os.O_RDWR | os.O_APPEND, shown, dir_fd=dfd)
        try:
            size = os.fstat(fd).st_size if fd is not None else 0
            tail = (os.pread(fd, 2, size - 2) if size >= 2 else os.pread(fd, size, 0)) if fd is not None else b""
            data = compose(tail).encode("utf-8")
            limit = APPEND_CAP if cap is None else cap
            if len(data) > limit:
                raise TooLarge(f"the entry is {len(data)} bytes, over the {limit}-byte limit for one write "
                               f"(mcp.maxWriteBytes in the clawmem config); split it")
            if size + len(data) > READ_CAP:
                raise TooLarge(f"{shown}: would grow past the {READ_CAP}-byte limit for a memory file; write to another file")
            made = False
            if fd is None:  # created only now: a refused write leaves no empty file behind
                fd = _open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, shown, dir_fd=dfd)
                made = True
                if fd is None:  # its folder was removed since it was opened
                    raise Refused(f"refused {shown!r}: its folder was removed while it was written; nothing was written")
                size, tail = os.fstat(fd).st_size, b""
                if size:  # someone outside clawmem created it meanwhile: compose from its tail
                    tail = os.pread(fd, 2, size - 2) if size >= 2 else os.pread(fd, size, 0)
                    data = compose(tail).encode("utf-8")
            rec = _pending(path)
            ino = os.fstat(fd).st_ino
            try:
                rec.write_text(json.dumps({"path": str(path), "anchor": str(anchor), "ino": ino, "offset": size, "length": len(data),
                                           "hash": content_hash(data)}))
            except OSError as exc:  # clawmem's data folder is full: no append without its record
                rec.unlink(missing_ok=True)  # no 0-byte record left behind
                if made and not size and os.fstat(fd).st_size == 0:
                    _unlink_if(path.name, dfd, ino)  # nor the empty log this call created
                raise Refused(f"refused {shown!r}: clawmem's data folder cannot record the append ({exc.strerror}: "
                              f"{rec.parent}); free space there; nothing was written") from None
            try:
                written = 0
                while written < len(data):
                    written += os.write(fd, data[written:])
                end = os.lseek(fd, 0, os.SEEK_CUR)  # with O_APPEND: the end of our own write
                os.fsync(fd)
            except BaseException:
                _repair(path)  # a full disk or a file-size limit: cut the torn bytes off now
                raise
            rec.unlink()
            start = end - len(data)
            before = os.pread(fd, start, 0).count(b"\n") if start else 0
            total = os.fstat(fd).st_size
        finally:
            if fd is not None:
                os.close(fd)
        _note(path, writer)  # under the lock: the hash noted is this write's file
    lines = before + max(1, data.count(b"\n"))
    return Receipt(path, shown, total, content_hash(data), before + 1, lines, lines)


def _replace(path: Path, data: bytes, seen: tuple | None, dfd: int, mode: int | None) -> bool:
    """Write `data` to a temporary beside `path` (in the folder `dfd`) and rename it over `path`,
    unless the name no longer holds the file `seen` (the identity fstat gave of the file read;
    someone outside clawmem wrote meanwhile): then False. The temporary gets `mode`: the read
    file's own (from fstat of its descriptor, never a stat of the name, which a symlink's 0777
    could answer), or the mode for a new file."""
    tmp = _temp_name(path.name)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dfd)
    try:
        try:
            written = 0
            while written < len(data):
                written += os.write(fd, data[written:])
            os.fsync(fd)
            if mode is not None:
                os.fchmod(fd, mode & 0o7777)
        finally:
            os.close(fd)
        if _identity_at(path.name, dfd) != seen:
            os.unlink(tmp, dir_fd=dfd)
            return False
        os.replace(tmp, path.name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dfd)
        except FileNotFoundError:
            pass
        raise
    os.fsync(dfd)
    return True


def _unlink_if(name: str, dfd: int, ino: int) -> None:
    """Remove `name` in folder `dfd` if it is still the file `ino` (one this call created)."""
    try:
        if os.stat(name, dir_fd=dfd, follow_symlinks=False).st_ino == ino:
            os.unlink(name, dir_fd=dfd)
    except FileNotFoundError:
        pass


def _temp_name(name: str) -> str:
    """`.<name>.<8 random>.tmp`: the temporaries leftovers() knows (_TEMP)."""
    import secrets

    return f".{name}.{''.join(secrets.choice('abcdefghijklmnopqrstuvwxyz0123456789_') for _ in range(8))}.tmp"


def _identity_at(name: str, dfd: int) -> tuple | None:
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return _identity(st)


def _identity(st: os.stat_result) -> tuple:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


@contextmanager
def _at_folder(anchor: Path, path: Path, shown: str):
    """The fd of `path`'s folder (created owner-only when missing), closed at the end."""
    dfd = _folder(anchor, path, shown, create=True)
    if dfd is None:
        raise Refused(f"refused {shown!r}: its folder cannot be created")
    try:
        yield dfd
    finally:
        os.close(dfd)


def rewrite(workspace: Path, rel: str | Path, transform: Callable[[str], "str | bytes | None"],
            expected_hash: str | None = None, *, writer: str | None = None, extra_paths: Iterable = (),
            new_mode: int | None = None) -> Receipt:
    """Read, transform, write back, all under the file's lock (see the module docstring). An
    existing file keeps its mode; a new one gets `new_mode` (a restored file's own), else 0600."""
    shown, path, anchor = _locate(workspace, rel, extra_paths)
    with _locked(path, anchor), _at_folder(anchor, path, shown) as dfd:
        for _ in range(ATTEMPTS):
            fd = _open(path, os.O_RDONLY, shown, dir_fd=dfd)
            seen, mode = None, (0o600 if new_mode is None else new_mode & 0o777)
            try:
                if fd is not None:
                    st = os.fstat(fd)  # the file read is the one whose identity and mode the write keeps
                    seen, mode = _identity(st), stat.S_IMODE(st.st_mode)
                old = _read_fd(fd, path, READ_CAP) if fd is not None else None
            finally:
                if fd is not None:
                    os.close(fd)
            if expected_hash is not None and (content_hash(old) if old is not None else MISSING) != expected_hash:
                raise ChangedOnDisk(FileSnapshot.of(path, shown, old))
            new = transform("" if old is None else old.decode("utf-8", "surrogateescape"))
            if new is None or (old is not None and (new if isinstance(new, bytes) else new.encode("utf-8", "surrogateescape")) == old):
                return _receipt(path, shown, old or b"", changed=False)
            data = new if isinstance(new, bytes) else new.encode("utf-8", "surrogateescape")
            if len(data) > READ_CAP:
                raise TooLarge(f"{shown}: the new version is {len(data)} bytes, over the {READ_CAP}-byte limit for a memory file")
            if _replace(path, data, seen, dfd, mode):
                break
            if expected_hash is not None:
                raise ChangedOnDisk(read(workspace, rel, extra_paths=extra_paths))
        else:
            raise ChangedOnDisk(read(workspace, rel, extra_paths=extra_paths))
        _note(path, writer)
    return _receipt(path, shown, data)


def remove(workspace: Path, rel: str | Path, *, writer: str | None = None) -> Receipt:
    shown, path, anchor = _locate(workspace, rel)
    with _locked(path, anchor):
        dfd = _folder(anchor, path, shown, create=False)
        if dfd is not None:
            try:
                os.unlink(path.name, dir_fd=dfd)
            except FileNotFoundError:
                pass
            finally:
                os.close(dfd)
        _note(path, writer)
    return Receipt(path, shown, 0, MISSING, 0, 0, 0)


def create_new(workspace: Path, folder_rel: str, stem: str, text: str, *, writer: str | None = None) -> Receipt:
    """Write `text` to `folder_rel/stem.md`, or `stem-2.md`, … : the first name not taken (a hard
    link of a synced temporary, which fails rather than replace a file that exists)."""
    shown, first, anchor = _locate(workspace, f"{folder_rel}/{stem}.md")
    folder = first.parent
    data = text.encode("utf-8")
    with _at_folder(anchor, first, shown) as dfd:
        tmp = _temp_name(f"{stem}.md")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dfd)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            n = 1
            while True:
                name = f"{stem}.md" if n == 1 else f"{stem}-{n}.md"
                try:
                    os.link(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
                    break
                except FileExistsError:
                    n += 1
        finally:
            os.unlink(tmp, dir_fd=dfd)
        os.fsync(dfd)
    target = folder / name
    _note(target, writer)
    shown = os.path.relpath(target, workspace).replace(os.sep, "/")
    return _receipt(target, shown, data, 1, data.count(b"\n"))
