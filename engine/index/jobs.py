"""Index jobs: bring the index up to date under the writer lock (update in place, or a full rebuild
beside the old index swapped in at the end, resuming one left unfinished), embedding with the
provider chain and recording its failures for status and other processes."""

from __future__ import annotations

import datetime as dt
import json
import time
from pathlib import Path

TYPE_CHECKING = False  # typing's constant without importing typing: an index job never needs it (~3 ms)
if TYPE_CHECKING:  # the indexer and events load when a job runs: a search needs neither
    from typing import Callable, Generator, Iterator, Sequence

    from .. import events as ev
    from .indexer import Stats

from ..config import Config, ConfigError
from .freshness import Freshness
from .lock import LockBusy, WriterLock, current_holder, describe_holder
from ..embeddings.providers import Providers
from .reader import IndexReader
from .store import DatabaseError, ForeignIndex, Store, adopt_legacy_index, index_meta, move_aside, rebuild_path, remember_intact, remove_index_files

BRIEF_LOCK_WAIT = 0.3  # seconds a job waits for the writer lock before it says it waits


# the reasons that carry the user's intent to rebuild: `clawmem index` and the app's Config tab
EXPLICIT = ("cli", "configuration changed")


class IndexJobs:
    def __init__(self, cfg: Config, reader: IndexReader, providers: Providers, freshness: Freshness,
                 background: Callable[[], Sequence[str]] = tuple):
        self.cfg = cfg
        # the notes about nothing a small memory's vectors are judged against: the search's own
        # (search/background.py), handed in by the engine, since index/ sits below search/
        self.background = background
        self.index_reader = reader
        self.index_path = reader.index_path
        self.providers = providers
        self.freshness = freshness

    def index(
        self,
        *,
        force: bool = False,
        reason: str = "cli",
        backfill_sessions: bool = True,
        should_stop: Callable[[], bool] | None = None,
        lock_timeout: float = 60.0,
        paths: list | None = None,
    ) -> Iterator[ev.Event]:
        """Bring the index up to date, yielding progress events. Holds the writer lock meanwhile.
        `paths`: the absolute paths of the memory files just written; only those are indexed (no
        listing of every source), unless one of them is not a plain source or a rebuild is due."""
        from .. import events as ev
        from ..files.sources import memory_source
        from .indexer import Stats, needs_rebuild, open_writer

        only = None
        if paths is not None and not force:
            only = [memory_source(self.cfg, Path(p)) for p in paths]
            if any(f is None for f in only):
                only = None  # the full listing decides what such a file is

        asked = should_stop or (lambda: False)
        heeded: list[bool] = []  # a step saw the request and left its work undone

        def stop() -> bool:
            # a stop asked after the last step (Ctrl-C as a sync ends) stopped nothing: the job
            # finished, and says so, only if no step gave up its work for it
            if asked():
                heeded.append(True)
                return True
            return False

        started = time.monotonic()
        lock = WriterLock(self.index_path)
        if not lock.try_acquire():
            holder = current_holder(self.index_path) or {}
            if lock_timeout <= 0:
                raise LockBusy(holder, 0.0)
            brief = min(BRIEF_LOCK_WAIT, lock_timeout)
            try:  # a lock let go within a moment (a job just ending) is no wait worth a warning
                lock.acquire(brief)
            except LockBusy:
                # say who we wait for before waiting, not after
                holder = current_holder(self.index_path) or holder
                yield ev.Warning(f"waiting for the writer lock: the index is being written by {describe_holder(holder)}")
                lock.acquire(lock_timeout - brief)
        stats = Stats()
        try:
            adopted = adopt_legacy_index(self.cfg)
            if adopted:
                yield ev.Warning(adopted)
            store, moved = open_writer(self.index_path, self.cfg)
            if moved:
                self.index_reader.forget_cached()  # vectors cached from the file that was moved aside
                yield ev.Warning(moved, str(self.index_path))
            why = "--force" if force else needs_rebuild(store, self.cfg)
            if why and not force:
                try:
                    other = self._other_settings(store, why, reason)
                except ConfigError:
                    store.close()
                    raise
                if other:  # the index stays exactly as it is
                    store.close()
                    lock.release()
                    yield ev.Warning(other, str(self.index_path))
                    yield ev.JobFinished("index", 0, 0, 0, 0, time.monotonic() - started, True, other)
                    return
            if not why and rebuild_path(self.index_path).exists():
                why = yield from self._leftover_rebuild()
            if why:
                store.close()
                yield from self._rebuild(why, stats, stop, backfill_sessions)
            else:
                try:
                    yield from self._update(store, reason, stats, stop, backfill_sessions, only)
                finally:
                    store.close()
            self.freshness.forget()
            remember_intact(self.index_path)  # closed cleanly: the next writer need not check it
            ok = not heeded
            finished = ev.JobFinished("rebuild" if why else "index", stats.indexed, stats.removed, stats.unchanged,
                                      stats.embedded, time.monotonic() - started, ok, "" if ok else "stopped before the end",
                                      tuple(stats.changed))
        finally:
            lock.release()
        # after the release: whoever reacts to "finished" (a status refresh) must not see our lock
        yield finished

    def _other_settings(self, store: Store, why: str, reason: str) -> str | None:
        """Why an index built with other settings is left as it is, or None to rebuild it. Only
        the user's own `clawmem index` (or the app's Config tab) rebuilds, and never over vectors
        without --force; a search, the app's start, a sync, a write, status --fix use it as it is."""
        from .store import built_with_other_settings

        if reason not in EXPLICIT:
            return built_with_other_settings(store, self.cfg) or f"{why}; left as it is: `clawmem index` rebuilds it"
        held = sum(store.coverage(m["id"]) for m in store.models())
        if held:
            raise ConfigError(f"{why}: a rebuild for this config would drop the {held} vectors this index holds; "
                              "run `clawmem index --force` to rebuild it anyway, or use the config it was built with")
        return None

    def _update(self, store: Store, reason: str, stats: Stats, stop, backfill: bool, only=None) -> Iterator[ev.Event]:
        from .. import events as ev
        from .indexer import MODEL_GRACE_DAYS, prune_models

        if store.get_meta("index") is None:
            store.set_meta("index", json.dumps(index_meta(self.cfg)))
        yield from self._text_phase(store, "index", reason, stats, stop, backfill, only)
        if stop():
            return
        yield from self._embed(store, stats, stop)
        store.set_meta("last_sync", dt.datetime.now().astimezone().isoformat(timespec="seconds"))
        for dropped in prune_models(store, *self._configured_models(), force=False):
            yield ev.Warning(f"dropped vectors of {dropped}: no longer configured for {MODEL_GRACE_DAYS} days")

    def _text_phase(self, store: Store, kind: str, reason: str, stats: Stats, stop, backfill: bool, only=None) -> Iterator[ev.Event]:
        """The indexer's text phase, its start event saying which job this is and why."""
        from .. import events as ev
        from .indexer import text_phase

        for e in text_phase(self.cfg, store, stats, backfill_sessions=backfill, should_stop=stop, only=only):
            yield ev.JobStarted(kind, reason, e.files_total) if isinstance(e, ev.JobStarted) else e

    def _configured_models(self) -> tuple[set[str], set[str]]:
        """(fingerprints of the configured providers, the configured providers that cannot be
        built right now), for prune_models."""
        fingerprints, unsure = set(), set()
        for cand in self.providers.plan().candidates:
            prov = self.providers.get(cand.name) if cand.factory is not None else None
            if prov is None:
                unsure.add(cand.name)
            else:
                fingerprints.add(prov.fingerprint())
        return fingerprints, unsure

    def _embed(self, store: Store, stats: Stats, stop) -> Iterator[ev.Event]:
        from .. import events as ev
        from ..embeddings.cache import EmbeddingCache
        from .indexer import ProviderChain, vector_phase

        providers = self.providers
        plan = providers.plan()
        if not plan.usable():
            return
        providers.errors.clear()  # every index run gives failed providers another chance
        chain = ProviderChain(plan, providers.built)
        for name, why in chain.failures:
            providers.errors[name] = why
            yield ev.ProviderSwitched(name, chain.current().id if chain.current() else None, why)
        if chain.current() is None:
            providers.record_failures(store)
            return
        cache = None
        if self.cfg["cache.enabled"]:
            try:
                cache = EmbeddingCache(max_entries=self.cfg["cache.maxEntries"])
            except (DatabaseError, OSError) as exc:  # the cache saves work; without it indexing still completes
                yield ev.Warning(f"embedding cache unavailable ({exc}); embedding without it")
            else:
                if cache.moved:
                    yield ev.Warning(f"the embedding cache was not a usable database; moved it to {cache.moved} and started a new one")
        try:
            for e in vector_phase(store, chain, cache, stats, stop, self.background):
                if isinstance(e, ev.ProviderSwitched):
                    providers.errors[e.from_provider or "?"] = e.reason
                yield e
            if cache:
                cache.evict()
        finally:
            if cache:
                cache.close()
        if not stop():
            providers.record_failures(store)

    def _leftover_rebuild(self) -> Generator[ev.Event, None, str | None]:
        """A rebuild stopped before its end (Ctrl-Q during F9, a kill) left its file: resume it when
        it was made for these settings, else clear it away. Returns why to rebuild, or None."""
        from .. import events as ev
        from .indexer import rebuild_fits

        tmp = rebuild_path(self.index_path)
        try:
            st = Store(tmp, load_vec=False)
            try:
                st.check()
                fits = rebuild_fits(st, self.cfg)
            finally:
                st.close()
        except (ForeignIndex, DatabaseError, OSError) as exc:
            dest = move_aside(tmp, "corrupt")
            yield ev.Warning(f"an unfinished rebuild that cannot be read ({exc}); moved it to {dest}", str(tmp))
            return None
        if fits:
            return f"resuming the rebuild left unfinished in {tmp}"
        remove_index_files(tmp)
        yield ev.Warning(f"removed {tmp}: an unfinished rebuild made for other settings")
        return None

    def _rebuild(self, why: str, stats: Stats, stop, backfill: bool) -> Iterator[ev.Event]:
        """Build a complete new index beside the old one, then swap it in: a search never sees a half-built index."""
        from .. import events as ev
        from .indexer import open_writer, prune_models, rebuild_fits, swap_in

        tmp = rebuild_path(self.index_path)
        yield ev.Warning(f"full rebuild: {why}")
        new, _ = open_writer(tmp, self.cfg)
        try:
            if not rebuild_fits(new, self.cfg):
                new.close()
                remove_index_files(tmp)
                new, _ = open_writer(tmp, self.cfg)
            new.set_meta("index", json.dumps(index_meta(self.cfg)))
            yield from self._text_phase(new, "rebuild", why, stats, stop, True)
            if stop():
                return
            yield from self._embed(new, stats, stop)
            if stop():
                return
            for dropped in prune_models(new, *self._configured_models(), force=True):
                yield ev.Warning(f"dropped vectors of {dropped}: no longer configured")
            new.set_meta("last_sync", dt.datetime.now().astimezone().isoformat(timespec="seconds"))
            new.make_durable_for_swap()
        finally:
            new.close()
        if stop():
            return
        self.index_reader.close()
        swap_in(tmp, self.index_path)
        self.index_reader.forget_cached()

    def run_index(self, *, force: bool = False, on_event: Callable[[ev.Event], None] | None = None, **kw) -> ev.JobFinished | None:
        from .. import events as ev

        last = None
        for e in self.index(force=force, **kw):
            if on_event:
                on_event(e)
            if isinstance(e, ev.JobFinished):
                last = e
        return last
