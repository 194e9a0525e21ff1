"""Incremental indexing as a generator of events.

Two phases, each resumable:
1. text: list the files, skip the unchanged ones by (mtime, size) then content hash,
   re-chunk the changed ones, remove the deleted ones; every file is one transaction, so a
   kill at any point leaves a consistent index and the next run carries on;
2. vectors: embed the chunks the active model has no vector for, in batches committed as
   they arrive (and kept in the embedding cache), so no embedding is ever done twice.

A change of what the index depends on (chunking, sources, schema, --force) rebuilds into
`<index>.rebuild`, which replaces the index only once complete.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import stat
import time
from pathlib import Path

TYPE_CHECKING = False  # typing's constant without importing typing: an index job never needs it (~3 ms)
if TYPE_CHECKING:  # numpy loads lazily: a keyword-only `clawmem search` starts faster without it
    from typing import Callable, Iterator, Sequence

    import numpy as np

from .. import events as ev
from ..files.fsutil import path_text
from .chunking import Chunk, chunk_lines, file_lines, sha256
from ..config import Config, ConfigError
from ..embeddings import Plan, Provider, ProviderError
from ..embeddings.cache import EmbeddingCache
from ..files.journal import Journal
from ..files.sessions import parse_transcript
from .store import ForeignIndex, Store, index_meta, known_intact, may_move_aside, move_aside, not_ours_line, remove_index_files
from ..text import index_tokens
from ..files.sources import LAYOUT_KEY, list_sources
from ..files.workspace import IGNORED_DIRS, SourceFile, day_of, dir_stamp

MAX_FILE_BYTES = 16 * 1024 * 1024  # bigger "notes" are refused with a reason: memory files are small
EMBED_BATCH = 32
MODEL_GRACE_DAYS = 30


class Stats:
    """What an index job did, counted as it goes."""

    def __init__(self):
        self.indexed = self.removed = self.unchanged = self.embedded = 0
        self.warnings: list[str] = []
        self.changed: list[str] = []  # the files whose rows were written or removed
        self.journal_batch_started = 0.0

    def __repr__(self) -> str:
        return f"Stats({', '.join(f'{k}={v!r}' for k, v in vars(self).items())})"


class Skip(Exception):
    """This file is not indexed; the message says why."""


def read_markdown(f: SourceFile, size: int) -> tuple[bytes, str, str | None]:
    """(bytes, text, note). The note says what part is not searchable, or how the text was read;
    Skip for files we cannot read at all, FileNotFoundError if it vanished."""
    notes = []
    try:
        # a FIFO or device named like a note must never block the indexer
        fd = os.open(f.abspath, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except PermissionError:
        raise Skip("file is not readable (permission denied); fix its permissions") from None
    except IsADirectoryError:
        raise Skip("is a directory") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Skip("not a regular file (a pipe or device); not indexed")
        if st.st_nlink > 1:  # memfile never reads it either: it may be a file outside the workspace
            raise Skip(f"has {st.st_nlink} hard links, and a memory file is never read through a hard link; "
                       "not indexed (copy it to make it a file of its own)")
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            data = fh.read(MAX_FILE_BYTES + 1)
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        # the head stays searchable; status names the lines that are not
        data = data[: data.rfind(b"\n", 0, MAX_FILE_BYTES) + 1 or MAX_FILE_BYTES]
        kept = data.count(b"\n")
        notes.append(f"file is {size / 1e6:.1f} MB, over the {MAX_FILE_BYTES // (1024 * 1024)} MB limit for a memory file: "
                     f"lines 1-{kept} are indexed, lines {kept + 1} on are not searchable; split it to index the rest")
    nul = data.find(b"\x00")
    if nul >= 0:
        notes.append(f"NUL byte at byte {nul}; indexed with NUL bytes read as spaces")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # keep what is readable; the user is told where the bad bytes are
        text = data.decode("utf-8", "replace")
        notes.append(f"invalid UTF-8 at byte {exc.start}; indexed with replacement characters")
    return data, text.replace("\x00", " "), "; ".join(notes) or None


def _chunks_for(cfg: Config, f: SourceFile, data: bytes | None, text: str | None) -> tuple[list[Chunk], list[float | None], list[str | None]]:
    tokens, overlap = cfg["chunking.tokens"], cfg["chunking.overlap"]
    if f.source == "sessions":
        tr = parse_transcript(data or b"")
        raw = chunk_lines(tr.lines, tokens, overlap)
        chunks, stamps, maps = [], [], []
        for c in raw:
            if not c.text.strip():
                continue
            # chunk lines count rendered lines; citations use the JSONL line numbers
            first, last = c.start_line - 1, c.end_line - 1
            ts = max(tr.timestamps_ms[first : last + 1] or [0.0]) / 1000.0 or None
            chunks.append(Chunk(tr.line_map[first], tr.line_map[last], c.text, c.hash))
            stamps.append(ts)
            maps.append(json.dumps(tr.line_map[first : last + 1]))
        return chunks, stamps, maps
    chunks = [c for c in chunk_lines(file_lines(text or ""), tokens, overlap) if c.text.strip()]
    return chunks, [None] * len(chunks), [None] * len(chunks)


def write_file(store: Store, f: SourceFile, st: os.stat_result, digest: str, chunks: list[Chunk], stamps, maps, note: str | None, state: str | None) -> None:
    """Replace one file's rows in a single transaction."""
    with store.transaction():
        store.delete_file_rows(f.path)
        for c, ts, lm in zip(chunks, stamps, maps):
            store.insert_chunk(f.path, f.source, c.start_line, c.end_line, c.hash, c.text, ts, lm, " ".join(index_tokens(c.text)))
        store.put_file_row(f.path, f.source, path_text(f.abspath), digest, st.st_mtime_ns, st.st_size, day_of(f.path), len(chunks), note, state)
        store.bump_generation()


def remove_file(store: Store, path: str) -> None:
    with store.transaction():
        store.delete_file_rows(path)
        store.bump_generation()


def _session_below_delta(cfg: Config, row: tuple, st: os.stat_result, f: SourceFile) -> bool:
    """A live transcript that grew by less than the delta thresholds since it was indexed waits
    for more; one that shrank or was rewritten is indexed at once.

    A threshold <= 0 means any growth counts. The delta is measured against the indexed
    size, so it accumulates across syncs and processes.
    """
    _, old_hash, _, old_size, _ = row
    grown = st.st_size - old_size
    max_bytes, max_lines = cfg["sync.sessions.deltaBytes"], cfg["sync.sessions.deltaMessages"]
    if grown <= 0 or max_bytes <= 0 or grown >= max_bytes or max_lines <= 0:
        return False  # shrank, same size (rewritten or touched: the hash decides), or over a threshold
    try:
        with open(f.abspath, "rb") as fh:
            head = fh.read(old_size)
            new_lines = fh.read().count(b"\n")
    except OSError:
        return False
    if sha256(head.decode("utf-8", "replace")) != old_hash:
        return False  # not an append: the part we indexed changed
    return new_lines < max_lines


def text_phase(cfg: Config, store: Store, stats: Stats, *, backfill_sessions: bool, should_stop: Callable[[], bool],
               only: list[SourceFile] | None = None) -> Iterator[ev.Event]:
    """Index the listed sources. `only`: just these files (a save in the app or an agent's write
    names the file it wrote), no listing of the others, and nothing else removed."""
    errors: list[str] = []
    layout: dict = {}
    files = list_sources(cfg, errors, layout) if only is None else only
    for e in errors:
        stats.warnings.append(e)
        yield ev.Warning(e)
    known = store.file_rows()
    if only is not None:
        known = {f.path: known[f.path] for f in only if f.path in known}
    journal = _open_journal(cfg, stats)
    if journal is False:
        yield ev.Warning(stats.warnings[-1])
        journal = None
    try:
        yield from _text_files(cfg, store, stats, files, known, journal, backfill_sessions, should_stop)
        if not should_stop() and only is None:
            # every file listed is indexed now: a search compares the folders with this
            store.set_meta(LAYOUT_KEY, json.dumps(layout))
            if journal is not None:
                try:  # and journalled: a file first seen from now on was created since
                    journal.mark_caught_up()
                except sqlite3.Error as exc:
                    stats.warnings.append(f"journal: {exc}")
        elif not should_stop():
            _restamp_folders(store, only)
    finally:
        if journal is not None:
            try:
                journal.commit_batch()
            except sqlite3.Error as exc:
                stats.warnings.append(f"journal: {exc}; the last versions seen were not kept")
            journal.close()


def _restamp_folders(store: Store, only: list[SourceFile]) -> None:
    """After a job of just these files: each one's folder, when the last complete listing
    stamped it, gets its new stamp if it holds exactly the files and folders the index knows
    there (a save renames over its file, which moves the folder's mtime; left alone, every
    search would compare every file until the next complete listing). Anything else in it, or
    a folder changed too recently to trust, keeps the old stamp: a search then compares."""
    layout = store.get_meta_json(LAYOUT_KEY)
    if not isinstance(layout, dict) or not isinstance(layout.get("dirs"), dict):
        return
    dirs: dict = layout["dirs"]
    rows = store.file_rows()
    moved = False
    for folder in {os.path.dirname(f.abspath) for f in only}:
        if folder not in dirs:
            continue
        try:
            stamp = dir_stamp(folder)
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            continue
        if stamp is None or stamp == dirs[folder]:
            continue
        on_disk, folders = set(), set()
        for e in entries:
            if e.is_symlink():
                continue
            if e.is_dir(follow_symlinks=False):
                if e.name not in IGNORED_DIRS:
                    folders.add(e.path)
            elif e.name.endswith(".md"):
                on_disk.add(e.path)
        indexed = {abspath for _, _, _, _, abspath in rows.values() if abspath and os.path.dirname(abspath) == folder}
        stamped = {d for d in dirs if os.path.dirname(d) == folder}
        if on_disk == indexed and folders == stamped:
            dirs[folder] = stamp
            moved = True
    if moved:
        store.set_meta(LAYOUT_KEY, json.dumps(layout))


def _open_journal(cfg: Config, stats: Stats) -> Journal | None | bool:
    """The journal, None when it is off, False when it cannot be opened (the warning says why)."""
    if not cfg["journal.enabled"] or "memory" not in cfg["sources"]:
        return None
    try:
        return Journal(cfg)
    except (OSError, sqlite3.Error) as exc:
        stats.warnings.append(f"journal: {exc}; earlier versions are not being kept")
        return False


JOURNAL_COMMIT_SECONDS = 0.5


def _journal(journal: Journal, stats: Stats, path: str, abspath: str | Path, data: bytes | None) -> None:
    """Keep this version in the journal; a journal that cannot be written never stops indexing.

    Versions are committed together every JOURNAL_COMMIT_SECONDS (one commit per file cost a
    third of a full index). A kill loses at most the open batch: the next run finds those
    files' newest versions missing (the journal's hash is not the index's) and records them."""
    try:
        if not journal.in_batch():
            journal.begin_batch()
            stats.journal_batch_started = time.monotonic()
        journal.observe(path, abspath, data)
        if time.monotonic() - stats.journal_batch_started > JOURNAL_COMMIT_SECONDS:
            journal.commit_batch()
    except sqlite3.Error as exc:
        journal.drop_batch()
        stats.warnings.append(f"journal: {exc}; {path}: this version was not kept")


def _text_files(cfg, store, stats, files, known, journal, backfill_sessions, should_stop) -> Iterator[ev.Event]:
    journalled = journal.latest_hashes() if journal is not None else {}
    yield ev.JobStarted("index", "sync", len(files))
    meter = ev.RateMeter(len(files))
    listed = {f.path for f in files}
    last_progress = 0.0
    checked = 0  # files since the last look at the clock and the stop request
    for n, f in enumerate(files, start=1):
        # an unchanged file costs one stat: the clock and the stop request are looked at every
        # 64 of them (still within a millisecond), and before each file read again
        row = known.get(f.path)
        checked += 1
        if checked >= 64 or not row:
            checked = 0
            if should_stop():
                return
        try:
            st = os.stat(f.abspath)
            if row and row[2] == st.st_mtime_ns and row[3] == st.st_size:
                stats.unchanged += 1
                if journal is not None and f.source == "memory" and row[1] and journalled.get(f.path) != row[1]:
                    # indexed before the journal existed, or its version was lost with a killed run's
                    # open batch: keep this version as the base the next change is compared with
                    # (the index hashes the text, the journal the bytes: the same for UTF-8)
                    try:
                        _journal(journal, stats, f.path, f.abspath, Path(f.abspath).read_bytes())
                    except PermissionError:
                        pass  # the index already reports an unreadable file
            elif f.source == "sessions" and row and not backfill_sessions and _session_below_delta(cfg, row, st, f):
                stats.unchanged += 1
            else:
                if checked and should_stop():
                    return
                checked = 0
                yield from _index_one(cfg, store, f, st, row, stats, journal)  # it journals what it reads
        except FileNotFoundError:
            # vanished between listing and reading: forget it if we knew it
            if row:
                remove_file(store, f.path)
                stats.removed += 1
                stats.changed.append(f.path)
                yield ev.FileIndexed(f.path, 0, "removed")
            yield ev.Warning("file vanished while indexing; skipped", f.path)
        if checked == 0 or n == len(files):
            now = time.monotonic()
            if now - last_progress > 0.1 or n == len(files):
                last_progress = now
                yield meter.progress("files", n)
    for path in known:
        if path not in listed:
            if should_stop():
                return
            remove_file(store, path)
            stats.removed += 1
            stats.changed.append(path)
            if journal is not None and known[path][0] == "memory":
                _journal(journal, stats, path, Path(known[path][4] or path), None)
            yield ev.FileIndexed(path, 0, "removed")
    if journal is not None:
        try:
            journal.commit_batch()
            journal.prune()
        except sqlite3.Error as exc:
            stats.warnings.append(f"journal: {exc}")


def _index_one(cfg: Config, store: Store, f: SourceFile, st: os.stat_result, row, stats: Stats, journal: Journal | None) -> Iterator[ev.Event]:
    note = None
    try:
        if f.source == "sessions":
            try:
                data = Path(f.abspath).read_bytes()
            except PermissionError:  # one transcript clawmem cannot read never fails the whole index
                raise Skip("transcript is not readable (permission denied); fix its permissions") from None
            digest = sha256(data.decode("utf-8", "replace"))
            text = None
            if b"\x00" in data:
                raise Skip("transcript contains NUL bytes; not indexed")
        else:
            raw, text, note = read_markdown(f, st.st_size)
            data = None
            digest = sha256(text)
            if journal is not None:
                _journal(journal, stats, f.path, f.abspath, raw)
    except Skip as why:
        write_file(store, f, st, "", [], [], [], str(why), "skipped")
        stats.warnings.append(f"{f.path}: {why}")
        yield ev.Warning(str(why), f.path)
        return
    if row and row[1] == digest:
        # touched but not changed: remember the new stat so the next scan skips it cheaply
        store.touch_file_row(f.path, st.st_mtime_ns, st.st_size)
        stats.unchanged += 1
        return
    chunks, stamps, maps = _chunks_for(cfg, f, data, text)
    write_file(store, f, st, digest, chunks, stamps, maps, note, None)
    stats.indexed += 1
    stats.changed.append(f.path)
    if note:
        stats.warnings.append(f"{f.path}: {note}")
        yield ev.Warning(note, f.path)
    yield ev.FileIndexed(f.path, len(chunks), "updated" if row else "added")


# ----------------------------------------------------------------------------- vectors


def _missing(store: Store, mid: int | None) -> list[tuple[int, str, str]]:
    return store.chunks_without_vectors(mid)


def _find_model(store: Store, provider: Provider) -> int | None:
    return store.model_for(provider.fingerprint())


def vector_phase(
    store: Store,
    providers: "ProviderChain",
    cache: EmbeddingCache | None,
    stats: Stats,
    should_stop: Callable[[], bool],
    background: Callable[[], Sequence[str]] = tuple,
) -> Iterator[ev.Event]:
    while True:
        provider = providers.current()
        if provider is None:
            return
        try:
            yield from provider.prepare()
            yield from _embed_with(store, provider, cache, stats, should_stop, background)
            return
        except ProviderError as exc:
            nxt = providers.advance(str(exc))
            yield ev.ProviderSwitched(provider.id, nxt.id if nxt else None, str(exc))


def _embed_with(store: Store, provider: Provider, cache: EmbeddingCache | None, stats: Stats, should_stop,
                background: Callable[[], Sequence[str]] = tuple) -> Iterator[ev.Event]:
    mid = _find_model(store, provider)
    todo = _missing(store, mid)
    if not todo:
        if mid is not None and store.get_meta(f"sample:{mid}") is None:
            _pick_reference_sample(store, mid)
        if mid is not None:
            _keep_background(store, provider, cache, mid, background())
        return
    key = (provider.id, provider.model, provider.endpoint)
    prefilled: dict[str, np.ndarray] = {}
    waiting: set[str] = set()  # hashes a batch job still works on (wait = false): not embedded twice
    if getattr(provider, "batch", None) is not None:
        prefilled, waiting = yield from _batch_phase(store, provider, cache, todo, key, should_stop)
    meter = ev.RateMeter(len(todo))
    yield meter.progress("embed", 0)  # the embedding phase shows as it starts, not after its first batch
    step = getattr(provider, "progress_step", None)  # a slow provider reports within a batch too
    done = 0
    rejected = 0
    for i in range(0, len(todo), EMBED_BATCH):
        if should_stop():
            return
        batch = todo[i : i + EMBED_BATCH]
        hits = cache.get_many(key, [h for _, h, _ in batch]) if cache else {}
        hits.update({h: prefilled[h] for _, h, _ in batch if h in prefilled})
        if waiting:
            batch = [row for row in batch if row[1] not in waiting or row[1] in hits]
            if not batch:
                continue
        missing = {h: t for _, h, t in batch if h not in hits}  # one text per hash
        fresh: dict[str, np.ndarray] = {}
        if missing:
            texts = list(missing.values())
            got = []
            for j in range(0, len(texts), step or len(texts)):
                got += provider.embed_passages(texts[j : j + (step or len(texts))])
                if len(got) < len(texts):
                    yield meter.progress("embed", done + len(batch) - len(texts) + len(got))
            fresh = {h: v for h, v in zip(missing, got) if v is not None}
        vectors = {**hits, **fresh}
        dims = next((v.size for v in vectors.values()), None)
        if dims is None:
            rejected += len(batch)
            continue
        if mid is None:
            with store.transaction():
                mid = store.model_id(provider.fingerprint(), provider.id, provider.model, provider.endpoint, dims)
        else:
            table_dims = store.model_dims(mid)
            if dims != table_dims:
                # the same model name now answers with another size (the server swapped models)
                raise ProviderError(f"{provider.id}: {provider.model} now returns {dims}-dimension vectors but the index holds "
                                    f"{table_dims}-dimension ones; run `clawmem index --force` to re-embed")
        rows = [(cid, vectors[h]) for cid, h, _ in batch if h in vectors and vectors[h].size == dims]
        rejected += len(batch) - len(rows)
        with store.transaction():
            # a chunk may have been replaced since we listed it; only store vectors of live chunks
            live = store.live_chunk_ids([r[0] for r in rows])
            store.put_vectors(mid, [r for r in rows if r[0] in live])
            store.bump_generation()
        if cache and fresh:
            cache.put_many(key, list(fresh.items()))
        done += len(batch)
        stats.embedded += len(rows)
        yield ev.ChunksEmbedded(len(rows), done, len(todo), provider.id, provider.model, cached=len(hits))
        yield meter.progress("embed", done)
    if rejected:
        msg = f"{provider.id} returned no usable vector for {rejected} chunks (wrong size, NaN or zeros); they stay keyword-only"
        stats.warnings.append(msg)
        yield ev.Warning(msg)
    if mid is not None:
        _pick_reference_sample(store, mid)
        _keep_background(store, provider, cache, mid, background())


def _keep_background(store: Store, provider: Provider, cache: EmbeddingCache | None, mid: int, background: Sequence[str]) -> None:
    """In a small memory, keep the background notes' vectors: its own few chunks cannot say what
    an unrelated text's similarity looks like, so a paraphrase would earn no vector evidence.
    One request of 56 short texts per model, then the embedding cache answers."""
    import numpy as np

    from .store import SMALL_MEMORY

    if not background:  # a part built without the search's notes (IndexJobs alone) keeps none
        return
    if store.get_meta(f"background:{mid}") is not None or store.coverage(mid, at_most=SMALL_MEMORY) >= SMALL_MEMORY:
        return
    dims = store.model_dims(mid)
    key = (provider.id, provider.model, provider.endpoint)
    hashes = [sha256(t) for t in background]
    vectors = cache.get_many(key, hashes) if cache else {}
    missing = [(h, t) for h, t in zip(hashes, background) if h not in vectors]
    if missing:
        try:
            got = provider.embed_passages([t for _, t in missing])
        except ProviderError:  # the chunks' vectors are stored; without a background their cosines count less
            return
        fresh = [(h, v) for (h, _), v in zip(missing, got) if v is not None and v.size == dims]
        if cache:
            cache.put_many(key, fresh)
        vectors.update(fresh)
    rows = [vectors[h] for h in hashes if h in vectors and vectors[h].size == dims]
    if len(rows) < len(background) // 2:
        return
    _set_meta_and_bump(store, f"background:{mid}", store.background_json(np.vstack(rows)))


BATCH_ERROR = "batch_error"  # meta key: why the last batch run fell back to normal requests ("" when it did not)


def _batch_phase(store: Store, provider: Provider, cache: EmbeddingCache | None, todo, key, should_stop):
    """Embed a big backfill through the provider's batch API (see embeddings/batch.py).

    Returns (vectors by hash, hashes still in a job that is not finished). Job ids live in the
    index's meta table from the moment a job exists, so a later run collects them. On any
    failure the jobs are dropped, a warning says why, and normal requests do the work.
    """
    from ..embeddings.batch import MAX_REQUESTS, MIN_CHUNKS, BatchError, BatchUnavailable

    batch = provider.batch
    meta_key = f"batch:{provider.fingerprint()}"
    saved = store.get_meta_json(meta_key) or {"jobs": []}
    have = set(cache.get_many(key, [h for _, h, _ in todo])) if cache else set()
    texts = {h: t for _, h, t in todo if h not in have}
    covered = {h for job in saved["jobs"] for h in job["hashes"]}
    new = [h for h in texts if h not in covered]
    if not saved["jobs"] and len(new) < MIN_CHUNKS:
        return {}, set()

    def save() -> None:
        store.set_meta(meta_key, json.dumps(saved))

    total = sum(len(j["hashes"]) for j in saved["jobs"]) + len(new)
    vectors: dict[str, np.ndarray] = {}
    try:
        for i in range(0, len(new), MAX_REQUESTS):
            group = new[i : i + MAX_REQUESTS]
            saved["jobs"].append({"id": batch.submit([texts[h] for h in group]), "hashes": group})
            save()
        yield ev.BatchProgress(provider.id, len(saved["jobs"]), 0, total, "submitted")
        if not batch.settings.wait:
            yield ev.BatchProgress(provider.id, len(saved["jobs"]), 0, total, "waiting: the next index run collects the results")
            return {}, {h for job in saved["jobs"] for h in job["hashes"]}
        deadline = time.monotonic() + batch.settings.timeout
        finished = 0
        while saved["jobs"]:
            in_flight = 0
            for job in list(saved["jobs"][: batch.settings.concurrency]):
                st = batch.status(job["id"])
                if st["status"] != "completed":
                    in_flight += int((st.get("request_counts") or {}).get("completed") or 0)
                    continue
                raw = batch.results(st, len(job["hashes"]))
                got = {h: provider._check(v) for h, v in zip(job["hashes"], raw)}
                got = {h: v for h, v in got.items() if v is not None}
                vectors.update(got)
                if cache and got:
                    cache.put_many(key, list(got.items()))
                finished += len(job["hashes"])
                saved["jobs"].remove(job)
                save()
            yield ev.BatchProgress(provider.id, len(saved["jobs"]), finished + in_flight, total,
                                   "completed" if not saved["jobs"] else "in_progress")
            if not saved["jobs"]:
                break
            if time.monotonic() > deadline:
                raise BatchError(f"timed out after {batch.settings.timeout / 60:g} min (remote.batch.timeoutMinutes)")
            end = time.monotonic() + batch.settings.poll_interval
            while time.monotonic() < end:
                if should_stop():  # the jobs stay saved: the next run polls them
                    return vectors, {h for job in saved["jobs"] for h in job["hashes"]}
                time.sleep(min(0.05, batch.settings.poll_interval))
        store.set_meta(meta_key, "")
        store.set_meta(BATCH_ERROR, "")
        return vectors, set()
    except (BatchError, ProviderError) as exc:
        for job in saved["jobs"]:
            batch.cancel(job["id"])
        store.set_meta(meta_key, "")
        off = ""
        if isinstance(exc, BatchUnavailable):  # asking again would fail the same way
            provider.batch = None
            off = "batch jobs off until clawmem restarts; "
        why = f"{provider.id} batch embedding failed ({exc}); {off}embedding {len(texts) - len(vectors)} chunks with normal requests"
        store.set_meta(BATCH_ERROR, why)  # status shows it
        yield ev.Warning(why)
        return vectors, set()


def _pick_reference_sample(store: Store, mid: int, size: int = 256) -> None:
    """Remember a random sample of this model's chunks. A search compares the query with it to
    learn what "unrelated" looks like for this query and model, which calibrates cosines
    (multilingual-e5 puts unrelated text near 0.8, OpenAI's models near 0.1)."""


    import numpy as np
    ids = store.vector_chunk_ids(mid)
    if not ids:
        return
    rng = np.random.default_rng(len(ids))
    pick = sorted(int(i) for i in rng.choice(ids, size=min(size, len(ids)), replace=False))
    _set_meta_and_bump(store, f"sample:{mid}", json.dumps(pick))


def _set_meta_and_bump(store: Store, key: str, value: str) -> None:
    """Calibration data a long-lived engine keeps in memory until the index changes: say it did."""
    with store.transaction():
        store.set_meta(key, value)
        store.bump_generation()


class ProviderChain:
    """The ordered candidates of a plan, built lazily; advancing records why."""

    def __init__(self, plan: Plan, built: dict | None = None):
        self.plan = plan
        self.usable = plan.usable()
        self.pos = 0
        self.instances: dict[str, Provider] = built if built is not None else {}
        self.failures: list[tuple[str, str]] = []
        self._current: Provider | None = None
        self._resolve()

    def _resolve(self) -> None:
        while self.pos < len(self.usable):
            cand = self.usable[self.pos]
            try:
                if cand.name not in self.instances:
                    self.instances[cand.name] = cand.factory()
                self._current = self.instances[cand.name]
                return
            except ProviderError as exc:
                self.failures.append((cand.name, str(exc)))
                self.pos += 1
        self._current = None

    def current(self) -> Provider | None:
        return self._current

    def advance(self, reason: str) -> Provider | None:
        if self._current is not None:
            self.failures.append((self._current.id, reason))
        self.pos += 1
        self._resolve()
        return self._current

    def fallback(self) -> dict | None:
        if not self.failures:
            return None
        name, reason = self.failures[0]
        return {"from": name, "reason": reason}


# ----------------------------------------------------------------------------- the job


def open_writer(path: Path, cfg: Config) -> tuple[Store, str | None]:
    """Open the index for writing; a damaged index in clawmem's own data folder is moved aside,
    never deleted, and the caller rebuilds from the Markdown. A folder, another program's
    database, or a damaged file at a path the user chose is ConfigError: nothing is touched."""
    moved = None
    store = None
    if os.path.lexists(path) and not os.path.isfile(path):
        raise ConfigError(not_ours_line(path, "is a folder" if os.path.isdir(path) else "is not a regular file"))
    try:
        if os.path.exists(path) and not os.access(path, os.R_OK | os.W_OK):
            raise PermissionError(errno.EACCES, "the index is not writable (permission denied)", str(path))
        store = Store(path, write=True, load_vec=cfg["store.vector.enabled"])
        store.check(quick=not known_intact(path))
        store.prepare_writer()
    except ForeignIndex as exc:
        if store is not None:
            store.close()
        if not may_move_aside(path, exc):
            raise ConfigError(not_ours_line(path, f"is not a usable clawmem index ({exc})")) from None
        dest = move_aside(path, "corrupt")
        moved = f"not a usable clawmem index ({exc}); moved it to {dest} and rebuilt it from the Markdown"
        store = Store(path, write=True, load_vec=cfg["store.vector.enabled"])
        store.prepare_writer()
    # agentId: `--all-agents` finds agents by their indexes
    store.ensure_schema(workspace=str(cfg.workspace), agentId=cfg.agent_id)
    if store.get_meta("lines") is None:
        fix_last_lines(store)
    return store, moved


def fix_last_lines(store: Store) -> None:
    """Before chunking stopped counting a final newline as one more line, the last chunk of every
    file ending in a newline cited a line past its end (and carried that empty line). Fix those
    rows once, in place: their vectors stay, nothing is embedded again. A new index has no rows."""
    with store.transaction():
        for cid, text in store.last_chunks_ending_in_newline():
            store.trim_last_line(cid, text[:-1], sha256(text[:-1]))
        store.set_meta("lines", "exact")


def needs_rebuild(store: Store, cfg: Config) -> str | None:
    built_for = store.get_meta("workspace")
    if built_for != str(cfg.workspace):
        return f"the index was built for workspace {built_for}"
    meta = store.get_meta_json("index")
    want = index_meta(cfg)
    if meta is None:
        counts = store.counts()
        return "index has no meta record" if counts["files"] else None
    if meta == want:
        return None
    changed = sorted(k for k in set(meta) | set(want) if meta.get(k) != want.get(k))
    return "index settings changed: " + ", ".join(changed)


def rebuild_fits(store: Store, cfg: Config) -> bool:
    """Whether a rebuild file was made for these settings and this workspace (so it can resume)."""
    return store.get_meta_json("index") in (None, index_meta(cfg)) and store.get_meta("workspace") in (None, str(cfg.workspace))


def prune_models(store: Store, fingerprints: set[str], unsure: set[str], *, force: bool) -> list[str]:
    """Drop the vector tables of models no longer configured: at once on a rebuild (force), else
    after a grace period unused. A table is the configured model's when its fingerprint (provider,
    model, endpoint: how the tables are keyed) is one of `fingerprints`; tables of the providers in
    `unsure` (configured, but not buildable right now) are kept, as nobody can tell."""
    dropped = []
    now = time.time()
    for m in store.models():
        if m["fingerprint"] in fingerprints or m["provider"] in unsure:
            continue
        if force or now - m["last_used"] > MODEL_GRACE_DAYS * 86400:
            with store.transaction():
                store.drop_model(m["id"])
            dropped.append(f"{m['provider']}/{m['model']}")
    return dropped


def swap_in(rebuilt: Path, target: Path) -> None:
    """Replace the index file by the rebuilt one (caller holds the writer lock)."""
    remove_index_files(target, main=False)
    os.replace(rebuilt, target)
