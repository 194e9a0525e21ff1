"""Two writers at once and searches during a rebuild swap (issue 9, fault suite): no "database is
locked", no traceback, no lost update. (tests/test_sync_processes.py has two plain `index` runs
with searches; this adds `watch` against `index --force` while an agent writes, and 20 searches
at a time across the swap of a rebuilt index.)"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from faultkit import cli, generate, index_file, run, token
from helpers import wait_for, write
from test_crash_resume import check


def config(tmp_path):
    return write(tmp_path / "clawmem.toml", 'provider = "none"\n[sync]\nonSearch = false\nwatchDebounceMs = 100\nintervalMinutes = 0\n')


@pytest.mark.slow
def test_watch_and_index_at_once_lose_no_update(workspace, tmp_path):
    cfg = config(tmp_path)
    paths = generate(workspace, 400)
    args = ["--workspace", str(workspace), "--config", str(cfg)]
    watch = subprocess.Popen(cli(*args, "watch"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    outputs = []
    try:
        appended = []
        for round_ in range(6):
            # an agent appends while `watch` syncs and a forced rebuild or an update runs
            writer = subprocess.Popen(cli(*args, "index", *(["--force"] if round_ % 2 else [])), stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True)
            for k in range(15):
                i = (round_ * 37 + k * 11) % len(paths)
                tok = f"appended{round_}x{k}"
                with open(workspace / paths[i], "a", encoding="utf-8") as fh:
                    fh.write(f"- late line {tok}\n")
                appended.append((tok, paths[i]))
                time.sleep(0.03)
            out, err = writer.communicate(timeout=120)
            outputs.append(err)
            assert writer.returncode == 0, err
        idx = index_file(workspace)

        def settled():
            res = run(*args, "status", "--json")
            return res.returncode == 0 and json.loads(res.stdout)["freshness"]["dirty"] is False

        wait_for(settled, limit=60, what="the watcher to catch up", interval=0.5)
    finally:
        watch.send_signal(signal.SIGTERM)
        out, err = watch.communicate(timeout=30)
        outputs += [out, err]
    said = "\n".join(outputs)
    assert "database is locked" not in said and "Traceback" not in said, said
    check(idx)
    from clawmem.engine import Engine

    eng = Engine.open(config_path=cfg, workspace=str(workspace))
    try:
        lost = [(tok, p) for tok, p in appended if [r["path"] for r in eng.search(tok, stale_check=False)["results"]][:1] != [p]]
        assert lost == []
        assert all(eng.search(token(i), stale_check=False)["results"][0]["path"] == paths[i] for i in range(0, 400, 7))
    finally:
        eng.close()


@pytest.mark.slow
def test_twenty_searches_at_a_time_across_a_rebuild_swap(workspace, tmp_path):
    from clawmem.engine import Engine

    cfg = config(tmp_path)
    paths = generate(workspace, 1500)
    args = ["--workspace", str(workspace), "--config", str(cfg)]
    assert run(*args, "index", "--quiet").returncode == 0
    idx = index_file(workspace)
    inode = idx.stat().st_ino
    done = threading.Event()
    errors: list[str] = []
    counts = [0] * 20

    def searcher(n: int) -> None:
        eng = Engine.open(config_path=cfg, workspace=str(workspace))  # one engine per searcher, like 20 processes
        try:
            k = n
            while not done.is_set():
                i = (k * 97) % len(paths)
                try:
                    got = [r["path"] for r in eng.search(token(i), stale_check=False)["results"]]
                    if got[:1] != [paths[i]]:
                        errors.append(f"{token(i)}: {got[:1]}")
                except Exception as exc:
                    errors.append(repr(exc))
                counts[n] += 1
                k += 20
        finally:
            eng.close()

    def cli_searches() -> list[str]:
        out = []
        while not done.is_set():
            res = run(*args, "search", token(5), "--json")
            if res.returncode != 0 or json.loads(res.stdout)["results"][0]["path"] != paths[5]:
                out.append(res.stderr or res.stdout[:200])
        return out

    with ThreadPoolExecutor(21) as pool:
        futures = [pool.submit(searcher, n) for n in range(20)]
        cli_future = pool.submit(cli_searches)
        rebuild = run(*args, "index", "--force", timeout=300)  # while 20 searchers and the CLI search
        at_swap = sum(counts)
        time.sleep(0.5)  # and a moment after the swap, on the new file
        after_swap = sum(counts) - at_swap
        done.set()
        for f in futures:
            f.result()
        cli_errors = cli_future.result()
    assert rebuild.returncode == 0, rebuild.stderr
    assert idx.stat().st_ino != inode, "the rebuild did not swap the index"
    assert "database is locked" not in rebuild.stderr
    assert errors == [] and cli_errors == []
    assert min(counts) > 0 and after_swap > 0, (counts, after_swap)
    check(idx)
