"""Last session's verdict replayed on this session's evidence, beside the shipped one:
    python bench/study31/before.py RAW.json   (a bench/abstention.py --raw file)"""
import json, sys
from clawmem.engine.search import verdict
from clawmem.engine.index.store import SMALL_MEMORY
def old(ev):
    """(any verdict, emptied) by last session's rule: every verdict but a missing word's is
    reached with formsChecked off; the missing word counted beside weak hits, or with vectors
    when no passage stood above chance (and no strong hit)."""
    v0 = verdict({**ev, "formsChecked": False})
    if v0:
        return True, v0["emptied"]
    small = ev.get("nDocs", SMALL_MEMORY) < SMALL_MEMORY
    missing = ev["absentTerms"] and not small
    held = ev.get("presentCoverage", 0.0) >= 1.0 and ev.get("presentWeight", 0.0) >= ev.get("rareWeight", 1.0)
    if missing and ev["best"] < 0.3 and not held:
        return True, False
    return bool(missing and ev.get("vectors") and not ev.get("dialogue") and ev["bestVector"] <= 0.0 and ev["best"] < 0.6), False
def new(ev):
    v = verdict(ev)
    return v is not None, bool(v and v["emptied"])
d = json.load(open(sys.argv[1]))
print("  set                          config   answerable emptied / flagged-or-emptied   other-history emptied / flagged-or-emptied   absent-fact emptied")
print("                                        before          now                       before          now                          before  now")
for cname, per_set in d.items():
    for s, rec in per_set.items():
        def r(xs, f, i):
            return sum(f(x["evidence"])[i] for x in xs) / max(len(xs), 1)
        a, o, b = rec["answerable"], rec["other"], rec["absent"]
        print(f"  {s:<28} {cname:<8} {r(a, old, 1):.3f} / {r(a, old, 0):.3f}   {r(a, new, 1):.3f} / {r(a, new, 0):.3f}"
              f"             {r(o, old, 1):.3f} / {r(o, old, 0):.3f}   {r(o, new, 1):.3f} / {r(o, new, 0):.3f}"
              f"                {r(b, old, 1):.3f}  {r(b, new, 1):.3f}")
