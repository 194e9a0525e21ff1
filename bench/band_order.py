"""What reading a hybrid list strong -> weak would cost: the default's first 10 results of every
question, in the fusion's order and re-sorted by band (or by score) in several ways, with
hit@5 and MRR@10 of each order. Needs the embeddings in the bench cache (see eval.py).

    python bench/band_order.py madial_zh,madial_en
    python bench/band_order.py longmemeval_s30 07741c45,0ddfec37     # only these haystacks
"""
import math
import os
import sys
sys.path.insert(0, "bench")
import eval as E
for var in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
    os.environ.setdefault(var, str(E.CACHE / var.lower()))
from clawmem.engine.search import ranking
sets = sys.argv[1].split(",")
ws_only = sys.argv[2].split(",") if len(sys.argv) > 2 else None
shared = {}
def soft(z): return 1 - math.exp(-max(0.0, z - 1.0) / 3.0)
for s in sets:
    rows = []
    engines = {}
    for q in E.load_queries(s):
        if ws_only and s == "longmemeval_s30" and q["workspace"] not in ws_only: continue
        eng = engines.get(q["workspace"]) or E.engine_for(s, q["workspace"], {}, True)
        engines[q["workspace"]] = eng
        eng.providers.built.update(shared)
        res = eng.search(q["query"], max_results=10, now=q.get("now") or q.get("today"), show_hidden=True, explain=True, stale_check=False)
        shared.update(eng.providers.built); E.memo_query_embeddings(eng)
        out = []
        for i, r in enumerate(res["results"]):
            x = r["explain"]; conf = x["confidence"]; ref = x.get("vectorReference") or {}
            z = None
            if "vector" in x and ref:
                z = (x["vector"]["cosine"] - ref["mean"]) / max(ref["std"], 1e-4)
            out.append(dict(i=i, hit=E.covers(r, q["gold"]), score=r["score"], kw=conf["keyword"], v=conf["vector"],
                            z=z, vs=x["fusion"].get("vectorShare", 0.0), ts=x["fusion"].get("textShare", 0.0)))
        rows.append(out)
    for eng in engines.values():
        eng.close()

    def m(key):
        hs = [[o["hit"] for o in sorted(r, key=key)] for r in rows]
        return E.metrics(hs)
    orders = {
        "fusion": lambda o: o["i"],
        "band(own)": lambda o: (-["low", "medium", "high"].index(ranking.band(o["score"])), o["i"]),
        "band(kw+soft z)": lambda o: (-["low", "medium", "high"].index(ranking.band(ranking.combine_confidence(o["kw"], soft(o["z"] or 0)))), o["i"]),
        "low last(own)": lambda o: (ranking.band(o["score"]) == "low", o["i"]),
        "high first(own)": lambda o: (ranking.band(o["score"]) != "high", o["i"]),
        "own score": lambda o: (-o["score"], o["i"]),
    }
    for name, key in orders.items():
        mm = m(key)
        print(f"{s:16} {name:18} hit@5 {mm['hit@5']:.3f} MRR@10 {mm['mrr@10']:.3f}", flush=True)
