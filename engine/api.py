"""The engine facade: the one object the CLI, the TUI and the agent tools talk to."""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Generator, Iterator

from . import config as config_mod
from . import events as ev
from .core import PROVIDER_FAILURES, IndexUnavailable
from .memory_files import AccessDenied, MemoryFiles
from .searching import SearchDisabled, Searching, disabled_reason
from .embeddings import ProviderError
from .embeddings.cache import EmbeddingCache
from .indexer import (
    MODEL_GRACE_DAYS,
    ProviderChain,
    Stats,
    list_sources,
    needs_rebuild,
    open_writer,
    prune_models,
    rebuild_fits,
    swap_in,
    text_phase,
    vector_phase,
)
from .lock import LockBusy, WriterLock, current_holder, describe_holder, read_holder
from .store import DatabaseError, ForeignIndex, SCHEMA_VERSION, Store, adopt_legacy_index, index_meta, move_aside, rebuild_path
from .workspace import normalize_extra_paths


class Engine(Searching, MemoryFiles):
    """The one door the CLI, the app and the MCP server use: the parts joined."""

    @classmethod
    def open(cls, *, config_path=None, workspace=None, agent=None, overrides=None, persistent=False) -> "Engine":
        cfg = config_mod.load(config_path, workspace=workspace, agent=agent, overrides=overrides)
        return cls(cfg, persistent=persistent)

    # ------------------------------------------------------------------ freshness

    def freshness(self, *, max_age: float = 0.0, full: bool = False) -> dict:
        """Compare the files on disk with the index by (mtime, size); cheap (stat only).

        `behind` names up to 20 of the files that differ (all of them with full=True).
        """
        now = time.monotonic()
        cached = self._fresh_cache
        if max_age and cached and now - cached[0] < max_age:
            out = cached[1]
            return out if full else {**out, "behind": out["behind"][:20]}
        files = list_sources(self.cfg)
        try:
            st = self.reader()
            known = st.file_rows() if st is not None else {}
        except (IndexUnavailable, DatabaseError):  # an unusable index is behind on every file
            st, known = None, {}
        behind = []
        for f in files:
            row = known.get(f.path)
            try:
                s = os.stat(f.abspath)
            except OSError:
                behind.append(f.path)
                continue
            if row is None or row[2] != s.st_mtime_ns or row[3] != s.st_size:
                behind.append(f.path)
        on_disk = {f.path for f in files}
        removed = [p for p in known if p not in on_disk]
        last = st.get_meta("last_sync") if st is not None else None
        holder = current_holder(self.index_path)
        out = {
            "lastSync": last,
            "filesOnDisk": len(files),
            "filesIndexed": len(known),
            "filesBehind": len(behind) + len(removed),
            "behind": behind + removed,
            "dirty": bool(behind or removed),
            "watcher": self.watcher_state(),
            "job": (f"indexing (pid {holder.get('pid', '?')}, {holder.get('command', '?')})" if holder is not None else None),
        }
        self._fresh_cache = (now, out)
        return out if full else {**out, "behind": out["behind"][:20]}

    def watcher_state(self) -> str:
        from .watch import read_heartbeat

        return read_heartbeat(self.cfg)

    # ------------------------------------------------------------------ indexing

    def index(
        self,
        *,
        force: bool = False,
        reason: str = "cli",
        backfill_sessions: bool = True,
        should_stop: Callable[[], bool] | None = None,
        lock_timeout: float = 60.0,
    ) -> Iterator[ev.Event]:
        """Bring the index up to date, yielding progress events. Holds the writer lock meanwhile."""
        stop = should_stop or (lambda: False)
        started = time.monotonic()
        lock = WriterLock(self.index_path)
        if not lock.try_acquire():
            holder = current_holder(self.index_path) or {}
            if lock_timeout <= 0:
                raise LockBusy(holder, 0.0)
            # say who we wait for before waiting, not after
            yield ev.Warning(f"waiting for the writer lock: the index is being written by {describe_holder(holder)}")
            lock.acquire(lock_timeout)
        stats = Stats()
        try:
            adopted = adopt_legacy_index(self.cfg)
            if adopted:
                yield ev.Warning(adopted)
            store, moved = open_writer(self.index_path, self.cfg)
            if moved:
                self._per_model.clear()  # vectors cached from the file that was moved aside
                yield ev.Warning(moved, str(self.index_path))
            why = "--force" if force else needs_rebuild(store, self.cfg)
            if not why and rebuild_path(self.index_path).exists():
                why = yield from self._leftover_rebuild()
            if why:
                store.close()
                yield from self._rebuild(why, stats, stop, backfill_sessions)
            else:
                try:
                    yield from self._update(store, reason, stats, stop, backfill_sessions)
                finally:
                    store.close()
            self._fresh_cache = None
            ok = not stop()
            finished = ev.JobFinished("rebuild" if why else "index", stats.indexed, stats.removed, stats.unchanged,
                                      stats.embedded, time.monotonic() - started, ok, "" if ok else "stopped before the end")
        finally:
            lock.release()
        # after the release: whoever reacts to "finished" (a status refresh) must not see our lock
        yield finished

    def _update(self, store: Store, reason: str, stats: Stats, stop, backfill: bool) -> Iterator[ev.Event]:
        if store.get_meta("index") is None:
            store.set_meta("index", json.dumps(index_meta(self.cfg)))
        for e in text_phase(self.cfg, store, stats, backfill_sessions=backfill, should_stop=stop):
            if isinstance(e, ev.JobStarted):
                e = ev.JobStarted("index", reason, e.files_total)
            yield e
        if stop():
            return
        yield from self._embed(store, stats, stop)
        store.set_meta("last_sync", dt.datetime.now().astimezone().isoformat(timespec="seconds"))
        for dropped in prune_models(store, *self._configured_models(), force=False):
            yield ev.Warning(f"dropped vectors of {dropped}: no longer configured for {MODEL_GRACE_DAYS} days")

    def _configured_models(self) -> tuple[set[str], set[str]]:
        """(fingerprints of the configured providers, the configured providers that cannot be
        built right now), for prune_models."""
        fingerprints, unsure = set(), set()
        for cand in self.plan().candidates:
            prov = self._provider(cand.name) if cand.factory is not None else None
            if prov is None:
                unsure.add(cand.name)
            else:
                fingerprints.add(prov.fingerprint())
        return fingerprints, unsure

    def _embed(self, store: Store, stats: Stats, stop) -> Iterator[ev.Event]:
        plan = self.plan()
        if not plan.usable():
            return
        self._provider_errors.clear()  # every index run gives failed providers another chance
        chain = ProviderChain(plan, self._providers)
        for name, why in chain.failures:
            self._provider_errors[name] = why
            yield ev.ProviderSwitched(name, chain.current().id if chain.current() else None, why)
        if chain.current() is None:
            self._record_failures(store)
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
            for e in vector_phase(store, chain, cache, stats, stop):
                if isinstance(e, ev.ProviderSwitched):
                    self._provider_errors[e.from_provider or "?"] = e.reason
                yield e
            if cache:
                cache.evict()
        finally:
            if cache:
                cache.close()
        if not stop():
            self._record_failures(store)

    def _record_failures(self, store: Store) -> None:
        """Keep this run's provider failures in the index, so that `status` and searches in other
        processes give the real reason ("openai: 500 …"), not a guess from vector counts."""
        if self._provider_errors:
            store.set_meta(PROVIDER_FAILURES, json.dumps(self._provider_errors))
        else:
            store.conn.execute("delete from meta where key = ?", (PROVIDER_FAILURES,))

    def _leftover_rebuild(self) -> Generator[ev.Event, None, str | None]:
        """A rebuild stopped before its end (Ctrl-Q during F9, a kill) left its file: resume it when
        it was made for these settings, else clear it away. Returns why to rebuild, or None."""
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
        for suffix in ("", "-wal", "-shm"):
            Path(str(tmp) + suffix).unlink(missing_ok=True)
        yield ev.Warning(f"removed {tmp}: an unfinished rebuild made for other settings")
        return None

    def _rebuild(self, why: str, stats: Stats, stop, backfill: bool) -> Iterator[ev.Event]:
        """Build a complete new index beside the old one, then swap it in (SPEC §4)."""
        tmp = rebuild_path(self.index_path)
        yield ev.Warning(f"full rebuild: {why}")
        new, _ = open_writer(tmp, self.cfg)
        try:
            if not rebuild_fits(new, self.cfg):
                new.close()
                for suffix in ("", "-wal", "-shm"):
                    Path(str(tmp) + suffix).unlink(missing_ok=True)
                new, _ = open_writer(tmp, self.cfg)
            new.set_meta("index", json.dumps(index_meta(self.cfg)))
            for e in text_phase(self.cfg, new, stats, backfill_sessions=True, should_stop=stop):
                if isinstance(e, ev.JobStarted):
                    e = ev.JobStarted("rebuild", why, e.files_total)
                yield e
            if stop():
                return
            yield from self._embed(new, stats, stop)
            if stop():
                return
            for dropped in prune_models(new, *self._configured_models(), force=True):
                yield ev.Warning(f"dropped vectors of {dropped}: no longer configured")
            new.set_meta("last_sync", dt.datetime.now().astimezone().isoformat(timespec="seconds"))
            new.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            new.conn.execute("PRAGMA journal_mode = DELETE")
        finally:
            new.close()
        if stop():
            return
        old = getattr(self._tls, "store", None)
        if old is not None:
            old.close()
            self._tls.store = None
        swap_in(tmp, self.index_path)
        self._per_model.clear()

    def run_index(self, *, force: bool = False, on_event: Callable[[ev.Event], None] | None = None, **kw) -> ev.JobFinished | None:
        last = None
        for e in self.index(force=force, **kw):
            if on_event:
                on_event(e)
            if isinstance(e, ev.JobFinished):
                last = e
        return last

    # ------------------------------------------------------------------ status

    def status(self, *, deep: bool = False) -> dict:
        cfg = self.cfg
        plan = self.plan()
        usable = plan.usable()
        provider: dict[str, Any] = {"configured": plan.configured, "active": None, "model": None, "reason": None, "fallback": None}
        vector: dict[str, Any]
        store, store_error = None, None
        try:
            store = self.reader()
            if store is not None:
                counts = store.counts()
                schema = int(store.get_meta("schema") or SCHEMA_VERSION) if store.has_schema() else SCHEMA_VERSION
                vector = dict(store.vec.as_status())
                side, info = self._vector_side(store) if store.has_schema() else (None, {"reason": "index is empty", "fallback": None, "provider": None, "model": None})
                vector["models"] = [
                    {"provider": m["provider"], "model": m["model"], "dims": m["dims"], "vectors": store.coverage(m["id"])}
                    for m in store.models()
                ]
        except IndexUnavailable as exc:
            store, store_error = None, str(exc)
        except DatabaseError as exc:  # damage past what opening the index checks
            store, store_error = None, f"{self.index_path}: not a usable clawmem index ({exc}); `clawmem index` repairs it"
        if store is None:
            from .store import _load_vec, db

            counts, schema = {"files": 0, "chunks": 0, "bySource": {}}, SCHEMA_VERSION
            probe = db.connect(":memory:")
            vector = dict(_load_vec(probe).as_status())
            probe.close()
            vector["models"] = []
            why = "the index is unusable (see index.error)" if store_error else "no index yet: run `clawmem index`"
            side, info = None, {"reason": why, "fallback": None, "provider": None, "model": None}
        if side is not None:
            provider["active"], provider["model"] = info["provider"], info["model"]
            provider["fallback"] = info["fallback"]
            if info.get("lastError"):
                provider["lastError"] = f"the last index could not embed every chunk: {info['lastError']}"
        elif usable:
            provider["active"] = usable[0].name
            provider["model"] = usable[0].model or None
            provider["reason"] = f"searches are keyword-only until vectors exist: {info['reason']}"
            if plan.reasons:
                provider["fallback"] = {"from": plan.candidates[0].name, "reason": plan.reasons[0]} if plan.candidates[0].factory is None else None
        else:
            provider["reason"] = plan.keyword_reason()
        if deep:
            # where each candidate's key came from (never the key itself)
            provider["candidates"] = [{"name": c.name, "model": c.model or None, "usable": c.factory is not None,
                                       "keySource": c.key_source, "reason": c.reason} for c in plan.candidates]
        if deep and usable:
            provider["probe"] = self._probe(usable[0].name)
        fts = {"available": True}
        if store is not None and store.has_schema():
            try:
                store.conn.execute("select count(*) from chunks_fts").fetchone()
            except Exception as exc:
                fts = {"available": False, "reason": str(exc)}
        out = {
            "workspace": str(cfg.workspace),
            "agentId": cfg.agent_id,
            "index": {
                "path": str(self.index_path),
                "files": counts["files"],
                "chunks": counts["chunks"],
                "bySource": counts["bySource"],
                "schemaVersion": schema,
                "workspace": store.get_meta("workspace") if store is not None else None,
                "error": store_error,
                "rebuild": self.rebuild_state(),
            },
            "freshness": self.freshness(),
            "provider": provider,
            "vector": vector,
            "fts": fts,
            "sources": cfg["sources"],
            "enabled": cfg["enabled"],
            "config": {"file": str(cfg.file) if cfg.file else None, "fileExists": bool(cfg.file and cfg.file.exists()),
                       "openclaw": str(cfg.openclaw_file) if cfg.openclaw_file else None, "warnings": cfg.warnings},
            "log": str(log_path()),
        }
        if deep:
            out["config"]["openclawIgnored"] = cfg.openclaw_ignored
            out["config"]["notHonoured"] = config_mod.not_honoured(cfg)
            out["issues"] = self.issues()
            try:
                cache = EmbeddingCache(max_entries=cfg["cache.maxEntries"])
                out["cache"] = {"path": str(cache.path), "entries": cache.count(), "maxEntries": cfg["cache.maxEntries"]}
                cache.close()
            except Exception as exc:
                out["cache"] = {"error": str(exc)}
        return out

    def rebuild_state(self) -> dict | None:
        """The rebuild file beside the index, if any: `running` while a writer builds it, else left
        over by a rebuild that was stopped (Ctrl-Q, a kill), which the next `clawmem index` resumes."""
        tmp = rebuild_path(self.index_path)
        try:
            if not tmp.is_file():
                return None
        except OSError:  # a folder we may not look into: status says why elsewhere
            return None
        files = None
        try:
            st = Store(tmp, load_vec=False)
            try:
                files = st.counts()["files"]
            finally:
                st.close()
        except (DatabaseError, OSError):
            pass
        return {"path": str(tmp), "files": files, "running": current_holder(self.index_path) is not None}

    def repair(self) -> list[str]:
        """`clawmem status --fix`: repair what needs no decision (a writer lock left by a killed
        process, an unfinished rebuild, an unusable index file) and say what was done, one line each."""
        holder = current_holder(self.index_path)
        if holder is not None:
            return [f"nothing repaired: the index is being written by {describe_holder(holder)}; try again when it finishes"]
        done = []
        stale = read_holder(self.index_path)
        if stale:
            lock = WriterLock(self.index_path)
            if lock.try_acquire():
                lock.release()  # leaves the lock file empty
                done.append(f"cleared the writer lock left by pid {stale.get('pid', '?')} ({stale.get('command', '?')}), which no longer runs")
        try:
            self.reader()
            broken = None
        except IndexUnavailable as exc:
            broken = str(exc)
        if broken or rebuild_path(self.index_path).exists():
            try:
                for e in self.index(reason="repair", lock_timeout=0):
                    if isinstance(e, ev.Warning):
                        done.append(f"{e.path}: {e.message}" if e.path else e.message)
                    elif isinstance(e, ev.JobFinished):
                        done.append(e.describe())
            except (LockBusy, OSError) as exc:
                done.append(f"could not repair {self.index_path}: {exc}")
        return done or ["nothing to repair"]

    def _probe(self, name: str) -> dict:

        import numpy as np
        prov = self._provider(name)
        if prov is None:
            return {"ok": False, "error": self._provider_errors.get(name, "unavailable")}
        try:
            t0 = time.perf_counter()
            v = prov.embed_query("ping")
            return {"ok": True, "dims": int(np.asarray(v).size), "ms": round((time.perf_counter() - t0) * 1000, 1)}
        except ProviderError as exc:
            return {"ok": False, "error": str(exc)}

    def issues(self) -> list[str]:
        out = []
        ws = self.workspace
        if not ws.is_dir():
            out.append(f"workspace missing ({ws}); create it or set workspace")
        elif not (ws / "memory").is_dir():
            out.append(f"memory folder missing ({ws / 'memory'})")
        for p in normalize_extra_paths(ws, self.cfg["extraPaths"]):
            if not p.exists():
                out.append(f"extra path missing ({p})")
        if "sessions" in self.cfg["sources"] and not self.cfg.sessions_dir().is_dir():
            out.append(f"sessions folder missing ({self.cfg.sessions_dir()})")
        try:
            st = self.reader()
        except IndexUnavailable as exc:
            out.append(str(exc))
            st = None
        if st is not None and st.has_schema():
            for path, note in st.conn.execute("select path, note from files where note is not null"):
                out.append(f"{path}: {note}")
        return out


def log_path() -> Path:
    from . import paths

    return paths.state_dir() / "clawmem.log"
