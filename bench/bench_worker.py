"""What the local model's worker process costs, against the same model in-process.

Both sides embed the same texts with the same model (multilingual-e5-small from ../shared/models)
and the same settings as the indexer and search: a query with 1 thread, a batch of 32 real
chunks (the first LongMemEval workspace, chunked by clawmem) with 2 threads. Rounds alternate
(in-process, worker, in-process, …) so drift from other work on the machine hits both alike.

    python bench/bench_worker.py                  # queries and batches, then resident memory
    python bench/bench_worker.py --rounds 3 --queries 50
    python bench/bench_worker.py --throughput     # only: chunks/s of the installed llama.cpp build, in-process

Resident memory: a fresh process builds 1, 3 and 10 engines (agents) with the local model and
embeds a query in each; "before" loads one in-process model per engine, as clawmem did before
the worker, "after" is clawmem now (one worker per model file per process). RSS is summed over
the process and its children.

Check `uptime` first: timings taken while other heavy work runs mean little here.
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

from bench_embed import CORPUS, MODEL, QUERIES  # the same model, chunks and queries as the embedding benchmark


def chunks(n: int) -> list[str]:
    from clawmem.engine.index.chunking import chunk_markdown

    ws = sorted(p for p in CORPUS.iterdir() if p.is_dir())[0]
    out: list[str] = []
    for f in sorted((ws / "memory").glob("*.md")):
        out.extend(c.text for c in chunk_markdown(f.read_text(encoding="utf-8"), 400, 80))
        if len(out) >= n:
            break
    return out[:n]


def rss_tree(pid: int) -> int:
    """Resident bytes of pid and all its descendants."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as fh:
                total += next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmRSS:"))
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children") as fh:
                    todo.extend(int(x) for x in fh.read().split())
        except (OSError, StopIteration):
            pass
    return total


def timing(rounds: int, n_queries: int) -> None:
    from clawmem.engine.embeddings.llama_model import Embedder
    from clawmem.engine.embeddings.local import LocalProvider

    texts = ["passage: " + t for t in chunks(32)]
    queries = ["query: " + QUERIES[i % len(QUERIES)] + f" {i}" for i in range(n_queries)]
    inproc = Embedder(str(MODEL), threads=1)
    worker = LocalProvider(MODEL, threads=1, query_prefix="", passage_prefix="")
    worker.embed_query("warm up")
    inproc.embed("warm up")
    def in_process(threads: int, items: list[str]) -> None:
        inproc.use_threads(threads)
        for t in items:
            inproc.embed(t)

    def in_worker(threads: int, items: list[str]) -> None:
        worker.threads = threads
        if len(items) == 1:
            worker.embed_query(items[0])
        else:
            worker.embed_passages(items)

    sides = {"in": in_process, "worker": in_worker}
    query_ms: dict[str, list[float]] = {"in": [], "worker": []}
    batch_s: dict[str, list[float]] = {"in": [], "worker": []}
    for r in range(rounds):
        for side in ("in", "worker") if r % 2 == 0 else ("worker", "in"):
            embed = sides[side]
            for q in queries:
                t0 = time.perf_counter()
                embed(1, [q])
                query_ms[side].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            embed(2, texts)
            batch_s[side].append(time.perf_counter() - t0)
    q_in, q_wk, b_in, b_wk = query_ms["in"], query_ms["worker"], batch_s["in"], batch_s["worker"]
    med = statistics.median
    print(f"query embedding, 1 thread ({len(q_in)} each): in-process p50 {med(q_in) * 1000:.2f} ms, "
          f"worker p50 {med(q_wk) * 1000:.2f} ms, difference {(med(q_wk) - med(q_in)) * 1000:+.2f} ms (target ≤ 2 ms)")
    print(f"batch of 32 chunks, 2 threads ({len(b_in)} each): in-process p50 {med(b_in):.3f} s "
          f"({32 / med(b_in):.1f} chunks/s), worker p50 {med(b_wk):.3f} s ({32 / med(b_wk):.1f} chunks/s), "
          f"ratio {med(b_wk) / med(b_in):.3f} (target ≤ 1.10)")
    worker.close()
    inproc.close()


MEMORY_CHILD = r"""
import os, sys, tempfile
mode, n, model = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if mode == "before":
    from clawmem.engine.embeddings.llama_model import Embedder
    held = [Embedder(model, threads=1) for _ in range(n)]
    for e in held:
        e.embed("query: hello")
else:
    from clawmem.engine import Engine, load_config
    tmp = Path(tempfile.mkdtemp())
    held = []
    for i in range(n):
        ws = tmp / f"agent{i}"
        (ws / "memory").mkdir(parents=True)
        cfg = load_config(None, workspace=str(ws), overrides={"provider": "local", "local.modelPath": model, "agentId": f"a{i}"})
        eng = Engine(cfg)
        eng.providers.get("local").embed_query("hello")
        held.append(eng)
print("ready", flush=True)
sys.stdin.readline()
"""


def memory() -> None:
    print("resident memory (process and children), e5-small q4_0:")
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, **{v: f"{tmp}/{v}" for v in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME")}}
        for n in (1, 3, 10):
            row = {}
            for mode in ("before", "after"):
                proc = subprocess.Popen([sys.executable, "-c", MEMORY_CHILD, mode, str(n), str(MODEL)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, env=env)
                assert proc.stdout.readline().strip() == "ready"
                row[mode] = rss_tree(proc.pid)
                proc.stdin.close()
                proc.wait()
            print(f"  {n:>2} agents: before {row['before'] / 2**20:.0f} MB, after {row['after'] / 2**20:.0f} MB")


def throughput(n: int) -> None:
    """chunks/s of whatever llama.cpp build is installed (to compare builds: run under each)."""
    from clawmem.engine.embeddings.llama_model import Embedder

    texts = ["passage: " + t for t in chunks(n)]
    e = Embedder(str(MODEL), threads=2)
    print(e.system_info())
    e.embed(texts[0])
    rates = []
    for _ in range(3):
        t0 = time.perf_counter()
        for t in texts:
            e.embed(t)
        rates.append(len(texts) / (time.perf_counter() - t0))
    q = []
    e.use_threads(1)
    for i in range(60):
        t0 = time.perf_counter()
        e.embed(f"query: {QUERIES[i % len(QUERIES)]}")
        q.append(time.perf_counter() - t0)
    print(json.dumps({"chunks_per_s_median": round(statistics.median(rates), 2), "runs": [round(r, 2) for r in rates],
                      "query_ms_p50": round(statistics.median(q) * 1000, 2)}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--throughput", action="store_true")
    ap.add_argument("--chunks", type=int, default=64)
    args = ap.parse_args()
    if args.throughput:
        throughput(args.chunks)
        return
    timing(args.rounds, args.queries)
    memory()


if __name__ == "__main__":
    main()
