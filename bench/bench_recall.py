"""What recall tracking costs a search: p50 / p95 of a keyword-only `Engine.search` with
`recall.enabled` on and off, over the same generated corpus (bench/corpus.py) and queries.

With tracking on, each search that returns daily-log hits adds one row per hit to the recall
store (one SQLite transaction, WAL); off, nothing is written. The two runs alternate in rounds
so a busy machine slows both alike.

    python bench/bench_recall.py                      # 20 days of logs, 400 searches each way
    python bench/bench_recall.py --days 5 --searches 40   # a quick check that it runs
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

QUERIES = ["database migration", "deploy failed", "meeting notes", "travel plans", "budget review", "garden tomatoes",
           "release checklist", "customer call", "reading list", "weekly sync"]


def write_logs(ws: Path, days: int) -> None:
    import random

    rng = random.Random(7)
    words = [w for q in QUERIES for w in q.split()] + ["note", "idea", "follow", "up", "ticket", "plan", "draft", "review"]
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    for d in range(days):
        day = f"2026-01-{d + 1:02d}" if d < 28 else f"2026-02-{d - 27:02d}"
        body = [f"# {day}", ""]
        for h in range(8):
            body += [f"## {9 + h}:00", " ".join(rng.choice(words) for _ in range(30)), ""]
        (ws / "memory" / f"{day}.md").write_text("\n".join(body), encoding="utf-8")


def percentiles(ms: list[float]) -> tuple[float, float]:
    ms = sorted(ms)
    return statistics.median(ms), ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--days", type=int, default=20)
    ap.add_argument("--searches", type=int, default=400, help="searches per setting")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="clawmem-recall-bench-") as tmp_name:
        tmp = Path(tmp_name)
        os.environ["XDG_DATA_HOME"] = str(tmp / "data")  # the recall store, never the user's
        from clawmem.engine import Engine, load_config
        from clawmem.engine.consolidate import recall

        ws = tmp / "ws"
        write_logs(ws, args.days)
        engines = {}
        for on in (True, False):
            cfg = load_config(None, workspace=str(ws), overrides={"provider": "none", "recall.enabled": on, "sync.onSearch": False,
                                                                  "store.path": str(tmp / "index.sqlite")})
            engines[on] = Engine(cfg)
        for _ in engines[True].index():
            pass
        times: dict[bool, list[float]] = {True: [], False: []}
        for eng in engines.values():  # warm: open the index and the recall store once
            eng.search(QUERIES[0], stale_check=False)
        rounds = max(1, args.searches // len(QUERIES))
        for _ in range(rounds):
            for on in (True, False):
                for q in QUERIES:
                    t0 = time.perf_counter()
                    engines[on].search(q, stale_check=False)
                    times[on].append((time.perf_counter() - t0) * 1000)
        rows = len(recall.recalls(engines[True].cfg))
        for eng in engines.values():
            eng.close()
        recall.close_all()
    for on in (False, True):
        p50, p95 = percentiles(times[on])
        print(f"recall tracking {'on ' if on else 'off'}: p50 {p50:.2f} ms  p95 {p95:.2f} ms  ({len(times[on])} searches)")
    print(f"rows recorded with tracking on: {rows}")


if __name__ == "__main__":
    main()
