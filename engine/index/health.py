"""What the fronts show about the index: the provider and vector state, how far it lags the
files (status), problems worth a line (issues), a leftover rebuild, and the repairs
`clawmem status --fix` makes."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from .. import config as config_mod, paths
from ..config import Config
from ..errors import IndexUnavailable
from .freshness import Freshness
from .jobs import IndexJobs
from .lock import LockBusy, WriterLock, current_holder, describe_holder, read_holder
from ..embeddings.providers import Providers
from .reader import IndexReader
from ..results import Status
from ..files.sources import list_sources
from .store import DatabaseError, SCHEMA_VERSION, Store, built_with_other_settings, known_intact, rebuild_path
from ..files.workspace import normalize_extra_paths, refused_extra_paths


class Health:
    def __init__(self, cfg: Config, reader: IndexReader, providers: Providers, freshness: Freshness,
                 vector_side: Callable[[Store], tuple[str | None, dict]], jobs: IndexJobs):
        self.cfg = cfg
        self.index_reader = reader
        self.index_path = reader.index_path
        self.providers = providers
        self.freshness = freshness
        # which model would serve a search: the Searcher's answer, handed in by the engine (search/ sits above index/)
        self.vector_side = vector_side
        self.jobs = jobs  # a repair rebuilds an unusable index
        self.fleet_line: Callable[[], dict | None] = lambda: None  # the fleet's line of status, when one is set

    def status(self, *, deep: bool = False) -> Status:
        cfg = self.cfg
        plan = self.providers.plan()
        usable = plan.usable()
        provider: dict[str, Any] = {"configured": plan.configured, "active": None, "model": None, "reason": None, "fallback": None}
        vector: dict[str, Any]
        store, store_error = None, None
        try:
            store = self.index_reader.reader()
            if store is not None:
                counts = store.counts()
                schema = int(store.get_meta("schema") or SCHEMA_VERSION) if store.has_schema() else SCHEMA_VERSION
                vector = dict(store.vec.as_status())
                side, info = self.vector_side(store) if store.has_schema() else (None, {"reason": "index is empty", "fallback": None, "provider": None, "model": None})
                vector["models"] = [
                    {"provider": m["provider"], "model": m["model"], "dims": m["dims"], "vectors": store.coverage(m["id"])}
                    for m in store.models()
                ]
            damage = self.damage(store) if store is not None else None
            if damage:  # broken pages, although what was read above could be read: nothing more is read from it
                store, store_error = None, f"{self.index_path}: damaged ({damage}); `clawmem status --fix` moves it aside and rebuilds it from the Markdown"
        except IndexUnavailable as exc:
            store, store_error = None, str(exc)
        except DatabaseError as exc:  # damage past what opening the index checks
            store, store_error = None, f"{self.index_path}: not a usable clawmem index ({exc}); `clawmem index` repairs it"
        if store is None:
            from ..files.fsutil import open_database
            from .store import _load_vec

            counts, schema = {"files": 0, "chunks": 0, "bySource": {}}, SCHEMA_VERSION
            probe = open_database(":memory:", timeout=1.0, extensions=True)  # can sqlite-vec load here?
            vector = dict(_load_vec(probe).as_status())
            probe.close()
            vector["models"] = []
            if store_error:
                why = "the index is unusable (see index.error)"
            elif current_holder(self.index_path) is not None:  # the first index is being written now
                why = "the first index is being built"
            else:
                why = "no index yet: run `clawmem index`"
            side, info = None, {"reason": why, "fallback": None, "provider": None, "model": None}
        self._serving(provider, plan, side, info, building=current_holder(self.index_path) is not None)
        if cfg["remote.batch.enabled"] and cfg["provider"] in (*config_mod.batch_providers(), "auto"):
            from .indexer import BATCH_ERROR

            why = store.get_meta(BATCH_ERROR) if store is not None and store.has_schema() else None
            provider["batch"] = {"enabled": True, "lastError": why or None}
        if deep:
            # where each candidate's key came from (never the key itself)
            provider["candidates"] = [{"name": c.name, "model": c.model or None, "usable": c.factory is not None,
                                       "keySource": c.key_source, "reason": c.reason} for c in plan.candidates]
        if deep and usable:
            provider["probe"] = self.providers.probe(usable[0].name)
        fresh = self.freshness.freshness()  # lists the workspace once; the leftovers scan reuses it
        fts = {"available": True}
        if store is not None and store.has_schema():
            try:
                store.probe_words()
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
                "settings": built_with_other_settings(store, cfg) if store is not None and store.has_schema() else None,
            },
            "freshness": fresh,
            "provider": provider,
            "vector": vector,
            "fts": fts,
            "sources": cfg["sources"],
            "enabled": cfg["enabled"],
            "config": {"file": str(cfg.file) if cfg.file else None, "fileExists": bool(cfg.file and cfg.file.exists()),
                       "openclaw": str(cfg.openclaw_file) if cfg.openclaw_file else None, "warnings": cfg.warnings},
            "log": str(paths.log_path()),
            "workspaceEmpty": cfg.workspace.is_dir() and fresh["filesOnDisk"] == 0,
            "fileNotes": self.file_notes(store),
            "refusedExtraPaths": refused_extra_paths(cfg.workspace, cfg["extraPaths"]),
            "leftovers": [{"path": str(p), "what": what} for p, what in self.leftovers(self.freshness.listed)],
        }
        if cfg["fleet.url"]:
            try:
                out["fleet"] = self.fleet_line()
            except Exception as exc:  # status must show, whatever the fleet's state file holds
                out["fleet"] = {"error": f"{type(exc).__name__}: {exc}"}
        if deep:
            out["config"]["openclawIgnored"] = cfg.openclaw_ignored
            out["config"]["notHonoured"] = config_mod.not_honoured(cfg)
            out["issues"] = self.issues()
            try:
                from ..embeddings.cache import EmbeddingCache

                cache = EmbeddingCache(max_entries=cfg["cache.maxEntries"])
                out["cache"] = {"path": str(cache.path), "entries": cache.count(), "maxEntries": cfg["cache.maxEntries"]}
                cache.close()
            except Exception as exc:
                out["cache"] = {"error": str(exc)}
        return Status(out)

    def damage(self, store) -> str | None:
        """What SQLite's page check finds wrong with the index, or None. Skipped when the file is
        exactly as the last clean writer left it (the check reads the whole file)."""
        if known_intact(self.index_path):
            return None
        try:
            ok = store.page_check()
        except DatabaseError as exc:
            return str(exc)
        return None if ok == "ok" else " ".join(ok.replace("*** in database main ***", "").split())[:300]

    @staticmethod
    def _serving(provider: dict, plan, side, info: dict, building: bool = False) -> None:
        """Fill status()["provider"]: who serves searches, or why they are keyword-only."""
        usable = plan.usable()
        if side is not None:
            provider["active"], provider["model"] = info["provider"], info["model"]
            provider["fallback"] = info["fallback"]
            if info.get("lastError"):
                provider["lastError"] = f"the last index could not embed every chunk: {info['lastError']}"
        elif usable:
            provider["active"] = usable[0].name
            provider["model"] = usable[0].model or None
            why = info["reason"]
            if why.startswith("no vectors indexed yet") and building:
                why = "the index job running now is embedding them"
            provider["reason"] = f"searches are keyword-only until vectors exist: {why}"
            if plan.reasons:
                provider["fallback"] = {"from": plan.candidates[0].name, "reason": plan.reasons[0]} if plan.candidates[0].factory is None else None
        else:
            provider["reason"] = plan.keyword_reason()

    def summary(self) -> dict:
        """What `clawmem index` says when it is done: the index's path and counts and who serves
        searches (status()'s "index" and "provider" in part), without listing the workspace
        again or scanning for leftovers: a no-op index at 5,000 files costs ~0.1 s, and a whole
        status after it cost 0.3 s more."""
        plan = self.providers.plan()
        provider: dict[str, Any] = {"configured": plan.configured, "active": None, "model": None, "reason": None, "fallback": None}
        store = self.index_reader.reader()
        counts = store.counts() if store is not None else {"files": 0, "chunks": 0}
        if store is not None and store.has_schema():
            side, info = self.vector_side(store)
        else:
            side, info = None, {"reason": "index is empty", "fallback": None, "provider": None, "model": None}
        self._serving(provider, plan, side, info)
        return {"index": {"path": str(self.index_path), "files": counts["files"], "chunks": counts["chunks"]}, "provider": provider}

    def file_notes(self, store=None) -> list[dict]:
        """Every file the index skipped (`skipped`), holds only in part, or read with a change
        (NUL bytes, invalid UTF-8), with the reason."""
        try:
            store = store or self.index_reader.reader()
        except (IndexUnavailable, DatabaseError):
            return []
        if store is None or not store.has_schema():
            return []
        rows = store.file_notes()
        return [{"path": p, "reason": note, "skipped": state == "skipped"} for p, note, state in rows]

    def leftovers(self, listed: list | None = None) -> list[tuple[Path, str]]:
        """Temporary files and torn appends an interrupted write left (status --fix cleans them):
        clawmem's writers leave them only beside a memory file, so only those folders are read
        (`listed`: the sources as just listed, to not walk the workspace again)."""
        from ..files import memfile

        ws = self.cfg.workspace
        files = list_sources(self.cfg) if listed is None else listed
        folders = {ws / "MEMORY.md", ws / "memory" / "x.md"} | {Path(f.abspath) for f in files if f.source == "memory"}
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
        from .. import events as ev

        holder = current_holder(self.index_path)
        if holder is not None:
            return [f"nothing repaired: the index is being written by {describe_holder(holder)}; try again when it finishes"]
        from ..files import memfile

        done = memfile.clean_leftovers(self.leftovers())
        stale = read_holder(self.index_path)
        if stale:
            lock = WriterLock(self.index_path)
            if lock.try_acquire():
                lock.release()  # leaves the lock file empty
                done.append(f"cleared the writer lock left by pid {stale.get('pid', '?')} ({stale.get('command', '?')}), which no longer runs")
        try:
            store = self.index_reader.reader()
            broken = self.damage(store) if store is not None else None
        except IndexUnavailable as exc:
            broken = str(exc)
        if broken or rebuild_path(self.index_path).exists():
            try:
                for e in self.jobs.index(reason="repair", lock_timeout=0):
                    if isinstance(e, ev.Warning):
                        done.append(f"{e.path}: {e.message}" if e.path else e.message)
                    elif isinstance(e, ev.JobFinished):
                        done.append(e.describe())
            except (LockBusy, OSError) as exc:
                done.append(f"could not repair {self.index_path}: {exc}")
        return done or ["nothing to repair"]

    def issues(self) -> list[str]:
        out = []
        ws = self.cfg.workspace
        if not ws.is_dir():
            out.append(f"workspace missing ({ws}); create it or set workspace")
        elif not (ws / "memory").is_dir():
            out.append(f"memory folder missing ({ws / 'memory'})")
        for p in normalize_extra_paths(ws, self.cfg["extraPaths"]):
            if not p.exists():
                out.append(f"extra path missing ({p})")
        if "sessions" in self.cfg["sources"] and not self.cfg.sessions_dir().is_dir():
            out.append(f"sessions folder missing ({self.cfg.sessions_dir()})")
        for path in (self.index_path, self.index_path.parent):
            weak = paths.weaker_than_private(path)
            if weak:  # clawmem makes its own owner-only and never changes the mode of another's
                out.append(f"{path} is mode {weak}, readable by others (clawmem would choose owner-only and "
                           f"changes nothing it did not create: chmod go-rwx {path} if it should be private)")
        try:
            st = self.index_reader.reader()
        except IndexUnavailable as exc:
            out.append(str(exc))
            st = None
        if st is not None and st.has_schema():
            for path, note, _ in st.file_notes():
                out.append(f"{path}: {note}")
        return out
