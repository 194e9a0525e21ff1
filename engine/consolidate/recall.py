"""Recall tracking: which daily-log passages searches keep returning, for `clawmem promote`.

Every search that returns hits from a dated daily log (`memory/…/YYYY-MM-DD*.md`) adds one
row per such hit: when, the query (and its hash), the file, the cited lines, the score and
the snippet. The rows live in a small SQLite file in clawmem's own data folder (never in the
workspace), `data_dir()/recall/<agent>/<hash of the workspace's real path>/recall.sqlite`,
owner-only, in WAL mode: many processes (the CLI, the app, the MCP server) may append at
once, each search is one short transaction, and a reader never blocks them.

Only hits shown at or above the search's score threshold count (query.minScore, or the
request's own min score): a hit listed below it, or scoring 0, was incidental. And only hits
holding a word of the query (see `answered`): a vector-only neighbour is not a recall.

The same file remembers the decisions a person or `--apply` made about a fact (promoted,
rejected, with its text), so a rejected fact is not offered again; whether a fact is promoted
is read from MEMORY.md itself, so undoing a promotion offers it again.

`recall.enabled = false` records nothing; a caller can mark one search private
(`Engine.search(..., private=True)`, the MCP tool's `private: true`) and it is not recorded.
A failure here never fails the search it follows: tracking is best effort.
"""

from __future__ import annotations

import os
import re
# _thread, not threading: the same lock/local/ident, without threading's import (~1 ms of every search)
import _thread
import time
from pathlib import Path
from collections import namedtuple

from .. import paths
from ..files.fsutil import builtin_sha256
from ..files.fsutil import open_database, sqlite_driver

# the index's driver (sqlean), which a search has loaded already: a search that records its
# recall then loads no second SQLite module (the stdlib's costs it ~1 ms); its exceptions are
# the ones caught below
sqlite3 = sqlite_driver(extensions=True)
from ..errors import ClawmemError

# a dated daily log anywhere under memory/ (OpenClaw's short-term memory paths), with an
# optional slug as `clawmem archive` writes them
DAILY_RE = re.compile(r"^memory/(?:.+/)?\d{4}-\d{2}-\d{2}(?:-[^/]*)?\.md$")
SNIPPET_CHARS = 800  # what OpenClaw keeps of a recalled snippet too

SCHEMA = """
create table if not exists recalls(
    id integer primary key autoincrement,
    ts real not null,           -- when the search ran (unix time)
    day text not null,          -- its local date, YYYY-MM-DD
    query text not null,
    query_hash text not null,   -- OpenClaw's: sha1 of the lower-cased query, 12 hex digits
    path text not null,         -- workspace-relative
    start_line integer not null,
    end_line integer not null,
    score real not null,
    snippet text not null,
    match_line integer          -- the line the query matched best (null: not known)
);
create index if not exists recalls_path on recalls(path, start_line);
create table if not exists decisions(
    path text not null,
    start_line integer not null,
    end_line integer not null,
    decision text not null,     -- promoted | rejected
    ts real not null,
    text text                   -- what went into MEMORY.md (promoted)
);
"""


def is_daily(path: str) -> bool:
    return bool(DAILY_RE.match(path))


def query_hash(query: str) -> str:
    """OpenClaw's query hash, so its recall store and ours count distinct queries alike."""
    try:
        from _sha1 import sha1  # the builtin hashlib falls back to: its OpenSSL binding would cost every search
    except ImportError:
        from hashlib import sha1
    return sha1(query.strip().lower().encode("utf-8")).hexdigest()[:12]


def store_dir(cfg) -> Path:
    key = builtin_sha256(os.path.realpath(cfg.workspace).encode()).hexdigest()[:16]
    return paths.data_dir() / "recall" / cfg.agent_id / key


def store_path(cfg) -> Path:
    return store_dir(cfg) / "recall.sqlite"


_conns: dict[str, sqlite3.Connection] = {}
_conns_lock = _thread.allocate_lock()


def connect(cfg) -> sqlite3.Connection:
    """The store's connection for this process (one per file, shared by threads under its lock)."""
    file = store_path(cfg)
    key = str(file)
    with _conns_lock:
        conn = _conns.get(key)
        if conn is not None:
            return conn
        paths.private_dir(paths.data_dir() / "recall")
        paths.private_dir(file.parent)
        conn = open_database(file, timeout=10.0, extensions=True)  # `sqlite3` above: callers catch its Error
        try:
            os.chmod(file, 0o600)
            _set_up(conn)
        except (OSError, sqlite3.Error):
            conn.close()
            raise
        _conns[key] = conn
        return conn


def _set_up(conn: sqlite3.Connection) -> None:
    """WAL and the schema. Processes opening a new store at once can be refused the lock
    without waiting (SQLite answers "locked" at once where waiting could deadlock): try again."""
    for attempt in range(100):
        try:
            conn.execute("pragma journal_mode=wal")
            conn.execute("pragma synchronous=normal")  # WAL: a power cut may lose the last rows, never corrupt them
            conn.executescript(SCHEMA)
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == 99:
                raise
            time.sleep(0.05)


def close_all() -> None:
    with _conns_lock:
        for conn in _conns.values():
            conn.close()
        _conns.clear()


_use_lock = _thread.allocate_lock()  # one connection is shared by the app's threads: one statement at a time


def record(cfg, query: str, results: list[dict], now: float | None = None, min_score: float | None = None) -> int:
    """Add one row per daily-log hit of this search shown at or above the search's score
    threshold (`min_score`, else query.minScore; never a score of 0): a hit listed below it was
    incidental, not recalled. Returns how many. Never raises."""
    if not cfg["recall.enabled"]:
        return 0
    floor = cfg["query.minScore"] if min_score is None else min_score
    text = (query or "").strip()
    hits = [r for r in results if r.get("source", "memory") == "memory" and is_daily(r.get("path", ""))
            and float(r.get("score") or 0.0) > 0.0 and float(r.get("score") or 0.0) >= floor and answered(text, r)]
    if not hits or not text:
        return 0
    ts = time.time() if now is None else now
    day = time.strftime("%Y-%m-%d", time.localtime(ts))
    qh = query_hash(text)
    rows = [(ts, day, text, qh, r["path"], int(r["startLine"]), int(r["endLine"]), float(r["score"]),
             (r.get("snippet") or "")[:SNIPPET_CHARS], r.get("matchLine")) for r in hits]
    try:
        conn = connect(cfg)
        with _use_lock:
            conn.execute("begin immediate")  # the write lock now, so the busy timeout covers the wait; one transaction per search
            try:
                conn.executemany("insert into recalls(ts, day, query, query_hash, path, start_line, end_line, score, snippet, match_line)"
                                 " values (?,?,?,?,?,?,?,?,?,?)", rows)
                conn.execute("commit")
            except BaseException:
                conn.execute("rollback")
                raise
    except (OSError, sqlite3.Error):
        return 0  # tracking is best effort: the search already has its answer
    return len(rows)


def answered(query: str, hit: dict) -> bool:
    """A shown hit is evidence that it answered the query only when it holds a word of the
    query, found as the search's tokenizer cuts words (stop words aside), or when its own
    evidence (`explain`'s confidence) says it holds one. A hit listed by vector nearness alone,
    holding no word that was asked ("The bike needs a new chain" for "when do CI secrets need
    updating"), scores what any nearest neighbour scores and is not a recall. The rule reads
    the query and the hit only, so it means the same in any memory."""
    conf = (hit.get("explain") or {}).get("confidence") or {}
    if conf.get("terms") or conf.get("exact"):
        return True
    from ..text import mmr_tokens, normalize, query_terms, relaxed_terms

    terms = relaxed_terms(query) or query_terms(query)
    return not mmr_tokens(normalize(hit.get("snippet") or "")).isdisjoint(terms)  # the index's own tokens


class RecallUnreadable(ClawmemError):
    """The recall store cannot be read; the message names it and the way out."""


def _read(cfg, sql: str) -> list:
    conn = connect_for_reading(cfg)
    try:
        with _use_lock:
            return list(conn.execute(sql))
    except sqlite3.DatabaseError as exc:
        raise RecallUnreadable(f"{store_path(cfg)}: not a usable recall store ({exc}); move it aside and recall "
                               "tracking starts again") from None


def connect_for_reading(cfg) -> sqlite3.Connection:
    try:
        return connect(cfg)
    except (OSError, sqlite3.Error) as exc:
        raise RecallUnreadable(f"{store_path(cfg)}: cannot open the recall store ({exc}); move it aside and recall "
                               "tracking starts again") from None


# collections.namedtuple, not typing.NamedTuple: the latter compiles each field's (string) annotation,
# ~0.3 ms a class on every search's start
Recall = namedtuple("Recall", "ts day query query_hash path start end score snippet match_line")


def recalls(cfg) -> list[Recall]:
    """Every recorded recall, oldest first ([] when none were recorded yet)."""
    if not store_path(cfg).exists():
        return []
    return [Recall(*row) for row in _read(
        cfg, "select ts, day, query, query_hash, path, start_line, end_line, score, snippet, match_line from recalls order by id")]


def decisions(cfg) -> list[tuple[str, int, int, str]]:
    """(path, start, end, decision) for every promoted or rejected passage."""
    if not store_path(cfg).exists():
        return []
    return _read(cfg, "select path, start_line, end_line, decision from decisions")


def decisions_with_text(cfg) -> list[tuple[str, int, int, str, str | None]]:
    """(path, start, end, decision, text) for every promoted or rejected fact."""
    if not store_path(cfg).exists():
        return []
    return _read(cfg, "select path, start_line, end_line, decision, text from decisions")


def decide(cfg, path: str, start: int, end: int, decision: str, text: str | None = None) -> None:
    conn = connect(cfg)
    with _use_lock:
        conn.execute("insert into decisions(path, start_line, end_line, decision, ts, text) values (?,?,?,?,?,?)",
                     (path, start, end, decision, time.time(), text))
