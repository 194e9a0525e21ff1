"""`status` tells the truth (SPEC §6, §8): files changed while nothing ran, a killed watcher,
a dead writer; and `clawmem watch` as a real process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from clawmem.engine.index.lock import lock_path

from helpers import run_cli, wait_for, write




def status_json(workspace) -> dict:
    res = run_cli("--workspace", str(workspace), "status", "--json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_changes_made_while_nothing_ran_make_status_dirty_with_counts(workspace, make_engine):
    for i in range(1, 5):
        write(workspace / "memory" / f"2026-01-0{i}.md", f"entry {i}\n")
    eng = make_engine()
    list(eng.index())
    fr = eng.status()["freshness"]
    assert (fr["dirty"], fr["filesBehind"], fr["filesOnDisk"], fr["filesIndexed"]) == (False, 0, 4, 4)
    # nothing runs: one edit (same size, other bytes), one new file, one delete
    (workspace / "memory" / "2026-01-01.md").write_text("ENTRY 1\n")
    write(workspace / "memory" / "2026-01-09.md", "new\n")
    (workspace / "memory" / "2026-01-02.md").unlink()
    fr = eng.status()["freshness"]
    assert fr["dirty"] is True
    assert (fr["filesBehind"], fr["filesOnDisk"], fr["filesIndexed"]) == (3, 4, 4)
    assert set(fr["behind"]) == {"memory/2026-01-01.md", "memory/2026-01-09.md", "memory/2026-01-02.md"}
    # another process sees the same
    cli = status_json(workspace)["freshness"]
    assert (cli["dirty"], cli["filesBehind"], cli["watcher"]) == (True, 3, "unknown")
    text = run_cli("--workspace", str(workspace), "status").stdout
    assert "3 files behind" in text and "clean" not in text
    list(eng.index())
    assert status_json(workspace)["freshness"]["dirty"] is False


def test_a_touched_but_unchanged_file_is_behind_until_the_next_sync(workspace, make_engine):
    f = write(workspace / "MEMORY.md", "facts\n")
    eng = make_engine()
    list(eng.index())
    os.utime(f, ns=(time.time_ns(), time.time_ns() + 5 * 10**9))
    assert eng.status()["freshness"]["dirty"] is True  # stat says changed; never claim clean without checking
    list(eng.index())
    assert eng.status()["freshness"]["dirty"] is False


@pytest.mark.slow  # over 1.5 s: the full suite runs it, the fast lane does not
def test_clawmem_watch_process_keeps_search_fresh_and_status_sees_it_die(workspace, tmp_path):
    write(workspace / "memory" / "2026-01-01.md", "old entry\n")
    # only the watcher indexes here (a stale search would start a background index of its own)
    config = write(tmp_path / "config" / "clawmem" / "config.toml", "[sync]\nonSearch = false\n")
    log = tmp_path / "watch.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "clawmem.tui", "--workspace", str(workspace), "watch"],
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: status_json(workspace)["freshness"]["watcher"] == "running", what="watcher running")
        wait_for(lambda: "index finished" in log.read_text(), what="the start sync")
        # a new daily-log entry becomes searchable from another process
        write(workspace / "memory" / "2026-01-02.md", "- 09:00 booked the ferry to Tarifa\n")
        def found():
            res = run_cli("--workspace", str(workspace), "--config", str(config), "search", "ferry", "Tarifa", "--json")
            return any(r["path"] == "memory/2026-01-02.md" for r in json.loads(res.stdout)["results"])
        wait_for(found, what="the new entry in search")
        assert status_json(workspace)["freshness"]["dirty"] is False
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        # killed: no clean exit, the heartbeat says running, but its process is gone
        st = status_json(workspace)["freshness"]
        assert st["watcher"] == "stopped"
        write(workspace / "memory" / "2026-01-03.md", "written after the watcher died\n")
        st = status_json(workspace)["freshness"]
        assert st["dirty"] is True and st["filesBehind"] == 1 and st["watcher"] == "stopped"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_clawmem_watch_stops_cleanly(workspace, tmp_path, sig):
    """Ctrl-C at the terminal and SIGTERM from systemd both end `clawmem watch` with exit 0."""
    write(workspace / "memory" / "2026-01-01.md", "entry\n")
    log = tmp_path / "watch.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "clawmem.tui", "--workspace", str(workspace), "watch"],
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: "index finished" in log.read_text(), what="the start sync")
        proc.send_signal(sig)
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text()
    assert "Traceback" not in text
    lines = text.strip().splitlines()
    assert lines[-1].endswith("stopped") and lines[0][:2].isdigit() and lines[0][2] == ":"  # timestamped
    assert status_json(workspace)["freshness"]["watcher"] == "stopped"


def test_watch_once_syncs_and_exits(workspace):
    write(workspace / "memory" / "2026-01-01.md", "a single pass\n")
    res = run_cli("--workspace", str(workspace), "watch", "--once")
    assert res.returncode == 0, res.stderr
    assert "index finished" in res.stdout
    assert status_json(workspace)["freshness"]["dirty"] is False


def test_job_names_a_live_writer_and_forgets_a_killed_one(workspace, make_engine, tmp_path):
    eng = make_engine()
    list(eng.index())
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from clawmem.engine.index.lock import WriterLock\n"
        "lock = WriterLock(Path(sys.argv[1]), command='lock-holder')\n"
        "assert lock.try_acquire()\n"
        "print('held', flush=True)\n"
        "time.sleep(60)\n"), str(eng.index_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        job = eng.status()["freshness"]["job"]
        assert job and f"pid {holder.pid}" in job and "lock-holder" in job
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
        # the holder info is still in the lock file, but the kernel dropped the lock
        assert json.loads(lock_path(eng.index_path).read_text())["pid"] == holder.pid
        assert eng.status()["freshness"]["job"] is None
        list(eng.index())  # and a new writer is not blocked
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


def test_freshness_scan_is_cheap(workspace, make_engine):
    for i in range(1000):
        write(workspace / "memory" / f"t{i // 100}" / f"n{i}.md", f"note {i}\n")
    eng = make_engine()
    list(eng.index())
    eng.freshness()
    t0 = time.perf_counter()
    fr = eng.freshness()
    took = time.perf_counter() - t0
    assert fr["dirty"] is False and fr["filesOnDisk"] == 1000
    assert took < 0.5, took  # ~10 ms here; the 5000-file figure is in bench/bench_sync.py
