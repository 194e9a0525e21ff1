"""Keyword-only engine speed at N = 100, 1000, 5000 daily logs (issue 2's benchmark).

Prints medians for: full index, no-op re-index, re-index after editing one file,
in-process search p50/p95, and `clawmem search` as a whole process. Each figure sits
beside a floor measured in the same run on the same corpus: a bare FTS5 build of the same
files (no discovery, no chunk bookkeeping), a bare FTS5 query, and a bare Python start.

    python bench/bench_core.py [--sizes 100,1000,5000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import generate  # noqa: E402

QUERIES = ["billing decision", "postgres", "Sam deploy", "成语", "服务器", "Zahnarzt", "서버", "marathon budget",
           "what did we decide about the roadmap", "printer error exit code", "lasagna recipe", "vpn router"]
# OpenClaw CLI on a similar 5000-file corpus, measured on this machine (issue 2)
OPENCLAW_5000 = {"full index": 64.0, "no-op re-index": 4.5, "one-file edit": 5.6, "CLI search": 4.5}
TARGETS_5000 = {"full index": 6.0, "no-op re-index": 0.3, "one-file edit": 0.3, "CLI search": 0.25, "search p95 ms": 10.0}


def median(xs):
    return statistics.median(xs)


def p95(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))]


def bare_fts_build(ws: Path, db_path: Path) -> float:
    """The floor: read every file, cut 1600-char pieces, insert into one FTS5 table in one transaction."""
    from clawmem.engine.store import db

    t0 = time.perf_counter()
    con = db.connect(str(db_path))
    con.execute("create virtual table f using fts5(t)")
    con.execute("begin")
    for p in sorted(ws.rglob("*.md")):
        text = p.read_text(encoding="utf-8")
        for i in range(0, len(text), 1600):
            con.execute("insert into f(t) values (?)", (text[i : i + 1600],))
    con.execute("commit")
    con.close()
    return time.perf_counter() - t0


def bare_fts_query(db_path: Path, n: int = 200) -> list[float]:
    from clawmem.engine.store import db

    con = db.connect(str(db_path))
    times = []
    for i in range(n):
        q = QUERIES[i % len(QUERIES)].split()[0]
        t0 = time.perf_counter()
        con.execute("select rowid, bm25(f) from f where f match ? order by bm25(f) limit 24", (f'"{q}"',)).fetchall()
        times.append((time.perf_counter() - t0) * 1000)
    con.close()
    return times


def run_size(n: int, repeat: int, root: Path) -> dict:
    from clawmem.engine import Engine, load_config

    ws = root / f"ws{n}"
    planted = generate(ws, n)
    env_root = root / f"xdg{n}"
    for var, sub in (("XDG_DATA_HOME", "data"), ("XDG_CACHE_HOME", "cache"), ("XDG_STATE_HOME", "state"), ("XDG_CONFIG_HOME", "config")):
        os.environ[var] = str(env_root / sub)
    cfg = load_config(None, workspace=str(ws), overrides={"provider": "none"})
    out: dict = {"n": n}

    full = []
    for _ in range(max(1, repeat if n < 5000 else 3)):
        eng = Engine(cfg)
        for suffix in ("", "-wal", "-shm"):
            Path(str(eng.index_path) + suffix).unlink(missing_ok=True)
        t0 = time.perf_counter()
        eng.run_index()
        full.append(time.perf_counter() - t0)
        eng.close()
    out["full index"] = median(full)
    floor = [bare_fts_build(ws, root / f"bare{n}-{i}.db") for i in range(3)]
    out["full index floor"] = median(floor)

    eng = Engine(cfg)
    noop = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        eng.run_index()
        noop.append(time.perf_counter() - t0)
    out["no-op re-index"] = median(noop)

    target = sorted((ws / "memory").glob("*.md"))[n // 2]
    edit = []
    for i in range(repeat):
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(f"- appended line {i} about the gazebo\n")
        t0 = time.perf_counter()
        eng.run_index()
        edit.append(time.perf_counter() - t0)
    out["one-file edit"] = median(edit)

    times = []
    for i in range(300):
        q = QUERIES[i % len(QUERIES)]
        t0 = time.perf_counter()
        eng.search(q, stale_check=False)
        times.append((time.perf_counter() - t0) * 1000)
    out["search p50 ms"] = median(times)
    out["search p95 ms"] = p95(times)
    bare = bare_fts_query(root / f"bare{n}-0.db")
    out["bare FTS query p50 ms"] = median(bare)
    # the whole search including the freshness scan that sets `stale`
    fresh = []
    for i in range(30):
        t0 = time.perf_counter()
        eng.search(QUERIES[i % len(QUERIES)])
        fresh.append((time.perf_counter() - t0) * 1000)
    out["search+freshness p50 ms"] = median(fresh)
    needle = next(iter(planted))
    res = eng.search(needle)
    out["needle found"] = bool(res["results"]) and needle in res["results"][0]["snippet"]
    eng.close()

    cli, py = [], []
    env = dict(os.environ)
    for _ in range(7):
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "clawmem.tui", "--workspace", str(ws), "search", needle, "--json"],
                              capture_output=True, text=True, env=env)
        cli.append(time.perf_counter() - t0)
        assert proc.returncode == 0, proc.stderr
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"])
        py.append(time.perf_counter() - t0)
    out["CLI search"] = median(cli)
    out["python start"] = median(py)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="100,1000,5000")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", type=Path, help="also write the figures here")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="clawmem-bench-") as tmp:
        for n in [int(x) for x in a.sizes.split(",")]:
            r = run_size(n, a.repeat, Path(tmp))
            rows.append(r)
            print(f"N={n} done", file=sys.stderr)
    print(f"{'N':>6} {'full s':>8} {'floor s':>8} {'×floor':>7} {'no-op s':>8} {'edit s':>8} {'p50 ms':>7} {'p95 ms':>7} {'bareFTS':>8} {'+fresh':>7} {'CLI s':>7} {'py s':>6}")
    for r in rows:
        print(f"{r['n']:>6} {r['full index']:>8.3f} {r['full index floor']:>8.3f} {r['full index'] / r['full index floor']:>7.2f} "
              f"{r['no-op re-index']:>8.3f} {r['one-file edit']:>8.3f} {r['search p50 ms']:>7.2f} {r['search p95 ms']:>7.2f} "
              f"{r['bare FTS query p50 ms']:>8.3f} {r['search+freshness p50 ms']:>7.1f} {r['CLI search']:>7.3f} {r['python start']:>6.3f}")
    big = next((r for r in rows if r["n"] == 5000), None)
    if big:
        print("\nAt 5000 files, against OpenClaw's CLI on this machine and the targets:")
        for k, oc in OPENCLAW_5000.items():
            print(f"  {k:<16} clawmem {big[k]:>7.3f} s   OpenClaw {oc:>5.1f} s   ({oc / big[k]:.0f}× faster)   target ≤ {TARGETS_5000[k]} s")
        print(f"  search p95       clawmem {big['search p95 ms']:>7.2f} ms  target ≤ {TARGETS_5000['search p95 ms']} ms")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
