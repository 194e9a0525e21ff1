"""What the fronts show about the index: how far it lags the files (freshness), the watcher, the
provider and vector state (status), problems worth a line (issues), a leftover rebuild, and the
repairs `clawmem status --fix` makes."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable, Iterator

from . import config as config_mod, paths
from .core import Core, IndexUnavailable
from .fsutil import os_path
from .embeddings import ProviderError
from .sources import LAYOUT_KEY, list_sources, source_roots
from .lock import LockBusy, WriterLock, current_holder, describe_holder, read_holder
from .store import DatabaseError, SCHEMA_VERSION, Store, index_meta, rebuild_path
from .workspace import display_path, normalize_extra_paths


HOT_FILES = 32  # the files changed most recently, which a search stats for in-place edits


class Health(Core):
    _vector_side: Callable[..., tuple]  # from searching.Searching: which model would serve a search
    index: Callable[..., Iterator]  # from jobs.IndexJobs: repair rebuilds an unusable index

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

    def seen_behind(self) -> bool:
        """Whether the index lags the files, as far as a look that costs the same at 100 or
        100,000 files can tell; what searches report as `stale`. `status` still compares every file.

        It sees: anything a running watcher heard of (its heartbeat says so), a created,
        deleted or renamed file (its folder's mtime changed since the last complete index),
        a changed or new root (MEMORY.md, extraPaths, the sessions folder), other index
        settings, and in-place edits of the HOT_FILES files changed most recently. Whenever
        a folder changed or cannot be trusted it compares every file, as freshness() does.
        Not seen while no watcher runs: an in-place edit of an older file (say, appending
        to last year's log); `status` and the next `index` or sync find it.
        """
        from .watch import watcher_says_dirty

        if watcher_says_dirty(self.cfg):
            return True
        try:
            st = self.reader()
            if st is None or not st.has_schema():
                return True
            layout = st.get_meta_json(LAYOUT_KEY)
            same_settings = st.get_meta_json("index") == index_meta(self.cfg)
        except (IndexUnavailable, DatabaseError):
            return True

        def every_file() -> bool:
            return self.freshness(max_age=2.0 if self.persistent else 0.0)["dirty"]

        if not isinstance(layout, dict) or not same_settings or layout.get("roots") != source_roots(self.cfg):
            return every_file()
        for folder, stamp in layout.get("dirs", {}).items():
            try:
                if stamp is None or os.stat(folder).st_mtime_ns != stamp:
                    return every_file()
            except OSError:
                return every_file()
        try:
            hot = st.conn.execute("select abspath, mtime_ns, size from files order by mtime_ns desc limit ?", (HOT_FILES,)).fetchall()
            # MEMORY.md and file extraPaths: no folder of theirs is compared
            roots = [display_path(self.workspace, Path(p)) for p, kind in layout["roots"].items() if kind == "file"]
            if roots:
                hot += st.conn.execute(f"select abspath, mtime_ns, size from files where path in ({','.join('?' * len(roots))})", roots).fetchall()
        except DatabaseError:
            return True
        for abspath, mtime_ns, size in hot:
            try:
                s = os.stat(os_path(abspath))
            except OSError:
                return True
            if s.st_mtime_ns != mtime_ns or s.st_size != size:
                return True
        return False

    def watcher_state(self) -> str:
        from .watch import read_heartbeat

        return read_heartbeat(self.cfg)

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
        if cfg["remote.batch.enabled"] and cfg["provider"] in (*config_mod.BATCH_PROVIDERS, "auto"):
            from .indexer import BATCH_ERROR

            why = store.get_meta(BATCH_ERROR) if store is not None and store.has_schema() else None
            provider["batch"] = {"enabled": True, "lastError": why or None}
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
            "log": str(paths.log_path()),
            "workspaceEmpty": cfg.workspace.is_dir() and self.freshness()["filesOnDisk"] == 0,
            "fileNotes": self.file_notes(store),
            "leftovers": [{"path": str(p), "what": what} for p, what in self.leftovers()],
        }
        if cfg["fleet.url"]:
            from .fleet import fleet_status  # psycopg is not needed for this: it reads local state only

            try:
                out["fleet"] = fleet_status(self)
            except Exception as exc:  # status must show, whatever the fleet's state file holds
                out["fleet"] = {"error": f"{type(exc).__name__}: {exc}"}
        if deep:
            out["config"]["openclawIgnored"] = cfg.openclaw_ignored
            out["config"]["notHonoured"] = config_mod.not_honoured(cfg)
            out["issues"] = self.issues()
            try:
                from .embeddings.cache import EmbeddingCache

                cache = EmbeddingCache(max_entries=cfg["cache.maxEntries"])
                out["cache"] = {"path": str(cache.path), "entries": cache.count(), "maxEntries": cfg["cache.maxEntries"]}
                cache.close()
            except Exception as exc:
                out["cache"] = {"error": str(exc)}
        return out

    def file_notes(self, store=None) -> list[dict]:
        """Every file the index skipped (`skipped`), holds only in part, or read with a change
        (NUL bytes, invalid UTF-8), with the reason."""
        try:
            store = store or self.reader()
        except (IndexUnavailable, DatabaseError):
            return []
        if store is None or not store.has_schema():
            return []
        rows = store.conn.execute("select path, note, state from files where note is not null order by path")
        return [{"path": p, "reason": note, "skipped": state == "skipped"} for p, note, state in rows]

    def leftovers(self) -> list[tuple[Path, str]]:
        """Temporary files and torn appends an interrupted write left (status --fix cleans them)."""
        from . import memfile

        ws = self.workspace
        folders = {ws / "MEMORY.md", ws / "memory" / "x.md"} | {Path(f.abspath) for f in list_sources(self.cfg) if f.source == "memory"}
        return memfile.leftovers(folders)

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
        from . import events as ev

        holder = current_holder(self.index_path)
        if holder is not None:
            return [f"nothing repaired: the index is being written by {describe_holder(holder)}; try again when it finishes"]
        from . import memfile

        done = memfile.clean_leftovers(self.leftovers())
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
            out = {"ok": True, "dims": int(np.asarray(v).size), "ms": round((time.perf_counter() - t0) * 1000, 1)}
        except ProviderError as exc:
            out = {"ok": False, "error": str(exc)}
        build = prov.build_info()
        if build:  # which CPU features the llama.cpp build uses: the first thing to check after a crash
            out["build"] = build
        return out

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
