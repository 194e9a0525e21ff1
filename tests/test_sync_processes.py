"""One index, many processes (SPEC §6): real subprocesses writing and searching at once."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from clawmem.engine import events as ev
from clawmem.engine.index.lock import WriterLock, current_holder
from clawmem.engine.index.store import Store
from clawmem.engine.index.watcher import Syncer, spawn_background_index
from helpers import run_cli, wait_for, write

LIMIT = 20.0



def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "clawmem.tui", *args]


def consistent(index_path) -> dict:
    st = Store(index_path)
    try:
        (ok,) = st.conn.execute("PRAGMA integrity_check").fetchone()
        assert ok == "ok"
        (chunks,) = st.conn.execute("select count(*) from chunks").fetchone()
        (fts,) = st.conn.execute("select count(*) from chunks_fts").fetchone()
        assert chunks == fts
        (orphans,) = st.conn.execute("select count(*) from chunks where path not in (select path from files)").fetchone()
        assert orphans == 0
        dups = st.conn.execute("select path, start_line, end_line, count(*) from chunks group by 1, 2, 3 having count(*) > 1").fetchall()
        assert dups == []
        (files,) = st.conn.execute("select count(*) from files").fetchone()
        return {"files": files, "chunks": chunks}
    finally:
        st.close()


def many_notes(workspace, n: int) -> None:
    for i in range(n):
        lines = "\n".join(f"- item {j} of note {i}: the harbour ferry timetable changed, token n{i}x{j}" for j in range(40))
        write(workspace / "memory" / f"topic-{i // 100}" / f"note-{i}.md", lines + "\n")


def test_two_indexers_and_searchers_at_once(workspace, make_engine):
    many_notes(workspace, 600)
    ws = ["--workspace", str(workspace)]
    first = subprocess.Popen(cli(*ws, "index"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    eng = make_engine()
    wait_for(lambda: current_holder(eng.index_path) is not None or first.poll() is not None, what="the first writer")
    second = subprocess.Popen(cli(*ws, "index"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # searches from this process and from another one while both run
    searched = 0
    errors = []
    while first.poll() is None or second.poll() is None:
        try:
            eng.search("harbour ferry", stale_check=False)
            searched += 1
        except Exception as exc:  # pragma: no cover - the assertion below shows it
            errors.append(repr(exc))
        if searched % 20 == 1:
            res = run_cli(*ws, "search", "timetable", "--json")
            if res.returncode != 0:
                errors.append(res.stderr)
        time.sleep(0.01)
    out1, err1 = first.communicate()
    out2, err2 = second.communicate()
    assert first.returncode == 0, err1
    assert second.returncode == 0, err2
    assert errors == []
    assert searched > 0
    if current_holder(eng.index_path) is None and "waiting for the writer lock" in err2:
        assert f"pid {first.pid} (clawmem index" in err2  # the second writer said whom it waited for
    # one of them did the work, the other found nothing left to do
    assert "600 indexed" in err1 + err2 and "0 indexed, 0 removed, 600 unchanged" in err1 + err2
    assert consistent(eng.index_path) == {"files": 600, "chunks": consistent(eng.index_path)["chunks"]}
    assert eng.search("n599x3", stale_check=False)["results"][0]["path"] == "memory/topic-5/note-599.md"


def test_a_second_writer_says_who_holds_the_lock(workspace, make_engine):
    write(workspace / "MEMORY.md", "facts\n")
    eng = make_engine()
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from clawmem.engine.index.lock import WriterLock\n"
        "lock = WriterLock(Path(sys.argv[1]), command='clawmem index')\n"
        "assert lock.try_acquire()\n"
        "print('held', flush=True)\n"
        "sys.stdin.readline()\n"), str(eng.index_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        # a CLI writer waits and says so at once, before waiting
        waiter = subprocess.Popen(cli("--workspace", str(workspace), "index"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = waiter.stderr.readline()
        assert "waiting for the writer lock" in line and f"pid {holder.pid}" in line and "clawmem index" in line
        # the engine generator: an immediate answer when asked not to wait
        try:
            list(eng.index(lock_timeout=0))
        except Exception as exc:
            assert type(exc).__name__ == "LockBusy" and f"pid {holder.pid}" in str(exc)
        else:
            raise AssertionError("a second writer got the lock")
        # a Syncer reports the holder and retries later
        rec: list = []
        syncer = Syncer(make_engine({"sync.watch": False}, persistent=True), rec.append)
        syncer.start()
        try:
            warn = wait_for(lambda: [e for e in rec if isinstance(e, ev.Warning) and f"pid {holder.pid}" in e.message], what="the holder named")
            assert "will sync when it is done" in warn[0].message
            assert f"pid {holder.pid}" in (syncer.state.waiting_for or "")
            holder.stdin.write("\n")
            holder.stdin.flush()
            holder.wait(10)
            wait_for(lambda: [e for e in rec if isinstance(e, ev.JobFinished)], what="the sync after the lock was freed")
            assert syncer.state.waiting_for is None
        finally:
            syncer.stop()
        assert waiter.wait(30) == 0
        waiter.communicate()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


def test_a_cli_search_on_a_stale_index_starts_a_background_index(workspace):
    write(workspace / "memory" / "2026-01-01.md", "first entry\n")
    ws = ["--workspace", str(workspace)]
    assert run_cli(*ws, "index").returncode == 0
    write(workspace / "memory" / "2026-01-02.md", "a stonechat on the fence\n")
    t0 = time.monotonic()
    res = json.loads(run_cli(*ws, "search", "stonechat", "--json").stdout)
    assert res["stale"] is True and res["results"] == []  # it answered from the index as it is
    wait_for(lambda: json.loads(run_cli(*ws, "status", "--json").stdout)["freshness"]["dirty"] is False,
             what="the background index")
    res = json.loads(run_cli(*ws, "search", "stonechat", "--json").stdout)
    assert res["stale"] is False and res["results"][0]["path"] == "memory/2026-01-02.md"
    assert time.monotonic() - t0 < LIMIT


def test_no_background_index_while_a_writer_holds_the_lock_or_when_off(workspace, make_engine):
    write(workspace / "MEMORY.md", "x\n")
    eng = make_engine()
    lock = WriterLock(eng.index_path)
    assert lock.try_acquire()
    try:
        assert spawn_background_index(eng) == "busy"
    finally:
        lock.release()
    calls = []
    off = make_engine({"sync.onSearch": False})
    off.sync_when_asked(calls.append)
    assert off.search("x")["stale"] is True and calls == []
    on = make_engine()
    on.sync_when_asked(calls.append)
    assert on.search("x")["stale"] is True and calls == ["search"]
