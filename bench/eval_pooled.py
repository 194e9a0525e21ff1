"""Keyword retrieval over one pooled index of all 30 LongMemEval workspaces (~12k chunks).

bench/eval.py searches each question in its own ~400-chunk haystack, where the long-question
OR pass (engine/search.py, OR_POSTINGS) never has to leave a word out. Pooling the haystacks
makes the common words' posting lists long enough for it to bite, so this shows what choosing
the rarest keywords costs in hit@5 / MRR@10 (scored by line overlap, as eval.py does).

    python bench/eval_pooled.py                        # OR_POSTINGS 2000 (the default) and unbounded
    python bench/eval_pooled.py --budgets 500,1000,2000,0 --context 5
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
import eval as E  # noqa: E402

POOL = E.CACHE / "pooled-longmemeval"


def build() -> Path:
    """One workspace whose memory/<haystack>/ folders hold each question's daily logs."""
    ws = POOL / "ws"
    if not (ws / "memory").is_dir():
        for src in sorted((E.EVAL / "longmemeval_s30").iterdir()):
            if (src / "memory").is_dir():
                shutil.copytree(src / "memory", ws / "memory" / src.name)
    return ws


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budgets", default="2000,0", help="OR_POSTINGS values; 0 = no limit")
    ap.add_argument("--context", type=int, default=None, help="query.contextLines (default: the engine's)")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    os.environ.setdefault("XDG_CACHE_HOME", str(E.CACHE / "xdg-cache"))
    os.environ.setdefault("XDG_STATE_HOME", str(E.CACHE / "xdg-state"))
    os.environ.setdefault("XDG_DATA_HOME", str(E.CACHE / "xdg-data"))
    os.environ.setdefault("XDG_CONFIG_HOME", str(E.CACHE / "xdg-config"))
    from clawmem.engine import Engine, load_config
    from clawmem.engine import search as search_mod

    ws = build()
    over = {"provider": "none", "store.path": str(POOL / "index.sqlite"), "sync.onSearch": False}
    if a.context is not None:
        over["query.contextLines"] = a.context
    eng = Engine(load_config(None, workspace=str(ws), overrides=over), persistent=True)
    t0 = time.perf_counter()
    eng.run_index(reason="bench")
    chunks = eng.reader().conn.execute("select count(*) from chunks").fetchone()[0]
    print(f"pooled index: {chunks} chunks ({time.perf_counter() - t0:.0f}s to check/build)")
    queries = E.load_queries("longmemeval_s30")
    report = {}
    default = search_mod.OR_POSTINGS
    for budget in (int(b) for b in a.budgets.split(",")):
        search_mod.candidates.OR_POSTINGS = budget or 10**9
        hits, t1 = [], time.perf_counter()
        for q in queries:
            gold = [{**g, "path": f"memory/{q['workspace']}/{g['path'].removeprefix('memory/')}"} for g in q["gold"]]
            res = eng.search(q["query"], max_results=10, now=q.get("now"), show_hidden=True, stale_check=False)
            hits.append([E.covers(r, gold) for r in res["results"]])
        m = E.metrics(hits)
        ms = (time.perf_counter() - t1) * 1000 / len(queries)
        label = f"OR_POSTINGS {budget}" if budget else "no limit"
        print(f"  {label:<18} hit@1 {m['hit@1']:.3f}  hit@5 {m['hit@5']:.3f}  hit@10 {m['hit@10']:.3f}  MRR@10 {m['mrr@10']:.3f}  ({ms:.1f} ms/query)")
        report[label] = m
    search_mod.candidates.OR_POSTINGS = default
    eng.close()
    if a.json:
        a.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
