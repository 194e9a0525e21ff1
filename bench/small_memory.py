"""Search in small memories: a new workspace holds a handful of chunks, too few to show what an
unrelated text's similarity looks like (a paraphrase earned no vector evidence) or which words
it lacks (a missing word emptied answerable questions).

Each question of ../shared/eval gets a memory of only the files holding its answer (MADial: 1-7
one-chunk notes; LongMemEval: 1-3 day logs, 20-160 chunks) and is asked there (answerable) and
of the next question's memory (MADial: the same person's other notes; LongMemEval: someone
else's history). Passes, keyword-only and the default (hybrid, local e5): as before (68db261:
no background notes, a word missing from a few notes counted as evidence of absence, measured
in this run by switching both off) and as now; and the default with today's rules but without
the background notes (engine/search/background.py).

    python bench/small_memory.py                  # all three sets
    python bench/small_memory.py --limit 40 --sets madial_en

Embeddings come from the bench cache's indexes (bench/.cache/index), so only chunks no cached
index holds are embedded (LongMemEval: only the questions whose haystack is embedded there,
unless --all-haystacks). Per set and pass: answerable emptied, gold shown, gold's band medium
or high, other-history emptied, other-history shown with a medium or high top hit; answerable
and other-history flagged-or-emptied too (a list shown with `absent` is an abstention).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sqlite3
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import eval as E  # noqa: E402

WORK = Path(os.environ.get("CLAWMEM_SMALL_DIR", "/tmp/clawmem-small-memory"))


def seed_embeddings(cache_db: Path) -> int:
    """Copy every vector the bench's cached indexes hold into the embedding cache the small
    memories' indexing reads (chunks are cut per file, so their hashes match)."""
    cache_db.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(cache_db)
    con.execute("""create table if not exists cache (
        provider TEXT NOT NULL, model TEXT NOT NULL, endpoint TEXT NOT NULL, hash TEXT NOT NULL,
        dims INTEGER NOT NULL, embedding BLOB NOT NULL, used REAL NOT NULL,
        PRIMARY KEY (provider, model, endpoint, hash)) WITHOUT ROWID""")
    for idx in sorted((E.CACHE / "index").glob("*.sqlite")):
        src = sqlite3.connect(f"file:{idx}?mode=ro", uri=True)
        try:
            models = src.execute("select id, provider, model, endpoint, dims from models").fetchall()
        except sqlite3.OperationalError:
            models = []
        for mid, prov, model, endpoint, dims in models:
            rows = src.execute(f"select c.hash, v.embedding from chunks c join vectors_{mid} v on v.chunk_id = c.id").fetchall()
            con.executemany("insert or ignore into cache values (?, ?, ?, ?, ?, ?, ?)",
                            [(prov, model, endpoint, h, dims, blob, time.time()) for h, blob in rows])
        src.close()
    con.commit()
    (n,) = con.execute("select count(*) from cache").fetchone()
    con.close()
    return n


def embedded(set_name: str, workspace: str) -> bool:
    idx = E.CACHE / "index" / f"{set_name}-{workspace}.sqlite"
    if not idx.exists():
        return False
    con = sqlite3.connect(f"file:{idx}?mode=ro", uri=True)
    try:
        (chunks,) = con.execute("select count(*) from chunks").fetchone()
        return any(con.execute(f"select count(*) from vectors_{mid}").fetchone()[0] == chunks
                   for (mid,) in con.execute("select id from models").fetchall())
    except sqlite3.OperationalError:
        return False
    finally:
        con.close()


def small_workspace(set_name: str, q: dict) -> Path:
    paths = sorted({g["path"] for g in q["gold"]})
    key = f"{set_name}-{q['workspace']}-" + hashlib.sha1("\n".join(paths).encode()).hexdigest()[:10]
    ws = WORK / "ws" / key
    if not ws.exists():
        for p in paths:
            (ws / p).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(E.EVAL / set_name / q["workspace"] / p, ws / p)
    return ws


def engine_at(ws: Path, keyword_only: bool = False):
    from clawmem.engine import Engine, load_config

    provider = {"provider": "none"} if keyword_only else {"provider": "local", "local.modelPath": str(E.MODEL), "local.threads": E.THREADS}
    cfg = load_config(None, workspace=str(ws), overrides={
        "store.path": str(WORK / "index" / f"{ws.name}.sqlite"), "sync.onSearch": False, **provider})
    return Engine(cfg, persistent=True)


def measure(cases: list[tuple[dict, Path, Path]], shown: int, keyword_only: bool = False) -> dict:
    """cases: (question, its own small memory, someone else's)."""
    shared: dict = {}
    engines: dict = {}

    def search(ws: Path, q: dict) -> dict:
        if ws not in engines:
            engines[ws] = engine_at(ws, keyword_only)
            engines[ws].providers.built.update(shared)
        eng = engines[ws]
        res = eng.search(q["query"], max_results=10, now=q.get("now") or q.get("today"), stale_check=False)
        shared.update(eng.providers.built)
        E.memo_query_embeddings(eng)
        return res

    # a list flagged `absent` is an abstention as an emptied one is: the agent reads "probably
    # not in this memory" either way (abstained)
    f = {"answerableEmptied": 0, "answerableAbstained": 0, "goldShown": 0, "goldMediumOrHigh": 0, "otherEmptied": 0,
         "otherAbstained": 0, "otherConfident": 0}
    for q, own, other in cases:
        res = search(own, q)
        rows = res["results"][:shown]
        f["answerableEmptied"] += not rows
        f["answerableAbstained"] += not rows or res.get("absent") is not None
        gold = [r for r in rows if E.covers(r, q["gold"])]
        f["goldShown"] += bool(gold)
        f["goldMediumOrHigh"] += bool(gold) and gold[0]["band"] != "low"
        res = search(other, q)
        f["otherEmptied"] += not res["results"]
        f["otherAbstained"] += not res["results"] or res.get("absent") is not None
        f["otherConfident"] += bool(res["results"]) and res["results"][0]["band"] != "low"
    for eng in engines.values():
        eng.providers.built.clear()
        eng.close()
    n = len(cases) or 1
    return {k: round(v / n, 3) for k, v in f.items()} | {"n": len(cases)}


def as_before(run, background: bool, rules: bool = False):
    """`run` as search was before small memories were told apart (68db261), in this run: no
    background notes (unless `background`), and a word missing from a few notes counted as
    evidence of absence (unless `rules`: today's rules)."""
    from clawmem.engine.search import evidence
    from clawmem.engine.index.store import Store

    keep = Store.background_vectors, evidence.SMALL_MEMORY
    if not background:
        Store.background_vectors = lambda self, mid: None
    if not rules:
        evidence.SMALL_MEMORY = 0
    try:
        return run()
    finally:
        Store.background_vectors, evidence.SMALL_MEMORY = keep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default=",".join(E.SETS))
    ap.add_argument("--limit", type=int, help="questions per set")
    ap.add_argument("--all-haystacks", action="store_true",
                    help="LongMemEval: also the questions whose haystack the bench cache has not embedded (slow)")
    ap.add_argument("--json", type=Path, help="write the figures here")
    a = ap.parse_args()
    for var in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        os.environ[var] = str(WORK / var.lower())
    seeded = seed_embeddings(WORK / "xdg_cache_home" / "clawmem" / "embeddings.sqlite")
    print(f"embedding cache seeded with {seeded} vectors from {E.CACHE / 'index'}", file=sys.stderr)
    from clawmem.engine.config import KEYS

    shown = KEYS["query.maxResults"].default
    report = {}
    for s in a.sets.split(","):
        qs = [q for q in E.load_queries(s) if s != "longmemeval_s30" or a.all_haystacks or embedded(s, q["workspace"])]
        qs = qs[: a.limit] if a.limit else qs
        own = [small_workspace(s, q) for q in qs]
        gold_files = [{g["path"] for g in q["gold"]} for q in qs]

        def other(i: int) -> int | None:
            """Someone else's: the next question whose memory shares no file with this one's."""
            later = ((i + k) % len(qs) for k in range(1, len(qs)))
            return next((j for j in later if own[j] != own[i] and not gold_files[j] & gold_files[i]), None)

        cases = [(q, own[i], own[j]) for i, q in enumerate(qs) if (j := other(i)) is not None]
        t0 = time.perf_counter()
        for ws in sorted(set(own)):
            eng = engine_at(ws)
            eng.run_index(reason="bench")
            eng.close()
        print(f"  {s}: {len(set(own))} small memories indexed in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
        report[s] = {
            "keyword-only, before": as_before(lambda: measure(cases, shown, keyword_only=True), background=True),
            "keyword-only": measure(cases, shown, keyword_only=True),
            "default, before": as_before(lambda: measure(cases, shown), background=False),
            "default, no background": as_before(lambda: measure(cases, shown), background=False, rules=True),
            "default": measure(cases, shown),
        }
    print(f"\nshown = query.maxResults ({shown}); default config, local e5; {WORK}")
    print("  (emptied / flagged-or-emptied: a list shown with `absent` is an abstention too)")
    print(f"  {'set':<16} {'pass':<22} {'n':>4} {'answerable emp / f|e':>20} {'gold shown':>10} {'gold medium/high':>16} "
          f"{'other emp / f|e':>15} {'other medium/high':>17}")
    for s, passes in report.items():
        for label, f in passes.items():
            print(f"  {s:<16} {label:<22} {f['n']:>4} {f['answerableEmptied']:>10.3f} {f['answerableAbstained']:>9.3f} "
                  f"{f['goldShown']:>10.3f} {f['goldMediumOrHigh']:>16.3f} {f['otherEmptied']:>7.3f} {f['otherAbstained']:>7.3f} "
                  f"{f['otherConfident']:>17.3f}")
    if a.json:
        a.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
