"""For each missing word of a question (from study.py's output), does some passage stand closer to the
word alone than chance? python bench/study31/nearvec.py STUDY.json OUT.json"""
import json, os, sys
sys.path.insert(0, "bench")
import eval as E
for var in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
    os.environ.setdefault(var, str(E.CACHE / var.lower()))
d = json.load(open(sys.argv[1]))
engines = {}
def eng(set_name, ws):
    if (set_name, ws) not in engines:
        engines[(set_name, ws)] = E.engine_for(set_name, ws, {}, True)
    return engines[(set_name, ws)]
out = {}
for s, rec in d.items():
    for kind in ("answerable", "other"):
        for o in rec[kind]:
            ev = o["evidence"]
            if ev.get("dialogue") or not ev["absentTerms"]:
                continue
            set_name = "longmemeval_s30" if (s.startswith("longmemeval") or kind == "other") else s.split(":")[0]
            ws = o["ws"]
            res = []
            for t in ev["absentTerms"]:
                r = eng(set_name, ws).search(t, max_results=3, show_hidden=True, explain=True, stale_check=False)
                e = r["evidence"]
                res.append((t, e["bestVector"], e["topZ"], e["nDocs"], r["results"][0]["snippet"][:80] if r["results"] else ""))
            out.setdefault(s, {}).setdefault(kind, []).append({"q": o["q"][:80], "ws": ws, "words": res})
            print(s, kind, res, flush=True)
json.dump(out, open(sys.argv[2], "w"))
