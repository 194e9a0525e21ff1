"""Retrieval benchmark over ../shared/eval (LongMemEval-S 30, MADial zh, MADial en).

Indexes each workspace once (keyword + multilingual-e5-small vectors from ../shared/models,
embeddings cached in bench/.cache so later runs take minutes), then searches every query
at its own `now` under each configuration and prints hit@1/5/10 and MRR@10 per set and per
category, beside the BM25 baseline the data set publishes.

    python bench/eval.py                      # every configuration, every set
    python bench/eval.py --quick              # one set, a few queries
    python bench/eval.py --configs keyword,rrf+decay --sets madial_zh
    python bench/eval.py --no-vectors         # keyword-only configurations (no model needed)
    python bench/eval.py --sets longmemeval_s30 --workspaces 2ebe6c90,32260d93 --embed-only --threads 1
                                              # fill the bench cache one history at a time (resumable)
    python bench/eval.py --configs rrf --abstain   # also: how often unanswerable queries come back empty

Abstention (--abstain): each query is also run against a workspace that does not hold its answer
(LongMemEval: the next workspace; MADial: a LongMemEval workspace when that set runs too, since
the other language's archive holds the same memories translated), and each off-topic question in bench/offtopic.txt
against every workspace used. A query "comes back empty" when the default shows nothing (see
bench/abstention.py for the bigger abstention set, held out).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import chats  # noqa: E402  (a conversation set written here)

ROOT = Path(__file__).resolve().parent
SHARED = ROOT.parent.parent / "shared"
EVAL = SHARED / "eval"
MODEL = SHARED / "models" / "multilingual-e5-small-q4_0.gguf"
CACHE = Path(os.environ.get("CLAWMEM_BENCH_CACHE") or ROOT / ".cache")  # another cache: runs beside one that is indexing
SETS = ["longmemeval_s30", "madial_zh", "madial_en"]
BASELINE = {  # published in ../shared/eval/README.md: hit@1, hit@5, hit@10, MRR@10
    "longmemeval_s30": (0.500, 0.800, 0.867, 0.627),
    "madial_zh": (0.306, 0.694, 0.819, 0.454),
    "madial_en": (0.319, 0.600, 0.744, 0.437),
}


def config_space() -> dict[str, dict]:
    out = {}
    for base, fusion in (("keyword", None), ("weighted", "weighted"), ("rrf", "rrf"), ("relative", "relative")):
        for decay in (False, True):
            for mmr in (False, True):
                name = base + ("+decay" if decay else "") + ("+mmr" if mmr else "")
                o = {"query.hybrid.temporalDecay.enabled": decay, "query.hybrid.mmr.enabled": mmr}
                if fusion:
                    o.update({"query.hybrid.fusion": fusion, "query.hybrid.vectorWeight": 0.7, "query.hybrid.textWeight": 0.3})
                else:
                    o["provider"] = "none"
                out[name] = o
    return out


ROOTS: dict[str, Path] = {}  # where a derived set's workspaces are (bench/abstention.py); else EVAL / its name


def load_queries(name: str) -> list[dict]:
    if name == chats.NAME:  # written here (bench/chats.py), laid out under the cache
        ROOTS.setdefault(name, CACHE / "derived" / name)
        chats.build(ROOTS[name])
        return chats.queries()
    return [json.loads(line) for line in (EVAL / name / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]


def baseline(name: str) -> tuple[float, float, float, float] | None:
    """The plain BM25 baseline (hit@1, hit@5, hit@10, MRR@10): as the eval set publishes it, or
    computed the same way for bench/chats."""
    if name not in BASELINE and name == chats.NAME:
        qs = load_queries(name)  # lays the files out under ROOTS[name]
        m = metrics([[covers(r, q["gold"]) for r in hits] for q, hits in zip(qs, chats.bm25_ranked(ROOTS[name], qs))])
        BASELINE[name] = (m["hit@1"], m["hit@5"], m["hit@10"], m["mrr@10"])
    return BASELINE.get(name)


def covers(result: dict, gold: list[dict]) -> bool:
    return any(result["path"] == g["path"] and result["startLine"] <= g["endLine"] and g["startLine"] <= result["endLine"] for g in gold)


def metrics(ranked_hits: list[list[bool]]) -> dict:
    n = len(ranked_hits) or 1
    out = {}
    for k in (1, 5, 10):
        out[f"hit@{k}"] = sum(any(h[:k]) for h in ranked_hits) / n
    out["mrr@10"] = sum(next((1 / (i + 1) for i, x in enumerate(h[:10]) if x), 0.0) for h in ranked_hits) / n
    return out


THREADS = 0  # local.threads for the model (0: the engine's default); --threads sets it


def engine_for(set_name: str, workspace: str, overrides: dict, use_vectors: bool):
    from clawmem.engine import Engine, load_config

    base = {
        "store.path": str(CACHE / "index" / f"{set_name}-{workspace}.sqlite"),
        "sync.onSearch": False,
    }
    if use_vectors and overrides.get("provider") != "none":
        base.update({"provider": "local", "local.modelPath": str(MODEL), "local.threads": THREADS})
    else:
        base["provider"] = "none"
    cfg = load_config(None, workspace=str(ROOTS.get(set_name, EVAL / set_name) / workspace), overrides={**base, **{k: v for k, v in overrides.items() if k != "provider"}})
    return Engine(cfg, persistent=True)


def ensure_indexed(set_name: str, workspaces: list[str], use_vectors: bool) -> None:
    for i, ws in enumerate(workspaces, 1):
        eng = engine_for(set_name, ws, {} if use_vectors else {"provider": "none"}, use_vectors)
        t0 = time.perf_counter()
        fin = eng.run_index(reason="bench")
        eng.close()
        if fin and (fin.files_indexed or fin.chunks_embedded):
            print(f"  indexed {set_name}/{ws} ({i}/{len(workspaces)}): {fin.files_indexed} files, "
                  f"{fin.chunks_embedded} chunks embedded in {time.perf_counter() - t0:.1f}s", file=sys.stderr)


def memo_query_embeddings(eng) -> None:
    """The same query is embedded once for every configuration (the model is the same)."""
    for prov in list(eng.providers.built.values()) + [eng.providers.get(c.name) for c in eng.plan().usable()]:
        if prov is not None and not getattr(prov, "_memo", False):
            prov.embed_query = functools.lru_cache(maxsize=4096)(prov.embed_query)
            prov._memo = True


def run(set_name: str, queries: list[dict], configs: dict[str, dict], use_vectors: bool, shared_providers: dict) -> dict:
    results: dict[str, dict] = {}
    for cname, overrides in configs.items():
        per_cat: dict[str, list] = defaultdict(list)
        everything = []
        hidden_gold = 0
        emptied = 0
        engines = {}
        for q in queries:
            ws = q["workspace"]
            if ws not in engines:
                eng = engine_for(set_name, ws, overrides, use_vectors)
                eng.providers.built.update(shared_providers)
                engines[ws] = eng
            eng = engines[ws]
            now = q.get("now") or q.get("today")
            res = eng.search(q["query"], max_results=10, now=now, show_hidden=True, explain=True, stale_check=False)
            shared_providers.update(eng.providers.built)
            memo_query_embeddings(eng)
            hits = [covers(r, q["gold"]) for r in res["results"]]
            # the default shows the whole list or, on evidence that the memory lacks the answer, nothing
            # a verdict that only flags the list shows it: count the ones that empty it
            abstained = bool((res["evidence"]["absent"] or {}).get("emptied"))
            emptied += abstained
            hidden_gold += abstained and any(hits[: eng.cfg["query.maxResults"]])
            per_cat[q["category"]].append(hits)
            everything.append(hits)
        for eng in engines.values():
            eng.providers.built.clear()
            eng.close()
        results[cname] = {"all": metrics(everything), "categories": {c: metrics(h) for c, h in per_cat.items()},
                          "hiddenGold": hidden_gold, "n": len(everything), "emptied": emptied}
    return results


OFFTOPIC = ROOT / "offtopic.txt"


def unanswerable(set_name: str, queries: list[dict], lme_workspaces: list[str]) -> list[tuple[str, str, str, str, str]]:
    """(kind, set, workspace, query, now) for queries whose answer the workspace does not hold."""
    out = []
    own = sorted({q["workspace"] for q in queries})
    for i, q in enumerate(queries):
        now = q.get("now") or q.get("today")
        if set_name == "longmemeval_s30":
            ws = own[(own.index(q["workspace"]) + 1) % len(own)]
            out.append(("other workspace", set_name, ws, q["query"], now))
        elif lme_workspaces:
            out.append(("other workspace", "longmemeval_s30", lme_workspaces[i % len(lme_workspaces)], q["query"], now))
    now = queries[0].get("now") or queries[0].get("today")
    questions = [x.strip() for x in OFFTOPIC.read_text(encoding="utf-8").splitlines() if x.strip() and not x.startswith("#")]
    for i, text in enumerate(questions):
        out.append(("off-topic", set_name, own[i % len(own)], text, now))
    return out


def run_unanswerable(items: list[tuple], configs: dict[str, dict], use_vectors: bool, shared_providers: dict) -> dict:
    """Per configuration and kind: [queries, how many the default answered with nothing]."""
    results: dict[str, dict] = {}
    for cname, overrides in configs.items():
        engines: dict = {}
        counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for kind, set_name, ws, query, now in items:
            key = (set_name, ws)
            if key not in engines:
                engines[key] = engine_for(set_name, ws, overrides, use_vectors)
                engines[key].providers.built.update(shared_providers)
            eng = engines[key]
            res = eng.search(query, max_results=10, now=now, explain=True, stale_check=False)
            shared_providers.update(eng.providers.built)
            memo_query_embeddings(eng)
            counts[kind][0] += 1
            counts[kind][1] += not res["results"]
        for eng in engines.values():
            eng.providers.built.clear()
            eng.close()
        results[cname] = dict(counts)
    return results


def fmt_row(label: str, m: dict, base: tuple | None = None) -> str:
    s = f"  {label:<22} {m['hit@1']:.3f}  {m['hit@5']:.3f}  {m['hit@10']:.3f}  {m['mrr@10']:.3f}"
    if base:
        s += f"   Δhit@5 {m['hit@5'] - base[1]:+.3f}  ΔMRR {m['mrr@10'] - base[3]:+.3f}"
    return s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--configs", help="comma-separated names (default: all sixteen)")
    ap.add_argument("--quick", action="store_true", help="madial_zh, 30 queries")
    ap.add_argument("--limit", type=int, help="queries per set")
    ap.add_argument("--workspaces", help="only the queries of these workspaces (comma-separated), e.g. the ones already embedded; sets holding none of them run whole")
    ap.add_argument("--no-vectors", action="store_true", help="keyword-only configurations only")
    ap.add_argument("--categories", action="store_true", help="also print per-category rows")
    ap.add_argument("--json", type=Path, help="write all figures here")
    ap.add_argument("--abstain", action="store_true", help="also run the unanswerable queries (see above)")
    ap.add_argument("--threads", type=int, default=0, help="local.threads (1 is steadier while other work runs)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="apply a setting to every configuration, e.g. --set query.hybrid.rrfK=20")
    ap.add_argument("--embed-only", action="store_true",
                    help="only index and embed the chosen workspaces into the bench cache, then stop "
                         "(resumable: --workspaces picks them, --threads 1 keeps it gentle)")
    a = ap.parse_args()
    global THREADS
    THREADS = a.threads
    if not EVAL.is_dir():
        sys.exit(f"eval data not found at {EVAL} (the benchmark needs ../shared beside the clone)")
    os.environ.setdefault("XDG_CACHE_HOME", str(CACHE / "xdg-cache"))
    os.environ.setdefault("XDG_STATE_HOME", str(CACHE / "xdg-state"))
    os.environ.setdefault("XDG_DATA_HOME", str(CACHE / "xdg-data"))
    os.environ.setdefault("XDG_CONFIG_HOME", str(CACHE / "xdg-config"))
    os.environ.pop("OPENCLAW_STATE_DIR", None)
    space = config_space()
    names = a.configs.split(",") if a.configs else list(space)
    if a.no_vectors:
        names = [n for n in names if n.startswith("keyword")]
    from clawmem.engine.config import parse_text_value

    extra = {k: parse_text_value(k, v) for k, v in (kv.split("=", 1) for kv in a.set)}
    configs = {n: {**space[n], **extra} for n in names}
    use_vectors = any(not n.startswith("keyword") for n in names)
    if use_vectors and not MODEL.is_file():
        sys.exit(f"model not found: {MODEL}")
    sets = ["madial_zh"] if a.quick else a.sets.split(",")
    limit = 30 if a.quick and not a.limit else a.limit
    report = {}
    shared: dict = {}
    if a.embed_only:
        for s in sets:
            wanted = sorted({q["workspace"] for q in load_queries(s)})
            if a.workspaces:
                wanted = [w for w in wanted if w in a.workspaces.split(",")]
            ensure_indexed(s, wanted, True)
        return
    for s in sets:
        queries = load_queries(s)
        if a.workspaces and any(q["workspace"] in a.workspaces.split(",") for q in queries):
            queries = [q for q in queries if q["workspace"] in a.workspaces.split(",")]
        if limit:
            queries = queries[:limit]
        ensure_indexed(s, sorted({q["workspace"] for q in queries}), use_vectors)
        t0 = time.perf_counter()
        report[s] = run(s, queries, configs, use_vectors, shared)
        abstain = {}
        if a.abstain:
            # MADial's other workspace is a LongMemEval one: only when that set is indexed in this run
            lme = sorted({q["workspace"] for q in load_queries("longmemeval_s30")}) if s != "longmemeval_s30" and "longmemeval_s30" in sets else []
            if a.workspaces:
                lme = [w for w in lme if w in a.workspaces.split(",")]
            ensure_indexed("longmemeval_s30", lme, use_vectors)
            abstain = run_unanswerable(unanswerable(s, queries, lme), configs, use_vectors, shared)
        print(f"\n{s} ({len(queries)} queries, {time.perf_counter() - t0:.0f}s)   hit@1  hit@5  hit@10 MRR@10", flush=True)
        print(fmt_row("BM25 baseline", dict(zip(("hit@1", "hit@5", "hit@10", "mrr@10"), baseline(s)))))
        for cname, r in report[s].items():
            print(fmt_row(cname, r["all"], baseline(s)) + f"   gold hidden by abstaining: {r['hiddenGold']}")
            if cname in abstain:
                r["abstain"] = abstain[cname]
                parts = [f"answerable emptied {r['emptied'] / max(r['n'], 1):.3f} ({r['emptied']}/{r['n']})"]
                parts += [f"{kind} empty {k / max(n, 1):.3f} ({k}/{n})" for kind, (n, k) in abstain[cname].items()]
                print("      abstention: " + " · ".join(parts))
            if a.categories:
                for cat, m in sorted(r["categories"].items()):
                    print(fmt_row("    " + cat[:18], m))
    if len(sets) > 1:
        print("\nmean over sets (hit@5, MRR@10), and sets where the configuration beats the baseline on both:")
        for cname in configs:
            h5 = sum(report[s][cname]["all"]["hit@5"] for s in sets) / len(sets)
            mrr = sum(report[s][cname]["all"]["mrr@10"] for s in sets) / len(sets)
            wins = sum(report[s][cname]["all"]["hit@5"] > baseline(s)[1] and report[s][cname]["all"]["mrr@10"] > baseline(s)[3] for s in sets)
            print(f"  {cname:<22} hit@5 {h5:.3f}  MRR@10 {mrr:.3f}  beats baseline on {wins}/{len(sets)}")
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
