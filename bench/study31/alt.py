"""Other flag rules replayed on bench/abstention.py --raw data (what each would cost):
    python bench/study31/alt.py RAW.json"""
import json, sys
from clawmem.engine.search import verdict
d = json.load(open(sys.argv[1]))
def q(ev): return ev["nDocs"] >= 64 and not ev["dialogue"]
RULES = {
    "shipped": lambda ev: verdict(ev) is not None,
    "+ no hit reaches 0.5": lambda ev: verdict(ev) is not None or (q(ev) and ev["best"] < 0.5),
    "+ no high hit (0.6)": lambda ev: verdict(ev) is not None or (q(ev) and ev["best"] < 0.6),
}
for cname, per_set in d.items():
    for name, f in RULES.items():
        print(f"{cname:<8} {name:<22}", end="")
        for s, rec in per_set.items():
            a = rec["answerable"]; o = rec["other"]
            print(f" | {s[:22]:<22} ans {sum(f(x['evidence']) for x in a)/max(len(a),1):.3f} other {sum(f(x['evidence']) for x in o)/max(len(o),1):.3f}", end="")
        print()
