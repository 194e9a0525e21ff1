"""Replay on bench/abstention.py --raw data (not shipped): the scattered flag not raised when the best
passage holds a name the query names (evidence named & bestHeldTerms), as a held-out memory that knows
the person would answer. Prints, per set, flagged-or-emptied before -> with the exemption.
    python bench/study31/named_exemption.py RAW.json"""
import json, sys
d = json.load(open(sys.argv[1]))
for cname, per in d.items():
    for s, rec in per.items():
        row = []
        for part in ("answerable", "other"):
            xs = rec[part]
            sc = [x for x in xs if (x["evidence"].get("absent") or {}).get("kind") == "scattered"]
            ex = [x for x in sc if set(x["evidence"].get("named", [])) & set(x["evidence"].get("bestHeldTerms", []))]
            anyv = sum(bool(x["evidence"].get("absent")) for x in xs)
            row.append(f"{part}: flagged-or-emptied {anyv/len(xs):.3f} -> {(anyv-len(ex))/len(xs):.3f} (scattered {len(sc)}, exempted {len(ex)}, gold6 in exempted {sum(any(x['hits'][:6]) for x in ex)})")
        print(f"  {s:<28} {cname:<8} " + " | ".join(row))
