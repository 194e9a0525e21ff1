"""Live sync: keep one engine's index fresh while a front end runs.

    syncer = Syncer(engine, on_event)
    syncer.start()             # sync now, then watch, sync on an interval, reconcile, heartbeat
    syncer.request("manual")   # ask for a background sync; returns at once
    syncer.state               # SyncState snapshot (watcher, job, last sync, lock holder, ...)
    syncer.stop()              # stop the job at the next file, mark the watcher stopped

What triggers a sync:
- start (transcripts are backfilled, so changes made while nothing ran are caught);
- the watcher (watchfiles) over MEMORY.md, memory.md, memory/, extraPaths and the sessions
  folder: changes are debounced by `sync.watchDebounceMs` (a burst of writes is one sync,
  and a steady stream still syncs every few debounce periods); `sync.watch = false` turns
  it off;
- `sync.intervalMinutes`;
- `request(reason)`: "search" (Engine.search asks it, subscribed with `engine.sync_when_asked`, when it
  finds the index stale), "manual" (a reindex action: backfills transcripts), "rebuild"
  (index --force);
- a reconciliation scan every RECONCILE_SECONDS (stat only, tens of ms at 5000 files)
  that catches what the watcher missed; a miss restarts the watcher.

Indexing goes through `Engine.index`, which holds the cross-process writer lock. When
another process holds it the syncer says who, and retries a few seconds later.

Callbacks: `on_event(event)` runs on the syncer's worker thread (never on the caller's),
with the engine's events (JobStarted, Progress, FileIndexed, ChunksEmbedded,
ProviderSwitched, Warning, Error, JobFinished) and the syncer's own (WatcherState,
FilesChanged). A front end with its own loop (Textual) turns them into messages.

What happens after a sync is the engine's business, not the index's: the engine subscribes
`after_sync` (its fleet push) when it builds a syncer (Engine.watcher), and `clawmem watch`'s
`every_minute` (the daily promotion sweep), so this module imports nothing above index/.

While it runs, the syncer writes the heartbeat that `status` reads (watcher: running); it
marks it stopped on exit, and a killed process stops beating, so status tells the truth.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .. import events as ev
from .. import logs, paths
from ..errors import raises_clawmem_errors
from .lock import LockBusy, current_holder, describe_holder
from .heartbeat import HEARTBEAT_SECONDS, clear_heartbeat, write_heartbeat
from ..files.workspace import IGNORED_DIRS, normalize_extra_paths

log = logs.logger("clawmem.sync")

RECONCILE_SECONDS = 30.0
LOCK_WAIT_SECONDS = 2.0  # how long one sync waits for another writer before retrying later
LOCK_RETRY_SECONDS = 1.0  # a retry is a cheap flock probe while the other writer runs
ERROR_RETRY_SECONDS = (5.0, 30.0, 120.0, 300.0)
RESTART_DELAYS = (0.5, 2.0, 5.0, 15.0, 30.0)
MAX_DEBOUNCE_FACTOR = 4  # a steady stream of writes still syncs every 4 debounce periods
MISS_GRACE_SECONDS = 5.0  # a change older than debounce + this that the watcher never reported was missed
MISS_RESTART_SECONDS = 600.0  # restart the watcher for misses at most this often
FILE_LOG_LIMIT = 20  # FileIndexed lines logged per job; the summary counts the rest
TEMP_SUFFIXES = (".swp", ".swo", ".swx", ".swpx", ".tmp", ".temp", ".part", ".crdownload", "~")


def is_temp_name(name: str) -> bool:
    """Editor and atomic-write temporaries: vim swap/backup and its 4913 probe, emacs lock and autosave files."""
    return name.endswith(TEMP_SUFFIXES) or name.startswith((".#", "#")) or name == "4913"


# --------------------------------------------------------------------------- what to watch


@dataclass(frozen=True)
class Targets:
    """The folders to watch and which of their paths matter (all real paths)."""

    trees: tuple[str, ...]  # watched recursively: memory/, extraPaths folders, the sessions folder
    flat: tuple[str, ...]  # watched without recursion: the workspace, parents of extraPaths files
    exact: frozenset[str]  # paths in the flat folders that matter
    sessions: str | None

    def wanted(self, path: str) -> bool:
        name = os.path.basename(path)
        if is_temp_name(name):
            return False
        if path in self.exact:
            return True
        for root in self.trees:
            if path.startswith(root + os.sep):
                parts = path[len(root) + 1 :].split(os.sep)
                if any(p in IGNORED_DIRS for p in parts):
                    return False
                if root == self.sessions:
                    return len(parts) == 1 and ".jsonl" in name
                # .md files, and folders (a renamed or deleted folder reports only its own path)
                return name.endswith(".md") or not os.path.splitext(name)[1]
        return False

    def describe(self, workspace: Path) -> str:
        shown = [_shown(p, workspace) + "/" for p in self.trees] + [_shown(p, workspace) for p in sorted(self.exact) if not p.endswith(os.sep + "memory")]
        return ", ".join(dict.fromkeys(shown)) or "nothing yet"


def _shown(path: str, workspace: Path) -> str:
    rel = os.path.relpath(path, workspace)
    return path if rel.startswith("..") else rel.replace(os.sep, "/")


def _real_dir(p: Path) -> str | None:
    """The real path of an existing folder that is not a symlink (symlinks are never followed)."""
    try:
        if p.is_dir() and not p.is_symlink():
            return os.path.realpath(p)
    except OSError:
        pass
    return None


def watch_targets(cfg) -> Targets:
    ws = Path(cfg.workspace)
    trees: list[str] = []
    flat: list[str] = []
    exact: set[str] = set()
    sessions = None
    if "memory" in cfg["sources"]:
        ws_real = _real_dir(ws)
        if ws_real:
            flat.append(ws_real)
            exact.update(os.path.join(ws_real, n) for n in ("MEMORY.md", "memory.md", "memory"))
        mem = _real_dir(ws / "memory")
        if mem:
            trees.append(mem)
        for p in normalize_extra_paths(ws, cfg["extraPaths"]):
            d = _real_dir(p)
            if d:
                trees.append(d)
            elif p.name.endswith(".md") and not p.is_symlink():
                parent = _real_dir(p.parent)
                if parent:
                    flat.append(parent)
                    exact.add(os.path.join(parent, p.name))
    if "sessions" in cfg["sources"]:
        sessions = _real_dir(Path(cfg.sessions_dir()))
        if sessions:
            trees.append(sessions)
    # a folder inside another watched folder is covered already
    trees = sorted(set(trees))
    trees = [t for t in trees if not any(t != o and t.startswith(o + os.sep) for o in trees)]
    flat = [f for f in dict.fromkeys(flat) if f not in trees and not any(f.startswith(t + os.sep) for t in trees)]
    return Targets(tuple(trees), tuple(flat), frozenset(exact), sessions)


class _WatchThread(threading.Thread):
    """One watchfiles loop. It ends when stopped, or when the loop dies (error stays in .error)."""

    def __init__(self, roots: tuple[str, ...], recursive: bool, targets: Targets, on_changes: Callable[[list[str]], None]):
        super().__init__(name=f"clawmem-watch-{'tree' if recursive else 'flat'}", daemon=True)
        self.roots = roots
        self.recursive = recursive
        self.targets = targets
        self.on_changes = on_changes
        self.stop_event = threading.Event()
        self.ready = threading.Event()  # set once the OS watches are in place
        self.error: str | None = None
        self.fault: str | None = None  # set by Syncer._inject_watch_failure: the loop raises it

    def run(self) -> None:
        import watchfiles

        try:
            for changes in watchfiles.watch(
                *self.roots,
                watch_filter=lambda _change, path: self.targets.wanted(path),
                debounce=400,
                step=50,
                stop_event=self.stop_event,
                # an empty yield every 250 ms: says the watches are in place, and lets a fault be seen
                rust_timeout=250,
                yield_on_timeout=True,
                raise_interrupt=False,
                recursive=self.recursive,
                ignore_permission_denied=True,
            ):
                self.ready.set()
                if self.fault:
                    raise RuntimeError(self.fault)
                if changes:
                    self.on_changes(sorted({p for _, p in changes}))
        except Exception as exc:  # reported and restarted by the syncer
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.ready.set()

    def stop(self) -> None:
        self.stop_event.set()


# --------------------------------------------------------------------------- the syncer


@dataclass(frozen=True)
class SyncState:
    running: bool  # start() was called and stop() not yet
    watcher: str  # "running", "restarting", "off" (sync.watch = false), "stopped"
    job: str | None  # the reason of the sync in progress ("start", "watch", "search", ...)
    last_sync: float | None  # time.time() when the last sync finished
    last_result: str | None  # one line: the last sync's summary or error
    waiting_for: str | None  # who holds the writer lock while we wait for it
    restarts: int  # watcher restarts so far
    pending: tuple[str, ...]  # reasons of syncs waiting to run


@raises_clawmem_errors
class Syncer:
    """Keeps an engine's index fresh in the background; see the module docstring."""

    def __init__(self, engine, on_event: Callable[[ev.Event], None] | None = None, *, reconcile_seconds: float = RECONCILE_SECONDS,
                 after_sync: Callable[[], str | None] | None = None):
        self.engine = engine
        self.on_event = on_event or (lambda e: None)
        # subscribed by the engine: runs after each sync; a warning back means it left work behind
        # (the fleet was down), so it runs again every PUSH_RETRY_SECONDS until it returns None
        self.after_sync = after_sync
        self._unsubscribe: Callable[[], None] | None = None  # from the engine's requests for a sync
        self.reconcile_seconds = reconcile_seconds
        self._cond = threading.Condition()
        self._running = False
        self._stopping = False
        self._stop_event = threading.Event()  # wakes the heartbeat thread at stop
        self._beat_lock = threading.Lock()
        self._worker: threading.Thread | None = None
        self._beater: threading.Thread | None = None
        self._watchers: list[_WatchThread] = []
        self._targets: Targets | None = None
        self._watch_state = "stopped"
        self._restarts = 0
        self._restart_due: float | None = None
        self._restart_why = ""
        self._last_miss_restart = -1e9
        # pending work (guarded by _cond)
        self._requests: dict[str, float] = {}  # reason -> monotonic time it is due
        self._only: dict[str, set[str]] = {}  # reason -> the files it is about (a save), when it names them
        self._due_only: set[str] | None = None  # the files the sync being started is about (None: all)
        self._changed: set[str] = set()
        self._first_change = 0.0
        self._last_change = 0.0
        self._blocked_until = 0.0
        # results
        self._job: str | None = None
        self._last_sync: float | None = None
        self._last_sync_mono = time.monotonic()
        self._last_result: str | None = None
        self._waiting_for: str | None = None
        self._errors_in_row = 0
        self._push_retry: float | None = None  # when to run after_sync again (the fleet's push failed)
        self._push_failed_at: float | None = None  # since when pushes fail (None: the last one went out)
        self._left_behind: set[str] = set()
        self._files_logged = 0

    # -- public API ------------------------------------------------------------------

    def start(self) -> None:
        """Start the worker, the watcher and the heartbeat; a first sync runs at once."""
        with self._cond:
            if self._running:
                return
            self._running, self._stopping = True, False
            self._stop_event.clear()
            self._requests["start"] = time.monotonic()
        try:
            logs.setup()
        except OSError:
            pass  # no log file is no reason not to sync
        write_heartbeat(self.engine.cfg, "running", True)  # the first sync has not run yet
        if not self.engine.syncs_when_asked():
            self._unsubscribe = self.engine.sync_when_asked(self.request)
        self._worker = threading.Thread(target=self._work, name="clawmem-sync", daemon=True)
        self._beater = threading.Thread(target=self._beat, name="clawmem-heartbeat", daemon=True)
        self._worker.start()
        self._beater.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop at the next file boundary (committed work stays), stop watching, mark stopped."""
        with self._cond:
            if not self._running:
                return
            self._stopping = True
            self._cond.notify_all()
        self._stop_event.set()
        for t in (self._worker, self._beater):
            if t is not None and t is not threading.current_thread():  # stop() from a callback
                t.join(timeout)
        self._stop_watchers()  # normally done by the worker; again in case it is stuck
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        clear_heartbeat(self.engine.cfg)
        with self._cond:
            self._running = False
            self._watch_state = "stopped"

    def request(self, reason: str = "manual", paths=None) -> None:
        """Ask for a sync soon, in the background; never blocks. "rebuild" forces a full rebuild.
        `paths`: the absolute paths of the files just written; then only they are indexed (and the
        watcher's own event for them is not synced again)."""
        with self._cond:
            now = time.monotonic()
            if paths is not None and (reason in self._only or reason not in self._requests):
                self._only.setdefault(reason, set()).update(str(p) for p in paths)
            else:
                self._only.pop(reason, None)  # asked for everything too
            self._requests[reason] = min(self._requests.get(reason, now), now)
            self._cond.notify_all()

    @property
    def state(self) -> SyncState:
        with self._cond:
            return SyncState(
                running=self._running and not self._stopping,
                watcher=self._watch_state,
                job=self._job,
                last_sync=self._last_sync,
                last_result=self._last_result,
                waiting_for=self._waiting_for,
                restarts=self._restarts,
                pending=tuple(sorted(set(self._requests) | ({"watch"} if self._changed else set()))),
            )

    # -- test hook -----------------------------------------------------------------------

    def _inject_watch_failure(self, message: str = "injected failure") -> None:
        """Make the running watch loops raise, as a crash inside watchfiles would (tests)."""
        for w in list(self._watchers):
            w.fault = message

    # -- watcher -------------------------------------------------------------------------

    def _debounce(self) -> float:
        return self.engine.cfg["sync.watchDebounceMs"] / 1000.0

    def _start_watchers(self) -> None:
        self._stop_watchers()
        cfg = self.engine.cfg
        self._targets = targets = watch_targets(cfg)
        if not cfg["sync.watch"]:
            self._watch_state = "off"
            return
        for roots, recursive in ((targets.trees, True), (targets.flat, False)):
            if roots:
                w = _WatchThread(roots, recursive, targets, self._on_changes)
                w.start()
                self._watchers.append(w)
        for w in self._watchers:
            w.ready.wait(5.0)  # "running" means a save made now is seen
        self._watch_state = "running"

    def _stop_watchers(self) -> None:
        for w in self._watchers:
            w.stop()
        for w in self._watchers:
            w.join(5.0)
        self._watchers = []

    def _on_changes(self, paths_: list[str]) -> None:
        """Called on a watcher thread: remember what changed; the worker syncs after the debounce."""
        with self._cond:
            now = time.monotonic()
            first = not self._changed
            if first:
                self._first_change = now
            self._changed.update(paths_)
            self._last_change = now
            self._cond.notify_all()
        if first:
            self._write_beat()  # searches in other processes learn at once that the index lags

    def _heard_dirty(self) -> bool | None:
        """For the heartbeat: whether changes are waiting to be indexed, as far as the watcher
        knows; None while it does not watch (off, restarting): then it cannot tell."""
        with self._cond:
            if self._watch_state != "running":
                return None
            return bool(self._changed or self._requests or self._job)

    def _write_beat(self) -> None:
        with self._beat_lock:  # the watcher, worker and heartbeat threads write it: the last state wins
            worker = self._worker
            try:
                write_heartbeat(self.engine.cfg, "running" if worker is not None and worker.is_alive() else "stopped", self._heard_dirty())
            except OSError as exc:
                log.warning("cannot write the watcher heartbeat: %s", exc)

    def _supervise(self) -> None:
        """Restart a watch loop that died, with a growing delay, and say so."""
        dead = [w for w in self._watchers if not w.is_alive()]
        now = time.monotonic()
        if dead and self._restart_due is None:
            why = "; ".join(w.error or "its loop ended" for w in dead)
            delay = RESTART_DELAYS[min(self._restarts, len(RESTART_DELAYS) - 1)]
            self._restart_due = now + delay
            self._restart_why = f"watcher died ({why}); restarting"
            self._watch_state = "restarting"
            log.warning("%s", self._restart_why)
        if self._restart_due is not None and now >= self._restart_due:
            self._restart_watchers(self._restart_why)

    def _restart_watchers(self, why: str) -> None:
        self._restart_due = None
        self._restarts += 1
        self._start_watchers()
        # whatever happened while nobody watched is caught by a sync now
        self._requests.setdefault("watch-restart", time.monotonic())
        if self._watch_state == "off":
            self._emit(ev.WatcherState("off", f"{why}; not watching (sync.watch = false)"))
        else:
            self._emit(ev.WatcherState("restarted", f"{why}; watching {self._targets.describe(self.engine.workspace) if self._targets else ''}"))

    # -- worker --------------------------------------------------------------------------

    def _work(self) -> None:
        try:
            self._loop()
        finally:
            self._stop_watchers()
            self._watch_state = "stopped"
            self._emit(ev.WatcherState("stopped"))

    def _loop(self) -> None:
        try:
            self._start_watchers()
            if self._watch_state == "off":
                self._emit(ev.WatcherState("off", "sync.watch = false: syncing at start, on the interval and on request"))
            else:
                self._emit(ev.WatcherState("running", f"watching {self._targets.describe(self.engine.workspace)}"))
        except Exception as exc:
            self._watch_state = "restarting"
            self._restart_due = time.monotonic() + RESTART_DELAYS[0]
            self._restart_why = f"watcher failed to start ({exc})"
        next_reconcile = time.monotonic() + self.reconcile_seconds
        while True:
            try:
                with self._cond:
                    if self._stopping:
                        return
                self._supervise()
                if self._push_retry is not None and time.monotonic() >= self._push_retry:
                    self._after_sync(retry=True)  # the fleet was down: catch up as soon as it answers again
                    continue
                reason = self._take_due()
                if reason is not None:
                    self._sync(reason)
                    continue
                if time.monotonic() >= next_reconcile:
                    next_reconcile = time.monotonic() + self.reconcile_seconds
                    self._reconcile()
                    continue
                with self._cond:
                    if not self._stopping:
                        wake = min(self._next_due(), next_reconcile, time.monotonic() + 1.0, self._push_retry or float("inf"))
                        self._cond.wait(max(0.01, wake - time.monotonic()))
            except Exception as exc:  # the worker must outlive any bug in one round
                log.error("sync loop error: %s\n%s", exc, traceback.format_exc())
                self._emit(ev.Error(f"sync loop error: {exc}"))
                time.sleep(1.0)

    def _interval(self) -> float | None:
        minutes = self.engine.cfg["sync.intervalMinutes"]
        return minutes * 60.0 if minutes > 0 else None

    def _next_due(self) -> float:
        """When the next sync is due (monotonic); caller holds _cond."""
        times = list(self._requests.values())
        if self._changed:
            d = self._debounce()
            times.append(min(self._last_change + d, self._first_change + d * MAX_DEBOUNCE_FACTOR))
        iv = self._interval()
        if iv:
            times.append(self._last_sync_mono + iv)
        if self._restart_due is not None:
            times.append(self._restart_due)
        due = min(times) if times else time.monotonic() + 3600
        return max(due, self._blocked_until)

    def _take_due(self) -> str | None:
        """The reason of the sync to run now, if one is due; clears what that sync will serve."""
        with self._cond:
            now = time.monotonic()
            if now < self._blocked_until:
                return None
            iv = self._interval()
            if iv and now >= self._last_sync_mono + iv:
                self._requests.setdefault("interval", now)
            reasons = [r for r, t in self._requests.items() if t <= now]
            d = self._debounce()
            watch_due = bool(self._changed) and now >= min(self._last_change + d, self._first_change + d * MAX_DEBOUNCE_FACTOR)
            if not reasons and not watch_due:
                return None
            changed = sorted(self._changed) if watch_due else []
            if watch_due:
                self._changed.clear()
            self._due_only = None
            if reasons and not watch_due and all(r in self._only for r in reasons):
                self._due_only = set().union(*(self._only[r] for r in reasons))
                self._changed -= self._due_only  # the watcher heard those writes: this sync covers them
            for r in reasons:
                del self._requests[r]
                self._only.pop(r, None)
        if changed:
            self._emit(ev.FilesChanged(tuple(self._display(p) for p in changed)))
        for r in ("rebuild", "start", "manual"):
            if r in reasons:
                return r
        if watch_due:
            return "watch"
        if reasons and all(r in ("search", "reconcile") for r in reasons) and not self._news():
            return None  # only files we already left behind on purpose (transcripts under the delta)
        return reasons[0]

    def _news(self) -> bool:
        """Whether disk and index differ in a way the last sync did not leave on purpose."""
        try:
            behind = set(self.engine.freshness(max_age=2.0, full=True)["behind"])
        except Exception:
            return True
        return bool(behind - self._left_behind)

    def _display(self, path: str) -> str:
        t = self._targets
        if t and t.sessions and path.startswith(t.sessions + os.sep):
            return "sessions/" + os.path.basename(path)
        return _shown(path, self.engine.workspace)

    def _sync(self, reason: str) -> None:
        with self._cond:
            self._job = reason
            only, self._due_only = self._due_only, None
        self._files_logged = 0
        finished = None
        holder = current_holder(self.engine.index_path)
        if holder is not None:  # another process writes: do not even queue behind it
            self._lock_busy(describe_holder(holder), reason, only)
            return
        try:
            events = self.engine.index(
                force=reason == "rebuild",
                reason=reason,
                backfill_sessions=reason in ("start", "manual", "rebuild"),
                should_stop=lambda: self._stopping,
                lock_timeout=LOCK_WAIT_SECONDS,
                paths=sorted(only) if only is not None else None,
            )
            for e in events:
                if isinstance(e, ev.Warning) and e.message.startswith("waiting for the writer lock"):
                    continue  # the lock was taken just now; LockBusy below says who holds it
                if self._waiting_for is not None:  # we hold the lock now
                    with self._cond:
                        self._waiting_for = None
                if isinstance(e, ev.JobFinished):
                    finished = e
                self._emit(e)
        except LockBusy as exc:
            self._lock_busy(describe_holder(exc.holder), reason, only)
            return
        except Exception as exc:
            delay = ERROR_RETRY_SECONDS[min(self._errors_in_row, len(ERROR_RETRY_SECONDS) - 1)]
            self._errors_in_row += 1
            msg = _one_line(exc)
            log.error("sync (%s) failed: %s\n%s", reason, msg, traceback.format_exc())
            with self._cond:
                self._last_result = f"error: {msg}"
                self._blocked_until = time.monotonic() + delay  # everything waits: the same error would recur
                if reason not in self._requests and only is not None:
                    self._only.setdefault(reason, set()).update(only)
                self._requests.setdefault(reason, time.monotonic())
            self._emit(ev.Error(f"sync failed: {msg}; retrying in {delay:.0f}s"))
            return
        finally:
            with self._cond:
                self._job = None
        self._errors_in_row = 0
        # what is still behind now was left on purpose (or changed meanwhile: the watcher says so);
        # a sync of the files just written looked at nothing else
        if only is None:
            try:
                self._left_behind = set(self.engine.freshness(full=True)["behind"])
            except Exception:
                self._left_behind = set()
        with self._cond:
            self._waiting_for = None
            self._last_sync = time.time()
            self._last_sync_mono = time.monotonic()
            self._last_result = finished.describe() if finished else None
        self._check_targets()
        self._after_sync()
        if not self._stopping:
            self._write_beat()  # clean again, unless more changes came meanwhile

    def _after_sync(self, retry: bool = False) -> None:
        """Run the engine's after_sync (the fleet's push); when it leaves work behind, again every
        PUSH_RETRY_SECONDS (a cheap refused connection while the database is down), so a backlog
        goes out as soon as it is back, not at the next interval sync. A retry's failure is not
        said again."""
        if self._stopping or self.after_sync is None:
            return
        warning = self.after_sync()
        self._push_retry = time.monotonic() + PUSH_RETRY_SECONDS if warning else None
        if warning and not retry:
            self._emit(ev.Warning(warning))
        if warning and self._push_failed_at is None:
            self._push_failed_at = time.monotonic()
        elif not warning and self._push_failed_at is not None:  # said as the failure was: in the log and on screen
            self._emit(ev.FleetCaughtUp(time.monotonic() - self._push_failed_at))
            self._push_failed_at = None

    def _lock_busy(self, who: str, reason: str, only: set[str] | None = None) -> None:
        """Another process holds the writer lock: say who (once per holder) and retry later."""
        with self._cond:
            told = self._waiting_for == who
            self._waiting_for = who
            self._blocked_until = time.monotonic() + LOCK_RETRY_SECONDS
            if reason not in self._requests and only is not None:
                self._only.setdefault(reason, set()).update(only)
            self._requests.setdefault(reason, time.monotonic())
        if not told:
            self._emit(ev.Warning(f"the index is being written by {who}; will sync when it is done"))

    def _check_targets(self) -> None:
        """Watch folders that appeared (memory/ created, the sessions folder) or went away,
        and follow a configuration reloaded with another workspace or sync.watch."""
        if self._restart_due is not None:
            return
        if bool(self.engine.cfg["sync.watch"]) != (self._watch_state != "off"):
            self._restart_watchers("sync.watch changed")
            return
        if self._watch_state == "off":
            return
        now = watch_targets(self.engine.cfg)
        if self._targets is not None and now != self._targets:
            self._restart_watchers("watched folders changed")

    def _reconcile(self) -> None:
        """Cheap scan (stat only) for differences the watcher did not report."""
        self._check_targets()
        try:
            fr = self.engine.freshness(full=True)
        except Exception as exc:
            log.warning("reconciliation scan failed: %s", exc)
            return
        news = [p for p in fr["behind"] if p not in self._left_behind]
        if not news:
            return
        with self._cond:
            if self._changed or self._job:
                return  # the watcher reported changes: their sync is on its way
        limit = time.time() - self._debounce() - MISS_GRACE_SECONDS
        missed = [p for p in news if self._changed_at(p) < limit]
        self.request("reconcile")
        if missed and self._watch_state == "running" and time.monotonic() - self._last_miss_restart > MISS_RESTART_SECONDS:
            self._last_miss_restart = time.monotonic()
            more = f" and {len(missed) - 1} more" if len(missed) > 1 else ""
            self._restart_watchers(f"the watcher missed a change to {missed[0]}{more}")

    def _changed_at(self, shown: str) -> float:
        """ctime of a file, or of its nearest existing folder when it is gone (a delete touches it)."""
        if shown.startswith("sessions/"):
            p = Path(self.engine.cfg.sessions_dir()) / shown[len("sessions/") :]
        else:
            p = Path(os.path.normpath(self.engine.workspace / shown))
        while True:
            try:
                return os.stat(p).st_ctime
            except OSError:
                if p.parent == p:
                    return 0.0
                p = p.parent

    # -- heartbeat and events ------------------------------------------------------------

    def _beat(self) -> None:
        while not self._stop_event.wait(HEARTBEAT_SECONDS):
            self._write_beat()

    def _emit(self, e: ev.Event) -> None:
        self._log(e)
        try:
            self.on_event(e)
        except Exception as exc:  # a front end's bug must not stop syncing
            log.error("event callback failed on %s: %s\n%s", type(e).__name__, exc, traceback.format_exc())

    def _log(self, e: ev.Event) -> None:
        if isinstance(e, (ev.Progress, ev.ChunksEmbedded)):
            return
        if isinstance(e, ev.FileIndexed):
            self._files_logged += 1
            if self._files_logged > FILE_LOG_LIMIT:
                return
        if isinstance(e, ev.JobStarted) and e.reason not in ("start", "manual", "rebuild"):
            return  # routine syncs are logged by their result
        if isinstance(e, ev.JobFinished) and e.ok and not (e.files_indexed or e.files_removed or e.chunks_embedded) and e.job != "rebuild":
            return
        logs.log_event(e, log)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


# --------------------------------------------------------------------------- one-shot processes


PUSH_RETRY_SECONDS = 5.0  # while the fleet is down: how often the watcher runs after_sync again
SPAWN_QUIET_SECONDS = 3.0  # long enough for a spawned indexer to start and take the lock


def spawn_background_index(engine) -> str:
    """Start a detached `clawmem index --quiet` for this engine (a one-shot CLI found the index
    stale). Returns "started", "busy" (a writer holds the lock) or "recent" (one was just started)."""
    cfg = engine.cfg
    if current_holder(engine.index_path) is not None:
        return "busy"
    stamp = paths.state_dir() / f"spawned-index-{engine.index_path.stem}"
    try:
        if time.time() - stamp.stat().st_mtime < SPAWN_QUIET_SECONDS:
            return "recent"
    except OSError:
        pass
    paths.private_dir(stamp.parent)
    stamp.touch()
    os.utime(stamp)
    argv = [sys.executable, "-m", "clawmem.tui", "index", "--quiet", "--background", "--workspace", str(cfg.workspace), "--agent", cfg.agent_id]
    if cfg.file and Path(cfg.file).is_file():
        argv += ["--config", str(Path(cfg.file).resolve())]  # the child runs in the state folder
    subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True, close_fds=True, cwd=str(paths.state_dir()))
    return "started"


# --------------------------------------------------------------------------- clawmem watch


class _DaemonOutput:
    """Live log lines for `clawmem watch`: timestamps, progress coalesced, routine syncs quiet."""

    PROGRESS_EVERY = 2.0
    FILE_LINES = 20

    def __init__(self, printer: Callable[[str], None]):
        self.printer = printer
        self.last_progress = 0.0
        self.files = 0
        self.announced = False

    def line(self, text: str) -> None:
        self.printer(f"{time.strftime('%H:%M:%S')} {text}")

    def event(self, e: ev.Event) -> None:
        if isinstance(e, ev.JobStarted):
            self.files = 0
            self.last_progress = time.monotonic()
            self.announced = e.reason in ("start", "manual", "rebuild", "once") or e.job == "rebuild"
            if self.announced:
                self.line(e.describe())
        elif isinstance(e, ev.Progress):
            now = time.monotonic()
            if now - self.last_progress >= self.PROGRESS_EVERY and e.done < e.total:
                self.last_progress = now
                self.announced = True
                self.line(e.describe())
        elif isinstance(e, ev.ChunksEmbedded):
            pass  # the embed Progress lines carry it
        elif isinstance(e, ev.FileIndexed):
            self.files += 1
            if self.files <= self.FILE_LINES:
                self.line(e.describe())
        elif isinstance(e, ev.JobFinished):
            if self.announced or not e.ok or e.files_indexed or e.files_removed or e.chunks_embedded:
                self.line(e.describe())
        else:
            self.line(e.describe())


def _other_watcher(cfg) -> int | None:
    """The pid of another live syncer of this agent, from its heartbeat."""
    import json

    from .heartbeat import heartbeat_path, read_heartbeat

    if read_heartbeat(cfg) != "running":
        return None
    try:
        pid = int(json.loads(heartbeat_path(cfg).read_text()).get("pid", 0))
    except (OSError, ValueError):
        return None
    return pid if pid and pid != os.getpid() else None


def run_daemon(engine, once: bool = False, printer: Callable[[str], None] = print, *,
               after_sync: Callable[[], str | None] | None = None, every_minute: Callable[[], str | None] | None = None) -> int:
    """`clawmem watch`: sync in the foreground until Ctrl-C (or SIGTERM); `once`: one sync, then exit.
    `after_sync` runs after each sync (Syncer's), `every_minute` about once a minute while it
    watches; a line either returns is printed. The engine subscribes both (Engine.run_watcher).

    Returns 0 on a clean exit, 3 when the single sync of `once` failed or the lock stayed busy.
    """
    out = _DaemonOutput(printer)
    try:
        log_file = logs.setup()
    except OSError as exc:
        log_file = None
        out.line(f"warning: no log file ({exc})")
    ws = engine.workspace
    if once:
        finished = None
        try:
            for e in engine.index(reason="once", backfill_sessions=True):
                if not isinstance(e, (ev.Progress, ev.FileIndexed, ev.ChunksEmbedded)):
                    logs.log_event(e, log)
                out.event(e)
                if isinstance(e, ev.JobFinished):
                    finished = e
        except LockBusy as exc:
            out.line(f"error: {exc}")
            return 3
        except Exception as exc:  # one line, never a traceback (the log file has the details)
            log.error("watch --once failed: %s\n%s", exc, traceback.format_exc())
            out.line(f"error: {_one_line(exc)}; details in {log_file}")
            return 3
        if finished is None or not finished.ok:
            return 3
        warning = after_sync() if after_sync else None
        if warning:
            out.event(ev.Warning(warning))
        return 0

    syncer = Syncer(engine, out.event, after_sync=after_sync)
    stop = threading.Event()
    previous = previous_int = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
        # Ctrl-C stops it even when started from a script's background job, which inherits
        # SIGINT ignored (Python then never raises KeyboardInterrupt)
        previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    out.line(f"clawmem watch: {ws} (agent {engine.cfg.agent_id}); index {engine.index_path}")
    other = _other_watcher(engine.cfg)
    if other:
        out.line(f"note: pid {other} already keeps this index fresh (clawmem watch or the app); both will sync, one at a time")
    if log_file:
        out.line(f"log: {log_file}; Ctrl-C to stop")
    log.info("clawmem watch started for %s (pid %d)", ws, os.getpid())
    syncer.start()
    next_minute = 0.0
    try:
        while not stop.wait(0.5):
            if every_minute is not None and time.monotonic() >= next_minute:
                next_minute = time.monotonic() + 60
                line = every_minute()
                if line:
                    out.line(line)
    except KeyboardInterrupt:
        pass
    finally:
        out.line("stopping…")
        syncer.stop()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
            signal.signal(signal.SIGINT, previous_int)
        log.info("clawmem watch stopped (pid %d)", os.getpid())
    out.line("stopped")
    return 0
