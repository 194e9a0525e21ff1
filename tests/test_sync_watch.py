"""The Syncer with the real watcher (watchfiles) on a temporary workspace (SPEC §6).

Waits poll with a generous upper bound: speed is the benchmark's business, not these tests'.
"""

from __future__ import annotations

import os
import threading
import time

import pytest

from clawmem.engine import events as ev
from clawmem.engine.index import watcher as sync_mod
from clawmem.engine.index.watcher import Syncer, is_temp_name, watch_targets
from helpers import wait_for, write




class Recorder:
    def __init__(self):
        self.events: list[ev.Event] = []
        self.threads: set[str] = set()
        self.lock = threading.Lock()

    def __call__(self, e: ev.Event) -> None:
        with self.lock:
            self.events.append(e)
            self.threads.add(threading.current_thread().name)

    def of(self, kind):
        with self.lock:
            return [e for e in self.events if isinstance(e, kind)]


def paths_of(res: dict) -> set[str]:
    return {r["path"] for r in res["results"]}


@pytest.fixture
def live(make_engine):
    """A started Syncer over the test workspace (debounce 100 ms), stopped at the end."""
    started: list[Syncer] = []

    def start(overrides: dict | None = None, **kw):
        eng = make_engine({"sync.watchDebounceMs": 100, **(overrides or {})}, persistent=True)
        rec = Recorder()
        s = Syncer(eng, rec, **kw)
        s.start()
        started.append(s)
        wait_for(lambda: rec.of(ev.JobFinished), what="the start sync")
        return eng, s, rec

    yield start
    for s in started:
        s.stop()


def searchable(eng, word: str, path: str) -> bool:
    return path in paths_of(eng.search(word, stale_check=False))


def test_new_edit_rename_save_delete_follow_the_files(workspace, live):
    write(workspace / "MEMORY.md", "curated facts about kestrels\n")
    eng, syncer, rec = live()
    assert searchable(eng, "kestrels", "MEMORY.md")
    assert syncer.state.watcher == "running"

    new = write(workspace / "memory" / "2026-03-01.md", "saw an osprey at the lake\n")
    wait_for(lambda: searchable(eng, "osprey", "memory/2026-03-01.md"), what="a new file")

    new.write_text("saw a heron at the lake\n")
    wait_for(lambda: searchable(eng, "heron", "memory/2026-03-01.md"), what="an edit")
    assert not searchable(eng, "osprey", "memory/2026-03-01.md")

    # editors and atomic writes save to a temporary file and rename it over the note
    tmp = workspace / "memory" / ".2026-03-01.md.x1y2.tmp"
    tmp.write_text("saw a cormorant at the lake\n")
    os.replace(tmp, new)
    wait_for(lambda: searchable(eng, "cormorant", "memory/2026-03-01.md"), what="a rename-save")

    # MEMORY.md sits in the workspace root, watched without recursion
    tmp = workspace / ".MEMORY.md.swp"
    tmp.write_text("swap")
    (workspace / "MEMORY.md").write_text("curated facts about falcons\n")
    wait_for(lambda: searchable(eng, "falcons", "MEMORY.md"), what="an edit of MEMORY.md")

    new.unlink()
    wait_for(lambda: not searchable(eng, "cormorant", "memory/2026-03-01.md"), what="a delete")
    st = eng.status()["freshness"]
    assert st["dirty"] is False and st["filesOnDisk"] == st["filesIndexed"] == 1
    assert st["watcher"] == "running"
    changed = {p for e in rec.of(ev.FilesChanged) for p in e.paths}
    assert "memory/2026-03-01.md" in changed
    # every callback ran on the syncer's own thread
    assert rec.threads == {"clawmem-sync"}


def test_new_folder_and_files_in_it_are_watched(workspace, live):
    eng, syncer, rec = live()
    write(workspace / "memory" / "projects" / "roof" / "plan.md", "the roofer comes on thursday\n")
    wait_for(lambda: searchable(eng, "roofer", "memory/projects/roof/plan.md"), what="a file in a new folder")


@pytest.mark.slow  # over 1.5 s: the full suite runs it, the fast lane does not
def test_ignored_folders_and_temp_files_do_not_trigger_syncs(workspace, live):
    eng, syncer, rec = live()
    before = len(rec.of(ev.JobFinished))
    noise = [
        workspace / "memory" / "node_modules" / "pkg" / "README.md",
        workspace / "memory" / ".git" / "HEAD",
        workspace / "memory" / ".venv" / "lib" / "notes.md",
        workspace / "memory" / "venv" / "notes.md",
        workspace / "memory" / "__pycache__" / "x.md",
        workspace / "memory" / "2026-03-01.md.swp",
        workspace / "memory" / "2026-03-01.md~",
        workspace / "memory" / ".#2026-03-01.md",
        workspace / "memory" / "4913",
        workspace / "memory" / "draft.tmp",
        workspace / "AGENTS.md",  # the workspace root holds other files: only MEMORY.md matters there
    ]
    for p in noise:
        write(p, "noise\n")
    time.sleep(1.0)  # several debounce periods: a sync would have started by now
    assert rec.of(ev.FilesChanged) == []
    assert len(rec.of(ev.JobFinished)) == before
    # the watcher is alive: a real note still syncs, and only it is reported
    write(workspace / "memory" / "2026-03-02.md", "grebe sighting\n")
    wait_for(lambda: searchable(eng, "grebe", "memory/2026-03-02.md"), what="a real note after the noise")
    assert {p for e in rec.of(ev.FilesChanged) for p in e.paths} == {"memory/2026-03-02.md"}


def test_watch_filter_rules(workspace, make_engine, tmp_path):
    extra_dir = tmp_path / "notes"
    extra_dir.mkdir()
    extra_file = tmp_path / "other" / "todo.md"
    write(extra_file, "x")
    eng = make_engine({"extraPaths": [str(extra_dir), str(extra_file)]})
    t = watch_targets(eng.cfg)
    ws, mem = str(workspace), str(workspace / "memory")
    assert set(t.trees) == {mem, str(extra_dir)} and set(t.flat) == {ws, str(extra_file.parent)}
    assert t.wanted(f"{ws}/MEMORY.md") and t.wanted(f"{ws}/memory.md") and t.wanted(mem)
    assert not t.wanted(f"{ws}/AGENTS.md") and not t.wanted(f"{ws}/SOUL.md")
    assert t.wanted(f"{mem}/2026-01-01.md") and t.wanted(f"{mem}/deep/er/topic.md") and t.wanted(f"{mem}/folder")
    assert not t.wanted(f"{mem}/image.png") and not t.wanted(f"{mem}/node_modules/a.md") and not t.wanted(f"{mem}/x/.git/a.md")
    assert t.wanted(f"{extra_dir}/a/b.md") and t.wanted(str(extra_file)) and not t.wanted(f"{extra_file.parent}/other.md")
    for name in ("a.md.swp", "a.md~", ".#a.md", "#a.md#", "4913", ".a.md.123.tmp", "a.swx"):
        assert is_temp_name(name) and not t.wanted(f"{mem}/{name}")


@pytest.mark.slow  # over 1.5 s: the full suite runs it, the fast lane does not
def test_a_dead_watcher_is_restarted_and_says_so(workspace, live):
    eng, syncer, rec = live()
    syncer._inject_watch_failure("simulated crash in the watch loop")
    restarted = wait_for(lambda: [e for e in rec.of(ev.WatcherState) if e.state == "restarted"], what="a restart")
    assert "simulated crash in the watch loop" in restarted[0].detail
    assert syncer.state.restarts == 1
    wait_for(lambda: syncer.state.watcher == "running", what="watching again")
    write(workspace / "memory" / "2026-04-01.md", "the restarted watcher sees a plover\n")
    wait_for(lambda: searchable(eng, "plover", "memory/2026-04-01.md"), what="a change after the restart")
    # the restart is in the log file
    from clawmem.engine.api import log_path

    assert "simulated crash in the watch loop" in log_path().read_text()


def test_reconciliation_catches_what_a_deaf_watcher_missed(workspace, live, monkeypatch):
    # count any unreported change as missed, however recent (the default waits debounce + 5 s)
    monkeypatch.setattr(sync_mod, "MISS_GRACE_SECONDS", -60.0)
    eng, syncer, rec = live(reconcile_seconds=0.3)
    for w in syncer._watchers:
        w.on_changes = lambda paths: None  # alive but deaf, like a stalled watcher
    write(workspace / "memory" / "2026-05-01.md", "a wren nobody reported\n")
    wait_for(lambda: searchable(eng, "wren", "memory/2026-05-01.md"), what="the reconciliation scan")
    missed = [e for e in rec.of(ev.WatcherState) if e.state == "restarted"]
    assert missed and "missed a change to memory/2026-05-01.md" in missed[0].detail
    # the restarted watcher hears again
    write(workspace / "memory" / "2026-05-02.md", "a robin everybody heard\n")
    wait_for(lambda: searchable(eng, "robin", "memory/2026-05-02.md"), what="a change after the restart")


def test_watch_off_still_syncs_at_start_on_request_and_by_reconciliation(workspace, live):
    write(workspace / "memory" / "2026-01-01.md", "first swallow\n")
    eng, syncer, rec = live({"sync.watch": False}, reconcile_seconds=0.3)
    assert searchable(eng, "swallow", "memory/2026-01-01.md")
    assert syncer.state.watcher == "off" and syncer._watchers == []
    assert rec.of(ev.WatcherState)[0].state == "off"
    write(workspace / "memory" / "2026-01-02.md", "second swift\n")
    wait_for(lambda: searchable(eng, "swift", "memory/2026-01-02.md"), what="reconciliation without a watcher")


def test_search_on_a_stale_index_asks_the_syncer_and_does_not_wait(workspace, live):
    eng, syncer, rec = live({"sync.watch": False})
    assert eng.syncs_when_asked() and eng._sync_askers == [syncer.request]
    write(workspace / "memory" / "2026-02-01.md", "a lapwing\n")
    eng.freshness_check.forget()
    t0 = time.monotonic()
    res = eng.search("lapwing")
    assert res["stale"] is True  # answered from the index as it was: the search did not wait
    assert time.monotonic() - t0 < 5.0
    wait_for(lambda: searchable(eng, "lapwing", "memory/2026-02-01.md"), what="the search-triggered sync")
    assert any(e.reason == "search" for e in rec.of(ev.JobStarted))


def test_stop_marks_the_watcher_stopped(workspace, live, make_engine):
    eng, syncer, rec = live()
    assert eng.status()["freshness"]["watcher"] == "running"
    syncer.stop()
    assert rec.of(ev.WatcherState)[-1].state == "stopped"
    assert syncer.state.watcher == "stopped" and not syncer.state.running
    assert eng.status()["freshness"]["watcher"] == "stopped"
    assert not eng.syncs_when_asked()


def test_reloaded_config_moves_the_watcher(workspace, live, tmp_path):
    from clawmem.engine import load_config

    eng, syncer, rec = live()
    other = tmp_path / "other-ws"
    write(other / "memory" / "2026-06-01.md", "notes of the other workspace: a dipper\n")
    eng.reload_config(load_config(workspace=str(other), overrides={"provider": "none", "sync.watchDebounceMs": 100}))
    syncer.request("manual")
    wait_for(lambda: searchable(eng, "dipper", "memory/2026-06-01.md"), what="the new workspace indexed")
    wait_for(lambda: str(other / "memory") in syncer._targets.trees, what="the watcher on the new workspace")
    write(other / "memory" / "2026-06-02.md", "a second dipper note: wagtail\n")
    wait_for(lambda: searchable(eng, "wagtail", "memory/2026-06-02.md"), what="a change in the new workspace")
    eng.reload_config(load_config(workspace=str(other), overrides={"provider": "none", "sync.watch": False}))
    syncer.request("manual")
    wait_for(lambda: syncer.state.watcher == "off", what="watching turned off")
    assert syncer._watchers == []
