"""The engine facade: the one object the CLI, the app and the MCP server talk to.

`Engine` holds small parts, each with one job, wired in its constructor:
  IndexReader  index/reader.py        the per-thread read connection to the index, data cached from it
  Providers    embeddings/providers.py the provider plan, providers built on first use, their failures
  Freshness    index/freshness.py     how far the index lags the files, the watcher's state
  Searcher     search/searcher.py     memory_search: options, the model serving vectors, fallbacks
  IndexJobs    index/jobs.py          index (all sources, or the files just written), rebuild, resume
  Health       index/health.py        status, issues, rebuild state, `status --fix` repairs
  MemoryFiles  files/reading.py       memory_get, the paths the tools may read, the File tab's list
  History      files/history.py       the journal opened caught up, its changes, restores, a save's version
Each takes its collaborators as arguments and is usable alone. The writes agents and people
make go through files/memfile.py (agent/tools.py, files/editing.py); background sync is
index/watcher.py. Operations with an owner of their own are reached through small sub-faces
the engine hands out: `engine.fleet` (the fleet owner's operations), `engine.models` (the
local model files), `engine.tools` (the agent tools' payloads).
"""

from __future__ import annotations

from contextlib import contextmanager
from functools import cached_property
TYPE_CHECKING = False  # typing's constant without importing typing: a search never needs it (~3 ms)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator

from . import config as config_mod
from .config import Config, ConfigError
from .errors import AccessDenied, IndexFailed, IndexUnavailable, SearchDisabled, raises_clawmem_errors
from .index.freshness import Freshness
from .paths import log_path
from .index.reader import IndexReader
from .results import FileText, SearchResults, Status, WriteReceipt

if TYPE_CHECKING:  # the search modules load with the first search: `clawmem index` needs none
    from .search.options import SearchRequest
    from .search.searcher import Searcher

# kept importable from here, where the fronts and tests have always found them
__all__ = ["Engine", "AccessDenied", "IndexUnavailable", "SearchDisabled", "disabled_reason", "log_path"]


@raises_clawmem_errors
class Engine:
    def __init__(self, cfg: Config, *, persistent: bool = False):
        self.persistent = persistent  # long-lived (the app, watch): keep vectors in memory
        # who brings the index up to date when asked (subscribed with sync_when_asked): a watcher
        # queues a sync, the one-shot CLI spawns a background index
        self._sync_askers: list[Callable[[str], Any]] = []
        self._wire(cfg)

    def _wire(self, cfg: Config) -> None:
        """Build the parts for `cfg`: the one place they are joined."""
        self.cfg = cfg
        self.index_reader = IndexReader(cfg)
        self._providers = None  # built on first use (providers): a keyword-only search never loads the embeddings
        self.freshness_check = Freshness(cfg, self.index_reader, persistent=self.persistent)
        # the parts below are built when first asked for: a one-shot `clawmem search` loads
        # none of the others' modules, `clawmem index` none of the search's
        for part in ("searcher", "jobs", "health", "memory_files", "history_log"):
            self.__dict__.pop(part, None)

    @property
    def providers(self):
        """The embedding providers of this config (embeddings/providers.py), built on first use."""
        if self._providers is None:
            from .embeddings.providers import Providers

            self._providers = Providers(self.cfg)
        return self._providers

    @cached_property
    def searcher(self) -> Searcher:
        from .search.searcher import Searcher

        return Searcher(self.cfg, self.index_reader, lambda: self.providers, self.freshness_check,
                        persistent=self.persistent, on_stale=self._ask_for_sync)

    @cached_property
    def jobs(self):
        from .index.jobs import IndexJobs

        return IndexJobs(self.cfg, self.index_reader, self.providers, self.freshness_check, background=_background_notes)

    @cached_property
    def health(self):
        from .index.health import Health

        health = Health(self.cfg, self.index_reader, self.providers, self.freshness_check, lambda store: self.searcher.vector_side(store), self.jobs)
        health.fleet_line = self._fleet_line
        return health

    @cached_property
    def memory_files(self):
        from .files.reading import MemoryFiles

        return MemoryFiles(self.cfg)

    @cached_property
    def history_log(self):
        from .files.history import History

        return History(self.cfg, self.memory_files)

    @classmethod
    def open(cls, *, config_path=None, workspace=None, agent=None, overrides=None, persistent=False) -> "Engine":
        cfg = config_mod.load(config_path, workspace=workspace, agent=agent, overrides=overrides)
        return cls(cfg, persistent=persistent)

    # ------------------------------------------------------------------ configuration

    @property
    def workspace(self):
        return self.cfg.workspace

    @property
    def index_path(self):
        return self.index_reader.index_path

    def reload_config(self, cfg: Config) -> None:
        """Apply a new configuration without a restart (the app's Config tab)."""
        self.close()
        self._wire(cfg)

    def config_set(self, key: str, value) -> None:
        """Set one key in this config's TOML file, comments and layout kept (ValueError or
        ConfigError, and nothing written, when the value or the file would not load)."""
        if self.cfg.file is None:
            raise ConfigError(f"{key}: no config file to write to")
        config_mod.write_value(self.cfg.file, key, value)

    @contextmanager
    def config_change(self, key: str, value):
        """`config_set`, then the block that loads and applies the file: if the block raises, the
        file is put back as it was (a file that no longer loads as a whole is never left behind)."""
        from .files.fsutil import atomic_write

        file = self.cfg.file
        before = file.read_text(encoding="utf-8") if file is not None and file.exists() else None
        try:
            self.config_set(key, value)
            yield
        except BaseException:
            if file is not None:
                if before is None:
                    file.unlink(missing_ok=True)
                else:
                    atomic_write(file, before)
            raise

    def extra_paths(self) -> list:
        """extraPaths as the index reads them: absolute, under the workspace where relative."""
        from .files.workspace import normalize_extra_paths

        return normalize_extra_paths(self.workspace, self.cfg["extraPaths"])

    @staticmethod
    def all_agents() -> list:
        """Every agent of this user with an index or in OpenClaw's agents.list (`--all-agents`)."""
        from .index.agents import all_agents

        return all_agents()

    def plan(self):
        return self.providers.plan()

    def reader(self):
        return self.index_reader.reader()

    def close(self) -> None:
        self.index_reader.close()
        if self._providers is not None:
            self._providers.close()

    # ------------------------------------------------------------------ search and read

    def options(self, request: SearchRequest | None = None):
        """The settings a search runs with: the request (None: a default one) over the config."""
        from .search.options import SearchRequest

        return self.searcher.options(request or SearchRequest())

    def search(self, query: str, request: SearchRequest | None = None, *, max_results: Any = None,
               min_score: Any = None, now: Any = None, after: Any = None, before: Any = None, explain: bool = False,
               show_hidden: bool = False, date_filter: bool | None = None, private: bool = False,
               stale_check: bool = True, sync_on_stale: bool = True) -> SearchResults:
        """memory_search. `request`, or its fields as keywords (SearchRequest's, but `agents`, which
        only a fleet search reads); the keywords are ignored when a request is given."""
        from .search.options import SearchRequest

        if request is None:
            request = SearchRequest(max_results=max_results, min_score=min_score, now=now, after=after, before=before,
                                    explain=explain, show_hidden=show_hidden, date_filter=date_filter, private=private,
                                    stale_check=stale_check, sync_on_stale=sync_on_stale)
        res = self.searcher.search(query, request)
        other = self.other_settings()
        if other:
            res["indexSettings"] = other
        return res

    def warm_up(self) -> None:
        """Make the next search cost what later ones do, for a server starting while its agent
        does: the index opened, its vectors in memory (a long-lived engine), the search's code
        run once, and a local model's worker reached or started (one query embedded). A remote
        provider is never asked: a warm-up must not spend the user's quota, nor, failing, hold
        that provider back (Providers.query_retry_after) from the agent's first search."""
        from . import search as search_mod

        store = self.index_reader.reader()
        if store is None or not store.has_schema():
            return
        side, _ = self.searcher.vector_side(store)  # loads the vectors; asks no provider
        if side is not None and side.provider.id == "local":
            self.search("warm up", private=True, stale_check=False)
        else:
            search_mod.run(store, "warm up", self.searcher.options(), None, None)

    def other_settings(self) -> str | None:
        """The line that says this config's index was built with other settings and is used as it
        is (a read-only command never rebuilds it), or None."""
        from .index.store import DatabaseError, built_with_other_settings

        try:
            store = self.index_reader.reader()
            if store is None or not store.has_schema():
                return None
            # once per open index, not on every search: its settings change only by a rebuild,
            # which swaps in a new file (and reader() a new connection)
            return self.index_reader.per_store("other settings", store, lambda st: built_with_other_settings(st, self.cfg))
        except (IndexUnavailable, DatabaseError):
            return None

    def get(self, path: str, from_line: int | None = None, lines: int | None = None) -> FileText:
        from .files.reading import check_window

        check_window(from_line, lines)
        return self.memory_files.get(path, from_line, lines)

    def read_text(self, path) -> str:
        """A memory file's text as the tools read it ("" when missing); FileRefused for a symlink
        out of the workspace or anything but a regular file."""
        from .files import memfile

        return memfile.read_text(self.workspace, path)

    def resolve_allowed(self, path: str):
        return self.memory_files.resolve_allowed(path)

    def list_files(self) -> list[dict]:
        return self.memory_files.list_files()

    # ------------------------------------------------------------------ index

    def index(self, *, force: bool = False, reason: str = "cli", backfill_sessions: bool = True,
              should_stop: Callable[[], bool] | None = None, lock_timeout: float = 60.0,
              paths: list | None = None) -> Iterator:
        """Bring the index up to date, yielding progress events (IndexJobs.index)."""
        return _database_errors_named(self.jobs.index(force=force, reason=reason, backfill_sessions=backfill_sessions,
                                                      should_stop=should_stop, lock_timeout=lock_timeout, paths=paths),
                                      self.index_path)

    def run_index(self, *, force: bool = False, on_event: Callable[[Any], None] | None = None, reason: str = "cli",
                  backfill_sessions: bool = True, should_stop: Callable[[], bool] | None = None,
                  lock_timeout: float = 60.0, paths: list | None = None):
        """`index` run to its end, each event handed to `on_event`; the JobFinished, if any."""
        return self.jobs.run_index(force=force, on_event=on_event, reason=reason, backfill_sessions=backfill_sessions,
                                   should_stop=should_stop, lock_timeout=lock_timeout, paths=paths)

    def index_in_background(self) -> str:
        """Start a detached `clawmem index` (a one-shot command found the index stale): "started",
        "busy" (a writer holds the lock) or "recent" (one was just started)."""
        from .index.watcher import spawn_background_index

        return spawn_background_index(self)

    @staticmethod
    def setup_logging(*, events_only: bool = False):
        """Send the engine's warnings and job summaries to clawmem's rotating log file (its path).
        `events_only`: the caller logs nothing but its jobs' events (`log_event`), as a one-shot
        command does; they are written without loading the logging module."""
        from .logs import open_for_events, setup

        return open_for_events() if events_only else setup()

    @staticmethod
    def log_event(event) -> None:
        """One event of a long job, at its level, in the log file `setup_logging` opened."""
        from .logs import log_event

        log_event(event)

    # ------------------------------------------------------------------ state

    def freshness(self, *, max_age: float = 0.0, full: bool = False) -> dict:
        return self.freshness_check.freshness(max_age=max_age, full=full)

    def seen_behind(self) -> bool:
        return self.freshness_check.seen_behind()

    def watcher_state(self) -> str:
        return self.freshness_check.watcher_state()

    def status(self, *, deep: bool = False) -> Status:
        return self.health.status(deep=deep)

    def index_summary(self) -> dict:
        """The index's path and counts and who serves searches: what `clawmem index` prints last."""
        return self.health.summary()

    def issues(self) -> list[str]:
        return self.health.issues()

    def repair(self) -> list[str]:
        return self.health.repair()

    # ------------------------------------------------------------------ writes

    def append(self, text, heading=None, *, now=None) -> WriteReceipt:
        """memory_append: a block at the end of today's daily log, as the agent tools write it."""
        from .agent import tools

        return WriteReceipt(tools.memory_append(self, text, heading, now=now))

    def remember(self, text, section=None, scope=None, replaces=None) -> WriteReceipt:
        """memory_remember: a durable fact as a bullet in MEMORY.md (scope "team": a note in
        the fleet's team notebook)."""
        from .agent import tools

        return WriteReceipt(tools.memory_remember(self, text, section, scope, replaces))

    def team_notes(self, *, every_version: bool = False, conflicts: bool = False) -> list[dict]:
        """The fleet's team notebook (FleetError when it cannot be read)."""
        from .fleet import notes

        return notes.team_notes(self, every_version=every_version, conflicts=conflicts)

    def team_undo(self, note_id: int) -> dict:
        from .fleet import notes

        return notes.team_undo(self, note_id)

    def log_entry(self, text: str, now):
        """A person's note at the end of today's daily log: (the file as written, its line)."""
        from .files import conflicts as files

        return files.append_entry(self.workspace, text, now)

    def daily_log_path(self, day):
        from .files import conflicts as files

        return files.daily_log_path(self.workspace, day)

    def memory_file(self):
        """MEMORY.md, or an existing lowercase memory.md."""
        from .files import conflicts as files

        return files.memory_file(self.workspace)

    def create_workspace(self) -> list:
        from .files import conflicts as files

        return files.create_workspace(self.workspace)

    def archive(self, transcript, *, slug=None, now=None):
        """A session transcript kept as a Markdown note under memory/ (archive.ArchiveError if not)."""
        from .agent.archive import archive_session

        return archive_session(self.workspace, transcript, slug=slug, now=now)

    def flush_plan(self, *, day=None):
        """The pre-compaction memory flush for this agent: its prompts, target file, warnings."""
        from .agent.prompts import flush_plan

        return flush_plan(self.cfg.agent_id, day=day)

    def context(self, *, max_chars: int | None = None, session: str = "main", today=None) -> dict:
        """The session-start context: the files an agent reads first, cut to the budget."""
        from .agent.context import session_context

        return session_context(self, max_chars=max_chars, session=session, today=today)

    # ------------------------------------------------------------------ editing a file

    def edit(self, path):
        """An edit session on one memory file, named as the fronts name it (MEMORY.md,
        memory/2026-02-10.md) or by its absolute path: open, save with a conflict check, merge.
        AccessDenied for a path the tools may not write. Each save is journalled at once; the
        index is then asked for that file only (`index(paths=[session.path])`)."""
        from pathlib import Path

        from .files.editing import EditSession

        rel, abspath = self.resolve_allowed(str(path))
        root = self.workspace if Path(abspath).is_relative_to(self.workspace) else None  # an extra path: its own folder
        return EditSession(abspath, rel=rel, on_saved=lambda s, snap: self.history_log.record(s.rel, s.path, snap.text), root=root)

    def keep_recovery(self, session):
        from .files import editing

        return editing.keep_recovery(self.cfg.agent_id, session)

    def find_recovery(self, abspath):
        from .files import editing

        return editing.find_recovery(self.cfg.agent_id, abspath)

    def drop_recovery(self, abspath) -> None:
        from .files import editing

        editing.drop_recovery(self.cfg.agent_id, abspath)

    # ------------------------------------------------------------------ history

    def open_journal(self, *, catch_up: bool = True):
        return self.history_log.open(catch_up=catch_up)

    def history(self, path: str | None = None, since: float | None = None, *, catch_up: bool = True) -> list:
        return self.history_log.changes(path, since, catch_up=catch_up)

    def restore(self, path: str, version: int, *, catch_up: bool = True):
        return self.history_log.restore(path, version, catch_up=catch_up)

    def undo_hunk(self, path: str, previous: int | None, version: int, hunk: int):
        return self.history_log.undo_hunk(path, previous, version, hunk)

    # ------------------------------------------------------------------ watching, promoting, the fleet

    def watcher(self, on_event=None):
        """The watcher (file events, debounced syncs), not started yet: `start()` and `stop()` it."""
        from .index.watcher import Syncer

        return Syncer(self, on_event=on_event, after_sync=self._push_after_sync)

    def watch(self, on_event=None):
        """Start the watcher; `stop()` the object it returns."""
        syncer = self.watcher(on_event)
        syncer.start()
        return syncer

    def run_watcher(self, *, once: bool = False, printer: Callable[[str], None] = print) -> int:
        """`clawmem watch`: sync, then keep the index fresh until interrupted, printing log
        lines through `printer`; the exit code."""
        from .index.watcher import run_daemon

        return run_daemon(self, once=once, printer=printer, after_sync=self._push_after_sync, every_minute=self._promotion_sweep)

    def sync_when_asked(self, ask: Callable[[str], Any]) -> Callable[[], None]:
        """Subscribe `ask(reason)` to the engine's requests for a sync: "search" (a search found
        the index behind the files and sync.onSearch is on), "write" (an agent's write could not
        be indexed at once). It must return at once. The earliest subscriber still subscribed is
        asked; returns the function that ends this subscription."""
        self._sync_askers.append(ask)

        def unsubscribe() -> None:
            if ask in self._sync_askers:
                self._sync_askers.remove(ask)

        return unsubscribe

    def syncs_when_asked(self) -> bool:
        """Whether something (a watcher, the CLI's background index) answers a request for a sync."""
        return bool(self._sync_askers)

    def ask_for_sync(self, reason: str) -> bool:
        """Ask the subscriber for a sync; False when nobody is subscribed. A failed request does
        not fail the caller: the next one tries again."""
        if not self._sync_askers:
            return False
        try:
            self._sync_askers[0](reason)
        except Exception:
            return False
        return True

    def promotion_candidates(self, gates=None, *, limit: int | None = None, include_promoted: bool = False,
                             now: float | None = None):
        """(the passages of daily logs worth keeping in MEMORY.md, notes), best first."""
        from .consolidate import promote

        return promote.preview(self, gates or promote.COMMAND, limit=limit, include_promoted=include_promoted, now=now)

    def promote(self, candidates, *, edits: dict[str, str] | None = None, confirmed: set[str] | None = None,
                supersede: set[str] | None = None, today=None):
        from .consolidate import promote

        return promote.apply(self, candidates, edits=edits, confirmed=confirmed, supersede=supersede, today=today)

    def memory_budget(self) -> dict:
        """MEMORY.md's size against promote.memoryFileMaxChars, and the bullets to archive."""
        from .consolidate import promote

        return promote.budget_state(self)

    def promotion_forecast(self, candidates) -> dict:
        """MEMORY.md's size after `promote` would write these, and what it would archive first."""
        from .consolidate import promote

        return promote.forecast(self, candidates)

    def retire_promoted(self, key: str) -> str:
        """Mark a promoted fact no longer true (kept, struck, left out of context); its text."""
        from .consolidate import promote

        return promote.retire(self, key)

    def reinstate_promoted(self, key: str) -> str:
        """Undo a supersede or retire of one promoted fact; its text."""
        from .consolidate import promote

        return promote.reinstate(self, key)

    def archive_promoted(self) -> dict:
        from .consolidate import promote

        return promote.archive_oldest(self)

    def reject_promotion(self, candidate) -> None:
        from .consolidate import promote

        promote.reject(self, candidate)

    def record_recall(self, query: str, results: list[dict]) -> int:
        """Count daily-log hits a person looked at, for promotion."""
        from .consolidate import recall

        return recall.record(self.cfg, query, results)

    def fleet_search(self, query: str, request: SearchRequest | None = None) -> dict:
        from .fleet import search as fleet
        from .search.options import SearchRequest

        return fleet.search(self, query, request or SearchRequest())

    def fleet_get(self, ref: str, from_line: int | None = None, lines: int | None = None) -> dict:
        from .files.reading import check_window
        from .fleet.search import get_stored

        check_window(from_line, lines)
        return get_stored(self.cfg, ref, from_line, lines)

    def fleet_push(self, progress=None) -> dict:
        from .fleet.push import push

        return push(self, progress)

    # ------------------------------------------------------------------ sub-faces: operations with an owner of their own

    @property
    def fleet(self) -> "Fleet":
        """The fleet's owner operations (grant, revoke, list, …) on this config's fleet URL."""
        return Fleet(self.cfg)

    @property
    def models(self) -> "Models":
        """The local embedding models' files: the cache, downloads."""
        return Models(self.cfg)

    @property
    def tools(self) -> "AgentTools":
        """The memory tools as an agent calls them (OpenClaw's payloads, never an exception)."""
        return AgentTools(self)

    @staticmethod
    def resident_models() -> list[dict]:
        """The user's resident model workers (shared by every agent): pid, model, memory, idle time."""
        from .embeddings.resident import resident_models

        return resident_models()

    @staticmethod
    def stop_resident_models() -> list[dict]:
        """End every resident model worker of this user; the ones stopped."""
        from .embeddings.resident import stop_resident_models

        return stop_resident_models()

    @staticmethod
    def local_fleet_server(server_dir: str = ""):
        """`fleet up`/`down`: the PostgreSQL clawmem keeps for this user, under `server_dir`
        ([fleet] serverDir; empty: the default place)."""
        import os

        from .fleet.server import LocalServer

        return LocalServer(os.path.expanduser(server_dir) if server_dir else None)

    @staticmethod
    def name_this_process(name: str) -> None:
        """Who the journal credits with this process's writes ("app", "cli", …)."""
        from .files.writers import name_this_process

        name_this_process(name)

    # ------------------------------------------------------------------ internal

    def _ask_for_sync(self) -> None:
        if self._sync_askers and not self.other_settings():  # else a sync would leave that index as it is
            self.ask_for_sync("search")

    # what follows a sync: the watcher (index/) publishes that it synced, the engine subscribes
    # what sits above the index (the fleet's push, the promotion sweep), so no arrow points up

    def _push_after_sync(self) -> str | None:
        """With `[fleet] publish = true`, push to the fleet after a sync. A fleet that is down only
        leaves the push behind (status says how far): a running watcher tries again every
        PUSH_RETRY_SECONDS, `watch --once` at its next run. Returns the warning."""
        if not (self.cfg["fleet.publish"] and self.cfg["fleet.url"]):
            return None
        from .fleet.push import push_quietly

        error = push_quietly(self)
        if error is None:
            return None
        _log().warning("%s", error)
        return f"{error}; local work goes on, and the push is tried again every few seconds until the fleet answers"

    def _promotion_sweep(self) -> str | None:
        """promote.sweep, asked about once a minute by `clawmem watch`: once a day, count the
        promotion candidates (and with `apply` write the ones passing the stricter scheduled
        gates); the one line that says what happened, or None."""
        if self.cfg["promote.sweep"] == "off":
            return None
        from .consolidate import promote

        try:
            done = promote.daily_sweep(self)
        except Exception as exc:  # never stops the watcher; the log has the details
            import traceback

            _log().error("promotion sweep failed: %s\n%s", exc, traceback.format_exc())
            first = str(exc).strip().splitlines()
            return f"promote: sweep failed: {first[0] if first else type(exc).__name__}"
        if done is None:
            return None
        applied = f"; {done['applied']} promoted to MEMORY.md (clawmem history MEMORY.md)" if done["mode"] == "apply" else ""
        return f"promote: {done['candidates']} candidate(s) to review (clawmem promote, or F10 in the app){applied}"

    def _fleet_line(self) -> dict | None:
        from .fleet.push import fleet_status  # psycopg is not needed for this: it reads local state only

        return fleet_status(self)


def _log():
    from . import logs

    return logs.logger("clawmem.sync")


def _background_notes() -> tuple[str, ...]:
    """The search's notes about nothing (search/background.py), for the index jobs to embed in a
    small memory: handed to index/ from here, loaded only when a job embeds."""
    from .search.background import BACKGROUND

    return BACKGROUND


def _database_errors_named(events: Iterator, index_path) -> Iterator:
    """An index job's SQLite error (disk full, read-only file) as the engine's own error, naming
    the file, so a front shows one line without knowing the database driver."""
    from .index.store import DatabaseError

    try:
        yield from events
    except DatabaseError as exc:
        raise IndexFailed(f"{index_path}: {exc}; check free space and permissions, then run `clawmem index` again") from exc


@raises_clawmem_errors
class Fleet:
    """The fleet's owner operations, on the URL this config names ([fleet] url or
    CLAWMEM_FLEET_URL; ConfigError when there is none, before anything is done). Searching, reading and pushing are the
    engine's own (`Engine.fleet_search`, `fleet_get`, `fleet_push`, `team_notes`)."""

    def __init__(self, cfg: Config):
        self.cfg = cfg

    @property
    def url(self) -> str:
        from .fleet.connection import fleet_url

        return fleet_url(self.cfg)

    def grant(self, agent: str, reads: list[str] | None = None, *, new_password: bool = False,
              add: list[str] = (), remove: list[str] = ()) -> dict:
        from .fleet.admin import grant

        return grant(self.url, agent, reads, new_password=new_password, add=add, remove=remove)

    def revoke(self, agent: str, *, delete_rows: bool = False) -> dict:
        from .fleet.admin import revoke

        return revoke(self.url, agent, delete_rows=delete_rows)

    def list(self, command: str = "list") -> dict:
        """`command`: the command that asks (`list` or `status`), as a refusal names it."""
        from .fleet.admin import fleet_list

        return fleet_list(self.url, command)

    def build_indexes(self) -> list[str]:
        from .fleet.admin import build_indexes

        return build_indexes(self.url)

    def distribute(self) -> list[str]:
        from .fleet.admin import distribute

        return distribute(self.url)


@raises_clawmem_errors
class Models:
    """The local embedding models: the cache folder (local.modelCacheDir), what is in it, downloads."""

    def __init__(self, cfg: Config):
        self.cfg = cfg

    @property
    def default(self) -> str:
        """The hf: URI of the model `provider = "local"` uses without local.modelPath."""
        return config_mod.DEFAULT_LOCAL_MODEL

    @property
    def cache_dir(self):
        from .embeddings import model_cache_dir

        return model_cache_dir(self.cfg)

    def cached(self) -> list[dict]:
        """The models in the cache, and unfinished downloads."""
        from .embeddings.download import cached_models

        return cached_models(self.cache_dir)

    def cached_path(self, uri: str):
        """Where an hf: model is (or will be) in the cache."""
        from .embeddings.download import cached_path

        return cached_path(uri, self.cache_dir)

    def download(self, uri: str, on_progress: Callable[[int, int | None], None] | None = None):
        """Download an hf: model into the cache (resuming a partial one); its path. DownloadError."""
        from .embeddings.download import download

        return download(uri, self.cache_dir, on_progress)


@raises_clawmem_errors
class AgentTools:
    """memory_search, memory_get, memory_promote and the rest as an agent calls them: loose
    arguments checked here, OpenClaw's payloads back, errors as payloads rather than exceptions."""

    def __init__(self, engine: Engine):
        self.engine = engine

    def search(self, query, maxResults=None, minScore=None, *, max_results=None, min_score=None, corpus=None,
               private=None, agents=None) -> dict:
        """memory_search's arguments as the MCP server takes them (its SearchArgs)."""
        from .agent import tools

        return tools.memory_search(self.engine, query, maxResults, minScore, max_results=max_results,
                                   min_score=min_score, corpus=corpus, private=private, agents=agents)

    def get(self, path, from_=None, lines=None) -> dict:
        from .agent import tools

        return tools.memory_get(self.engine, path, from_, lines)

    def promote_preview(self) -> dict:
        from .agent import tools

        return tools.promote_preview(self.engine)

    def promote(self, keys=None, limit=None) -> dict:
        from .agent import tools

        return tools.memory_promote(self.engine, keys, limit)

    def index_now(self) -> dict:
        """Index what was just written, so the next search finds it: {indexed} or {indexed: false, warning}."""
        from .agent import tools

        return tools.index_now(self.engine)

    @staticmethod
    def disabled(reason: str) -> dict:
        """memory_search's payload when search is turned off."""
        from .agent import tools

        return tools.disabled_payload(reason)


def __getattr__(name: str):
    """disabled_reason, kept importable from here (__all__) without loading the search modules."""
    if name == "disabled_reason":
        from .search.searcher import disabled_reason

        return disabled_reason
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
