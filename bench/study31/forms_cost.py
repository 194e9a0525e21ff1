"""Run: CLAWMEM_BENCH_CACHE=<a cache with the LongMemEval indexes> python bench/study31/forms_cost.py
A/B: search.run keyword-only with and without held_forms, alternated, on all 30 LongMemEval
histories (each question of its own index, bench cache). Medians of per-search ms."""
import json, os, statistics, time
from pathlib import Path
import clawmem.engine.search as S
from clawmem.engine.index.store import Store
from clawmem.engine.search.options import Options
from clawmem.engine.text import query_terms, STOPWORDS
CACHE = Path(os.environ.get("CLAWMEM_BENCH_CACHE") or Path(__file__).resolve().parents[1] / ".cache")
real = S.held_forms
qs = [json.loads(l) for l in open(Path(__file__).resolve().parents[3] / "shared/eval/longmemeval_s30/queries.jsonl")]
on, off, alone = [], [], []
for q in qs:
    st = Store(CACHE / "index" / f"longmemeval_s30-{q['workspace']}.sqlite")
    opts = Options(6, 0.0)
    for rep in range(6):
        for mode in ("on", "off") if rep % 2 == 0 else ("off", "on"):
            S.held_forms = real if mode == "on" else (lambda store, terms: {})
            t = time.perf_counter(); S.run(st, q["query"], opts, None, None); ms = (time.perf_counter() - t) * 1000
            if rep: (on if mode == "on" else off).append(ms)
    content = [t for t in query_terms(q["query"]) if t not in STOPWORDS]
    t = time.perf_counter(); real(st, content); alone.append((time.perf_counter() - t) * 1000)
    st.close()
m = statistics.median
print(f"search ms median: with held forms {m(on):.2f}, without {m(off):.2f}, ratio {m(on)/m(off):.3f}; held_forms alone median {m(alone):.2f} ms, max {max(alone):.2f} ms ({len(qs)} questions, 5 reps each, alternated)")
