"""The `scattered` flag replayed on bench/abstention.py --raw data: each set's verdicts without
it (the evidence with chanceHeld removed), with session 6's rule (the best passage holds less
than one missing word's weight, bestHeld < 1, questions only) and with the shipped one (chance
alone holds as much together somewhere here more likely than not, chanceHeld >= 1/2, questions
and pasted conversations), on the same searches:
    python bench/study31/scattered.py RAW.json"""
import json, sys
from clawmem.engine.search import verdict

d = json.load(open(sys.argv[1]))


def without(ev):
    return verdict({**ev, "chanceHeld": None})


def session6(ev):
    """The rule before: bestHeld < 1 (RARE_ENOUGH), where the shipped rule could decide."""
    v = without(ev)
    if v is None and ev.get("chanceHeld") is not None and ev["bestHeld"] < 1.0 and not ev["dialogue"] and not ev["absentTerms"]:
        return {"kind": "scattered", "emptied": False}
    return v


def rate(xs, f):
    return sum(f(x["evidence"]) is not None for x in xs) / max(len(xs), 1)


print("  set                          config    answerable flagged-or-emptied   other-history flagged-or-emptied   "
      "answerable newly flagged with the gold shown")
print("                                         none   bestHeld<1  chance>=1/2    none   bestHeld<1  chance>=1/2")
for cname, per_set in d.items():
    for s, rec in per_set.items():
        a, o = rec["answerable"], rec["other"]
        new = [x for x in a if verdict(x["evidence"]) and not session6(x["evidence"])]
        print(f"  {s:<28} {cname:<8} {rate(a, without):>6.3f} {rate(a, session6):>8.3f} {rate(a, verdict):>10.3f}"
              f"      {rate(o, without):>6.3f} {rate(o, session6):>8.3f} {rate(o, verdict):>10.3f}"
              f"        {sum(any(x['hits'][:6]) for x in new)} of {len(new)}")
