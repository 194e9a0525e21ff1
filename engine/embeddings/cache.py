"""The embedding cache: its own SQLite file in the cache dir, shared by every index.

Keyed by (provider, model, endpoint fingerprint, text hash), so unchanged text is never
embedded twice, also across a rebuild or a deleted index. Bounded: the least recently
used entries are evicted beyond `cache.maxEntries`.
"""

from __future__ import annotations

import time
from pathlib import Path

TYPE_CHECKING = False  # typing's constant without importing typing: an index job never needs it (~3 ms)
if TYPE_CHECKING:  # numpy loads lazily: a keyword-only `clawmem search` starts faster without it
    import numpy as np

from .. import paths
from ..files.fsutil import BUSY_TIMEOUT_MS, create_private_file, file_is_damaged, move_aside, open_database, sqlite_driver

_db = sqlite_driver(extensions=True)  # the driver open_database gives the cache
Error, DatabaseError = _db.Error, _db.DatabaseError

SCHEMA = """
CREATE TABLE IF NOT EXISTS cache (
    provider TEXT NOT NULL, model TEXT NOT NULL, endpoint TEXT NOT NULL, hash TEXT NOT NULL,
    dims INTEGER NOT NULL, embedding BLOB NOT NULL, used REAL NOT NULL,
    PRIMARY KEY (provider, model, endpoint, hash)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS cache_used ON cache(used);
"""


def default_path() -> Path:
    return paths.cache_dir() / "embeddings.sqlite"


class EmbeddingCache:
    def __init__(self, path: Path | None = None, max_entries: int = 50000):
        self.path = Path(path or default_path())
        self.max_entries = max_entries
        self.moved: Path | None = None  # where a corrupt cache file went
        try:
            self._open()
        except DatabaseError as exc:
            if not file_is_damaged(exc):
                raise
            # derived data, but never deleted: set aside and start a new one
            self.conn.close()
            self.moved = move_aside(self.path, "corrupt")
            self._open()

    def _open(self) -> None:
        create_private_file(self.path)
        self.conn = open_database(self.path, timeout=BUSY_TIMEOUT_MS / 1000, extensions=True)
        self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.executescript(SCHEMA)

    def get_many(self, key: tuple[str, str, str], hashes: list[str]) -> dict[str, np.ndarray]:

        import numpy as np
        found: dict[str, np.ndarray] = {}
        uniq = list(dict.fromkeys(hashes))
        for i in range(0, len(uniq), 400):
            part = uniq[i : i + 400]
            marks = ",".join("?" * len(part))
            for h, dims, blob in self.conn.execute(
                f"select hash, dims, embedding from cache where provider = ? and model = ? and endpoint = ? and hash in ({marks})",
                (*key, *part),
            ):
                found[h] = np.frombuffer(blob, dtype=np.float32, count=dims).copy()
        if found:
            now = time.time()
            self.conn.execute("begin")
            self.conn.executemany(
                "update cache set used = ? where provider = ? and model = ? and endpoint = ? and hash = ?",
                [(now, *key, h) for h in found],
            )
            self.conn.execute("commit")
        return found

    def put_many(self, key: tuple[str, str, str], items: list[tuple[str, np.ndarray]]) -> None:

        import numpy as np
        if not items:
            return
        now = time.time()
        self.conn.execute("begin")
        self.conn.executemany(
            "insert or replace into cache(provider, model, endpoint, hash, dims, embedding, used) values (?,?,?,?,?,?,?)",
            [(*key, h, int(v.size), np.asarray(v, dtype=np.float32).tobytes(), now) for h, v in items],
        )
        self.conn.execute("commit")

    def count(self) -> int:
        return self.conn.execute("select count(*) from cache").fetchone()[0]

    def evict(self) -> int:
        """Drop the least recently used entries beyond max_entries; returns how many went."""
        n = self.count()
        extra = n - self.max_entries
        if extra <= 0:
            return 0
        self.conn.execute(
            "delete from cache where (provider, model, endpoint, hash) in "
            "(select provider, model, endpoint, hash from cache order by used asc limit ?)",
            (extra,),
        )
        return extra

    def close(self) -> None:
        try:
            self.conn.close()
        except Error:
            pass
