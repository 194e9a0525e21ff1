"""Embedding throughput of the indexer against a bare llama-cpp-python loop (issue 3).

Both embed the same chunks (the first workspace of ../shared/eval/longmemeval_s30, chunked
by clawmem) with the same model (multilingual-e5-small from ../shared/models), one text
per call, the same llama.cpp settings and thread count. The indexer run is a whole
`Engine.index()` over an index whose text is already there, with the embedding cache off,
so it measures what indexing adds around the model: batching, cache look-ups, SQLite and
sqlite-vec writes, events. Runs alternate (bare, indexer, bare, …) so drift from other work
on the machine hits both alike. The model is loaded before timing in both.

    python bench/bench_embed.py                      # 150 chunks, 3 rounds, 2 threads
    python bench/bench_embed.py --chunks 40 --rounds 1   # a quick check
    python bench/bench_embed.py --indexer-threads 0  # the indexer choosing its threads (local.threads = 0)
    python bench/bench_embed.py --threads-study      # 1 vs 2 threads, passages and queries

Check `uptime` first: timings taken while other heavy work runs mean little here.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
SHARED = ROOT.parent.parent / "shared"
MODEL = SHARED / "models" / "multilingual-e5-small-q4_0.gguf"
CORPUS = SHARED / "eval" / "longmemeval_s30"
QUERIES = ["what did I say about my commute", "restaurant recommendation for dinner", "how long was the trip to Japan",
           "which book did I finish last month", "the name of my dog", "budget for the kitchen renovation"]


def isolate(tmp: Path) -> None:
    for var, sub in (("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_CACHE_HOME", "cache"), ("XDG_STATE_HOME", "state"),
                     ("XDG_RUNTIME_DIR", "run")):  # the indexer's resident model is this run's own
        os.environ[var] = str(tmp / sub)
    os.environ.pop("OPENCLAW_STATE_DIR", None)
    os.environ["HOME"] = str(tmp / "home")
    (tmp / "home").mkdir(parents=True, exist_ok=True)


def load_avg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def make_workspace(tmp: Path, n_chunks: int) -> Path:
    """The first n_chunks chunks of the first eval workspace, one note file each."""
    from clawmem.engine.index.chunking import chunk_markdown

    src = sorted(p for p in CORPUS.iterdir() if p.is_dir())[0] / "memory"
    ws = tmp / "ws"
    (ws / "memory").mkdir(parents=True)
    n = 0
    for f in sorted(src.glob("*.md")):
        for c in chunk_markdown(f.read_text(encoding="utf-8")):
            if c.text.strip() and n < n_chunks:
                n += 1
                (ws / "memory" / f"note-{n:04d}.md").write_text(c.text.strip() + "\n", encoding="utf-8")
        if n >= n_chunks:
            break
    return ws


def bare_loop(llm, texts: list[str]) -> float:
    t0 = time.perf_counter()
    for t in texts:
        llm.embed("passage: " + t.strip(), normalize=True)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", type=int, default=150)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2, help="threads of the bare loop (and of the indexer unless --indexer-threads)")
    ap.add_argument("--indexer-threads", type=int, help="local.threads for the indexer (0 = automatic: measured while indexing)")
    ap.add_argument("--model", default=str(MODEL))
    ap.add_argument("--resident-minutes", type=float, default=5.0,
                    help="local.residentMinutes of the indexer (0: a worker of this process, > 0: the resident model)")
    ap.add_argument("--threads-study", action="store_true", help="measure 1 vs 2 threads for passages and queries")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="clawmem-bench-embed-"))
    try:
        isolate(tmp)
        if args.threads_study:
            return threads_study(tmp, args)
        return compare(tmp, args)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def compare(tmp: Path, args) -> int:
    import llama_cpp

    from clawmem.engine import Engine, load_config
    from clawmem.engine.index.store import Store

    ws = make_workspace(tmp, args.chunks)
    it = args.threads if args.indexer_threads is None else args.indexer_threads
    overrides = {"provider": "local", "local.modelPath": args.model, "local.threads": it, "cache.enabled": False,
                 "local.residentMinutes": args.resident_minutes}
    # the text once (keyword-only), kept as a template: each indexer round starts from a copy
    base_cfg = load_config(None, workspace=str(ws), overrides={**overrides, "provider": "none"})
    eng = Engine(base_cfg)
    list(eng.index())
    eng.close()
    template = tmp / "template.sqlite"
    shutil.copy(eng.index_path, template)
    st = Store(eng.index_path)
    texts = [r[0] for r in st.conn.execute("select text from chunks order by id")]
    st.close()
    print(f"# {len(texts)} chunks, {sum(len(t) for t in texts) / len(texts):.0f} chars each on average; model {Path(args.model).name}; "
          f"threads: bare {args.threads}, indexer {it or 'automatic'}; load {load_avg()}")

    llm = llama_cpp.Llama(model_path=args.model, embedding=True, n_ctx=512, n_batch=512, n_ubatch=512, flash_attn=True,
                          n_threads=args.threads, n_threads_batch=args.threads, verbose=False)
    llm.embed("passage: warm up", normalize=True)
    cfg = load_config(None, workspace=str(ws), overrides=overrides)
    indexer = Engine(cfg)
    prov = indexer.providers.get("local")
    prov.embed_passages(["warm up"])  # load the model before timing

    # time spent in the model (its worker process, pipe included) during indexer rounds: the
    # rest is what the indexer adds
    in_model = [0.0]
    host = prov._host()
    real_embed = host.embed

    def timed_embed(*a, **kw):
        t = time.perf_counter()
        try:
            return real_embed(*a, **kw)
        finally:
            in_model[0] += time.perf_counter() - t

    host.embed = timed_embed
    bare, idx, model_time = [], [], []
    for r in range(args.rounds):
        if r % 2 == 0:  # alternate which goes first
            bare.append(bare_loop(llm, texts))
        indexer.providers.built.clear()  # keep the loaded model: close() would close it
        indexer.close()
        for suffix in ("", "-wal", "-shm"):
            Path(str(indexer.index_path) + suffix).unlink(missing_ok=True)
        shutil.copy(template, indexer.index_path)
        indexer = Engine(cfg)
        indexer.providers.built["local"] = prov
        in_model[0] = 0.0
        t0 = time.perf_counter()
        fin = indexer.run_index()
        idx.append(time.perf_counter() - t0)
        model_time.append(in_model[0])
        assert fin is not None and fin.chunks_embedded == len(texts), fin
        if r % 2 == 1:
            bare.append(bare_loop(llm, texts))
        print(f"round {r + 1}: bare {len(texts) / bare[-1]:.2f} chunks/s, indexer {len(texts) / idx[-1]:.2f} chunks/s (load {load_avg()})")
    b, i = statistics.median(bare), statistics.median(idx)
    print(f"bare llama-cpp loop: median {b:.2f} s = {len(texts) / b:.2f} chunks/s")
    print(f"clawmem indexer:     median {i:.2f} s = {len(texts) / i:.2f} chunks/s")
    print(f"indexer / bare throughput: {b / i:.1%} (target >= 90%)")
    outside = statistics.median([(t - m) / t for t, m in zip(idx, model_time)])
    print(f"indexer time outside the model (tokenizing, SQLite, sqlite-vec, events): median {outside:.1%} of its run")
    prov.close()
    llm.close()
    return 0 if b / i >= 0.9 else 1


def threads_study(tmp: Path, args) -> int:
    """1 vs 2 threads: passages (chunks/s) and single short queries (ms), alternating settings."""
    import llama_cpp

    ws = make_workspace(tmp, args.chunks)
    from clawmem.engine.index.chunking import chunk_markdown

    texts = [c.text for f in sorted((ws / "memory").glob("*.md")) for c in chunk_markdown(f.read_text(encoding="utf-8")) if c.text.strip()]
    texts = texts[: args.chunks]
    llm = llama_cpp.Llama(model_path=args.model, embedding=True, n_ctx=512, n_batch=512, n_ubatch=512, flash_attn=True,
                          n_threads=1, n_threads_batch=1, verbose=False)
    llm.embed("warm up")
    print(f"# threads study: {len(texts)} chunks, {len(QUERIES)} queries x 10; model {Path(args.model).name}; load {load_avg()}")
    rates: dict[int, list[float]] = {1: [], 2: []}
    qms: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(args.rounds):
        for n in (1, 2):
            llm._ctx.set_n_threads(n, n)
            rates[n].append(len(texts) / bare_loop(llm, texts))
            for _ in range(10):
                for q in QUERIES:
                    t0 = time.perf_counter()
                    llm.embed("query: " + q, normalize=True)
                    qms[n].append((time.perf_counter() - t0) * 1000)
    for n in (1, 2):
        qs = sorted(qms[n])
        print(f"threads {n}: passages median {statistics.median(rates[n]):.2f} chunks/s (runs {', '.join(f'{x:.2f}' for x in rates[n])}); "
              f"query p50 {statistics.median(qs):.1f} ms, p95 {qs[int(0.95 * (len(qs) - 1))]:.1f} ms")
    print(f"# load after: {load_avg()}")
    llm.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
