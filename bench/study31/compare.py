"""before -> after, shipped constants, from two bench/abstention.py --json files:
    python bench/study31/compare.py BEFORE.json AFTER.json"""
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
print("  set                          config   answerable emptied    flagged        gold shown     others emptied-or-flagged   high right (lists)        hit@5          MRR@10")
for s in b:
    for c in b[s]:
        if s not in a or c not in a[s]:
            continue
        x, y = a[s][c]["shipped"], b[s][c]["shipped"]
        f = lambda k: f"{x[k]:.3f} -> {y[k]:.3f}"
        print(f"  {s:<28} {c:<8} {f('answerableEmptied')}  {f('answerableFlagged')}  {f('goldShown')}  {f('otherAbsent')} ({y['n'][1]:>4})  "
              f"{x['highRight']:.3f} ({x['highLists']:>2}) -> {y['highRight']:.3f} ({y['highLists']:>2})  {f('hit@5')}  {f('mrr@10')}")
