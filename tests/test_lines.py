"""Issue 11, parts 2 and 3: a result's citation, snippet and matchLine point at the line that
matched (keyword and vector-only hits), and a long question stays fast by OR-ing only its
rarest keywords without losing a passage that holds only the rarest one."""

from __future__ import annotations

import json

from clawmem.engine import search as search_mod
from clawmem.engine.index.store import Store
from helpers import run_cli, write


def filler(i: int) -> str:
    return f"- {i:03d} routine entry, nothing special happened here"  # 50 characters


def billing_log(workspace):
    """120 lines of 50 characters; with 220-token chunks and no overlap a chunk spans 86-102."""
    lines = [filler(i) for i in range(1, 121)]
    lines[85] = "## 2026-03-02 billing for March, open items".ljust(50)
    lines[90] = "- invoice INV-2026-00417 was paid late by Acme".ljust(50)
    return write(workspace / "memory" / "2026-03-02.md", "\n".join(lines) + "\n")


def test_a_keyword_hit_on_line_91_of_a_chunk_from_86_cites_line_91(workspace, tmp_path):
    billing_log(workspace)
    config = write(tmp_path / "c.toml", 'provider = "none"\n[chunking]\ntokens = 220\noverlap = 0\n'
                                        '[query]\ncontextLines = 2\n[sync]\nonSearch = false\n')
    ws = ["--workspace", str(workspace), "--config", str(config)]
    assert run_cli(*ws, "index").returncode == 0
    out = run_cli(*ws, "search", "when was INV-2026-00417 paid", "--json", "--explain")
    assert out.returncode == 0, out.stderr
    top = json.loads(out.stdout)["results"][0]
    assert top["explain"]["chunk"] == {"startLine": 86, "endLine": 102}  # the setting the issue describes
    assert top["matchLine"] == 91
    assert (top["startLine"], top["endLine"]) == (89, 93)  # the match and 2 lines each side
    assert top["citation"].endswith("#L89-L93")
    assert "INV-2026-00417" in top["snippet"] and not top["snippet"].startswith("## 2026-03-02")
    got = json.loads(run_cli(*ws, "get", top["path"], "--from", str(top["startLine"]), "--lines",
                             str(top["endLine"] - top["startLine"] + 1), "--json").stdout)
    assert got["text"].split("\n")[91 - 89].startswith("- invoice INV-2026-00417")
    assert top["snippet"] in got["text"]


def test_the_citation_spans_every_line_that_matched(workspace, make_engine):
    """Two lines hold the query's words far apart in one chunk: both are cited, with context."""
    lines = [filler(i) for i in range(1, 31)]
    lines[4] = "- the quokka census starts on Rottnest island".ljust(50)
    lines[20] = "- quokka census results: 214 counted on Rottnest".ljust(50)
    write(workspace / "memory" / "notes.md", "\n".join(lines) + "\n")
    eng = make_engine({"query.contextLines": 1})
    eng.run_index()
    (r,) = eng.search("quokka census rottnest")["results"]
    assert (r["startLine"], r["endLine"]) == (4, 22)
    assert r["matchLine"] in (5, 21)


def test_the_context_setting_widens_the_citation(workspace, make_engine):
    billing_log(workspace)
    spans = {}
    for ctx in (0, 5):
        eng = make_engine({"chunking.tokens": 220, "chunking.overlap": 0, "query.contextLines": ctx})
        eng.run_index()
        r = eng.search("INV-2026-00417")["results"][0]
        spans[ctx] = (r["startLine"], r["matchLine"], r["endLine"])
    assert spans == {0: (91, 91, 91), 5: (86, 91, 96)}


def test_a_vector_only_hit_points_at_its_related_line_not_the_heading(workspace, make_engine, tiny_model):
    """Vectors alone find the note (the keyword side is off: it would find "deploy" and
    "server" as the other forms of "deploying servers"), and matchLine is the line about
    deploying the server, found by the forms of the query's words, not the heading."""
    write(workspace / "memory" / "2026-01-05.md",
          "# Weekly notes\n- the cat likes fish and milk\n- dinner was lasagna with cheese\n"
          "- we deploy the server on friday after the release\n- the garden needs rain\n")
    eng = make_engine({"provider": "local", "local.modelPath": str(tiny_model), "query.contextLines": 0,
                       "query.hybrid.enabled": False})
    eng.run_index()
    res = eng.search("deploying servers", min_score=0, explain=True)
    assert res["mode"] == "vector"
    (r,) = res["results"]
    assert "keyword" not in r["explain"] and r["explain"]["vector"]["rank"] == 1  # vector-only
    assert r["matchLine"] == 4 and (r["startLine"], r["endLine"]) == (4, 4)
    assert r["snippet"] == "- we deploy the server on friday after the release"
    got = eng.get(r["path"], r["startLine"], r["endLine"] - r["startLine"] + 1)["text"]
    assert "deploy the server" in got


def test_a_vector_only_hit_sharing_no_word_starts_under_the_heading(workspace, make_engine, tiny_model):
    write(workspace / "memory" / "2026-01-06.md", "# Trip\n\n## Monday\n- flight to tokyo, hotel in paris\n- train ticket\n")
    eng = make_engine({"provider": "local", "local.modelPath": str(tiny_model), "query.hybrid.enabled": False})
    eng.run_index()
    res = eng.search("airport", min_score=0)
    assert res["mode"] == "vector"
    r = res["results"][0]
    assert r["matchLine"] == 4  # the first line of text, not "# Trip" or "## Monday"


def long_question_index(workspace, make_engine):
    """2,100 two-line chunks: every line shares the question's common words; one names zanzibar."""
    lines = [f"- the team met about the project plan and the budget, week {i}" for i in range(4200)]
    lines[1500] = "- booked the ferry to zanzibar for the holiday"
    write(workspace / "memory" / "log.md", "\n".join(lines) + "\n")
    eng = make_engine({"chunking.tokens": 32, "chunking.overlap": 0})
    eng.run_index()
    return eng


QUESTION = "What did the team decide in the project meeting about the plan and the budget for the zanzibar holiday?"


def test_a_long_question_finds_the_chunk_holding_only_its_rarest_word(workspace, make_engine):
    eng = long_question_index(workspace, make_engine)
    top = eng.search(QUESTION, min_score=0)["results"][0]
    assert top["matchLine"] == 1501 and "zanzibar" in top["snippet"]
    # the OR pass left out the words in every chunk (their postings exceed the budget)
    st = Store(eng.index_path)
    try:
        _, info = search_mod.keyword_candidates(st, QUESTION, eng.options())
    finally:
        st.close()
    assert info["strict"] == 0
    assert "zanzibar" in info["orTerms"] and "holiday" in info["orTerms"]
    assert not {"team", "project", "plan", "budget"} & set(info["orTerms"])
    assert info["df"]["team"] == search_mod.OR_POSTINGS + 1  # counted only up to the budget


def test_a_long_question_still_ranks_a_chunk_with_all_its_words_first(workspace, make_engine):
    eng = long_question_index(workspace, make_engine)
    write(workspace / "memory" / "decision.md",
          "- what did the team decide in the project meeting about the plan and the budget for the zanzibar holiday? "
          "Keep it cheap.\n")
    eng.run_index()
    top = eng.search(QUESTION, min_score=0, explain=True)["results"][0]
    assert top["path"] == "memory/decision.md" and top["explain"]["keyword"]["match"] == "all terms"


def test_a_word_no_chunk_holds_skips_the_strict_pass(workspace, make_engine):
    write(workspace / "memory" / "a.md", "- heron and owl seen at dawn\n")
    eng = make_engine()
    eng.run_index()
    st = Store(eng.index_path)
    try:
        cands, info = search_mod.keyword_candidates(st, "heron owl xylophone", eng.options())
        assert info["df"] == {"heron": 1, "owl": 1, "xylophone": 0}
        assert info["strict"] == 0 and info["relaxed"] == 1 and info["orTerms"] == ["heron", "owl"]
        # accents fold as the index folds them: a word typed with them still counts
        _, info = search_mod.keyword_candidates(st, "héron owl", eng.options())
        assert info["df"]["héron"] == 1 and info["strict"] == 1
    finally:
        st.close()


def test_a_date_range_finds_its_few_matches_below_many_better_ones(workspace, make_engine):
    """FTS5 ranks first and the date filter comes after: when the best matches all fall outside
    the range, the search still returns the ones inside it."""
    for i in range(60):
        write(workspace / "memory" / "topics" / f"birds-{i}.md", "- heron heron heron by the lake\n")
    for day in ("2026-02-03", "2026-02-04"):
        write(workspace / "memory" / f"{day}.md", f"# {day}\n- one heron flew over the car park, and then a long quiet day\n")
    eng = make_engine()
    eng.run_index()
    res = eng.search("heron", after="2026-02-01", before="2026-02-08", max_results=2)  # FTS5 ranks 16 first
    assert sorted(r["path"] for r in res["results"]) == ["memory/2026-02-03.md", "memory/2026-02-04.md"]
