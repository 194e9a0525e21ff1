"""kill -9 of `clawmem index`, `index --force` and `watch` at seeded random moments on a
2,000-file workspace, keyword-only and with the tiny local model (issue 9, fault suite).

After every kill: PRAGMA integrity_check ok, FTS rows = chunk rows and the other invariants of
test_crash_resume.check (on the index and on an unfinished rebuild), no stray file in the index
folder, not one byte of the workspace changed but the lines this test appended itself (as an
agent would). After the series, one full run and every file is searchable.

Replay a failure with CLAWMEM_FAULT_SEED=<the printed seed>; CLAWMEM_FAULT_KILLS=N sets the
number of kills over both tests (default 100).
"""

from __future__ import annotations

import collections
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from clawmem.engine.index.lock import read_holder
from clawmem.engine.index.store import Store
from faultkit import cli, fingerprint, generate, index_file, run, stray_files, token
from helpers import write
from test_crash_resume import check

FILES = 2000
KILLS = int(os.environ.get("CLAWMEM_FAULT_KILLS", "100"))
SEED = int(os.environ.get("CLAWMEM_FAULT_SEED", "20261123"))
# (command, share of the kills, kill window in seconds: keyword-only, local model)
PLAN = (("watch", 0.3, 3.0, 5.0), ("index", 0.4, 0.8, 2.5), ("index --force", 0.3, 3.0, 5.0))
TALLY: dict = collections.defaultdict(collections.Counter)


def snapshot(index: Path) -> dict | None:
    if not index.exists():
        return None
    st = Store(index)
    try:
        if not st.has_schema():
            return {"files": 0, "chunks": 0, "vectors": 0, "rows": {}}
        rows = {r[0]: (r[1], r[2]) for r in st.conn.execute("select path, mtime_ns, size from files")}
        (chunks,) = st.conn.execute("select count(*) from chunks").fetchone()
        vectors = sum(st.coverage(m["id"]) for m in st.models())
        return {"files": len(rows), "chunks": chunks, "vectors": vectors, "rows": rows}
    finally:
        st.close()


def phase(command: str, pid: int, index: Path, disk: dict, model: bool) -> str:
    """Where the kill landed, read from what the killed process left behind."""
    holder = read_holder(index) or {}
    if holder.get("pid") != pid:
        return "outside the writer lock (startup, idle watching or exit)"
    target = Path(str(index) + ".rebuild") if command == "index --force" and Path(str(index) + ".rebuild").exists() else index
    snap = snapshot(target) or {"rows": {}, "chunks": 0, "vectors": 0}
    stale = any(snap["rows"].get(p) != st for p, st in disk.items())
    if command == "index --force" and target == index:
        return "under the lock, before the rebuild file" if stale else "after the swap"
    if stale:
        return "text phase" + (" of a rebuild" if target != index else "")
    if model and snap["vectors"] < snap["chunks"]:
        return "embedding" + (" of a rebuild" if target != index else "")
    return "finishing (meta, prune, checkpoint, swap)"


def check_or_empty(index: Path) -> None:
    """check(); a file killed before its tables were created must be an empty, sound database."""
    st = Store(index)
    try:
        tables = st.conn.execute("select count(*) from sqlite_master").fetchone()[0]
        assert st.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        st.close()
    if tables:
        check(index)


def disk_rows(ws: Path, paths: dict[int, str]) -> dict:
    out = {}
    for rel in paths.values():
        st = os.stat(ws / rel)
        out[rel] = (st.st_mtime_ns, st.st_size)
    return out


def agent_writes(ws: Path, paths: dict[int, str], rnd: random.Random, n: int) -> None:
    """What an agent does between runs: append to some notes, start a new daily log."""
    for i in rnd.sample(sorted(paths), n):
        with open(ws / paths[i], "a", encoding="utf-8") as fh:
            fh.write(f"- appended at {time.time():.3f}: the ferry left late {token(i)}\n")
    i = max(paths) + 1
    paths[i] = f"memory/new/2026-12-{1 + i % 28:02d}-{i}.md"
    write(ws / paths[i], f"- a new note {token(i)}\n")


def kill_series(workspace: Path, tmp_path: Path, config: Path, model: bool, kills: int, seed: int) -> None:
    rnd = random.Random(seed)
    print(f"\nkill -9 series: seed {seed}, {kills} kills, {'tiny local model' if model else 'keyword-only'} "
          f"(replay: CLAWMEM_FAULT_SEED={SEED} CLAWMEM_FAULT_KILLS={KILLS})")
    paths = generate(workspace, FILES, seed=seed)
    index = index_file(workspace)
    started = time.monotonic()
    done = 0
    for command, share, window_kw, window_model in PLAN:
        want = max(1, round(kills * share))
        window = window_model if model else window_kw
        tries = 0
        n = 0
        while n < want:
            tries += 1
            assert tries < want * 4, f"{command}: the process kept finishing before the kill moment"
            agent_writes(workspace, paths, rnd, 40)
            expected = fingerprint(workspace)
            disk = disk_rows(workspace, paths)
            at = rnd.uniform(0.0, window)
            proc = subprocess.Popen(cli("--workspace", str(workspace), "--config", str(config), *command.split(), "--quiet")
                                    if command != "watch" else cli("--workspace", str(workspace), "--config", str(config), "watch"),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            end = time.monotonic() + at
            if command == "watch":
                # the agent keeps writing while the watcher runs
                while time.monotonic() < end and proc.poll() is None:
                    time.sleep(min(0.3, max(0.0, end - time.monotonic())))
                    if time.monotonic() < end:
                        agent_writes(workspace, paths, rnd, 3)
                expected = fingerprint(workspace)
                disk = disk_rows(workspace, paths)
            else:
                while time.monotonic() < end and proc.poll() is None:
                    time.sleep(0.005)
            if proc.poll() is not None:
                err = proc.stderr.read().decode()
                assert proc.returncode == 0 and "Traceback" not in err, err
                TALLY[(model, command)]["finished before the kill moment"] += 1
                window = max(0.1, at - (end - time.monotonic()))  # aim within how long a run takes now
                continue
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
            proc.stderr.close()
            n += 1
            done += 1
            where = phase(command, proc.pid, index, disk, model)
            TALLY[(model, command)][where] += 1
            # the invariants, on the index and on a rebuild in progress
            for f in (index, Path(str(index) + ".rebuild")):
                if f.exists():
                    check_or_empty(f)
            assert stray_files(index.parent, rebuild_ok=True, journal_ok=True) == [], f"kill {done} ({command}, {where}, t={at:.3f}s)"
            assert fingerprint(workspace) == expected, f"kill {done} ({command}, {where}, t={at:.3f}s) changed the workspace"
    seconds = time.monotonic() - started
    # the next full runs complete (the rebuild resumes and is swapped in), and every file is found
    for command in ("index --force", "index"):
        res = run("--workspace", str(workspace), "--config", str(config), *command.split(), "--quiet", timeout=240)
        assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    assert stray_files(index.parent, rebuild_ok=False) == []
    counts = check(index)
    assert counts["files"] == len(paths) + 1  # and MEMORY.md
    from clawmem.engine import Engine

    eng = Engine.open(config_path=config, workspace=str(workspace), overrides={"provider": "none"})
    try:
        missing = [paths[i] for i in sorted(paths) if [r["path"] for r in eng.search(token(i), stale_check=False)["results"]][:1] != [paths[i]]]
    finally:
        eng.close()
    assert missing == []
    if model:
        st = Store(index)
        try:
            assert sum(st.coverage(m["id"]) for m in st.models()) == counts["chunks"]  # hybrid again after the runs
        finally:
            st.close()
    print(f"{done} kills in {seconds:.1f}s; by command and phase:")
    for (m, command), phases in sorted(TALLY.items()):
        if m == model:
            for where, k in phases.most_common():
                print(f"  {command:14} {where}: {k}")


def make_config(tmp_path: Path, provider: str) -> Path:
    return write(tmp_path / "clawmem.toml", provider + "[sync]\nonSearch = false\nwatchDebounceMs = 200\n")


@pytest.mark.slow
def test_kill_9_keyword_only(workspace, tmp_path):
    kill_series(workspace, tmp_path, make_config(tmp_path, 'provider = "none"\n'), False, KILLS - KILLS // 2, SEED)


@pytest.mark.slow
def test_kill_9_with_the_local_model(workspace, tmp_path, tiny_model):
    config = make_config(tmp_path, f'provider = "local"\n[local]\nmodelPath = "{tiny_model}"\n')
    kill_series(workspace, tmp_path, config, True, KILLS // 2, SEED + 1)


def test_a_rebuild_left_by_a_kill_is_reported_or_cleaned(workspace, tmp_path):
    from test_crash_resume import kill_after, notes

    notes(workspace, 120, lines=30)
    plain = write(tmp_path / "plain.toml", 'provider = "none"\n[sync]\nonSearch = false\n')
    assert run("--workspace", str(workspace), "--config", str(plain), "index").returncode == 0
    # a chunking change starts a rebuild; it is killed half-way, then the change is undone
    changed = write(tmp_path / "changed.toml", 'provider = "none"\n[chunking]\ntokens = 100\noverlap = 10\n[sync]\nonSearch = false\n')
    kill_after("files", 40, workspace, changed)
    index = index_file(workspace)
    leftover = Path(str(index) + ".rebuild")
    assert leftover.exists()
    assert run("--workspace", str(workspace), "--config", str(plain), "index").returncode == 0
    status = run("--workspace", str(workspace), "--config", str(plain), "status")
    assert not leftover.exists() or ".rebuild" in status.stdout
