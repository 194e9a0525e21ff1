"""The journal: every version of each memory file the indexer has seen, kept outside the
workspace, so an overwrite (an agent replacing a daily log by a placeholder) can be seen
and undone.

The indexer reads every file that changed, so it records here: whatever wrote the file
(the agent, an editor, the app, the MCP tools) the change is caught at the next sync. A
version is the file's exact bytes, zlib-compressed, in a small SQLite file under
`data_dir()/journal/<agent>/<hash of the workspace's real path>/` (owner-only). Versions
older than `journal.maxAgeDays`, then the oldest ones over `journal.maxMB`, are dropped,
except each file's newest version: it is the base the next change is compared with.

A file's first version is its baseline (what the journal first saw), not a change, unless the
file appeared after the journal's first complete look at the workspace (`catch_up`, or an
index run that listed every file): that version is kept as its creation (`created` = 1) and
listed as a change from nothing. The time of that first look is the `meta` row `caught_up`; a
journal from before it (no such row) gets it at its next complete look, so files it had
already seen, or that appeared before that look, stay baselines.

Who wrote a version: clawmem's own writers leave a note (the file's hash after their write
and this process's writer name) in `data_dir()/journal/writers/`; a version whose hash
matches its file's note is theirs, any other is "outside".
"""

from __future__ import annotations

import datetime as dt
import os
import stat
import sqlite3
import time
from pathlib import Path

from . import memfile
from .. import paths
from .fsutil import open_database, os_path, path_text, sha256_hex

from .writers import OUTSIDE, writer_of as _writer_of
from ..errors import BadValue, ClawmemError, raises_clawmem_errors
from ..results import Record

SCHEMA = """
create table if not exists versions(
    id integer primary key autoincrement,
    path text not null,          -- as the index shows it (workspace-relative)
    abspath text not null,
    ts real not null,            -- when the journal saw it
    writer text not null,
    hash text,                   -- sha256 of the bytes; null: the file was deleted
    size integer not null,
    data blob                    -- zlib(bytes); null when deleted
);
create index if not exists versions_path on versions(path, id);
create index if not exists versions_ts on versions(ts);
-- each file's newest hash from the index alone: every sync asks, and the rows hold the bytes
create index if not exists versions_latest on versions(path, id, hash);
-- `caught_up`: when the journal first had every memory file (files seen after it are creations)
create table if not exists meta(key text primary key, value text not null);
"""


def bytes_hash(data: bytes) -> str:
    return sha256_hex(data)


def journal_dir(cfg) -> Path:
    key = sha256_hex(os.fsencode(os.path.realpath(cfg.workspace)))[:16]
    return paths.data_dir() / "journal" / cfg.agent_id / key


class Version(Record):
    id: int
    path: str
    abspath: str
    ts: float
    writer: str
    hash: str | None
    size: int
    __slots__ = tuple(__annotations__)

    @property
    def deleted(self) -> bool:
        return self.hash is None

    def as_json(self) -> dict:
        when = dt.datetime.fromtimestamp(self.ts).astimezone().isoformat(timespec="seconds")
        return {"version": self.id, "path": self.path, "time": when, "writer": self.writer, "deleted": self.deleted, "size": self.size}


_COLS = "id, path, abspath, ts, writer, hash, size"


@raises_clawmem_errors
class Journal:
    def __init__(self, cfg):
        self.cfg = cfg
        paths.private_dir(paths.data_dir() / "journal")  # the folders above are owner-only too
        folder = paths.private_dir(journal_dir(cfg))
        self.file = folder / "journal.sqlite"
        # the indexer asks who wrote thousands of files: resolve the notes folder and each
        # file's folder once (a file itself is never a symlink: the listing skips those)
        self._notes = paths.data_dir() / "journal" / "writers"
        self._real_dirs: dict[str, str] = {}
        self._caught_up = False  # once known true, it stays so
        self.conn = open_database(self.file, timeout=30.0)  # the stdlib's sqlite3: callers catch sqlite3.Error
        try:
            os.chmod(self.file, 0o600)
        except OSError:
            pass
        try:
            self.conn.execute("pragma journal_mode=wal")
            self.conn.execute("pragma synchronous=normal")  # WAL: a power cut may lose the last versions, never corrupt them
            self.conn.executescript(SCHEMA)
            if "mode" not in {r[1] for r in self.conn.execute("pragma table_info(versions)")}:
                # the file's permission bits as the journal saw it: a deleted file comes back with them
                self.conn.execute("alter table versions add column mode integer")
            if "created" not in {r[1] for r in self.conn.execute("pragma table_info(versions)")}:
                # 1: a file's first version, seen after the journal first had every file (a creation)
                self.conn.execute("alter table versions add column created integer")
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            raise sqlite3.DatabaseError(f"{self.file}: not a usable journal ({exc}); move it aside and a new one starts") from None

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ recording

    def latest_hashes(self) -> dict[str, str | None]:
        """path -> hash of its newest version (None: deleted)."""
        # SQLite takes the bare column `hash` from the row holding max(id)
        return {path: digest for path, digest, _ in self.conn.execute("select path, hash, max(id) from versions group by path")}

    def _realpath(self, abspath: str | Path) -> str:
        folder, name = os.path.split(str(abspath))
        real = self._real_dirs.get(folder)
        if real is None:
            real = self._real_dirs[folder] = os.path.realpath(folder)
        full = os.path.join(real, name)
        return full if not os.path.islink(full) else os.path.realpath(full)

    def caught_up(self) -> bool:
        """Whether the journal has had every memory file once: a file first seen after that
        was created then."""
        if not self._caught_up:
            self._caught_up = self.conn.execute("select 1 from meta where key = 'caught_up'").fetchone() is not None
        return self._caught_up

    def mark_caught_up(self) -> None:
        """Every memory file has been recorded once (a complete catch-up or index run): the
        first time, files first seen from now on are kept as creations."""
        if not self.caught_up():
            # not cached here: an index run's batch holding this row may still be dropped
            self.conn.execute("insert or ignore into meta(key, value) values ('caught_up', ?)", (repr(time.time()),))

    def begin_batch(self) -> None:
        """Let the next observe() calls share one transaction, until commit_batch(): the
        indexer records thousands of files, and one commit each cost more than the versions."""
        if not self.conn.in_transaction:
            self.conn.execute("begin immediate")

    def commit_batch(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("commit")

    def in_batch(self) -> bool:
        return self.conn.in_transaction

    def drop_batch(self) -> None:
        """Give up the open batch (its versions are recorded again by the next run)."""
        if self.conn.in_transaction:
            self.conn.execute("rollback")

    def latest(self, path: str) -> Version | None:
        row = self.conn.execute(f"select {_COLS} from versions where path = ? order by id desc limit 1", (path,)).fetchone()
        return Version(*row) if row else None

    def observe(self, path: str, abspath: Path, data: bytes | None, writer: str | None = None) -> Version | None:
        """Record `data` (None: deleted) as `path`'s newest version unless it already is.
        Returns the new version, or None when nothing changed."""
        digest = bytes_hash(data) if data is not None else None
        who = writer or _writer_of(abspath, digest, self._notes, self._realpath(abspath))
        own = not self.conn.in_transaction  # else the indexer's batch is open and commits it
        if own:
            self.conn.execute("begin immediate")
        try:
            last = self.conn.execute("select id, hash, writer from versions where path = ? order by id desc limit 1", (path,)).fetchone()
            if last and last[1] == digest:
                if who != OUTSIDE and last[2] == OUTSIDE:
                    # the writer's own record came after the indexer saw the same bytes
                    self.conn.execute("update versions set writer = ? where id = ?", (who, last[0]))
                if own:
                    self.conn.execute("commit")
                return None
            if last is None and data is None:
                if own:
                    self.conn.execute("commit")
                return None
            import zlib  # here: a no-op index records no version

            blob = zlib.compress(data, 6) if data is not None else None
            mode = _file_mode(abspath) if data is not None else None
            created = 1 if last is None and self.caught_up() else None
            cur = self.conn.execute(
                "insert into versions(path, abspath, ts, writer, hash, size, data, mode, created) values (?,?,?,?,?,?,?,?,?)",
                (path, path_text(abspath), time.time(), who, digest, len(data) if data is not None else 0, blob, mode, created),
            )
            if own:
                self.conn.execute("commit")
        except BaseException:
            if own:
                self.conn.execute("rollback")
            raise
        return self.version(cur.lastrowid)

    def observe_file(self, path: str, abspath: Path, writer: str | None = None) -> Version | None:
        try:
            data = Path(abspath).read_bytes()
        except FileNotFoundError:
            data = None
        return self.observe(path, abspath, data, writer)

    def catch_up(self) -> int:
        """Record every memory file whose bytes are not its newest version (and the ones that
        vanished), for readers that cannot wait for the next sync. Returns how many."""
        from .workspace import list_memory_files

        latest = self.latest_hashes()
        files = list_memory_files(self.cfg.workspace, self.cfg["extraPaths"])
        n = 0
        for f in files:
            try:
                data = Path(f.abspath).read_bytes()
            except OSError:
                continue
            if latest.get(f.path, "") != bytes_hash(data):
                n += self.observe(f.path, f.abspath, data) is not None
        listed = {f.path for f in files}
        for path, digest in latest.items():
            if digest is not None and path not in listed:
                last = self.latest(path)
                if last and not os.path.exists(os_path(last.abspath)):
                    n += self.observe(path, Path(os_path(last.abspath)), None) is not None
        self.mark_caught_up()
        return n

    def prune(self, now: float | None = None) -> int:
        """Drop versions past the age limit, then the oldest over the size limit; each file's
        newest version stays. Returns how many were dropped."""
        now = time.time() if now is None else now
        keep = "id not in (select max(id) from versions group by path)"
        self.conn.execute("begin immediate")
        try:
            dropped = self.conn.execute(
                f"delete from versions where ts < ? and {keep}", (now - self.cfg["journal.maxAgeDays"] * 86400,)
            ).rowcount
            budget = int(self.cfg["journal.maxMB"] * 1024 * 1024)
            # summing every version reads the whole journal: not while its files are below the budget
            on_disk = sum(os.path.getsize(p) for p in (self.file, Path(f"{self.file}-wal")) if os.path.exists(p))
            total = self.conn.execute("select coalesce(sum(length(data)), 0) from versions").fetchone()[0] if on_disk > budget else 0
            if total > budget:
                for vid, size in self.conn.execute(f"select id, coalesce(length(data), 0) from versions where {keep} order by id").fetchall():
                    if total <= budget:
                        break
                    self.conn.execute("delete from versions where id = ?", (vid,))
                    total -= size
                    dropped += 1
            self.conn.execute("commit")
        except BaseException:
            self.conn.execute("rollback")
            raise
        return dropped

    # ------------------------------------------------------------------ reading

    def mode(self, vid: int) -> int | None:
        """The permission bits the file had when version `vid` was recorded (None: not known)."""
        row = self.conn.execute("select mode from versions where id = ?", (vid,)).fetchone()
        return row[0] if row else None

    def version(self, vid: int) -> Version | None:
        row = self.conn.execute(f"select {_COLS} from versions where id = ?", (vid,)).fetchone()
        return Version(*row) if row else None

    def data(self, vid: int) -> bytes | None:
        row = self.conn.execute("select data from versions where id = ?", (vid,)).fetchone()
        import zlib

        return zlib.decompress(row[0]) if row and row[0] is not None else None

    def previous(self, v: Version) -> Version | None:
        row = self.conn.execute(f"select {_COLS} from versions where path = ? and id < ? order by id desc limit 1", (v.path, v.id)).fetchone()
        return Version(*row) if row else None

    def versions(self, path: str | None = None, since: float | None = None) -> list[Version]:
        """Versions, oldest first, of one path or all, seen at or after `since`."""
        where, args = [], []
        if path is not None:
            where.append("path = ?")
            args.append(path)
        if since is not None:
            where.append("ts >= ?")
            args.append(since)
        sql = f"select {_COLS} from versions" + (" where " + " and ".join(where) if where else "") + " order by id"
        return [Version(*r) for r in self.conn.execute(sql, args)]

    def is_creation(self, vid: int) -> bool:
        """Whether version `vid` is its file's creation (first seen after the journal had every file)."""
        row = self.conn.execute("select created from versions where id = ?", (vid,)).fetchone()
        return bool(row and row[0])

    def changes(self, path: str | None = None, since: float | None = None) -> list["Change"]:
        """Each version with the one before it, and each file's creation (its first version,
        when the file appeared after the journal's first complete look: `before` is None). Any
        other first version of a file is its baseline (what the journal first saw), not a
        change, and is left out; so is the oldest version kept of a file whose earlier ones
        were pruned."""
        out = []
        for v in self.versions(path, since):
            before = self.previous(v)
            if before is not None or self.is_creation(v.id):
                out.append(Change(self, before, v))
        return out


def _file_mode(abspath) -> int | None:
    """The permission bits of the regular file at `abspath`, from fstat of an open descriptor
    (O_NOFOLLOW): never a symlink's 0777 read off the name, which a restore would then give the file."""
    try:
        fd = os.open(abspath, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else None


def _text(data: bytes | None) -> str:
    # surrogateescape: bytes that are not UTF-8 survive a round trip through str
    return "" if data is None else data.decode("utf-8", "surrogateescape")


def _shown(line: str) -> str:
    return line.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


class Change:
    """One version and the one before it (None: the version is the file's creation, compared
    with nothing, every line added). Its hunks are the groups a unified diff shows; `diff()`
    and `restore_hunk` number them the same way."""

    CONTEXT = 3

    def __init__(self, journal: Journal, before: Version | None, after: Version):
        self.journal, self.before, self.after = journal, before, after
        self._texts: tuple[str, str] | None = None

    @property
    def created(self) -> bool:
        return self.before is None

    def texts(self) -> tuple[str, str]:
        if self._texts is None:
            old = _text(self.journal.data(self.before.id)) if self.before is not None else ""
            self._texts = old, _text(self.journal.data(self.after.id))
        return self._texts

    def hunks(self, context: int = CONTEXT) -> list[list[tuple[str, int, int, int, int]]]:
        old, new = self.texts()
        import difflib  # here: only a diff asked for needs it (heapq with it)

        matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
        return list(matcher.get_grouped_opcodes(context))

    def hunk_lines(self, context: int = CONTEXT) -> list[list[str]]:
        """Each hunk as unified-diff lines, its `@@` header first."""
        a, b = (t.splitlines() for t in self.texts())
        out = []
        for group in self.hunks(context):
            i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
            # an empty side starts at line 0, as diff -u writes it
            lines = [f"@@ -{i1 + 1 if i2 > i1 else i1},{i2 - i1} +{j1 + 1 if j2 > j1 else j1},{j2 - j1} @@"]
            for op, x1, x2, y1, y2 in group:
                if op == "equal":
                    lines += [" " + _shown(ln) for ln in a[x1:x2]]
                    continue
                lines += ["-" + _shown(ln) for ln in a[x1:x2]]
                lines += ["+" + _shown(ln) for ln in b[y1:y2]]
            out.append(lines)
        return out

    def diff(self, context: int = CONTEXT) -> list[str]:
        old = f"{self.after.path} v{self.before.id}" if self.before is not None else "/dev/null"
        head = [f"--- {old}", f"+++ {self.after.path} v{self.after.id}"]
        return head + [ln for h in self.hunk_lines(context) for ln in h]

    def counts(self) -> tuple[int, int]:
        """(lines added, lines removed)."""
        plus = minus = 0
        for group in self.hunks(0):
            for op, i1, i2, j1, j2 in group:
                if op != "equal":
                    minus += i2 - i1
                    plus += j2 - j1
        return plus, minus

    def as_json(self, with_diff: bool = True) -> dict:
        plus, minus = self.counts()
        out = {**self.after.as_json(), "created": self.created, "previous": self.before.id if self.before is not None else None,
               "added": plus, "removed": minus}
        if with_diff:
            out["diff"] = self.diff()
        return out


def parse_since(text: str, today: dt.date | None = None) -> float:
    """`--since`: YYYY-MM-DD, today, yesterday or Nd (N days ago), as a local-midnight timestamp."""
    today = today or dt.date.today()
    t = text.strip().lower()
    if t in ("today", "yesterday"):
        day = today - dt.timedelta(days=t == "yesterday")
    elif t.endswith("d") and t[:-1].isdigit():
        day = today - dt.timedelta(days=int(t[:-1]))
    else:
        try:
            day = dt.date.fromisoformat(t)
        except ValueError:
            raise BadValue(f"--since: expected a date like 2026-02-10, today, yesterday or 7d, got {text!r}") from None
    return dt.datetime.combine(day, dt.time()).timestamp()


def restore(journal: Journal, path: str, abspath: Path, vid: int) -> Version:
    """Write version `vid` of `path` back (atomically, permissions kept), journalling what was
    there first and the restored bytes, so a restore can itself be undone. ValueError if the
    version is not one of this file's."""
    v = journal.version(vid)
    if v is None or v.path != path:
        raise BadValue(f"{path}: no version {vid} in the journal (see `clawmem history {path}`)")
    writer = f"restore of v{vid}"
    root = _root(journal, abspath)
    if v.deleted:
        journal.observe_file(path, abspath)  # what is there now, in case no sync has seen it yet
        memfile.remove(root, abspath, writer=writer)
        data = None
    else:
        data = journal.data(vid) or b""

        def put_back(now: str) -> bytes:
            # what is there now, read under the file's lock, in case no sync has seen it yet
            journal.observe(path, abspath, now.encode("utf-8", "surrogateescape") if os.path.lexists(abspath) else None)
            return data

        # a file deleted since comes back with the mode it had (0644 stays 0644), not clawmem's 0600
        memfile.rewrite(root, abspath, put_back, writer=writer, new_mode=journal.mode(vid))
    return journal.observe(path, abspath, data, writer) or journal.latest(path)


def _root(journal: Journal, abspath: Path) -> Path:
    """The folder a restored file must stay inside: the workspace, or its own folder (an extra path)."""
    ws = Path(journal.cfg.workspace)
    return ws if Path(abspath).is_relative_to(ws) else Path(abspath).parent


class HunkConflict(ClawmemError, ValueError):
    """The file changed where the hunk is since that version; the message says what to do."""


def restore_hunk(journal: Journal, change: Change, index: int, abspath: Path) -> Version | None:
    """Undo hunk `index` of `change` in the file as it is now, keeping every other line the
    file has now (a three-way merge: the change's version is the base, the file now is one
    side, that version without the hunk the other). HunkConflict when the file changed in
    the same place since; nothing is written then."""
    from .conflicts import merge3

    old, new = change.texts()
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    groups = change.hunks()
    if not 0 <= index < len(groups):
        raise BadValue(f"{change.after.path}: v{change.after.id} has no hunk {index + 1}")
    undone = list(b)
    for op, i1, i2, j1, j2 in reversed([op for op in groups[index] if op[0] != "equal"]):
        undone[j1:j2] = a[i1:i2]
    # a creation's hunk undone takes its lines out, leaving the file (never deleting it)
    writer = f"restore of a hunk of v{change.before.id}" if change.before is not None else f"restore of a hunk before v{change.after.id}"

    def undo(now: str) -> bytes:
        disk = now.encode("utf-8", "surrogateescape") if os.path.lexists(abspath) else None
        journal.observe(change.after.path, abspath, disk)  # what is there now, in case no sync has seen it yet
        merged = merge3(new, "".join(undone), _text(disk))
        if merged.conflicts:
            instead = (f"restore the whole file to v{change.before.id} instead" if change.before is not None
                       else "edit the file instead (it did not exist before it)")
            raise HunkConflict(f"{change.after.path} changed at that place since v{change.after.id}; {instead}")
        out["data"] = merged.text.encode("utf-8", "surrogateescape")
        return out["data"]

    out: dict[str, bytes] = {}
    got = memfile.rewrite(_root(journal, abspath), abspath, undo, writer=writer)
    if not got.changed:
        return None
    return journal.observe(change.after.path, abspath, out["data"], writer)
