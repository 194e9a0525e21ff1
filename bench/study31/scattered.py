"""The `scattered` flag (issue 31, session 6) replayed on bench/abstention.py --raw data: each
set's verdicts without it (the rule before: the evidence with bestHeld removed) and with it,
on the same searches, and what the best passage holds (bestHeld) on the lists the rule
decides. Optionally the rule at other thresholds than chance (1), to show the trade-off:
    python bench/study31/scattered.py RAW.json [1.1,1.25]"""
import json, sys
from clawmem.engine.search import verdict
from clawmem.engine.search import evidence as E

d = json.load(open(sys.argv[1]))
others = [float(x) for x in sys.argv[2].split(",")] if len(sys.argv) > 2 else []


def before(ev):
    return verdict({k: v for k, v in ev.items() if k != "bestHeld"})


def at(ev, threshold):
    """The shipped verdict with the scattered rule at another threshold (not shipped)."""
    v = verdict(ev)
    if v is not None and v["kind"] != "scattered":
        return v
    small = ev.get("nDocs", 64) < 64
    if small or ev.get("dialogue") or ev.get("absentTerms") or not ev.get("candidates") or ev.get("bestHeld") is None:
        return v if v and v["kind"] != "scattered" else None
    held = ev["bestHeld"] < threshold and ev["bestHeld"] < ev["usedWeight"] - 0.001
    return {"kind": "scattered", "emptied": False} if held else None


def rate(xs, f, key):
    out = [f(x["evidence"]) for x in xs]
    if key == "emptied":
        return sum(bool(v and v["emptied"]) for v in out) / max(len(xs), 1)
    return sum(v is not None for v in out) / max(len(xs), 1)


print("  set                          config    answerable flagged-or-emptied     other-history flagged-or-emptied   "
      "answerable emptied   gold shown in newly flagged answerable lists")
print("                                         before   now  " + "".join(f"  @{t:g}" for t in others) +
      "        before   now  " + "".join(f"  @{t:g}" for t in others))
for cname, per_set in d.items():
    for s, rec in per_set.items():
        a, o = rec["answerable"], rec["other"]
        new = [x for x in a if verdict(x["evidence"]) and not before(x["evidence"])]
        print(f"  {s:<28} {cname:<8} {rate(a, before, 'any'):>6.3f} {rate(a, verdict, 'any'):>6.3f}" +
              "".join(f" {rate(a, lambda ev, t=t: at(ev, t), 'any'):>5.3f}" for t in others) +
              f"       {rate(o, before, 'any'):>6.3f} {rate(o, verdict, 'any'):>6.3f}" +
              "".join(f" {rate(o, lambda ev, t=t: at(ev, t), 'any'):>5.3f}" for t in others) +
              f"        {rate(a, before, 'emptied'):.3f} {rate(a, verdict, 'emptied'):.3f}"
              f"        {sum(any(x['hits'][:6]) for x in new)} of {len(new)}")
