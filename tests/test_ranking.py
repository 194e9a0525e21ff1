"""Ranking pieces (SPEC §5): the study's golden decay and MMR cases, fusion, date phrases."""

import datetime as dt

import pytest

from clawmem.engine.search import dates, ranking
from clawmem.engine.text import mmr_tokens
from helpers import write


@pytest.mark.parametrize("age, expected", [(0, 1.0), (1, 0.97716), (7, 0.85067), (14, 0.72363), (30, 0.5), (60, 0.25), (90, 0.125), (365, 0.0002175)])
def test_decay_golden(age, expected):
    assert ranking.decay_factor(age, 30) == pytest.approx(expected, rel=1e-4)


def test_future_dates_do_not_boost():
    assert ranking.decay_factor(-5, 30) == 1.0


def test_bm25_to_score_golden():
    got = [round(ranking.bm25_to_score(r), 4) for r in [0, 1, 10, -0.5, -2.1, -4.2, -100, float("inf"), float("nan")]]
    assert got == [1, 0.5, 0.0909, 0.3333, 0.6774, 0.8077, 0.9901, 0.001, 0.001]


def test_weights_normalised():
    assert ranking.normalize_weights(0.6, 0.6) == (0.5, 0.5)
    assert ranking.normalize_weights(0, 0) == (0.7, 0.3)


def test_rrf_is_normalised_to_one():
    assert ranking.rrf_score([1, 1]) == pytest.approx(1.0)
    assert ranking.rrf_score([1, None]) == pytest.approx(0.5)
    assert 0 < ranking.rrf_score([24, None]) < ranking.rrf_score([2, None])


def test_relative_shares_are_anchored_at_no_evidence():
    assert ranking.relative_shares(8.0, 8.0, 3.0, 3.0) == (1.0, 1.0)
    assert ranking.relative_shares(2.0, 8.0, -1.0, 3.0) == (0.25, 0.0)  # below the background counts nothing
    assert ranking.relative_shares(None, 0.0, None, 0.0) == (0.0, 0.0)  # a side with no hit at all
    # a flat list (its 10th nearly as good as its best) barely separates what it holds
    assert ranking.relative_shares(7.6, 8.0, 0.3, 3.0)[0] == pytest.approx(0.95)


def test_calibration_is_relative_to_what_is_unrelated_to_the_query():
    # e5-like: the query sits at 0.80 ± 0.02 from a random sample of the index
    assert ranking.calibrate_cosine(0.80, 0.80, 0.02) == 0.0
    assert ranking.calibrate_cosine(0.82, 0.80, 0.02) == 0.0  # within one standard deviation: noise
    mid = ranking.calibrate_cosine(0.86, 0.80, 0.02)
    assert 0.4 < mid < 0.6
    assert ranking.calibrate_cosine(0.95, 0.80, 0.02) > 0.85
    # the same standing above the reference means the same score, whatever the model's range
    assert ranking.calibrate_cosine(0.40, 0.10, 0.10) == pytest.approx(mid)


def test_mmr_tokens_golden():
    assert mmr_tokens("Hello World_1 今天讨论 a好") == {"hello", "world_1", "a", "今天", "天讨", "讨论", "今", "天", "讨", "论", "好"}
    assert mmr_tokens("我a好") == {"a", "我", "好"}
    assert len(mmr_tokens("今天讨论")) == 7


def test_jaccard_edges():
    assert ranking.jaccard(frozenset(), frozenset()) == 1.0
    assert ranking.jaccard(frozenset("a"), frozenset()) == 0.0
    assert ranking.jaccard(frozenset("ab"), frozenset("bc")) == pytest.approx(1 / 3)


def test_mmr_score_golden():
    assert ranking.mmr_score(0.8, 0.5, 1) == pytest.approx(0.8)
    assert ranking.mmr_score(0.8, 0.5, 0) == pytest.approx(-0.5)
    assert ranking.mmr_score(0.8, 0.6, 0.5) == pytest.approx(0.1)
    assert ranking.mmr_score(1.0, 0.5, 0.7) == pytest.approx(0.55)


@pytest.mark.parametrize("lam, order", [(0.5, [1, 3, 2, 4]), (0.7, [1, 2, 3, 4])])
def test_mmr_golden_orderings(lam, order):
    items = ["machine learning neural networks", "machine learning deep learning", "database systems sql queries", "machine learning algorithms"]
    scores = [1.0, 0.95, 0.9, 0.85]
    got = ranking.mmr_order(scores, [mmr_tokens(t) for t in items], lam)
    assert [i + 1 for i, _ in got] == order


# ------------------------------------------------------------------------- decay in a search


def test_decay_on_a_real_index(workspace, make_engine):
    """OpenClaw's golden: a fresh daily note (0.8) outranks an old one (0.95); MEMORY.md and topics never decay."""
    write(workspace / "memory" / "2026-02-10.md", "falcon migration plan\n")
    write(workspace / "memory" / "2025-01-01.md", "falcon migration plan falcon migration\n")
    write(workspace / "MEMORY.md", "falcon migration plan notes\n")
    write(workspace / "memory" / "projects.md", "falcon migration plan topics\n")
    eng = make_engine({"query.hybrid.temporalDecay.enabled": True})
    eng.run_index()
    res = eng.search("falcon migration", now="2026-02-10", explain=True)
    by_path = {r["path"]: r for r in res["results"]}
    assert by_path["memory/2025-01-01.md"]["explain"]["decay"]["factor"] < 0.001
    assert by_path["memory/2026-02-10.md"]["explain"]["decay"]["factor"] == 1.0
    assert by_path["MEMORY.md"]["explain"]["decay"]["basis"] == "evergreen"
    assert by_path["memory/projects.md"]["explain"]["decay"]["basis"] == "evergreen"
    order = [r["path"] for r in res["results"]]
    assert order.index("memory/2026-02-10.md") < order.index("memory/2025-01-01.md")


def test_nested_and_slugged_daily_files_are_dated(workspace, make_engine):
    write(workspace / "memory" / "2026" / "01" / "2026-01-11.md", "heron log\n")
    write(workspace / "memory" / "2026-01-11-vendor-pitch.md", "heron pitch\n")
    eng = make_engine({"query.hybrid.temporalDecay.enabled": True})
    eng.run_index()
    res = eng.search("heron", now="2026-02-10", explain=True)
    for r in res["results"]:
        assert r["explain"]["decay"]["factor"] == pytest.approx(0.5, rel=1e-3)
        assert r["date"] == "2026-01-11"


# ------------------------------------------------------------------------- date phrases

TODAY = dt.date(2026, 2, 12)  # a Thursday


@pytest.mark.parametrize(
    "query, rest, after, before",
    [
        ("what did I decide last week about billing", "what did I decide about billing", "2026-02-02", "2026-02-09"),
        ("yesterday standup notes", "standup notes", "2026-02-11", "2026-02-12"),
        ("this month invoices", "invoices", "2026-02-01", "2026-02-13"),
        ("deploys since 2025-11", "deploys", "2025-11-01", "2026-02-13"),
        ("trip in March", "trip", "2025-03-01", "2025-04-01"),
        ("上周 的 会议", "的 会议", "2026-02-02", "2026-02-09"),
        ("昨天吃了什么", "吃了什么", "2026-02-11", "2026-02-12"),
        ("past 7 days errors", "errors", "2026-02-06", "2026-02-13"),
    ],
)
def test_date_phrases(query, rest, after, before):
    got_rest, rng = dates.extract(query, TODAY)
    assert rng is not None
    assert got_rest == rest
    assert (rng.after.isoformat(), rng.before.isoformat()) == (after, before)


def test_long_conversational_queries_are_not_filtered():
    dialogue = "Bart: Hey, guess what happened today!\nAssistant: Tell me.\nBart: Yesterday I went to the lake and it was great."
    assert dates.extract(dialogue, TODAY) == (dialogue, None)
    long_line = "so today I was thinking about all the things we talked about regarding the garden and the new plants and whether tomatoes need more sun"
    assert dates.extract(long_line, TODAY)[1] is None


def test_last_week_returns_last_weeks_entries_first(workspace, make_engine):
    write(workspace / "memory" / "2026-02-04.md", "- decided: billing moves to Stripe\n")
    write(workspace / "memory" / "2026-01-10.md", "- decided: billing stays on invoices, billing billing\n")
    write(workspace / "MEMORY.md", "- billing owner is Sam\n")
    eng = make_engine()
    eng.run_index()
    res = eng.search("what did I decide last week about billing", now="2026-02-12")
    assert res["dateRange"]["from"] == "last week" and res["dateRange"]["applied"] is True
    assert res["results"][0]["path"] == "memory/2026-02-04.md"
    assert all(r["path"] == "memory/2026-02-04.md" for r in res["results"])
    # nothing dated last week about 'payroll': the filter is dropped and the result set says so
    write(workspace / "memory" / "2026-01-11.md", "payroll run\n")
    eng.run_index()
    res = eng.search("payroll last week", now="2026-02-12")
    assert res["dateRange"]["applied"] is False and res["results"][0]["path"] == "memory/2026-01-11.md"


def test_explicit_after_before(workspace, make_engine):
    for d in ("2026-01-05", "2026-01-15", "2026-01-25"):
        write(workspace / "memory" / f"{d}.md", f"otter sighting {d}\n")
    eng = make_engine()
    eng.run_index()
    res = eng.search("otter", after="2026-01-10", before="2026-01-20")
    assert [r["path"] for r in res["results"]] == ["memory/2026-01-15.md"]


# ----------------------------------------------------------------------------- fusion (issue 11, part 4)
# The tiny model knows only a few hundred common words: the rare words that pin a note down
# (heron, millbrook) are nothing to it, so its vectors follow the query's common words. That
# is the weak vector side of a real model facing names and rare terms.

HERON = "the grey heron nests by the millbrook pond"
DECOYS = [
    "where to walk in the morning: the garden, the city, the river",
    "morning coffee in the kitchen, then the train to the city",
    "a walk in the morning rain with the dog",
    "the morning meeting moved to friday",
    "where is the hotel? near the train station in the city",
    "the garden needs water every morning",
    "where does the dog walk in the morning",
    "the morning walk: where the trees are",
    "a walk with the team in the morning",
]


@pytest.fixture
def heron_notes(workspace):
    for i, text in enumerate([HERON, *DECOYS]):
        write(workspace / "memory" / f"2026-04-{i + 1:02d}.md", f"# 2026-04-{i + 1:02d}\n\n- {text}\n")
    return workspace


def hybrid(make_engine, tiny_model, **more):
    eng = make_engine({"provider": "local", "local.modelPath": str(tiny_model), **more})
    list(eng.index())
    return eng


HERON_QUERY = "where does the heron of millbrook walk in the morning"


def test_a_weak_vector_side_does_not_pull_the_lexical_hit_down(heron_notes, make_engine, tiny_model):
    res = hybrid(make_engine, tiny_model).search(HERON_QUERY, explain=True, show_hidden=True)
    assert res["mode"] == "hybrid"
    first = res["results"][0]
    assert first["path"] == "memory/2026-04-01.md", [(r["path"], r["explain"]["fusion"]) for r in res["results"]]
    # the vectors alone put a decoy first: the fusion, not the vector side, kept the heron on top
    assert first["explain"]["vector"]["rank"] > 3 and first["explain"]["keyword"]["rank"] == 1


def test_reciprocal_rank_fusion_lets_it_fall(heron_notes, make_engine, tiny_model):
    """The same workspace under RRF: what the default fixes (this is the case LongMemEval showed)."""
    res = hybrid(make_engine, tiny_model, **{"query.hybrid.fusion": "rrf"}).search(HERON_QUERY, show_hidden=True)
    assert res["results"][0]["path"] != "memory/2026-04-01.md"


# A model that knows what words mean: the test server's hashed bag of words over concepts.
CONCEPTS = {"flight": "travel", "plane": "travel", "trip": "travel", "journey": "travel", "ticket": "travel",
            "heron": "bird", "nests": "bird"}


def test_a_paraphrase_the_keywords_miss_is_found_by_the_vectors(heron_notes, make_engine, embed_server):
    from embed_server import bag_vector

    embed_server.vector_for = lambda text: bag_vector(" ".join(CONCEPTS.get(w, w) for w in text.lower().split()), embed_server.dims)
    write(heron_notes / "memory" / "2026-04-20.md", "# 2026-04-20\n\n- plane ticket booked for the journey\n")
    eng = make_engine({"provider": "openai", "remote.baseUrl": embed_server.url + "/v1", "remote.apiKey": embed_server.api_key})
    list(eng.index())
    # no word of the query is in the note; the meaning is
    res = eng.search("trip flight", explain=True, show_hidden=True)
    assert res["mode"] == "hybrid"
    first = res["results"][0]
    assert first["path"] == "memory/2026-04-20.md", [(r["path"], r["explain"].get("fusion")) for r in res["results"]]
    assert "keyword" not in first["explain"] and first["explain"]["vector"]["rank"] == 1


# Long pasted messages: a chat log where the user pasted whole articles, long chunks full of
# the common words a question shares with anything. The vectors (here the tiny model's bag of
# known words) find the articles close to the question; the keywords find the one short turn
# that holds its rare words. Issue 42: on a held-out set of such memories hybrid search lost
# what keyword-only ranked in its top 5 (10 questions), and keyword-only beat the default.
PASTED = ("Here is the article I mentioned, pasted: " + " ".join(
    ["the city train to the airport leaves in the morning and the hotel is near the market,"
     " the trip plan for the team has a budget and a ticket for every day of the week,"
     " travel in the rain or the snow with the family, then coffee and bread at the hotel"] * 6)
    + " Ad: deck sealant for every boat, any city.")


@pytest.fixture
def pasted_log(workspace):
    for i in range(12):
        day = f"2026-05-{i + 1:02d}"
        write(workspace / "memory" / f"{day}.md",
              f"# {day}\n\n## 09:00 — chat\n\n- **User:** {PASTED} ({i})\n- **Assistant:** Thanks, I read the article about the city trip.\n")
    write(workspace / "memory" / "2026-05-20.md",
          "# 2026-05-20\n\n## 18:00 — chat\n\n- **User:** For the boat deck I went with the marine sealant from Harbor Supply.\n"
          "- **Assistant:** Noted: marine sealant for the deck.\n")
    return workspace


def test_hybrid_keeps_what_keyword_only_ranks_first_among_long_pasted_messages(pasted_log, make_engine, tiny_model):
    """Which sealant for the boat deck, asked with the city trip's words, of a chat log whose
    every session holds a pasted article on the city trip (ending in a "deck sealant" ad):
    keyword-only ranks the short turn holding the question's rare words first, the vectors
    rank a dozen articles above it (they share the question's common words, as long pasted
    messages share them with any question). The default shows it first, and every hit
    keyword-only ranks in its first five is among the default's first ten."""
    query = "Which sealant did I pick for the boat deck before the city trip?"
    kw = make_engine()
    list(kw.index())
    kw_top = kw.search(query)["results"][:5]
    assert kw_top[0]["path"] == "memory/2026-05-20.md"
    res = hybrid(make_engine, tiny_model).search(query, max_results=10, explain=True)
    assert res["mode"] == "hybrid"
    first = res["results"][0]
    assert first["path"] == "memory/2026-05-20.md"
    assert first["explain"]["vector"]["rank"] > 5, "the vectors alone must put the articles first, or this tests nothing"
    shown = {(r["path"], r["startLine"]) for r in res["results"]}
    assert {(r["path"], r["startLine"]) for r in kw_top} <= shown
