"""Long questions at 100k chunks: the whole hybrid search before and after issue 11, in one run.

The index is bench_vector.py's (real LongMemEval text in FTS5, random 384-d vectors, a fixed
random query vector); the questions are LongMemEval's. Each round times, interleaved so that
load from other work hits every line alike: the whole search (persistent engine, numpy in
memory) with this tree's engine/search.py at several OR_POSTINGS budgets and the same with
engine/search.py as it was at `--before` (read from git); then the bare numpy product for the
same query vectors.

    python bench/bench_long_questions.py                          # before = b33bcc0, budgets 2000,3000
    python bench/bench_long_questions.py --size 20000 --rounds 30 # a quick check
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
import bench_vector as bv  # noqa: E402


def engine_search_at(commit: str):
    """engine/search.py as it was at `commit`, loaded as a module of the installed package."""
    src = subprocess.run(["git", "-C", str(ROOT.parent), "show", f"{commit}:engine/search.py"], capture_output=True, text=True, check=True).stdout
    mod = types.ModuleType("clawmem.engine.search_before")
    mod.__package__ = "clawmem.engine"
    sys.modules[mod.__name__] = mod
    exec(compile(src, f"{commit}:engine/search.py", "exec"), mod.__dict__)
    return mod


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--before", default="b33bcc0")
    ap.add_argument("--budgets", default="2000,3000")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="clawmem-bench-long-"))
    try:
        bv.isolate(tmp)
        from clawmem.engine import Engine, load_config
        from clawmem.engine.search import searcher as searching
        from clawmem.engine import search as after

        before = engine_search_at(a.before)
        print(f"# load {' '.join(f'{x:.2f}' for x in __import__('os').getloadavg())}")
        (tmp / "ws" / "memory").mkdir(parents=True)
        cfg = load_config(None, workspace=str(tmp / "ws"), overrides={"provider": "openai", "remote.apiKey": "unused", "store.path": str(tmp / "index.sqlite")})
        prov = bv.FixedQuery()
        bv.build(cfg, a.size, prov, bv.real_chunks())
        questions = bv.real_queries()
        eng = Engine(cfg, persistent=True)
        eng.providers.built["openai"] = prov
        rng = np.random.default_rng(3)
        prov.vector = rng.standard_normal(bv.DIMS).astype(np.float32)
        eng.search(questions[0], stale_check=False)  # warm: loads the matrix
        mat = eng.searcher.vector_side(eng.reader())[0].matrix[1]
        budgets = [int(b) for b in a.budgets.split(",")]
        default, run_after = after.OR_POSTINGS, after.run  # searching.search_mod is `after`: keep its run
        timings: dict[str, list[float]] = {}

        def timed(label, fn):
            t = time.perf_counter()
            fn()
            timings.setdefault(label, []).append((time.perf_counter() - t) * 1000)

        vectors = rng.standard_normal((a.rounds, bv.DIMS)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        for i in range(a.rounds):
            q = questions[i % len(questions)]
            prov.vector = vectors[i]
            searching.search_mod.run = before.run
            timed(f"whole search, before ({a.before})", lambda: eng.search(q, stale_check=False))
            searching.search_mod.run = run_after
            for b in budgets:
                after.candidates.OR_POSTINGS = b
                timed(f"whole search, after (OR_POSTINGS {b})", lambda: eng.search(q, stale_check=False))
            after.candidates.OR_POSTINGS = default
        # numpy's BLAS after all the searches, as in bench_vector.py: its threads spin for a while
        # after each product and take a core from whatever runs next (a search timed right after
        # one took ~40 % longer at the median on this 2-core box)
        for i in range(a.rounds):
            timed("bare numpy product (mat @ q)", lambda: mat @ vectors[i])
        floor = bv.p95(timings["bare numpy product (mat @ q)"])
        print(f"## {a.size} chunks, {a.rounds} long questions ({np.mean([len(q.split()) for q in questions]):.0f} words on average)")
        for label, ms in timings.items():
            print(f"{label:44s} {bv.stats(ms)}  p95 / bare product p95 {bv.p95(ms) / floor:5.2f}x")
        print("target (issue 11): whole search p95 <= 4x the bare product p95")
        print(f"# load after {' '.join(f'{x:.2f}' for x in __import__('os').getloadavg())}")
        eng.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
