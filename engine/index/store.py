"""The SQLite index: connection, schema, meta record, per-model vector tables.

One file per agent and workspace, owner-only, WAL with a busy timeout so readers are never blocked by
the single writer. The file is derived data: anything wrong with it (corrupt, foreign,
older schema, different chunking) is handled by moving it aside or rebuilding it from the
Markdown, never by asking the user to repair it.
"""

from __future__ import annotations

import json
import os
import time
from contextlib import contextmanager
from pathlib import Path
from collections import namedtuple
TYPE_CHECKING = False  # typing's constant without importing typing: a search never needs it (~3 ms)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator

from ..files.fsutil import (BUSY_TIMEOUT_MS, SIDE_FILES, create_private_file, file_is_damaged, move_aside,  # noqa: F401 (the store's names)
                            open_database, sqlite_driver)

if TYPE_CHECKING:  # numpy loads lazily: a keyword-only `clawmem search` starts faster without it
    import numpy as np

SCHEMA_VERSION = 1
APP_MARKER = "clawmem"
TOKENIZER = "clawmem-bigram-1"  # changes to engine.text that alter index tokens must bump this
# chunks: a smaller memory cannot show what unrelated text looks like to its model (its reference
# sample takes in the background notes, search.background) nor which words it lacks (a word
# missing from a few notes is no sign that the answer is)
SMALL_MEMORY = 64


# sqlean.py (a dependency: FTS5 and extension loading on every platform), else the stdlib
# sqlite3; files/fsutil.py opens every private database
db = sqlite_driver(extensions=True)
Error = db.Error
DatabaseError = db.DatabaseError
OperationalError = db.OperationalError


def float32_bytes(vector) -> bytes:
    """A vector's float32 bytes: an array('f') as it is (the local model's query vectors,
    numpy never loaded), anything else through numpy."""
    if getattr(vector, "typecode", None) == "f":
        return vector.tobytes()
    import numpy as np

    return np.asarray(vector, dtype=np.float32).tobytes()


# collections.namedtuple, not typing.NamedTuple: the latter compiles each field's (string) annotation,
# ~0.3 ms a class on every search's start
class VecState(namedtuple("VecState", "loaded version reason")):
    """loaded: bool; version and reason: str or None."""

    __slots__ = ()

    def as_status(self) -> dict:
        return {
            "backend": "sqlite-vec" if self.loaded else "numpy",
            "version": self.version,
            "reason": self.reason,
        }


def _load_vec(conn) -> VecState:
    # the extension is loaded from the package's folder without importing the package: its
    # __init__ imports numpy (36 ms), which a keyword-only run never needs
    import importlib.util

    try:
        spec = importlib.util.find_spec("sqlite_vec")
    except (ImportError, ValueError) as exc:
        spec, why = None, exc
    else:
        why = "no module named 'sqlite_vec'"
    if spec is None or not spec.origin:
        return VecState(False, None, f"sqlite-vec is not installed ({why}); vectors are searched with numpy")
    try:
        conn.enable_load_extension(True)
        conn.load_extension(os.path.join(os.path.dirname(spec.origin), "vec0"))
        conn.enable_load_extension(False)
        (version,) = conn.execute("select vec_version()").fetchone()
        return VecState(True, version, None)
    except AttributeError:
        return VecState(False, None, f"this Python's sqlite3 ({db.__name__}) cannot load extensions; vectors are searched with numpy")
    except Exception as exc:  # a broken extension must not stop search
        return VecState(False, None, f"sqlite-vec failed to load ({exc}); vectors are searched with numpy")


SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, source TEXT NOT NULL, abspath TEXT NOT NULL, hash TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, day TEXT, indexed_at REAL NOT NULL,
    chunks INTEGER NOT NULL DEFAULT 0, note TEXT, state TEXT);
CREATE INDEX IF NOT EXISTS files_mtime ON files(mtime_ns);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL, source TEXT NOT NULL,
    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, hash TEXT NOT NULL,
    text TEXT NOT NULL, ts REAL, linemap TEXT);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    tokens, tokenize = "unicode61 remove_diacritics 2 tokenchars '_'");
CREATE TABLE IF NOT EXISTS models (
    id INTEGER PRIMARY KEY, fingerprint TEXT UNIQUE NOT NULL, provider TEXT NOT NULL,
    model TEXT NOT NULL, endpoint TEXT NOT NULL, dims INTEGER NOT NULL,
    created REAL NOT NULL, last_used REAL NOT NULL);
"""


def index_meta(cfg) -> dict:
    """What the index depends on: a change means a full rebuild."""
    from ..files.fsutil import builtin_sha256

    extra = sorted(os.path.expanduser(p) for p in cfg["extraPaths"])
    return {
        "schema": SCHEMA_VERSION,
        "tokenizer": TOKENIZER,
        "chunkTokens": cfg["chunking.tokens"],
        "chunkOverlap": cfg["chunking.overlap"],
        "sources": sorted(cfg["sources"]),
        "scope": builtin_sha256(json.dumps({"extraPaths": extra}).encode()).hexdigest()[:16],
    }


def settings_differ(store: "Store", cfg) -> list[str]:
    """The settings that shape the index (index_meta) on which `store` and `cfg` differ, and
    "workspace" when it was built for another one; [] when it is this config's index."""
    out = []
    built_for = store.get_meta("workspace")
    if built_for is not None and built_for != str(cfg.workspace):
        out.append("workspace")
    meta, want = store.get_meta_json("index"), index_meta(cfg)
    if isinstance(meta, dict):
        out += sorted(k for k in set(meta) | set(want) if meta.get(k) != want.get(k))
    return out


def built_with_other_settings(store: "Store", cfg) -> str | None:
    """The one line a read-only command says when the index was built with other settings: it is
    used as it is, never rebuilt (only `clawmem index` rebuilds it)."""
    differ = settings_differ(store, cfg)
    if not differ:
        return None
    return (f"this index was built with other settings ({', '.join(differ)}); used as it is: "
            "`clawmem index` with this config rebuilds it (`--force` if it holds vectors)")


class ForeignIndex(Exception):
    """The file at the index path is not a clawmem index (`foreign`: a database of something
    else) or is damaged."""

    def __init__(self, message: str, foreign: bool = False):
        super().__init__(message)
        self.foreign = foreign


def not_ours_line(path: Path, what: str) -> str:
    """The one line for an index path that holds something clawmem must not move."""
    return (f"store.path: {path} {what}; clawmem moves aside only its own index, so nothing was touched: "
            "point store.path at a new file, or move that away yourself")


def may_move_aside(path: Path, exc: ForeignIndex) -> bool:
    """Only a damaged file at a path clawmem manages itself (its data folder) is moved aside: a
    folder or another program's database is never clawmem's to move."""
    from ..paths import data_dir

    return not exc.foreign and Path(os.path.realpath(path)).is_relative_to(os.path.realpath(data_dir()))


class Store:
    """A connection to one index file. Not shared between threads."""

    def __init__(self, path: Path, *, write: bool = False, load_vec: bool = True, immutable: bool = False):
        self.path = Path(path)
        self.write = write
        if write:
            create_private_file(self.path)
        elif not self.path.exists():
            raise FileNotFoundError(self.path)
        target, uri = str(self.path), False
        if not write and (immutable or not os.access(self.path.parent, os.W_OK) and not Path(target + "-shm").exists()):
            # a WAL index in a folder we cannot write (read-only mount) or that is full: SQLite cannot
            # create the -shm it needs to read it, and nobody can write the index there either: read it as is
            from urllib.parse import quote

            target, uri = f"file:{quote(target)}?immutable=1", True
        self.conn = open_database(target, uri=uri, timeout=BUSY_TIMEOUT_MS / 1000, extensions=True)
        self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        self.inode = os.stat(self.path).st_ino
        self._load_vec = load_vec
        self._vec: VecState | None = None
        self._chunk_count: tuple[int, int] | None = None  # (generation, count)
        self._vocabulary = False  # the temp fts5vocab table exists on this connection
        self._memo: dict[str, tuple[int, Any]] = {}  # key -> (generation, what memo() built)

    @property
    def vec(self) -> VecState:
        """sqlite-vec, loaded on first use: a keyword-only search never needs it (nor numpy,
        which its Python package imports)."""
        if self._vec is None:
            self._vec = _load_vec(self.conn) if self._load_vec else VecState(False, None, "vector store disabled (store.vector.enabled = false)")
        return self._vec

    def prepare_writer(self) -> None:
        """WAL, and no fsync while a job writes; only after check(): a foreign file must not be touched.

        Each file is one transaction (a kill loses nothing committed), and the fsync of every
        checkpoint made a full index twice as slow. Without it a kill still cannot corrupt the
        index; an OS crash or power cut during a job could, and then the next writer's check
        finds it and rebuilds from the Markdown (the file is derived data). close() makes
        the finished job durable."""
        try:
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = OFF")
        except DatabaseError as exc:
            if not file_is_damaged(exc):
                raise
            raise ForeignIndex(str(exc)) from None

    # -- lifecycle -----------------------------------------------------------------

    def close(self) -> None:
        try:
            if self.write and not self.conn.in_transaction:
                self.conn.execute("PRAGMA synchronous = NORMAL")
                self.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")  # with fsync: the job's work is on disk
        except Error:
            pass
        try:
            self.conn.close()
        except Error:
            pass

    def rollback(self) -> None:
        """Undo the open transaction, if any: SQLite ends it by itself when a commit fails for
        want of space, and a second rollback would hide that real error."""
        if self.conn.in_transaction:
            self.conn.execute("rollback")

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction: `begin immediate` takes the write lock at once; any error rolls back."""
        self.conn.execute("begin immediate")
        try:
            yield
            self.conn.execute("commit")
        except BaseException:
            self.rollback()
            raise

    def make_durable_for_swap(self) -> None:
        """A rebuilt index before it replaces the old one: on disk (the job wrote without fsync),
        its WAL folded in, and in rollback mode, so the swapped-in file is whole on its own."""
        self.conn.execute("PRAGMA synchronous = FULL")
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.conn.execute("PRAGMA journal_mode = DELETE")

    def is_current_file(self) -> bool:
        """False once the index file was swapped by a rebuild in another process."""
        try:
            return os.stat(self.path).st_ino == self.inode
        except FileNotFoundError:
            return False

    def check(self, quick: bool = True) -> None:
        """Raise ForeignIndex unless this is a readable clawmem index (or an empty new file).
        Readers skip the integrity check (`quick=False`): it reads the whole file."""
        try:
            tables = {r[0] for r in self.conn.execute("select name from sqlite_master where type in ('table','view')")}
            if not tables:
                return
            if "meta" not in tables:
                raise ForeignIndex("it has tables but no clawmem meta record", foreign=True)
            row = self.conn.execute("select value from meta where key = 'app'").fetchone()
            if not row or row[0] != APP_MARKER:
                raise ForeignIndex("its meta record is not clawmem's", foreign=True)
            if not quick:
                return
            (ok,) = self.conn.execute("PRAGMA quick_check(1)").fetchone()
            if ok != "ok":
                raise ForeignIndex(f"integrity check failed: {ok}")
        except DatabaseError as exc:
            if not file_is_damaged(exc):
                raise
            raise ForeignIndex(str(exc)) from None

    def ensure_schema(self, **defaults: str) -> None:
        """Create the tables and the meta record in one transaction: a reader that opens a new
        index while it is being created sees either an empty file or a whole clawmem index,
        never tables without the marker (which it would call foreign). `defaults` are meta
        values written only where none is set yet."""
        self.conn.execute("begin immediate")
        try:
            for statement in SCHEMA.split(";"):  # no ";" inside a statement of SCHEMA
                if statement.strip():
                    self.conn.execute(statement)
            self.set_meta("app", APP_MARKER)
            for key, value in {"schema": str(SCHEMA_VERSION), **defaults}.items():
                self.conn.execute("insert into meta(key, value) values (?, ?) on conflict(key) do nothing", (key, value))
            self.conn.execute("commit")
        except BaseException:
            self.rollback()
            raise

    def has_schema(self) -> bool:
        try:
            row = self.conn.execute("select value from meta where key = 'app'").fetchone()
            return bool(row and row[0] == APP_MARKER)
        except OperationalError:
            return False

    # -- meta ----------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        try:
            row = self.conn.execute("select value from meta where key = ?", (key,)).fetchone()
        except OperationalError:
            return None
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("insert into meta(key, value) values (?, ?) on conflict(key) do update set value = excluded.value", (key, value))

    def get_meta_json(self, key: str) -> Any:
        raw = self.get_meta(key)
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return None

    def bump_generation(self) -> None:
        self.conn.execute(
            "insert into meta(key, value) values ('generation', '1') "
            "on conflict(key) do update set value = cast(value as integer) + 1"
        )

    def generation(self) -> int:
        return int(self.get_meta("generation") or 0)

    def chunk_count(self) -> int:
        """Chunks in the index, counted again only after a change. FTS5 keeps the number of rows
        it holds (one per chunk) in its averages record, which BM25 reads anyway: reading it is
        ~0.01 ms where `count(*) from chunks` reads the whole table (0.5 ms of a search's
        process at 20,000 files, 2.5 ms at 100k chunks); the count is the fallback."""
        gen = self.generation()
        if self._chunk_count is None or self._chunk_count[0] != gen:
            n = self._fts_rows()
            if n is None:
                n = self.conn.execute("select count(*) from chunks").fetchone()[0]
            self._chunk_count = (gen, n)
        return self._chunk_count[1]

    def _fts_rows(self) -> int | None:
        """The rows chunks_fts holds, from the first varint of its averages record (row id 1 of
        its %_data table, SQLite's varint format: big-endian 7-bit groups); None if unreadable."""
        try:
            row = self.conn.execute("select block from chunks_fts_data where id = 1").fetchone()
        except OperationalError:
            return None
        block = row[0] if row else None
        if not isinstance(block, bytes):
            return None
        n = 0
        for i, byte in enumerate(block[:8]):
            n = (n << 7) | (byte & 0x7F)
            if byte < 0x80:
                return n
        return None  # 9-byte varints (2^56 rows) never happen here: count instead

    def memo(self, key: str, build: Callable[[], Any]) -> Any:
        """What `build()` derives from this index, kept on this connection until the index
        changes (its generation): one cache per store, for what is too slow to read per query."""
        gen = self.generation()
        got = self._memo.get(key)
        if got is None or got[0] != gen:
            got = (gen, build())
            self._memo[key] = got
        return got[1]

    # -- counts --------------------------------------------------------------------

    def counts(self) -> dict:
        if not self.has_schema():
            return {"files": 0, "chunks": 0, "bySource": {}}
        by: dict[str, dict] = {}
        for source, n in self.conn.execute("select source, count(*) from files group by source"):
            by.setdefault(source, {"files": 0, "chunks": 0})["files"] = n
        for source, n in self.conn.execute("select source, count(*) from chunks group by source"):
            by.setdefault(source, {"files": 0, "chunks": 0})["chunks"] = n
        return {
            "files": sum(v["files"] for v in by.values()),
            "chunks": sum(v["chunks"] for v in by.values()),
            "bySource": by,
        }

    def file_rows(self) -> dict[str, tuple]:
        """path -> (source, hash, mtime_ns, size, abspath)"""
        if not self.has_schema():
            return {}
        return {
            r[0]: r[1:]
            for r in self.conn.execute("select path, source, hash, mtime_ns, size, abspath from files")
        }

    # -- vector tables ---------------------------------------------------------------

    def models(self) -> list[dict]:
        if not self.has_schema():
            return []
        cols = ("id", "fingerprint", "provider", "model", "endpoint", "dims", "created", "last_used")
        return [dict(zip(cols, r)) for r in self.conn.execute(f"select {', '.join(cols)} from models")]

    def model_id(self, fingerprint: str, provider: str, model: str, endpoint: str, dims: int) -> int:
        """The id of this model's vector tables, creating them on first use (writer only)."""
        row = self.conn.execute("select id, dims from models where fingerprint = ?", (fingerprint,)).fetchone()
        now = time.time()
        if row:
            self.conn.execute("update models set last_used = ? where id = ?", (now, row[0]))
            return row[0]
        cur = self.conn.execute(
            "insert into models(fingerprint, provider, model, endpoint, dims, created, last_used) values (?,?,?,?,?,?,?)",
            (fingerprint, provider, model, endpoint, dims, now, now),
        )
        mid = cur.lastrowid
        self.conn.execute(f"create table if not exists vectors_{mid} (chunk_id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)")
        self.ensure_vec_table(mid, dims)
        return mid

    def ensure_vec_table(self, mid: int, dims: int) -> None:
        if not self.vec.loaded:
            return
        exists = self.conn.execute("select 1 from sqlite_master where name = ?", (f"vec_{mid}",)).fetchone()
        if exists:
            return
        self.conn.execute(f"create virtual table vec_{mid} using vec0(embedding float[{dims}] distance_metric=cosine)")
        # vectors written while sqlite-vec was unavailable are mirrored now
        self.conn.execute(f"insert into vec_{mid}(rowid, embedding) select chunk_id, embedding from vectors_{mid}")

    def has_vec_table(self, mid: int) -> bool:
        if not self.vec.loaded:
            return False
        return bool(self.conn.execute("select 1 from sqlite_master where name = ?", (f"vec_{mid}",)).fetchone())

    def reference_rows(self, mid: int) -> list[bytes] | None:
        """The model's reference sample (see indexer._pick_reference_sample) as float32 blobs,
        one per vector; in a memory too small to show what unrelated text looks like, with the
        background notes' vectors. None below 8 vectors. Plain bytes: a one-shot search
        compares the query with them without loading numpy."""
        ids = self.get_meta_json(f"sample:{mid}") or []
        (dims,) = self.conn.execute("select dims from models where id = ?", (mid,)).fetchone()
        rows = [blob for _, blob in self.vector_blobs(mid, ids)]
        if len(rows) < SMALL_MEMORY:
            raw = self.get_meta_json(f"background:{mid}")
            import base64  # only a memory this small keeps background vectors: a search of any other never loads it

            try:
                flat = base64.b64decode(raw["vectors"]) if raw and int(raw["dims"]) == dims else b""
            except (KeyError, TypeError, ValueError):
                flat = b""
            step = 4 * dims
            if len(flat) % step == 0:
                rows += [flat[i : i + step] for i in range(0, len(flat), step)]
        return rows if len(rows) >= 8 else None

    def reference_sample(self, mid: int) -> np.ndarray | None:
        """reference_rows as one matrix (the long-lived engines keep it in memory)."""
        import numpy as np

        rows = self.reference_rows(mid)
        if rows is None:
            return None
        return np.frombuffer(b"".join(rows), dtype=np.float32).reshape(len(rows), -1)

    def background_vectors(self, mid: int) -> np.ndarray | None:
        """The model's vectors of search.background.BACKGROUND, kept by the indexer."""
        import base64

        import numpy as np
        raw = self.get_meta_json(f"background:{mid}")
        if not raw:
            return None
        try:
            flat = np.frombuffer(base64.b64decode(raw["vectors"]), dtype=np.float32)
            return flat.reshape(-1, int(raw["dims"]))
        except (KeyError, TypeError, ValueError):
            return None

    @staticmethod
    def background_json(mat: np.ndarray) -> str:
        """The meta value `background:<model id>` that background_vectors reads."""
        import base64

        import numpy as np
        blob = base64.b64encode(np.asarray(mat, dtype=np.float32).tobytes()).decode("ascii")
        return json.dumps({"dims": int(mat.shape[1]), "vectors": blob})

    def drop_model(self, mid: int) -> None:
        self.conn.execute(f"drop table if exists vectors_{mid}")
        if self.vec.loaded:
            self.conn.execute(f"drop table if exists vec_{mid}")
        self.conn.execute("delete from models where id = ?", (mid,))

    def has_vectors(self, mid: int) -> bool:
        try:
            return self.conn.execute(f"select 1 from vectors_{mid} limit 1").fetchone() is not None
        except OperationalError:
            return False

    def coverage(self, mid: int, at_most: int | None = None) -> int:
        """Vectors the model has here; counting stops at `at_most` (a full count reads them all)."""
        bounded = f"(select 1 from vectors_{mid} limit {int(at_most)})" if at_most is not None else f"vectors_{mid}"
        try:
            (n,) = self.conn.execute(f"select count(*) from {bounded}").fetchone()
            return n
        except OperationalError:
            return 0

    def put_vectors(self, mid: int, rows: list[tuple[int, np.ndarray]]) -> None:

        import numpy as np
        vec = self.has_vec_table(mid)
        for chunk_id, v in rows:
            blob = np.asarray(v, dtype=np.float32).tobytes()
            self.conn.execute(f"insert or replace into vectors_{mid}(chunk_id, embedding) values (?, ?)", (chunk_id, blob))
            if vec:
                # vec0 has no upsert
                self.conn.execute(f"delete from vec_{mid} where rowid = ?", (chunk_id,))
                self.conn.execute(f"insert into vec_{mid}(rowid, embedding) values (?, ?)", (chunk_id, blob))

    def delete_chunk_vectors(self, chunk_ids: list[int]) -> None:
        if not chunk_ids:
            return
        marks = ",".join("?" * len(chunk_ids))
        for m in self.models():
            self.conn.execute(f"delete from vectors_{m['id']} where chunk_id in ({marks})", chunk_ids)
            if self.has_vec_table(m["id"]):
                self.conn.execute(f"delete from vec_{m['id']} where rowid in ({marks})", chunk_ids)

    def vector_blobs(self, mid: int, ids: list[int] | None = None) -> list[tuple[int, bytes]]:
        """(chunk id, float32 blob) of a model's vectors, optionally restricted to some chunks."""
        if ids is None:
            return self.conn.execute(f"select chunk_id, embedding from vectors_{mid}").fetchall()
        rows = []
        for i in range(0, len(ids), 900):
            part = ids[i : i + 900]
            rows += self.conn.execute(
                f"select chunk_id, embedding from vectors_{mid} where chunk_id in ({','.join('?' * len(part))})", part
            ).fetchall()
        return rows

    def load_matrix(self, mid: int, ids: list[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, matrix) of a model's vectors, optionally restricted to some chunks."""

        import numpy as np
        (dims,) = self.conn.execute("select dims from models where id = ?", (mid,)).fetchone()
        rows = self.vector_blobs(mid, ids)
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, dims), dtype=np.float32)
        id_arr = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dims)
        return id_arr, mat

    def cosines(self, mid: int, ids: list[int], query) -> list[tuple[int, float]] | None:
        """(chunk id, cosine similarity) of these chunks, computed by sqlite-vec as its KNN
        computes them (so a chunk and its twin elsewhere tie exactly); None without sqlite-vec."""
        if not self.has_vec_table(mid):
            return None
        blob, out = float32_bytes(query), []
        for i in range(0, len(ids), 900):
            part = ids[i : i + 900]
            out += self.conn.execute(
                f"select chunk_id, 1.0 - vec_distance_cosine(embedding, ?) from vectors_{mid} "
                f"where chunk_id in ({','.join('?' * len(part))})", [blob, *part]).fetchall()
        return out

    def knn(self, mid: int, query, k: int) -> list[tuple[int, float]]:
        """sqlite-vec KNN: (chunk id, cosine similarity) best first. `query`: float32 values
        (an array('f') is passed as its bytes, no numpy needed)."""
        rows = self.conn.execute(
            f"select rowid, distance from vec_{mid} where embedding match ? and k = ? order by distance",
            (float32_bytes(query), k),
        ).fetchall()
        return [(r[0], 1.0 - r[1]) for r in rows]

    # -- files and chunks: what the indexer writes -------------------------------

    def delete_file_rows(self, path: str) -> None:
        """A file's chunks (words and vectors) and its file row."""
        ids = [r[0] for r in self.conn.execute("select id from chunks where path = ?", (path,))]
        if ids:
            for i in range(0, len(ids), 900):
                part = ids[i : i + 900]
                marks = ",".join("?" * len(part))
                self.conn.execute(f"delete from chunks_fts where rowid in ({marks})", part)
            self.delete_chunk_vectors(ids)
            self.conn.execute("delete from chunks where path = ?", (path,))
        self.conn.execute("delete from files where path = ?", (path,))

    def insert_chunk(self, path: str, source: str, start_line: int, end_line: int, digest: str, text: str,
                     ts: float | None, linemap: str | None, tokens: str) -> None:
        cur = self.conn.execute(
            "insert into chunks(path, source, start_line, end_line, hash, text, ts, linemap) values (?,?,?,?,?,?,?,?)",
            (path, source, start_line, end_line, digest, text, ts, linemap),
        )
        self.conn.execute("insert into chunks_fts(rowid, tokens) values (?, ?)", (cur.lastrowid, tokens))

    def put_file_row(self, path: str, source: str, abspath: str, digest: str, mtime_ns: int, size: int, day: str | None,
                     chunks: int, note: str | None, state: str | None) -> None:
        self.conn.execute(
            "insert or replace into files(path, source, abspath, hash, mtime_ns, size, day, indexed_at, chunks, note, state)"
            " values (?,?,?,?,?,?,?,?,?,?,?)",
            (path, source, abspath, digest, mtime_ns, size, day, time.time(), chunks, note, state),
        )

    def touch_file_row(self, path: str, mtime_ns: int, size: int) -> None:
        """A file touched but not changed: its new stat, so the next scan skips it cheaply."""
        self.conn.execute("update files set mtime_ns = ?, size = ? where path = ?", (mtime_ns, size, path))

    def recent_files(self, limit: int) -> list[tuple[str, int, int]]:
        """(abspath, mtime_ns, size) of the files changed last."""
        return self.conn.execute("select abspath, mtime_ns, size from files order by mtime_ns desc limit ?", (limit,)).fetchall()

    def file_stats(self, paths: list[str]) -> list[tuple[str, int, int]]:
        """(abspath, mtime_ns, size) of these workspace paths."""
        if not paths:
            return []
        return self.conn.execute(f"select abspath, mtime_ns, size from files where path in ({','.join('?' * len(paths))})", paths).fetchall()

    def file_notes(self) -> list[tuple[str, str, str | None]]:
        """(path, note, state) of every file indexed with a note (skipped, held in part, read with a change)."""
        return self.conn.execute("select path, note, state from files where note is not null order by path").fetchall()

    def probe_words(self) -> None:
        """Read the words table once: raises if FTS5 cannot read it."""
        self.conn.execute("select count(*) from chunks_fts").fetchone()

    def chunks_without_vectors(self, mid: int | None) -> list[tuple[int, str, str]]:
        """(id, hash, text) of the chunks model `mid` has no vector for (every chunk when None)."""
        if mid is None:
            return self.conn.execute("select id, hash, text from chunks order by id").fetchall()
        return self.conn.execute(
            f"select id, hash, text from chunks where id not in (select chunk_id from vectors_{mid}) order by id"
        ).fetchall()

    def live_chunk_ids(self, ids: list[int]) -> set[int]:
        """Which of these chunks still exist (one may have been replaced since it was listed)."""
        if not ids:
            return set()
        return {r[0] for r in self.conn.execute(f"select id from chunks where id in ({','.join('?' * len(ids))})", ids)}

    def model_for(self, fingerprint: str) -> int | None:
        row = self.conn.execute("select id from models where fingerprint = ?", (fingerprint,)).fetchone()
        return row[0] if row else None

    def model_dims(self, mid: int) -> int:
        (dims,) = self.conn.execute("select dims from models where id = ?", (mid,)).fetchone()
        return dims

    def vector_chunk_ids(self, mid: int) -> list[int]:
        return [r[0] for r in self.conn.execute(f"select chunk_id from vectors_{mid}")]

    def last_chunks_ending_in_newline(self) -> list[tuple[int, str]]:
        """(id, text) of each memory file's last chunk that still carries the file's final newline."""
        return self.conn.execute(
            "select id, text from chunks c where source = 'memory' and end_line > start_line and substr(text, -1) = char(10)"
            " and end_line = (select max(end_line) from chunks where path = c.path)"
        ).fetchall()

    def trim_last_line(self, chunk_id: int, text: str, digest: str) -> None:
        self.conn.execute("update chunks set text = ?, hash = ?, end_line = end_line - 1 where id = ?", (text, digest, chunk_id))

    def delete_meta(self, key: str) -> None:
        self.conn.execute("delete from meta where key = ?", (key,))

    # -- words: what the search asks of the keyword index --------------------------
    # `match` is an FTS5 query (search.candidates.fts_query); `sources`, `after`, `before` keep
    # chunks of those sources and, when dated, of daily logs named in [after, before) and
    # session lines timed in it.

    def match_count(self, match: str, cap: int) -> int:
        """How many chunks match, counted up to `cap` (a common word's whole posting list is the cost avoided)."""
        return self.conn.execute("select count(*) from (select 1 from chunks_fts where chunks_fts match ? limit ?)", (match, cap)).fetchone()[0]

    def any_match(self, match: str) -> bool:
        return self.conn.execute("select 1 from chunks_fts where chunks_fts match ? limit 1", (match,)).fetchone() is not None

    def matching_texts(self, match: str, limit: int, containing: str = "") -> list[str]:
        """The text of up to `limit` chunks that match, and hold `containing` as written (case minded)."""
        return [r[0] for r in self.conn.execute(
            "select c.text from chunks_fts f join chunks c on c.id = f.rowid where chunks_fts match ? and instr(c.text, ?) > 0 limit ?",
            (match, containing, limit))]

    def vocabulary(self) -> str:
        """The name of a table listing the index's words (term, doc: how many chunks hold it), made
        on first use per connection; OperationalError when SQLite lacks fts5vocab."""
        if not self._vocabulary:  # once per connection, not per word looked up
            self.conn.execute("create virtual table if not exists temp.clawmem_vocab using fts5vocab(main, chunks_fts, row)")
            self._vocabulary = True
        return "temp.clawmem_vocab"

    def words_between(self, lo: str, hi: str, limit: int = 500) -> list[str]:
        """The index's words in [lo, hi), in order (one range of the vocabulary). fts5vocab
        counts each word's chunks as it lists it (its whole posting list): word_count takes
        the counts from here rather than read the list again."""
        rows = self.conn.execute(f"select term, doc from {self.vocabulary()} where term >= ? and term < ? limit ?", (lo, hi, limit)).fetchall()
        self.memo("word counts", dict).update(rows)
        return [term for term, _ in rows]

    def count_words(self, lo: str, hi: str, cap: int) -> int:
        """How many of the index's words lie in [lo, hi), counted up to `cap` (fts5vocab reads
        each word's posting list as it lists it: the cap bounds the time)."""
        return self.conn.execute(f"select count(*) from (select 1 from {self.vocabulary()} where term >= ? and term < ? limit ?)",
                                 (lo, hi, cap)).fetchone()[0]

    def words_with_counts(self, min_length: int = 0, lo: str | None = None, hi: str | None = None) -> list[tuple[str, int]]:
        """(word, chunks holding it) of the index's words at least `min_length` long, and between
        lo and hi (exclusive) when given."""
        if lo is None:
            return self.conn.execute(f"select term, doc from {self.vocabulary()} where length(term) >= ?", (min_length,)).fetchall()
        return self.conn.execute(f"select term, doc from {self.vocabulary()} where term > ? and term < ? and length(term) >= ?",
                                 (lo, hi, min_length)).fetchall()

    def word_count(self, term: str) -> int:
        """How many chunks hold `term` as the index wrote it (0 when none)."""
        known = self.memo("word counts", dict)  # what words_between read of this generation
        if term in known:
            return known[term]
        row = self.conn.execute(f"select doc from {self.vocabulary()} where term = ?", (term,)).fetchone()
        return row[0] if row else 0

    def ranked(self, match: str, limit: int) -> list[tuple[int, float]]:
        """(chunk id, bm25) of the best matches, by FTS5 alone."""
        return self.conn.execute("select rowid, bm25(chunks_fts) as r from chunks_fts where chunks_fts match ? order by r limit ?",
                                 (match, limit)).fetchall()

    def ranked_within(self, match: str, limit: int, sources, after, before) -> list[tuple[int, float]]:
        """(chunk id, bm25) of the best matches among the chunks the sources and dates keep."""
        where, args = _chunk_filter(sources, after, before)
        return self.conn.execute(
            "select f.rowid, bm25(chunks_fts) as r from chunks_fts f join chunks c on c.id = f.rowid"
            f" left join files fl on fl.path = c.path where chunks_fts match ?{where} order by r limit ?",
            (match, *args, limit)).fetchall()

    def matching_ids_within(self, match: str, limit: int, sources, after, before) -> list[int]:
        """Ids of up to `limit` matching chunks the sources and dates keep, in no order."""
        where, args = _chunk_filter(sources, after, before)
        return [r[0] for r in self.conn.execute(
            "select f.rowid from chunks_fts f join chunks c on c.id = f.rowid left join files fl on fl.path = c.path"
            f" where chunks_fts match ?{where} limit ?", (match, *args, limit))]

    def kept(self, ids: list[int], sources, after, before) -> set[int]:
        """Which of these chunks the sources and dates keep."""
        if not ids:
            return set()
        where, args = _chunk_filter(sources, after, before)
        return {r[0] for r in self.conn.execute(
            f"select c.id from chunks c left join files fl on fl.path = c.path where c.id in ({','.join('?' * len(ids))}){where}",
            (*ids, *args))}

    def ids_within(self, sources, after, before) -> list[int]:
        """Every chunk the sources and dates keep."""
        where, args = _chunk_filter(sources, after, before)
        return [r[0] for r in self.conn.execute(f"select c.id from chunks c left join files fl on fl.path = c.path where 1=1{where}", args)]

    def rows(self, ids: list[int]) -> dict[int, tuple]:
        """{chunk id: (path, source, start_line, end_line, text, ts, linemap, day, mtime_ns)}."""
        out: dict[int, tuple] = {}
        for i in range(0, len(ids), 900):
            part = ids[i : i + 900]
            marks = ",".join("?" * len(part))
            for r in self.conn.execute(
                "select c.id, c.path, c.source, c.start_line, c.end_line, c.text, c.ts, c.linemap, fl.day, fl.mtime_ns"
                f" from chunks c left join files fl on fl.path = c.path where c.id in ({marks})",
                part,
            ):
                out[r[0]] = r[1:]
        return out

    def file_chunks(self) -> list[tuple[int, str, int, int, str]]:
        """(id, path, start_line, end_line, hash) of every chunk."""
        return self.conn.execute("select id, path, start_line, end_line, hash from chunks").fetchall()

    def page_check(self) -> str:
        """SQLite's page check of the file: "ok", or what it found first."""
        (ok,) = self.conn.execute("PRAGMA quick_check(1)").fetchone()
        return ok



def _chunk_filter(sources, after, before) -> tuple[str, list]:
    """The sources and dates a search keeps, as " and ..." SQL over chunks c / files fl, and its
    arguments: daily logs by the date in their name, session lines by their time."""
    import datetime as dt

    where, args = f" and c.source in ({','.join('?' * len(sources))})", [*sources]
    if not (after or before):
        return where, args
    lo = after or dt.date(1, 1, 1)
    hi = before or dt.date(9999, 12, 31)
    lo_ts = dt.datetime.combine(lo, dt.time()).timestamp() if lo.year > 1 else -1e18
    hi_ts = dt.datetime.combine(hi, dt.time()).timestamp() if hi.year < 9999 else 1e18
    where += (" and ((fl.day is not null and fl.day >= ? and fl.day < ?)"
              " or (c.source = 'sessions' and c.ts is not null and c.ts >= ? and c.ts < ?))")
    return where, [*args, lo.isoformat(), hi.isoformat(), lo_ts, hi_ts]


def read_identity(path: Path) -> dict[str, str]:
    """agentId, workspace and index settings another index records, read-only, without loading
    sqlite-vec or taking any lock; {} when it cannot be read."""
    import sqlite3

    try:
        conn = open_database(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=1.0)  # the stdlib's driver
    except sqlite3.Error:
        return {}
    try:
        return dict(conn.execute("select key, value from meta where key in ('agentId', 'workspace', 'index')").fetchall())
    except sqlite3.Error:
        return {}
    finally:
        conn.close()


def remove_index_files(path: Path, main: bool = True) -> None:
    """Delete an index file's side files (SIDE_FILES), and the file itself unless main=False:
    a journal left beside a file that is replaced would otherwise be replayed into its successor."""
    for suffix in SIDE_FILES + ("",) if main else SIDE_FILES:
        Path(str(path) + suffix).unlink(missing_ok=True)


def _intact_record(index: Path) -> Path:
    from .. import paths
    from ..files.fsutil import builtin_sha256  # the builtin one: hashlib's OpenSSL binding is ~3 ms of a no-op index

    return paths.state_dir() / f"intact-{builtin_sha256(str(index).encode()).hexdigest()[:16]}.json"


def _file_identity(index: Path) -> list[int] | None:
    try:
        st = os.stat(index)
    except OSError:
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns]


def remember_intact(index: Path) -> None:
    """After a writer closed the index cleanly: note the file as it is now, so the next writer
    can skip the integrity check (it reads the whole file: 0.4 s of every no-op sync at 5,000
    files). A kill cannot corrupt SQLite; anything else that writes the file changes its mtime
    (a checkpoint when the last reader closes does too: then the next writer checks once more)."""
    ident = _file_identity(index)
    if ident is None:
        return
    try:
        from ..files.fsutil import atomic_write
        from ..paths import private_dir

        rec = _intact_record(index)
        private_dir(rec.parent)
        # a hint, not data: lost or stale after a power cut, the next writer checks the whole file
        # once, so it needs none of the two fsyncs a durable write costs (every no-op index)
        atomic_write(rec, json.dumps({"index": str(index), "file": ident}), mode=0o600, durable=False)
    except OSError:
        pass  # the next writer checks the whole file, as before


def known_intact(index: Path) -> bool:
    """Whether the index file is exactly as the last clean writer left it."""
    try:
        rec = json.loads(_intact_record(index).read_text())
    except (OSError, ValueError):
        return False
    return rec.get("index") == str(index) and rec.get("file") == _file_identity(index)


def rebuild_path(index: Path) -> Path:
    """Where a full rebuild is built before it replaces the index."""
    return Path(str(index) + ".rebuild")


def built_for(path: Path, workspace: Path) -> bool:
    """Whether the index at `path` was built for `workspace`: the workspace it records, else (an
    index from before it recorded one) the absolute paths of its memory files."""
    try:
        st = Store(path, load_vec=False)
    except (OSError, Error):
        return False
    try:
        st.check(quick=False)
        recorded = st.get_meta("workspace")
        if recorded is not None:
            return recorded == str(workspace)
        rows = st.conn.execute("select path, abspath from files where source = 'memory'").fetchall() if st.has_schema() else []
        return all(abspath == str(workspace / rel) for rel, abspath in rows if not rel.startswith("../") and not os.path.isabs(rel))
    except (ForeignIndex, Error):
        return False
    finally:
        st.close()


def adopt_legacy_index(cfg) -> str | None:
    """Give this workspace the index an older clawmem kept per agent only (`index/<agent>.sqlite`),
    by renaming it, when it was built for this workspace: nothing is embedded again. Another
    workspace's index stays where it is, for that workspace to adopt."""
    legacy, target = cfg.legacy_store_path(), cfg.store_path()
    if legacy is None or target.exists() or not legacy.is_file():
        return None
    from .lock import WriterLock

    lock = WriterLock(legacy)
    if not lock.try_acquire():
        return None  # being written right now: adopted by a later run
    try:
        if target.exists() or not built_for(legacy, cfg.workspace):
            return None
        for src, dst in ((rebuild_path(legacy), rebuild_path(target)), (legacy, target)):
            for suffix in ("-wal", "-shm", ""):  # the main file last: whoever sees it finds its WAL beside it
                if os.path.exists(str(src) + suffix):
                    os.replace(str(src) + suffix, str(dst) + suffix)
    finally:
        lock.release()
    return f"the index at {legacy} was built for this workspace; renamed it to {target} (indexes are now kept per workspace)"
