"""Per-hit features of the answerable and other-history searches, for studying `high` (issue 31,
bench/results/abstention-session5.txt). From the repository root:
    python bench/study31/study.py keyword|default SETS LME_WORKSPACES OTHER OUT.json
SETS as bench/abstention.py takes them (variants too), LME_WORKSPACES the LongMemEval histories
to use (comma-separated), OTHER how many other histories each question is asked of."""
import json, os, sys, time
sys.path.insert(0, "bench")
import eval as E
for var in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
    os.environ.setdefault(var, str(E.CACHE / var.lower()))
import abstention as A

mode = sys.argv[1]            # keyword | default
sets = sys.argv[2].split(",")
lme = sys.argv[3].split(",")  # LongMemEval workspaces usable
other = int(sys.argv[4])      # other histories per question
out = sys.argv[5]
space = E.config_space()
overrides = space["keyword"] if mode == "keyword" else {}
use_vectors = mode != "keyword"
if any("named" in A.mods(s) for s in sets):
    A.named_copies()
shared = {}
engine = A.engine_cache(overrides, use_vectors, shared)

def feats(r, gold, sessions):
    x = r.get("explain", {})
    conf = x.get("confidence", {})
    return {"score": r["score"], "band": r["band"], "gold": E.covers(r, gold) if gold else False,
            "session": E.covers(r, sessions) if sessions else False,
            "kw": (x.get("keyword") or {}).get("rank"), "vr": (x.get("vector") or {}).get("rank"),
            "z": x.get("vectorZ"), "conf": conf, "exact": "exact" in x,
            "path": r["path"], "s": r["startLine"], "e": r["endLine"]}

def run(set_name, ws, query, now, gold=None, sessions=None):
    eng = engine(set_name, ws)
    res = eng.search(query, max_results=10, now=now, show_hidden=True, explain=True, stale_check=False)
    shared.update(eng.providers.built)
    E.memo_query_embeddings(eng)
    ev = dict(res["evidence"]); ev.pop("otherForms", None)
    return {"q": query[:200], "ws": ws, "evidence": ev, "hits": [feats(r, gold, sessions) for r in res["results"]]}

data = {}
for s in sets:
    qs = A.load(s)
    rec = {"answerable": [], "other": []}
    t0 = time.time()
    for i, q in enumerate(qs):
        now = q.get("now") or q.get("today")
        b = A.base_set(s)
        if b != "longmemeval_s30" or q["workspace"] in lme:
            rec["answerable"].append(run(A.index_set(s), q["workspace"], q["query"], now, q["gold"], q.get("gold_sessions")))
        if b == "longmemeval_s30":
            targets = [w for w in lme if w != q["workspace"]][:other] if other else []
            # rotate so each question meets different histories
            ws_others = [w for w in lme if w != q["workspace"]]
            targets = [ws_others[(i + k) % len(ws_others)] for k in range(min(other, len(ws_others)))]
            rec["other"] += [run(A.index_set(s), w, q["query"], now) for w in targets]
        else:
            rec["other"] += [run("longmemeval_s30", lme[(i + k) % len(lme)], q["query"], now) for k in range(other)]
    data[s] = rec
    print(s, len(rec["answerable"]), len(rec["other"]), round(time.time() - t0), "s", file=sys.stderr, flush=True)
json.dump(data, open(out, "w"))
