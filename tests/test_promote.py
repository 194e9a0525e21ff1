"""Consolidation: recall tracking (real SQLite, real processes) and `clawmem promote` over a real
workspace and index: the six signals and gates, the live re-read before writing, one journal
version per promotion (undone by restore), OpenClaw's recall store, and what is never recorded."""

from __future__ import annotations

import datetime as dt
import json
import math
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from clawmem.engine.files import journal
from clawmem.engine.consolidate import promote, recall
from helpers import run_cli, write

DAY = 86400.0
NOW = dt.datetime(2026, 3, 10, 12, 0).timestamp()

LOG = """# 2026-03-01

## 09:00
Decided: the database migration runs on Fridays after the nightly backup finishes.

## 12:30
Lunch with Sam; talked about the garden.
"""
OTHER = """# 2026-03-02

## 10:00
The heron project ships its first build to the beta testers in April.
"""
QUERIES = ["database migration", "when does the migration run", "migration friday backup", "nightly backup migration"]


@pytest.fixture
def notes(workspace):
    write(workspace / "MEMORY.md", "# Memory\n\n## People\n- Sam runs the garden club.\n")
    write(workspace / "memory" / "2026-03-01.md", LOG)
    write(workspace / "memory" / "2026-03-02.md", OTHER)
    return workspace


def indexed(make_engine, **overrides):
    eng = make_engine(overrides)
    for _ in eng.index():
        pass
    return eng


def recall_over_days(eng, queries=QUERIES, days=(8, 6, 3, 1), at=NOW):
    """Real searches (not recorded by the search itself), recorded as if made on earlier days."""
    for q, ago in zip(queries, days):
        res = eng.search(q, private=True)
        assert res["results"], q
        recall.record(eng.cfg, q, res["results"], now=at - ago * DAY)


def rows(eng) -> list:
    return recall.recalls(eng.cfg)


# ----------------------------------------------------------------------------- recall tracking


def test_every_search_records_its_daily_log_hits(notes, make_engine):
    eng = indexed(make_engine)
    res = eng.search("database migration")
    got = rows(eng)
    assert [(r.query, r.path) for r in got] == [("database migration", "memory/2026-03-01.md")]
    hit = next(r for r in res["results"] if r["path"] == "memory/2026-03-01.md")
    assert (got[0].start, got[0].end, got[0].score) == (hit["startLine"], hit["endLine"], hit["score"])
    assert got[0].query_hash == recall.query_hash("  Database Migration ")  # OpenClaw's hash: trimmed, lower-cased
    eng.search("Sam runs the garden club")  # a MEMORY.md hit is not a daily-log recall
    assert all(r.path.startswith("memory/2026-") for r in rows(eng))


def test_private_searches_and_recall_off_record_nothing(notes, make_engine, workspace, tmp_path):
    eng = indexed(make_engine)
    eng.search("database migration", private=True)
    assert rows(eng) == []
    off = indexed(make_engine, **{"recall.enabled": False})
    off.search("database migration")
    assert rows(off) == []
    # the CLI: --private, and the switch in the config file
    assert run_cli("--workspace", str(workspace), "search", "migration", "--private").returncode == 0
    assert rows(eng) == []
    config = write(tmp_path / "off.toml", "[recall]\nenabled = false\n")
    assert run_cli("--workspace", str(workspace), "--config", str(config), "search", "migration").returncode == 0
    assert rows(eng) == []
    assert run_cli("--workspace", str(workspace), "search", "migration").returncode == 0
    assert [r.query for r in rows(eng)] == ["migration"]


WRITER = textwrap.dedent("""
    import sys
    from clawmem.engine import load_config
    from clawmem.engine.consolidate import recall
    cfg = load_config(None, workspace=sys.argv[1], overrides={"provider": "none"})
    me = sys.argv[2]
    for i in range(int(sys.argv[3])):
        hits = [{"path": "memory/2026-03-01.md", "startLine": 1, "endLine": 4, "score": 0.5, "snippet": f"{me} {i} a", "matchLine": 2},
                {"path": "memory/2026-03-02.md", "startLine": 2, "endLine": 3, "score": 0.45, "snippet": f"{me} {i} b"}]
        assert recall.record(cfg, f"query {me} {i}", hits) == 2
""")


def test_concurrent_recall_writes_from_processes_lose_nothing(notes, make_engine):
    procs, n = 4, 60
    started = [subprocess.Popen([sys.executable, "-c", WRITER, str(notes), f"p{k}", str(n)]) for k in range(procs)]
    assert [p.wait(timeout=120) for p in started] == [0] * procs
    eng = make_engine()
    got = rows(eng)
    assert len(got) == procs * n * 2
    assert {(r.query, r.snippet) for r in got} == {(f"query p{k} {i}", f"p{k} {i} {s}") for k in range(procs) for i in range(n) for s in "ab"}
    conn = sqlite3.connect(recall.store_path(eng.cfg))
    assert conn.execute("pragma integrity_check").fetchone() == ("ok",)
    conn.close()


# ----------------------------------------------------------------------------- ranking


def test_signals_follow_openclaw_and_the_gates_hold(notes, make_engine):
    eng = indexed(make_engine)
    recall_over_days(eng)
    found, notes_ = promote.preview(eng, now=NOW)
    assert notes_ == []
    [c] = found
    assert c.path == "memory/2026-03-01.md" and c.recalls == 4 and c.unique_queries == 4 and c.status == "ok"
    assert c.signals["frequency"] == pytest.approx(math.log1p(4) / math.log1p(10), abs=1e-4)
    assert c.signals["diversity"] == pytest.approx(4 / 5)
    assert c.signals["recency"] == pytest.approx(math.exp(-math.log(2) * 1 / 14), abs=1e-4)  # last recall a day ago
    # four days spread over 7: spacing log1p(3)/log1p(4), span 7/7
    assert c.signals["consolidation"] == pytest.approx(0.55 * math.log1p(3) / math.log1p(4) + 0.45, abs=1e-4)
    assert c.score == pytest.approx(sum(promote.WEIGHTS[k] * v for k, v in c.signals.items()), abs=1e-3)
    assert "migration runs on Fridays" in "\n".join(c.lines)
    # each gate on its own keeps it out
    assert promote.preview(eng, promote.Gates(c.score + 0.01, 3, 2), now=NOW)[0] == []
    assert promote.preview(eng, promote.Gates(0, 5, 2), now=NOW)[0] == []
    assert promote.preview(eng, promote.Gates(0, 3, 5), now=NOW)[0] == []


def test_diversity_counts_recall_days_as_openclaw_does(notes, make_engine):
    """One question asked on four days is four contexts (OpenClaw: max(distinct queries, recall
    days)); asked four times on one day it is one, and the diversity gate keeps it out."""
    eng = indexed(make_engine)
    recall_over_days(eng, queries=["database migration"] * 4, days=(1, 1, 1, 1))
    assert promote.preview(eng, promote.Gates(0, 3, 2), now=NOW)[0] == []
    recall_over_days(eng, queries=["database migration"] * 3, days=(9, 6, 3))
    [c] = promote.preview(eng, promote.Gates(0, 3, 2), now=NOW)[0]
    assert c.recalls == 7 and c.unique_queries == 1 and len(c.days) == 4
    assert c.signals["diversity"] == pytest.approx(4 / 5)


def test_near_duplicate_passages_are_offered_once(notes, make_engine, workspace):
    write(workspace / "memory" / "2026-03-03.md", LOG.replace("2026-03-01", "2026-03-03"))
    eng = indexed(make_engine)
    recall_over_days(eng)
    found, _ = promote.preview(eng, promote.Gates(0, 3, 2), now=NOW)
    texts = [c.path for c in found]
    assert len(found) == 1 and texts[0] in ("memory/2026-03-01.md", "memory/2026-03-03.md")


# ----------------------------------------------------------------------------- applying


def test_apply_writes_memory_md_journal_and_dreams_then_restore_undoes_it(notes, make_engine, workspace):
    eng = indexed(make_engine)
    recall_over_days(eng)
    before = (workspace / "MEMORY.md").read_bytes()
    found, _ = promote.preview(eng, now=NOW)
    [outcome] = promote.apply(eng, found, today=dt.date(2026, 3, 10))
    assert outcome.promoted and outcome.version is not None
    text = (workspace / "MEMORY.md").read_text()
    assert text.startswith(before.decode())  # nothing that was there changed
    assert "## Promoted From Short-Term Memory (2026-03-10)\n- Decided: the database migration runs on Fridays" in text
    assert f"<!-- openclaw-memory-promotion:{found[0].key} -->" in text and f"({found[0].entry_citation})" in text
    dreams = (workspace / "DREAMS.md").read_text()
    assert "1 of 1 promoted to MEMORY.md" in dreams and found[0].fact_citation in dreams
    # offered no more, except with include_promoted
    assert promote.preview(eng, now=NOW)[0] == []
    assert [c.promoted for c in promote.preview(eng, include_promoted=True, now=NOW)[0]] == [True]
    # the journal: the promotion is its own version, by clawmem promote; restore puts MEMORY.md back
    hist = json.loads(run_cli("--workspace", str(workspace), "history", "MEMORY.md", "--json").stdout)
    assert [(h["version"], h["writer"], h["added"], h["removed"]) for h in hist] == [(outcome.version, "clawmem promote", 4, 0)]  # blank, heading, bullet, marker
    r = run_cli("--workspace", str(workspace), "restore", "MEMORY.md", "--to", str(hist[0]["previous"]))
    assert r.returncode == 0, r.stderr
    assert (workspace / "MEMORY.md").read_bytes() == before


def test_each_promotion_is_its_own_journal_version(notes, make_engine, workspace):
    eng = indexed(make_engine)
    recall_over_days(eng)
    recall_over_days(eng, queries=["heron beta build", "heron project ships", "beta testers april"], days=(5, 3, 2))
    found, _ = promote.preview(eng, promote.Gates(0.5, 3, 2), now=NOW)
    assert len(found) == 2
    outcomes = promote.apply(eng, found)
    assert [o.promoted for o in outcomes] == [True, True]
    with journal.Journal(eng.cfg) as jr:
        versions = [v.id for v in jr.versions("MEMORY.md") if v.writer == "clawmem promote"]
    assert versions == [o.version for o in outcomes]


@pytest.mark.parametrize("change", ["edit", "delete"])
def test_a_passage_edited_or_deleted_before_apply_is_skipped(notes, make_engine, workspace, change):
    eng = indexed(make_engine)
    recall_over_days(eng)
    found, _ = promote.preview(eng, now=NOW)
    assert [c.status for c in found] == ["ok"]
    daily = workspace / "memory" / "2026-03-01.md"
    if change == "edit":
        daily.write_text(LOG.replace("runs on Fridays", "runs on Mondays"))
    else:
        daily.unlink()
    before = (workspace / "MEMORY.md").read_bytes()
    [outcome] = promote.apply(eng, found)
    assert not outcome.promoted
    assert outcome.reason == ("edited since it was recalled" if change == "edit" else "deleted since it was recalled")
    assert (workspace / "MEMORY.md").read_bytes() == before
    assert "skipped, " + outcome.reason in (workspace / "DREAMS.md").read_text()
    # and the preview says so too
    assert [c.status for c in promote.preview(eng, now=NOW)[0]] == ["changed" if change == "edit" else "deleted"]


def test_rejected_passages_are_not_offered_again(notes, make_engine):
    eng = indexed(make_engine)
    recall_over_days(eng)
    [c] = promote.preview(eng, now=NOW)[0]
    promote.reject(eng, c)
    recall_over_days(eng, queries=["migration fridays", "backup then migration"], days=(0, 0))
    assert promote.preview(eng, now=NOW)[0] == []


def test_cli_promote_preview_apply_and_bad_flags(notes, make_engine, workspace):
    eng = indexed(make_engine)
    recall_over_days(eng, at=time.time())  # the command ranks as of now
    out = run_cli("--workspace", str(workspace), "promote")
    assert out.returncode == 0, out.stderr
    assert "1 candidate (score >= 0.75, 3+ recalls, 2+ distinct queries)" in out.stdout
    assert "memory/2026-03-01.md:" in out.stdout and "relevance" in out.stdout and "Decided: the database migration" in out.stdout
    got = json.loads(run_cli("--workspace", str(workspace), "promote", "--apply", "--json").stdout)
    assert [a["promoted"] for a in got["applied"]] == [True] and got["gates"]["minUniqueQueries"] == 2
    assert "migration runs on Fridays" in (workspace / "MEMORY.md").read_text()
    bad = run_cli("--workspace", str(workspace), "promote", "--min-score", "2")
    assert bad.returncode == 2 and bad.stderr == "clawmem: --min-score: expected a number from 0 to 1, got 2.0\n"


# ----------------------------------------------------------------------------- OpenClaw's recall store


def openclaw_entry(path, start, end, *, count, total, hashes, days, last, snippet, promoted=None):
    e = {"key": f"memory:{path}:{start}:{end}", "path": path, "startLine": start, "endLine": end, "source": "memory",
         "snippet": snippet, "recallCount": count, "dailyCount": 0, "groundedCount": 0, "totalScore": total,
         "maxScore": total / max(1, count), "firstRecalledAt": f"{days[0]}T08:00:00.000Z", "lastRecalledAt": last,
         "queryHashes": hashes, "recallDays": days, "conceptTags": ["heron", "beta"]}
    if promoted:
        e["promotedAt"] = promoted
    return e


def test_openclaw_recall_store_is_read(notes, make_engine, workspace):
    snippet = "The heron project ships its first build to the beta testers in April."
    entries = [
        openclaw_entry("memory/2026-03-02.md", 3, 4, count=5, total=4.0, hashes=["a1b2c3d4e5f6", "0a0b0c0d0e0f", "111111111111"],
                       days=["2026-03-03", "2026-03-06", "2026-03-09"], last="2026-03-09T10:00:00.000Z", snippet=snippet),
        openclaw_entry("memory/2026-03-01.md", 4, 4, count=9, total=8.0, hashes=["222222222222", "333333333333"],
                       days=["2026-03-04", "2026-03-08"], last="2026-03-08T10:00:00.000Z",
                       snippet="Decided: the database migration runs on Fridays", promoted="2026-03-09T03:00:00.000Z"),
        openclaw_entry("MEMORY.md", 1, 3, count=9, total=8.0, hashes=["4", "5"], days=["2026-03-08"], last="2026-03-08T10:00:00.000Z", snippet="x"),
    ]
    store = {"version": 1, "updatedAt": "2026-03-09T10:00:00.000Z", "entries": {e["key"]: e for e in entries}}
    write(workspace / "memory" / ".dreams" / "short-term-recall.json", json.dumps(store, indent=2))
    eng = make_engine()
    found, notes_ = promote.preview(eng, now=NOW)
    assert notes_ == []
    [c] = found  # already promoted by OpenClaw: left out; MEMORY.md is not a daily log
    assert (c.path, c.start, c.end, c.origin, c.recalls, c.unique_queries) == ("memory/2026-03-02.md", 3, 4, "openclaw", 5, 3)
    assert c.signals["relevance"] == pytest.approx(0.8) and c.status == "ok"
    # clawmem's own recalls of the same lines add to it
    recall.record(eng.cfg, "heron beta", [{"path": "memory/2026-03-02.md", "startLine": 4, "endLine": 4, "score": 0.9,
                                           "snippet": snippet}], now=NOW - DAY)
    [c] = promote.preview(eng, now=NOW)[0]
    assert (c.origin, c.recalls, c.unique_queries, c.queries) == ("both", 6, 4, ["heron beta"])
    assert [c.promoted for c in promote.preview(eng, include_promoted=True, now=NOW)[0]] == [False, True]
    # the store is read, never written
    assert json.loads((workspace / "memory" / ".dreams" / "short-term-recall.json").read_text()) == store


def test_an_unreadable_openclaw_store_is_a_note_not_a_failure(notes, make_engine, workspace):
    write(workspace / "memory" / ".dreams" / "short-term-recall.json", "{not json")
    eng = indexed(make_engine)
    recall_over_days(eng)
    found, notes_ = promote.preview(eng, now=NOW)
    assert len(found) == 1 and len(notes_) == 1 and notes_[0].startswith("memory/.dreams/short-term-recall.json: not read (")


# ----------------------------------------------------------------------------- the write, for any MEMORY.md


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(existing=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"), max_size=300),
       fact=st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=80).filter(str.strip))
def test_the_memory_write_keeps_every_line_already_there(make_engine, workspace, existing, fact):
    target = workspace / "MEMORY.md"
    target.write_text(existing, encoding="utf-8")
    eng = make_engine()
    from clawmem.engine.agent.tools import add_bullet

    promote._write_memory(eng, target, lambda cur: add_bullet(cur, promote._section(dt.date(2026, 3, 10)), fact)[0])
    after = target.read_text(encoding="utf-8").split("\n")
    kept = iter(after)
    assert all(any(line == got for got in kept) for line in existing.split("\n") if line.strip())  # in order, unchanged
    assert "- " + fact.strip().splitlines()[0] in after


# ----------------------------------------------------------------------------- the daily sweep


def test_watch_sweep_counts_once_a_day_and_applies_only_when_asked(notes, make_engine, workspace):
    eng = indexed(make_engine)
    recall_over_days(eng, queries=QUERIES + ["fridays migration"], days=(9, 8, 6, 3, 1), at=time.time())
    assert promote.daily_sweep(eng) is None  # promote.sweep is off by default
    preview = indexed(make_engine, **{"promote.sweep": "preview"})
    before = (workspace / "MEMORY.md").read_bytes()
    assert promote.daily_sweep(preview) == {"day": dt.date.today().isoformat(), "mode": "preview", "candidates": 1, "applied": 0}
    assert promote.daily_sweep(preview) is None  # once a day
    assert (workspace / "MEMORY.md").read_bytes() == before  # a preview writes nothing
    applying = indexed(make_engine, **{"promote.sweep": "apply"})
    assert promote.daily_sweep(applying, today=dt.date.today() + dt.timedelta(days=1))["applied"] == 1  # 5 queries over 9 days pass 0.8/3/3
    assert "migration runs on Fridays" in (workspace / "MEMORY.md").read_text()


def test_an_unreadable_recall_store_is_one_line_and_exit_3(notes, make_engine, workspace):
    eng = make_engine()
    store = recall.store_path(eng.cfg)
    store.parent.mkdir(parents=True)
    store.write_bytes(b"this is not a database" * 100)
    r = run_cli("--workspace", str(workspace), "promote")
    assert r.returncode == 3 and r.stdout == ""
    assert r.stderr.startswith(f"clawmem: {store}: ") and r.stderr.endswith("move it aside and recall tracking starts again\n")
    assert len(r.stderr.splitlines()) == 1
    # and a search still answers: tracking is best effort
    assert run_cli("--workspace", str(workspace), "search", "migration").returncode == 0


# ----------------------------------------------------------------------------- facts, not sections

CAT_LOG = """# 2026-03-04

## Notes from the week
- The quarterly report is due on the 15th; Marta collects the figures.
- Bought a new kettle, the old one leaked.
- Elena's cat is named Pixel.
- The bike needs a new chain before the trip to Porto.
- Remember to renew the passport in April.
- ```
  docker compose up -d
  ```
- Tried the new ramen place on Hill Street, too salty.
"""
CAT_QUERIES = ["Elena cat name", "what is Elena's cat called", "Pixel the cat", "Elena cat"]


def test_the_promoted_bullet_is_the_recalled_fact_not_its_section(notes, make_engine, workspace):
    write(workspace / "memory" / "2026-03-04.md", CAT_LOG)
    eng = indexed(make_engine)
    recall_over_days(eng, queries=CAT_QUERIES)
    found, _ = promote.preview(eng, now=NOW)
    [c] = [c for c in found if c.path == "memory/2026-03-04.md"]
    assert c.fact == "Elena's cat is named Pixel." and (c.fact_start, c.fact_end) == (6, 6)
    assert "kettle" in "\n".join(c.lines)  # the context is still shown for review
    [outcome] = promote.apply(eng, [c], today=dt.date(2026, 3, 10))
    assert outcome.promoted
    [bullet] = [ln for ln in (workspace / "MEMORY.md").read_text().splitlines() if "Pixel" in ln]
    assert bullet == "- Elena's cat is named Pixel. (memory/2026-03-04.md#L6)"
    assert len(bullet) <= 200 and "kettle" not in bullet and "docker" not in bullet


def test_a_long_paragraph_gives_the_sentence_that_was_asked_about():
    lines = ["We met the vendor in the morning and talked about support contracts for the next year, "
             "then walked to lunch. The staging database password rotates every ninety days. After that "
             "we argued about the colour of the dashboard for an hour, which nobody will remember."]
    a, b, text = promote.fact_span(lines, 0, ["staging", "database", "password", "rotates"])
    assert (a, b, text) == (0, 0, "The staging database password rotates every ninety days.")
    assert promote.fact_span(["## 09:00", "", "## 10:00"], 0, ["x"]) is None  # a heading alone is no fact
    assert promote.is_skeleton("## 09:00\n- \n* ") and not promote.is_skeleton("## 09:00\n- tea")


def test_the_same_fact_in_two_logs_is_one_candidate_citing_both(notes, make_engine, workspace):
    write(workspace / "memory" / "2026-03-05.md", "# 2026-03-05\n\n## 18:00\n- Elena's cat is named Pixel.\n")
    write(workspace / "memory" / "2026-03-06.md", "# 2026-03-06\n\n- Call the plumber.\n- Elena's cat is named Pixel.\n")
    eng = indexed(make_engine)
    recall_over_days(eng, queries=CAT_QUERIES)
    found, _ = promote.preview(eng, promote.Gates(0.5, 3, 2), now=NOW)
    [c] = [c for c in found if "Pixel" in c.fact]
    assert {c.fact_citation, *c.also} == {"memory/2026-03-05.md#L4", "memory/2026-03-06.md#L4"}
    assert c.recalls == 8  # both logs' recalls count
    promote.apply(eng, [c])
    bullets = [ln for ln in (workspace / "MEMORY.md").read_text().splitlines() if "Pixel" in ln]
    assert len(bullets) == 1 and "memory/2026-03-05.md#L4" in bullets[0] and "memory/2026-03-06.md#L4" in bullets[0]


def test_contradicting_facts_are_shown_together_and_never_applied_silently(notes, make_engine, workspace):
    write(workspace / "memory" / "2026-03-05.md", "# 2026-03-05\n\n- Elena's birthday is on May 27.\n")
    write(workspace / "memory" / "2026-03-07.md", "# 2026-03-07\n\n- Elena's birthday is on March 21.\n")
    eng = indexed(make_engine)
    recall_over_days(eng, queries=["Elena birthday", "when is Elena's birthday", "birthday of Elena", "Elena born"])
    found, _ = promote.preview(eng, promote.Gates(0.5, 3, 2), now=NOW)
    may, march = (next(c for c in found if word in c.fact) for word in ("May", "March"))
    assert may.conflicts == [f"{march.fact} ({march.fact_citation})"] and march.conflicts == [f"{may.fact} ({may.fact_citation})"]
    before = (workspace / "MEMORY.md").read_bytes()
    outcomes = promote.apply(eng, [may, march])
    assert [o.promoted for o in outcomes] == [False, False] and all(o.reason.startswith("contradicts ") for o in outcomes)
    assert (workspace / "MEMORY.md").read_bytes() == before
    [o] = promote.apply(eng, [march], confirmed={march.key})  # a person chose one
    assert o.promoted
    # now MEMORY.md says March 21: May 27 contradicts it
    [may] = [c for c in promote.preview(eng, promote.Gates(0.5, 3, 2), now=NOW)[0] if "May" in c.fact]
    assert may.conflicts == ["Elena's birthday is on March 21. (MEMORY.md)"]


def test_contradiction_is_a_shared_opening_with_different_endings():
    assert promote.contradicts("Elena's birthday is on May 27", "Elena's birthday is on March 21")
    assert promote.contradicts("The migration runs on Fridays", "The migration runs on Mondays")
    assert not promote.contradicts("The migration runs on Fridays", "The migration runs on Fridays after the backup")
    assert not promote.contradicts("Sam runs the garden club", "Sam's bike is red")
    assert not promote.contradicts("Elena's cat is named Pixel", "Elena's cat is named Pixel")


def test_only_hits_shown_above_the_threshold_are_recalls(notes, make_engine):
    eng = make_engine()
    hit = {"path": "memory/2026-03-01.md", "startLine": 1, "endLine": 4, "snippet": "the migration runs", "matchLine": 2}
    assert recall.record(eng.cfg, "migration", [{**hit, "score": 0.0}]) == 0  # never a score of 0
    assert recall.record(eng.cfg, "migration", [{**hit, "score": 0.2}]) == 0  # below query.minScore (0.35)
    assert recall.record(eng.cfg, "migration", [{**hit, "score": 0.2}], min_score=0.1) == 1  # the threshold the search used
    assert recall.record(eng.cfg, "migration", [{**hit, "score": 0.5}]) == 1
    # a real search: an incidental hit listed below the threshold is not recorded
    eng = indexed(make_engine)
    res = eng.search("garden migration heron", private=True, max_results=10)
    low = [r for r in res["results"] if r["score"] < 0.35 and r["path"].startswith("memory/")]
    n = len(rows(eng))
    recall.record(eng.cfg, "garden migration heron", res["results"])
    assert len(rows(eng)) - n == len([r for r in res["results"] if r["score"] >= 0.35 and r["path"].startswith("memory/2026")])
    assert not {(r.path, r.start) for r in rows(eng)[n:]} & {(r["path"], r["startLine"]) for r in low}


def test_undo_offers_the_fact_again_and_a_line_inserted_above_does_not_stop_apply(notes, make_engine, workspace):
    eng = indexed(make_engine)
    recall_over_days(eng)
    [c] = promote.preview(eng, now=NOW)[0]
    daily = workspace / "memory" / "2026-03-01.md"
    daily.write_text(LOG.replace("## 09:00\n", "## 08:00\nCoffee with the team.\n\n## 09:00\n"))  # three lines above it
    [o] = promote.apply(eng, [c])
    assert o.promoted and "(memory/2026-03-01.md#L7)" in (workspace / "MEMORY.md").read_text()
    assert promote.preview(eng, now=NOW)[0] == []
    hist = json.loads(run_cli("--workspace", str(workspace), "history", "MEMORY.md", "--json").stdout)
    r = run_cli("--workspace", str(workspace), "restore", "MEMORY.md", "--to", str(hist[0]["previous"]))
    assert r.returncode == 0, r.stderr
    [again] = promote.preview(eng, now=NOW)[0]
    assert again.fact == c.fact and not again.promoted


def test_dreams_md_and_rejections_are_journaled(notes, make_engine, workspace):
    eng = indexed(make_engine)
    recall_over_days(eng)
    recall_over_days(eng, queries=["heron beta build", "heron project ships", "beta testers april"], days=(5, 3, 2))
    found, _ = promote.preview(eng, promote.Gates(0.5, 3, 2), now=NOW)
    heron = next(c for c in found if "heron" in c.fact)
    promote.reject(eng, heron)
    promote.apply(eng, [c for c in found if c is not heron])
    dreams = (workspace / "DREAMS.md").read_text()
    assert "## Rejected " in dreams and "The heron project ships its first build" in dreams
    with journal.Journal(eng.cfg) as jr:  # the rejection, then the summary: each a version
        assert [v.writer for v in jr.versions("DREAMS.md")][-2:] == ["clawmem promote", "clawmem promote"]
    hist = run_cli("--workspace", str(workspace), "history", "DREAMS.md", "--json")
    # DREAMS.md did not exist at the first index: the rejection created it, the summary changed it
    assert hist.returncode == 0 and [(h["writer"], h["created"]) for h in json.loads(hist.stdout)] == [("clawmem promote", True), ("clawmem promote", False)]
    assert "+## Rejected " in "\n".join(json.loads(hist.stdout)[0]["diff"])
    assert all("heron" not in c.fact for c in promote.preview(eng, promote.Gates(0.5, 3, 2), now=NOW)[0])


def test_memory_md_budget_offers_the_oldest_promoted_bullets_for_the_archive(notes, make_engine, workspace):
    old = "".join(f"- Old fact number {i} about the garden. (memory/2026-01-0{i}.md#L3)\n"
                  f"  <!-- openclaw-memory-promotion:memory:memory/2026-01-0{i}.md:3:3 -->\n" for i in range(1, 4))
    mine = "# Memory\n\n## People\n- Sam runs the garden club.\n"
    write(workspace / "MEMORY.md", mine + "\n## Promoted From Short-Term Memory (2026-02-01)\n" + old
          + "\n## Promoted From Short-Term Memory (2026-02-20)\n- Newer fact about the heron. (memory/2026-02-19.md#L2)\n")
    eng = make_engine({"promote.memoryFileMaxChars": len((workspace / "MEMORY.md").read_text()) - 100})
    state = promote.budget_state(eng)
    assert state["over"] == 100 and [b["text"].splitlines()[0] for b in state["archive"]] == [
        "- Old fact number 1 about the garden. (memory/2026-01-01.md#L3)"]
    assert promote.budget_state(make_engine())["over"] == 0  # 10 000 characters by default
    before = (workspace / "MEMORY.md").read_text()
    moved = promote.archive_oldest(eng)
    assert moved["moved"] == 1 and moved["over"] == 0
    after = (workspace / "MEMORY.md").read_text()
    assert "Old fact number 1" not in after and "Old fact number 2" in after and after.startswith(mine)
    assert "- Old fact number 1 about the garden." in (workspace / promote.ARCHIVE).read_text()  # moved, not lost
    assert len(after) + len(state["archive"][0]["text"]) + 1 == len(before)


def test_openclaw_gates_grounded_counts_skeletons_and_max_age(notes, make_engine, workspace):
    snippet = "The heron project ships its first build to the beta testers in April."
    grounded = openclaw_entry("memory/2026-03-02.md", 4, 4, count=0, total=2.7, hashes=["a1b2c3d4e5f6"],
                              days=["2026-03-08", "2026-03-09"], last="2026-03-09T10:00:00.000Z", snippet=snippet)
    grounded["groundedCount"] = 3
    skeleton = openclaw_entry("memory/2026-03-01.md", 3, 3, count=9, total=8.5, hashes=["1", "2", "3"],
                              days=["2026-03-04", "2026-03-08"], last="2026-03-09T10:00:00.000Z", snippet="## 09:00")
    store = {"version": 1, "entries": {e["key"]: e for e in (grounded, skeleton)}}
    write(workspace / "memory" / ".dreams" / "short-term-recall.json", json.dumps(store))
    eng = make_engine()
    [c] = promote.preview(eng, promote.Gates(0.5, 3, 2), now=NOW)[0]  # the heading-only snippet is no candidate
    assert c.path == "memory/2026-03-02.md" and c.grounded == 3 and c.recalls == 0
    assert c.signals["consolidation"] == 1.0  # grounded 3 of 3
    assert c.signals["relevance"] == pytest.approx(0.9) and c.fact == snippet
    assert promote.preview(eng, promote.Gates(0.5, 3, 2, max_age_days=0.5), now=NOW)[0] == []  # last recall ~1 day ago
    assert len(promote.preview(eng, promote.Gates(0.5, 3, 2, max_age_days=2), now=NOW)[0]) == 1


def test_cli_confirm_and_archive(notes, make_engine, workspace):
    write(workspace / "memory" / "2026-03-05.md", "# 2026-03-05\n\n- Elena's birthday is on May 27.\n")
    write(workspace / "memory" / "2026-03-07.md", "# 2026-03-07\n\n- Elena's birthday is on March 21.\n")
    eng = indexed(make_engine)
    recall_over_days(eng, queries=["Elena birthday", "when is Elena's birthday", "birthday of Elena", "Elena born"], at=time.time())
    out = run_cli("--workspace", str(workspace), "promote", "--min-score", "0.5")
    assert out.returncode == 0 and "CONTRADICTS: Elena's birthday is on March 21." in out.stdout
    got = json.loads(run_cli("--workspace", str(workspace), "promote", "--min-score", "0.5", "--apply", "--json").stdout)
    assert [a["promoted"] for a in got["applied"]] == [False, False]
    march = next(c["key"] for c in got["candidates"] if "March" in c["fact"])
    got = json.loads(run_cli("--workspace", str(workspace), "promote", "--min-score", "0.5", "--apply", "--confirm", march, "--json").stdout)
    assert [a["key"] for a in got["applied"] if a["promoted"]] == [march]
    cfg = write(workspace.parent / "small.toml", "[promote]\nmemoryFileMaxChars = 60\n")
    over = run_cli("--workspace", str(workspace), "--config", str(cfg), "promote")
    assert "over its budget of 60" in over.stdout and "clawmem promote --archive moves the 1 oldest promoted bullet " in over.stdout
    moved = run_cli("--workspace", str(workspace), "--config", str(cfg), "promote", "--archive")
    assert moved.returncode == 0 and moved.stdout.startswith("moved 1 promoted bullet to memory/promoted-archive.md")
    assert "March 21" in (workspace / "memory" / "promoted-archive.md").read_text()
    assert "March 21" not in (workspace / "MEMORY.md").read_text()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mine=st.lists(st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=40), max_size=6),
       days=st.lists(st.integers(1, 28), min_size=1, max_size=4, unique=True), per_day=st.integers(1, 3), limit=st.integers(0, 600))
def test_archiving_moves_only_promoted_bullets_and_loses_nothing(make_engine, workspace, mine, days, per_day, limit):
    """Whatever a person wrote (here, lines of any text, also under a promoted heading), the
    archive moves only marked promoted bullets, oldest first, and every moved byte is in the archive."""
    archive = workspace / promote.ARCHIVE
    archive.unlink(missing_ok=True)
    text = "# Memory\n" + "".join(f"{ln}\n" for ln in mine)
    for d in days:
        text += f"\n## Promoted From Short-Term Memory (2026-02-{d:02d})\n"
        text += "".join(f"- fact {d}.{k} (memory/2026-01-{d:02d}.md#L{k})\n  <!-- openclaw-memory-promotion:memory:memory/2026-01-{d:02d}.md:{k}:{k} -->\n"
                        for k in range(per_day))
        text += "- a line the person added here\n"
    (workspace / "MEMORY.md").write_text(text, encoding="utf-8")
    eng = make_engine({"promote.memoryFileMaxChars": limit})
    moved = promote.archive_oldest(eng)
    after = (workspace / "MEMORY.md").read_text(encoding="utf-8")
    kept = [ln for ln in text.split("\n") if "openclaw-memory-promotion" not in ln and not ln.startswith(("- fact ", "## Promoted"))]
    remaining = iter(after.split("\n"))
    assert all(any(ln == got for got in remaining) for ln in kept if ln.strip())  # in order, unchanged
    gone = [ln for ln in text.split("\n") if ln.startswith("- fact ") and ln not in after.split("\n")]
    assert len(gone) == moved["moved"]
    if gone:
        assert all(ln in archive.read_text(encoding="utf-8").split("\n") for ln in gone)
        order = [ln for ln in text.split("\n") if ln.startswith("- fact ")]
        dated = sorted(order, key=lambda ln: int(ln.split()[2].split(".")[0]))
        assert sorted(gone, key=dated.index) == dated[: len(gone)]  # the oldest go first


def test_two_facts_of_one_section_recalled_by_different_questions_are_two_candidates(notes, make_engine, workspace):
    write(workspace / "memory" / "2026-03-04.md", CAT_LOG)
    eng = indexed(make_engine)
    recall_over_days(eng, queries=CAT_QUERIES)
    recall_over_days(eng, queries=["bike chain Porto", "new chain for the bike", "trip to Porto bike", "bike chain"])
    found = [c for c in promote.preview(eng, promote.Gates(0.5, 3, 2), now=NOW)[0] if c.path == "memory/2026-03-04.md"]
    assert sorted(c.fact for c in found) == ["Elena's cat is named Pixel.", "The bike needs a new chain before the trip to Porto."]
    promote.reject(eng, next(c for c in found if "Pixel" in c.fact))  # rejecting one leaves the other
    found = [c for c in promote.preview(eng, promote.Gates(0.5, 3, 2), now=NOW)[0] if c.path == "memory/2026-03-04.md"]
    assert [c.fact for c in found] == ["The bike needs a new chain before the trip to Porto."]


def test_lines_removed_above_the_fact_move_it_up(notes, make_engine, workspace):
    eng = indexed(make_engine)
    recall_over_days(eng)
    [c] = promote.preview(eng, now=NOW)[0]
    daily = workspace / "memory" / "2026-03-01.md"
    daily.write_text(LOG.replace("# 2026-03-01\n\n", ""))  # the title and the blank line after it are gone
    [again] = promote.preview(eng, now=NOW)[0]
    assert again.status == "ok" and again.start >= 1 and (again.fact_start, again.fact) == (c.fact_start - 2, c.fact)
    assert again.lines and again.lines[0] == daily.read_text().splitlines()[again.start - 1]
    [o] = promote.apply(eng, [again])
    assert o.promoted and f"(memory/2026-03-01.md#L{c.fact_start - 2})" in (workspace / "MEMORY.md").read_text()


# ----------------------------------------------------------------------------- keys that name facts

ELENA_LOG = """# 2026-03-04

## Notes
- Elena's cat is named Pixel.
- Elena moved to Berlin in 2024.
- Bought a new kettle, the old one leaked.
- Elena moved to Lisbon in 2026.
- Call the plumber about the sink.
- Tried the ramen place on Hill Street.
"""


def recall_window(eng, path, text, start, end, match, queries, score, days=(8, 6, 3, 1)):
    """Hits as a search shows them: the same cited window (start..end), the matched line of one fact."""
    lines = text.splitlines()
    hit = {"path": path, "startLine": start, "endLine": end, "matchLine": match, "score": score,
           "snippet": "\n".join(lines[start - 1 : end])}
    for q, ago in zip(queries, days):
        assert recall.record(eng.cfg, q, [hit], now=NOW - ago * DAY) == 1


def test_two_facts_of_one_window_have_two_keys_and_a_contradiction_always_waits_for_confirm(notes, make_engine, workspace):
    write(workspace / "memory" / "2026-03-04.md", ELENA_LOG)
    eng = indexed(make_engine)
    path = "memory/2026-03-04.md"
    recall_window(eng, path, ELENA_LOG, 1, 9, 4, ["Elena cat name", "Elena's cat", "cat called Pixel", "Elena cat"], 0.95)
    recall_window(eng, path, ELENA_LOG, 1, 9, 5, ["where did Elena move", "Elena Berlin", "Elena moved"], 0.7, days=(5, 3, 2))
    recall_window(eng, path, ELENA_LOG, 1, 9, 7, ["Elena Lisbon", "Elena moved 2026", "where does Elena live"], 0.85, days=(4, 2, 1))
    gates = promote.Gates(0.5, 3, 2)
    found, _ = promote.preview(eng, gates, now=NOW)
    pixel, berlin, lisbon = (next(c for c in found if w in c.fact) for w in ("Pixel", "Berlin", "Lisbon"))
    assert len({pixel.key, berlin.key, lisbon.key}) == 3  # one window, three facts, three keys
    outcomes = promote.apply(eng, found, today=dt.date(2026, 3, 10))
    assert {o.text or o.reason[:11] for o in outcomes} == {"Elena's cat is named Pixel.", "contradicts"}
    # the second fact of the window is still offered, and its partner still shows the contradiction
    again, _ = promote.preview(eng, gates, now=NOW)
    assert sorted(c.fact for c in again) == ["Elena moved to Berlin in 2024.", "Elena moved to Lisbon in 2026."]
    lisbon = next(c for c in again if "Lisbon" in c.fact)
    assert lisbon.conflicts == ["Elena moved to Berlin in 2024. (memory/2026-03-04.md#L5)"]
    memory = (workspace / "MEMORY.md").read_bytes()
    assert not any(o.promoted for o in promote.apply(eng, again))  # a plain apply writes neither
    assert (workspace / "MEMORY.md").read_bytes() == memory
    # --confirm with the key the preview printed writes Berlin, and only Berlin
    shown = json.loads(run_cli("--workspace", str(workspace), "promote", "--min-score", "0.5", "--json").stdout)
    key = next(c["key"] for c in shown["candidates"] if "Berlin" in c["fact"])
    assert key == berlin.key
    got = json.loads(run_cli("--workspace", str(workspace), "promote", "--min-score", "0.5", "--apply", "--confirm", key, "--json").stdout)
    assert [a["text"] for a in got["applied"] if a["promoted"]] == ["Elena moved to Berlin in 2024."]
    text = (workspace / "MEMORY.md").read_text()
    assert "Elena moved to Berlin in 2024." in text and "Lisbon" not in text
    # DREAMS.md credits each outcome with its own candidate's score
    dreams = (workspace / "DREAMS.md").read_text()
    assert f"promoted: Elena's cat is named Pixel. (memory/2026-03-04.md#L4) (score {pixel.score:.3f}" in dreams
    berlin_now = next(c for c in shown["candidates"] if "Berlin" in c["fact"])
    assert f"promoted: Elena moved to Berlin in 2024. (memory/2026-03-04.md#L5) (score {berlin_now['score']:.3f}" in dreams
    # now MEMORY.md says Berlin: Lisbon stays held, whatever was applied before
    [lisbon] = promote.preview(eng, gates, now=NOW)[0]
    assert lisbon.conflicts == ["Elena moved to Berlin in 2024. (MEMORY.md)"]
    assert not promote.apply(eng, [lisbon])[0].promoted


# ----------------------------------------------------------------------------- a recall is evidence

STAGING_LOG = """# 2026-03-03

## 11:00
- The staging database password rotates every ninety days.
- The Postgres connection pool is capped at 40 connections per service.
"""


def test_a_vector_only_hit_holding_no_query_word_is_not_a_recall(notes, make_engine, workspace):
    write(workspace / "memory" / "2026-03-03.md", STAGING_LOG)
    write(workspace / "memory" / "2026-03-04.md", CAT_LOG)
    eng = indexed(make_engine)
    staging = {"path": "memory/2026-03-03.md", "startLine": 4, "endLine": 4, "matchLine": 4, "score": 0.6,
               "snippet": "- The staging database password rotates every ninety days."}
    pool = {"path": "memory/2026-03-03.md", "startLine": 5, "endLine": 5, "matchLine": 5, "score": 0.82,
            "snippet": "- The Postgres connection pool is capped at 40 connections per service."}
    bike = {"path": "memory/2026-03-04.md", "startLine": 7, "endLine": 7, "matchLine": 7, "score": 0.6,
            "snippet": "- The bike needs a new chain before the trip to Porto."}
    for ago in (9, 7, 5, 3, 1):  # five days of the same two questions; the vector side lists its neighbours
        recall.record(eng.cfg, "Postgres connection pool", [pool, staging], now=NOW - ago * DAY)
        recall.record(eng.cfg, "when do CI secrets need updating", [bike], now=NOW - ago * DAY)
    assert {r.snippet for r in rows(eng)} == {pool["snippet"]}
    found, _ = promote.preview(eng, now=NOW)
    assert [c.fact for c in found] == ["The Postgres connection pool is capped at 40 connections per service."]
    promote.apply(eng, found)
    text = (workspace / "MEMORY.md").read_text()
    assert "bike" not in text and "staging" not in text
    # the hit's own evidence may say it holds a query word the snippet spells otherwise
    assert recall.record(eng.cfg, "bike chain", [{**bike, "explain": {"confidence": {"terms": ["chain"]}}}]) == 1
    assert recall.record(eng.cfg, "bike chain", [{**staging, "explain": {"confidence": {"terms": []}}}]) == 0


# ----------------------------------------------------------------------------- the budget, kept before writing

FIVE_FACTS = """# 2026-03-05

## Notes
- The ledger service deploys from the release branch every Tuesday at noon after the smoke tests pass.
- Marta keeps the vendor contracts in the shared drive under finance slash contracts twenty twenty six.
- The staging cluster runs three nodes in the Frankfurt region and scales to six during load tests.
- Priya owns the on-call rotation spreadsheet and updates it on the first Monday of each month.
- The office wifi password changes every quarter and is posted on the kitchen noticeboard.
"""
FIVE_QUERIES = [["ledger deploys", "ledger release branch", "ledger Tuesday"],
                ["vendor contracts", "Marta contracts", "contracts shared drive"],
                ["staging cluster nodes", "Frankfurt staging", "staging cluster"],
                ["on-call rotation", "Priya rotation", "rotation spreadsheet"],
                ["wifi password", "office wifi", "wifi noticeboard"]]


def five_candidates(eng):
    for i, qs in enumerate(FIVE_QUERIES):
        recall_window(eng, "memory/2026-03-05.md", FIVE_FACTS, 4 + i, 4 + i, 4 + i, qs, 0.9, days=(5, 3, 1))
    found, _ = promote.preview(eng, promote.Gates(0.5, 3, 2), now=NOW)
    assert len(found) == 5
    return found


def memory_at(size: int, promoted: int) -> str:
    """MEMORY.md of exactly `size` characters: `promoted` old promoted bullets, the rest a person's lines."""
    old = "".join(f"- Old promoted fact number {i} about the garden shed. (memory/2026-01-{i + 1:02d}.md#L3)\n"
                  f"  <!-- openclaw-memory-promotion:memory:memory/2026-01-{i + 1:02d}.md:3:3 -->\n" for i in range(promoted))
    tail = "\n## Promoted From Short-Term Memory (2026-02-01)\n" + old if promoted else ""
    head = "# Memory\n\n## Notes\n"
    mine = ""
    while len(head + mine + tail) < size:
        mine += "- " + "a person's own note, kept as written. "[: max(1, min(40, size - len(head + mine + tail) - 3))].rstrip() + "\n"
    text = head + mine + tail
    return text[:size - 1] + "\n" if len(text) > size else text


def test_apply_archives_the_oldest_promoted_bullets_first_and_never_passes_the_budget(notes, make_engine, workspace):
    text = memory_at(9500, promoted=12)
    assert len(text) == 9500
    write(workspace / "MEMORY.md", text)
    write(workspace / "memory" / "2026-03-05.md", FIVE_FACTS)
    eng = indexed(make_engine)
    found = five_candidates(eng)
    ahead = promote.forecast(eng, found)
    assert ahead["chars"] == 9500 and ahead["after"] <= 10000 and ahead["archive"] > 0 and ahead["unfit"] == []
    shown = run_cli("--workspace", str(workspace), "promote", "--min-score", "0.3")
    assert "--apply would take MEMORY.md from 9500 to" in shown.stdout and "oldest promoted bullet" in shown.stdout
    outcomes = promote.apply(eng, found)
    after = (workspace / "MEMORY.md").read_text()
    assert all(o.promoted for o in outcomes) and len(after) <= 10000
    assert sum(o.archived for o in outcomes) == ahead["archive"]
    archive = (workspace / promote.ARCHIVE).read_text()
    for line in text.splitlines():  # nothing lost: every old line is in MEMORY.md or the archive
        assert line in after.splitlines() or line in archive.splitlines() or line.startswith("## Promoted")
    assert all(o.text in after for o in outcomes)  # this run's bullets are never the ones archived
    assert "moved to memory/promoted-archive.md first" in (workspace / "DREAMS.md").read_text()


def test_apply_stops_and_says_what_to_do_when_nothing_can_be_archived(notes, make_engine, workspace):
    text = memory_at(9500, promoted=0)
    write(workspace / "MEMORY.md", text)
    write(workspace / "memory" / "2026-03-05.md", FIVE_FACTS)
    eng = indexed(make_engine)
    found = five_candidates(eng)
    ahead = promote.forecast(eng, found)
    assert ahead["after"] <= 10000 and ahead["unfit"]
    outcomes = promote.apply(eng, found)
    after = (workspace / "MEMORY.md").read_text()
    assert len(after) <= 10000 and after.startswith(text)
    waiting = [o for o in outcomes if not o.promoted]
    assert len(waiting) == len(ahead["unfit"]) >= 1
    assert all("over its budget of 10000" in o.reason and "promote.memoryFileMaxChars" in o.reason for o in waiting)


# ----------------------------------------------------------------------------- code blocks kept whole

LEDGER_LOG = """# 2026-03-06

## 14:00
To dump the ledger database we use:

```sh
pg_dump --format=custom ledger > ledger.dump
```

Lunch was late, the ramen place was full.
"""


def test_a_code_block_is_one_fact_with_the_sentence_that_introduces_it(notes, make_engine, workspace):
    write(workspace / "memory" / "2026-03-06.md", LEDGER_LOG)
    eng = indexed(make_engine)
    path = "memory/2026-03-06.md"
    recall_window(eng, path, LEDGER_LOG, 3, 8, 4, ["dump the ledger database", "ledger database dump", "how to dump ledger"], 0.9)
    recall_window(eng, path, LEDGER_LOG, 5, 8, 7, ["pg_dump ledger", "pg_dump format custom", "ledger.dump file"], 0.9)
    found, _ = promote.preview(eng, promote.Gates(0.5, 3, 2), now=NOW)
    [c] = found  # one candidate, whichever line the queries matched
    assert c.fact == "To dump the ledger database we use:\n```sh\npg_dump --format=custom ledger > ledger.dump\n```"
    assert (c.fact_start, c.fact_end) == (4, 8) and c.recalls == 6
    [o] = promote.apply(eng, [c])
    assert o.promoted
    text = (workspace / "MEMORY.md").read_text()
    assert ("- To dump the ledger database we use: (memory/2026-03-06.md#L4-L8)\n  ```sh\n"
            "  pg_dump --format=custom ledger > ledger.dump\n  ```\n  <!-- openclaw-memory-promotion:") in text
    assert promote.preview(eng, promote.Gates(0.5, 3, 2), now=NOW)[0] == []  # promoted: not offered again
    # a block inside a long paragraph's log, matched on the fence itself, still comes whole
    a, b, fact = promote.fact_span(LEDGER_LOG.splitlines(), 5, ["pg_dump"])
    assert (a, b) == (3, 7) and fact.startswith("To dump the ledger database we use:\n```sh")


# ----------------------------------------------------------------------------- supersede, retire, never lose


def test_supersede_keeps_the_old_fact_struck_and_dated_undoable_alone_and_retire(notes, make_engine, workspace):
    write(workspace / "memory" / "2026-03-04.md", ELENA_LOG)
    eng = indexed(make_engine)
    path = "memory/2026-03-04.md"
    recall_window(eng, path, ELENA_LOG, 1, 9, 5, ["where did Elena move", "Elena Berlin", "Elena moved"], 0.9, days=(5, 3, 2))
    recall_window(eng, path, ELENA_LOG, 1, 9, 7, ["Elena Lisbon", "Elena moved 2026", "where does Elena live"], 0.9, days=(4, 2, 1))
    gates = promote.Gates(0.3, 3, 2)
    berlin = next(c for c in promote.preview(eng, gates, now=NOW)[0] if "Berlin" in c.fact)
    assert promote.apply(eng, [berlin], confirmed={berlin.key})[0].promoted
    with_berlin = (workspace / "MEMORY.md").read_text()
    [lisbon] = promote.preview(eng, gates, now=NOW)[0]
    assert lisbon.replaces == [berlin.key] and lisbon.conflicts == ["Elena moved to Berlin in 2024. (MEMORY.md)"]
    cli = ("--workspace", str(workspace), "promote", "--min-score", "0.3")
    shown = run_cli(*cli)
    assert f"supersede: --apply --supersede {lisbon.key}" in shown.stdout
    got = run_cli(*cli, "--apply", "--supersede", lisbon.key)
    assert got.returncode == 0 and f"superseded {berlin.key}" in got.stdout, got.stderr
    text = (workspace / "MEMORY.md").read_text()
    today = dt.date.today().isoformat()
    assert "- ~~Elena moved to Berlin in 2024. (memory/2026-03-04.md#L5)~~" in text  # kept, struck
    assert f"  _superseded {today} by: Elena moved to Lisbon in 2026._ <!-- clawmem:superseded -->" in text
    assert "- Elena moved to Lisbon in 2026. (memory/2026-03-04.md#L7)" in text
    assert f"superseding {berlin.key}" in (workspace / "DREAMS.md").read_text()
    with journal.Journal(eng.cfg) as jr:  # the new fact, then the mark: each its own version
        assert [v.writer for v in jr.versions("MEMORY.md")][-3:] == ["clawmem promote"] * 3
    # clawmem context leaves the superseded fact out, and says so
    ctx = json.loads(run_cli("--workspace", str(workspace), "context", "--json").stdout)
    assert "Berlin" not in ctx["text"] and "Lisbon" in ctx["text"] and "1 superseded or retired fact" in ctx["text"]
    assert promote.preview(eng, gates, now=NOW)[0] == []  # neither is offered again
    # undone alone: Berlin is back as it was, Lisbon stays
    assert run_cli(*cli, "--reinstate", berlin.key).returncode == 0
    text = (workspace / "MEMORY.md").read_text()
    assert text.startswith(with_berlin.rstrip("\n")) and "- Elena moved to Lisbon in 2026." in text and "clawmem:superseded" not in text
    # a fact no longer true: retired, kept, struck, out of context
    got = run_cli(*cli, "--retire", lisbon.key)
    assert got.returncode == 0 and got.stdout.startswith(f"retired {lisbon.key}: Elena moved to Lisbon in 2026.")
    text = (workspace / "MEMORY.md").read_text()
    assert f"- ~~Elena moved to Lisbon in 2026. (memory/2026-03-04.md#L7)~~\n" in text and f"_retired {today}, no longer true_" in text
    assert "Lisbon" not in json.loads(run_cli("--workspace", str(workspace), "context", "--json").stdout)["text"]
    again = run_cli(*cli, "--retire", lisbon.key)
    assert again.returncode != 0 and "already superseded or retired" in again.stderr and "Traceback" not in again.stderr
    bad = run_cli(*cli, "--retire", "memory:memory/2026-03-04.md:1:1:0123456789ab")
    assert bad.returncode != 0 and bad.stderr.count("\n") == 1 and "no promoted fact with the key" in bad.stderr


# ----------------------------------------------------------------------------- model: nothing acknowledged is lost

OPS = st.one_of(
    st.tuples(st.just("apply"), st.lists(st.booleans(), min_size=8, max_size=8), st.lists(st.sampled_from(["", "confirm", "supersede"]), min_size=8, max_size=8)),
    st.tuples(st.just("retire"), st.integers(0, 7)),
    st.tuples(st.just("reinstate"), st.integers(0, 7)),
    st.tuples(st.just("archive")),
    st.tuples(st.just("person"), st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30)),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(limit=st.sampled_from([0, 700, 1200, 2500]), ops=st.lists(OPS, min_size=1, max_size=7))
def test_model_every_acknowledged_promotion_is_in_memory_or_archive_and_journaled(make_engine, workspace, limit, ops):
    """Any sequence of applies (with confirm or supersede), retires, reinstates, archives and a
    person's own lines: every promotion reported as written is in MEMORY.md (standing or struck)
    or in the archive, and is a journal version holding it; a person's lines are never lost; an
    apply never takes MEMORY.md past its budget (or, when a person already did, any further)."""
    (workspace / promote.ARCHIVE).unlink(missing_ok=True)
    (workspace / "DREAMS.md").unlink(missing_ok=True)
    write(workspace / "MEMORY.md", "# Memory\n\n## People\n- Sam runs the garden club.\n")
    write(workspace / "memory" / "2026-03-04.md", ELENA_LOG)
    write(workspace / "memory" / "2026-03-05.md", FIVE_FACTS)
    eng = make_engine({"promote.memoryFileMaxChars": limit})
    if not rows(eng):  # the recalls, once: the store outlives an example
        for match, qs in ((4, ["Elena cat name", "Elena's cat", "cat called Pixel"]), (5, ["Elena Berlin", "Elena moved", "Berlin move"]),
                          (7, ["Elena Lisbon", "Elena moved 2026", "Lisbon move"])):
            recall_window(eng, "memory/2026-03-04.md", ELENA_LOG, 1, 9, match, qs, 0.9, days=(5, 3, 1))
        for i, qs in enumerate(FIVE_QUERIES):
            recall_window(eng, "memory/2026-03-05.md", FIVE_FACTS, 4 + i, 4 + i, 4 + i, qs, 0.9, days=(5, 3, 1))
    gates = promote.Gates(0.3, 3, 2)
    every = {c.fact: c.key for c in promote.preview(eng, gates, now=NOW, include_promoted=True)[0]}
    assert len(every) == 8
    keys = sorted(every.values())
    acknowledged: list[promote.Outcome] = []
    mine: list[str] = ["- Sam runs the garden club."]
    memory = workspace / "MEMORY.md"
    for op in ops:
        before = len(memory.read_text())
        if op[0] == "apply":
            found = promote.preview(eng, gates, now=NOW)[0]
            chosen = [c for c, take in zip(found, op[1]) if take]
            how = dict(zip((c.key for c in found), op[2]))
            got = promote.apply(eng, chosen, confirmed={k for k, h in how.items() if h == "confirm"},
                                supersede={k for k, h in how.items() if h == "supersede"})
            acknowledged += [o for o in got if o.promoted]
            if limit:
                assert len(memory.read_text()) <= max(limit, before)
        elif op[0] in ("retire", "reinstate"):
            try:
                (promote.retire if op[0] == "retire" else promote.reinstate)(eng, keys[op[1]])
            except promote.PromoteError as exc:
                assert "\n" not in str(exc) and "MEMORY.md" in str(exc)
        elif op[0] == "archive":
            promote.archive_oldest(eng)
        else:
            line = "- " + " ".join(op[1].split())
            if line.strip() != "-":
                with open(memory, "a", encoding="utf-8") as f:
                    f.write(line + "\n")
                mine.append(line)
        text = memory.read_text()
        archive = (workspace / promote.ARCHIVE).read_text() if (workspace / promote.ARCHIVE).exists() else ""
        assert all(ln in text.split("\n") for ln in mine)  # a person's lines, never lost
        with journal.Journal(eng.cfg) as jr:
            for o in acknowledged:
                assert o.text in text or o.text in archive, o
                assert o.version is not None and o.text in jr.data(o.version).decode()
