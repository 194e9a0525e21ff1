"""Consolidation on a replayed query log over ../shared/eval (keyword-only: no model needed).

The eval sets give each question one date, so the recall log is made here: before a question is
asked, the agent searches for it several times on earlier days, each time with a different
wording. The wordings are made from the question's own words, without a model:

  1. the question as written;
  2. its keywords (stop words dropped), in order;
  3. the keywords, last one first;
  4. the question without its first third of words;
  5. MADial: the last user turn alone (`query_short`); else the keywords' second half then first half;

asked 9, 7, 5, 3 and 1 days before the question's `now`, each as an agent's memory_search
(default maxResults, recorded as clawmem records any search). So these are lexical variants of
one information need, not human paraphrases; a real agent's log would be noisier. Every question
of a workspace is replayed into the same recall store (MADial: 160 questions over one archive).

Then, as of the latest question's `now`, `clawmem promote`'s preview with the command's gates
(0.75 / 3 / 2): how many candidates pass, and the share whose fact's lines (and, as earlier
runs counted, whose cited passage) overlap the gold evidence of a question that recalled them
(precision); how many are held because they contradict another; how many cite 2+ logs; the
promoted bullets' length. All are applied to MEMORY.md, the index is brought up
to date, and each question is searched again: hit@5 and MRR@10 before and after, where a
MEMORY.md hit counts when a promoted bullet it holds cites lines overlapping the gold.

Workspaces are copied to a temporary folder first (../shared is never written).

    python bench/bench_promote.py                       # all three sets
    python bench/bench_promote.py --sets madial_en --limit 40
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import shutil
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
import eval as E  # noqa: E402

DAYS_BEFORE = (9, 7, 5, 3, 1)
CITED = re.compile(r"(memory/[^()#;\s]+)#L(\d+)(?:-L(\d+))?")  # each citation of a bullet (a fact may cite several logs)


def wordings(q: dict) -> list[str]:
    from clawmem.engine.text import relaxed_terms

    text = q["query"]
    words = text.split()
    keys = relaxed_terms(text)
    out = [text, " ".join(keys), " ".join(keys[::-1]), " ".join(words[len(words) // 3 :])]
    out.append(q["query_short"] if q.get("query_short") else " ".join(keys[len(keys) // 2 :] + keys[: len(keys) // 2]))
    seen: dict[str, None] = {}
    for w in out:
        if w.strip() and w.strip().lower() not in {s.lower() for s in seen}:
            seen[w.strip()] = None
    return list(seen)


def when(q: dict) -> dt.datetime:
    return dt.datetime.fromisoformat(q.get("now") or q["today"])


def covers_after(r: dict, gold: list[dict], memory_lines: list[str]) -> bool:
    """A daily-log hit as eval.py scores it; a MEMORY.md hit by the sources its bullets cite."""
    if r["path"] != "MEMORY.md":
        return E.covers(r, gold)
    for line in memory_lines[r["startLine"] - 1 : r["endLine"]]:
        for path, a, b in CITED.findall(line):
            if E.covers({"path": path, "startLine": int(a), "endLine": int(b or a)}, gold):
                return True
    return False


def run_workspace(set_name: str, ws: str, queries: list[dict], tmp: Path) -> dict:
    from clawmem.engine import Engine, load_config
    from clawmem.engine.consolidate import promote, recall

    root = tmp / set_name / ws
    shutil.copytree(E.EVAL / set_name / ws, root)
    cfg = load_config(None, workspace=str(root), overrides={"provider": "none", "sync.onSearch": False,
                                                            "store.path": str(tmp / "index" / f"{set_name}-{ws}.sqlite")})
    eng = Engine(cfg, persistent=True)
    eng.run_index(reason="bench")
    owner: dict[str, dict] = {}
    for q in queries:
        asked = when(q)
        for ago, w in zip(DAYS_BEFORE, wordings(q)):
            at = asked - dt.timedelta(days=ago)
            res = eng.search(w, now=at, private=True, stale_check=False)
            recall.record(cfg, w, res["results"], now=at.timestamp())
            owner[w] = q
    before = [[E.covers(r, q["gold"]) for r in eng.search(q["query"], max_results=10, now=when(q), show_hidden=True,
                                                           stale_check=False)["results"]] for q in queries]
    latest = max(when(q) for q in queries)
    found, _ = promote.preview(eng, promote.COMMAND, now=latest.timestamp())
    # precision of the fact itself (its own lines), not of the passage around it
    gold_hits = sum(any(E.covers({"path": c.path, "startLine": c.fact_start or c.start, "endLine": c.fact_end or c.end},
                                 owner[w]["gold"]) for w in c.queries if w in owner) for c in found)
    passage_hits = sum(any(E.covers({"path": c.path, "startLine": c.start, "endLine": c.end}, owner[w]["gold"])
                           for w in c.queries if w in owner) for c in found)  # as earlier runs counted (the cited passage)
    outcomes = promote.apply(eng, found, today=latest.date())
    bullets = [ln for ln in ((root / "MEMORY.md").read_text(encoding="utf-8").splitlines() if (root / "MEMORY.md").exists() else [])
               if ln.startswith("- ") and "#L" in ln]
    eng.run_index(reason="bench")
    memory_lines = (root / "MEMORY.md").read_text(encoding="utf-8").splitlines() if (root / "MEMORY.md").exists() else []
    after = [[covers_after(r, q["gold"], memory_lines) for r in eng.search(q["query"], max_results=10, now=when(q), show_hidden=True,
                                                                         stale_check=False)["results"]] for q in queries]
    eng.close()
    recall.close_all()
    return {"candidates": len(found), "gold": gold_hits, "passage": passage_hits, "promoted": sum(o.promoted for o in outcomes),
            "held": sum(o.reason.startswith("contradicts") for o in outcomes), "merged": sum(bool(c.also) for c in found),
            "chars": [len(b) for b in bullets], "before": before, "after": after, "questions": len(queries)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", default=",".join(E.SETS))
    ap.add_argument("--limit", type=int, help="at most N questions per set")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="clawmem-promote-bench-") as tmp_name:
        tmp = Path(tmp_name)
        os.environ["XDG_DATA_HOME"] = str(tmp / "data")  # a fresh recall store and journal, never the user's
        for set_name in args.sets.split(","):
            queries = E.load_queries(set_name)[: args.limit]
            by_ws: dict[str, list[dict]] = defaultdict(list)
            for q in queries:
                by_ws[q["workspace"]].append(q)
            total = {"candidates": 0, "gold": 0, "passage": 0, "promoted": 0, "held": 0, "merged": 0, "chars": [], "before": [], "after": [], "questions": 0}
            for ws, qs in sorted(by_ws.items()):
                got = run_workspace(set_name, ws, qs, tmp)
                for k in total:
                    total[k] += got[k]
                print(f"  {set_name}/{ws}: {got['candidates']} candidates, {got['gold']} on gold", file=sys.stderr)
            rows.append((set_name, total))
    print("| set | questions | candidates passing (0.75/3/2) | fact on gold evidence (precision) | passage on gold | promoted | held (contradiction) "
          "| citing 2+ logs | bullet chars median / max | hit@5 before → after | MRR@10 before → after |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for set_name, t in rows:
        b, a = E.metrics(t["before"]), E.metrics(t["after"])
        prec = f"{t['gold'] / t['candidates']:.2f}" if t["candidates"] else "-"
        chars = sorted(t["chars"])
        size = f"{chars[len(chars) // 2]} / {chars[-1]}" if chars else "-"
        pprec = f"{t['passage'] / t['candidates']:.2f}" if t["candidates"] else "-"
        print(f"| {set_name} | {t['questions']} | {t['candidates']} | {t['gold']} ({prec}) | {t['passage']} ({pprec}) | {t['promoted']} | {t['held']} | "
              f"{t['merged']} | {size} | {b['hit@5']:.3f} → {a['hit@5']:.3f} | {b['mrr@10']:.3f} → {a['mrr@10']:.3f} |")


if __name__ == "__main__":
    main()
