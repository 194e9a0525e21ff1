"""The score is a calibrated confidence: an off-topic query scores below the default minScore in
every mode (and comes back empty when none of its words occur here), an exact on-topic one above
it, and explain says how it was made."""

import pytest
from hypothesis import given, settings, strategies as st

from clawmem.engine.search import ranking
from clawmem.tui.present import explain_parts

from helpers import write

NOTES = [
    "the server crash happened after the deploy, the server log shows an error",
    "backup of the server database before the deploy to production",
    "dark mode theme for the editor and the terminal",
    "flight to tokyo on friday and a hotel near the station",
    "lasagna recipe: cheese, tomato sauce, forty minutes in the oven",
    "the cat likes fish and milk in the morning",
    "dentist appointment moved to thursday at nine",
    "gym plan: run on monday, swim on wednesday",
    "the garden needs water, the roses are dry",
    "invoice INV-2026-00417 paid to the landlord",
]
OFF_TOPIC = "quantum chromodynamics lattice gauge theory"
# shares a word with one note, so keyword search finds a hit to score
OFF_TOPIC_NEAR = "lattice gauge theory simulations on the morning shift"
MIN_SCORE = 0.35  # the default query.minScore

MODES = {
    "keyword": {},
    "relative": {"query.hybrid.fusion": "relative"},
    "rrf": {"query.hybrid.fusion": "rrf"},
    "weighted": {"query.hybrid.fusion": "weighted"},
}


@pytest.fixture
def notes(workspace):
    for i, text in enumerate(NOTES):
        write(workspace / "memory" / f"2026-03-{i + 1:02d}.md", f"# 2026-03-{i + 1:02d}\n\n- {text}\n")
    return workspace


@pytest.fixture(params=list(MODES))
def engine(request, notes, make_engine, tiny_model):
    over = dict(MODES[request.param])
    if request.param != "keyword":
        over.update({"provider": "local", "local.modelPath": str(tiny_model)})
    eng = make_engine(over)
    list(eng.index())
    return request.param, eng


def test_the_default_threshold_is_the_one_these_tests_use(make_engine):
    assert make_engine().cfg["query.minScore"] == MIN_SCORE


@pytest.mark.parametrize("query", [OFF_TOPIC, OFF_TOPIC_NEAR])
def test_off_topic_query_scores_below_the_threshold(engine, query):
    mode, eng = engine
    everything = eng.search(query, show_hidden=True)
    if query == OFF_TOPIC_NEAR:
        assert everything["results"]
    assert all(r["score"] < MIN_SCORE for r in everything["results"]), (mode, everything["results"])
    shown = eng.search(query)
    if query == OFF_TOPIC:  # no word of it occurs here: evidence that the memory lacks the answer
        assert shown["results"] == [] and "reason" in shown["hidden"]
    else:  # one word of it does: a weak hit is no evidence of absence, so it is shown, as weak
        assert shown["results"] and {r["band"] for r in shown["results"]} == {"low"}


@pytest.mark.parametrize("query, path", [
    ("lasagna recipe", "memory/2026-03-05.md"),
    ("flight to tokyo", "memory/2026-03-04.md"),
    ("when is the dentist appointment", "memory/2026-03-07.md"),
])
def test_exact_on_topic_query_scores_above_the_threshold(engine, query, path):
    mode, eng = engine
    res = eng.search(query)
    assert res["results"], (mode, res)
    assert res["results"][0]["path"] == path
    assert res["results"][0]["score"] >= MIN_SCORE


@pytest.mark.parametrize("query", ["server deploy", "cat", OFF_TOPIC, "tokyo lasagna gym", "a"])
def test_scores_are_in_0_1_and_each_is_its_own_evidence(engine, query):
    """No hit borrows the first one's strength (scores used to be the best hit's evidence times
    the fused share); keyword-only, where the order weighs the same words, never puts a low
    hit above a stronger one."""
    mode, eng = engine
    results = eng.search(query, show_hidden=True, explain=True)["results"]
    assert all(0 <= r["score"] <= 1 for r in results)
    for r in results:
        conf = r["explain"]["confidence"]
        # a hit whose evidence reaches high but is not trusted (search.untrusted) scores just below it
        own = min(conf["own"], ranking.band_floor("high") - 1e-4) if "notHigh" in conf else conf["own"]
        assert r["score"] == pytest.approx(own, abs=1e-4)
        assert ("notHigh" in conf) == (conf["own"] >= ranking.band_floor("high") > r["score"])
        assert r["band"] == ranking.band(r["score"])
    if mode == "keyword":
        bands = [r["band"] for r in results]
        assert "low" not in bands or set(bands[bands.index("low"):]) == {"low"}


def test_explain_lists_the_confidence_parts(engine):
    """A score is the hit's own evidence: explain gives every part of it, and nothing of it
    comes from another hit (no "query" or "relative" factor)."""
    mode, eng = engine
    top = eng.search("lasagna recipe", explain=True)["results"][0]
    conf = top["explain"]["confidence"]
    assert set(conf) >= {"termCoverage", "keyword", "vector", "own", "terms"}
    assert not set(conf) & {"query", "relative"}
    assert top["score"] == pytest.approx(conf["own"], abs=1e-3)
    assert top["score"] == pytest.approx(ranking.combine_confidence(conf["keyword"], conf["vector"]), abs=1e-3)
    assert set(conf["terms"]) == {"lasagna", "recipe"}
    lines = dict(explain_parts(top["explain"]))
    assert "query's term weight" in lines["score"] and "lasagna" in lines["score"]
    if mode != "keyword":
        assert "vector" in lines["score"]


def test_a_missing_rare_word_lowers_the_confidence(notes, make_engine):
    eng = make_engine()
    list(eng.index())
    full = eng.search("lasagna recipe")["results"][0]["score"]
    half = eng.search("lasagna zucchini risotto")["results"][0]["score"]
    assert full >= MIN_SCORE > half


def test_term_coverage_and_its_mapping():
    w = {"lasagna": 0.9, "recipe": 0.8, "the": 0.05}
    assert ranking.term_coverage(w, {"lasagna", "recipe", "the"}) == pytest.approx(1.0)
    assert ranking.term_coverage(w, {"the"}) == pytest.approx(0.05 / 1.75)
    assert ranking.term_coverage({}, {"x"}) == 0.0
    # a long question is covered by `enough` weight, not by repeating all of it
    many = {f"t{i}": 1.0 for i in range(40)}
    assert ranking.term_coverage(many, {"t1", "t2", "t3"}, enough=3.0) == pytest.approx(1.0)
    assert ranking.keyword_confidence(0.15) == 0.0 and ranking.keyword_confidence(1.0) == 1.0
    assert ranking.keyword_confidence(0.34) == pytest.approx(MIN_SCORE, abs=0.01)


def test_vector_confidence_needs_more_than_the_best_unrelated_chunk():
    # the best of 10 000 unrelated chunks stands ~4.3 standard deviations above their mean
    assert ranking.vector_confidence(0.80 + 4.0 * 0.02, 0.80, 0.02, 10_000) == 0.0
    assert ranking.vector_confidence(0.80 + 4.0 * 0.02, 0.80, 0.02, 20) > 0.3
    assert 0.5 < ranking.vector_confidence(0.80 + 8.0 * 0.02, 0.80, 0.02, 10_000) < 1.0
    assert ranking.combine_confidence(0.5, 0.5) == pytest.approx(0.75)


def test_the_query_words_must_stand_together(workspace, make_engine):
    """A question's rare words scattered over a chunk (each in its own long chat message) are
    not evidence that the chunk answers it; the same words side by side in one message are.
    The scattered chunk scores below the threshold, the passage above it, in keyword-only mode
    where the words alone decide."""
    filler = " ".join(["we talked about the weather and the weekend plans at length"] * 4)
    scattered = (f"User: my sister phoned yesterday, {filler}\n"
                 f"Assistant: {filler}\n"
                 f"User: the new restaurant downtown was loud, {filler}\n")
    together = f"User: {filler}\nUser: my sister named her restaurant Saffron Lane\n"
    for i, text in enumerate([scattered, together]):
        write(workspace / "memory" / f"2026-04-{i + 1:02d}.md", f"# chat\n\n{text}")
    more = ["the printer jammed again", "a walk in the park", "the car needs new tyres"] * 4
    for i, text in enumerate(more):  # enough other chunks that sister/restaurant are rare words
        write(workspace / "memory" / f"2026-05-{i + 1:02d}.md", f"# note\n\n- {text}\n")
    eng = make_engine()
    list(eng.index())
    query = "what did my sister call her restaurant"
    by_path = {r["path"]: r for r in eng.search(query, show_hidden=True)["results"]}
    assert by_path["memory/2026-04-02.md"]["score"] >= MIN_SCORE
    words_apart = make_engine(ws=workspace)
    (workspace / "memory" / "2026-04-02.md").unlink()
    list(words_apart.index())
    out = words_apart.search(query, show_hidden=True)
    assert [r["path"] for r in out["results"]] == ["memory/2026-04-01.md"]  # found, but not vouched for
    assert out["results"][0]["score"] < MIN_SCORE
    assert not words_apart.search(query, min_score=MIN_SCORE)["results"]  # keyword-only hides only when asked


def _passages_by_hand(weights: dict, text: str, limit: int) -> float:
    """The definition, slowly: every line starts a passage that takes the following lines while
    they fit in `limit` characters; a passage's coverage is that of its lines' tokens."""
    from clawmem.engine.search import line_tokens
    from clawmem.engine.text import normalize

    lines = normalize(text).split("\n")
    best = 0.0
    for i in range(len(lines)):
        terms, size, j = set(line_tokens(lines[i])), len(lines[i]), i + 1
        while j < len(lines) and size + 1 + len(lines[j]) <= limit:
            terms |= set(line_tokens(lines[j]))
            size += 1 + len(lines[j])
            j += 1
        best = max(best, ranking.term_coverage(weights, terms))
    return best


WORDS = ["sister", "restaurant", "Sister,", "RESTAURANT.", "sisters", "café", "cafe", "saffron", "lane",
         "the", "a", "dog_1", "x2", "服务器", "服务", "Straße", "strasse", "", "  ", "mysql服务器", "服务器MySQL",
         "mysql_服务", "服务mysqls", "서버에서", "x서버", "🙂sister", "sister的", "café服", "ｓｉｓｔｅｒ", "・服务・", "服 务"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), max_size=40), min_size=1, max_size=10))
def test_passage_coverage_is_its_definition(lines):
    """The fast path (each query word found with str.find in the whole chunk) gives exactly what
    the definition (each line's tokens) gives, on random chunks of mixed scripts and cases, words glued to CJK runs."""
    from clawmem.engine.search import PASSAGE_CHARS, QueryWords, passage_coverage

    weights = {"sister": 0.8, "restaurant": 0.7, "saffron": 1.0, "dog_1": 0.5, "cafe": 0.3, "café": 0.3, "服务": 0.9,
               "务器": 0.4, "服": 0.2, "strasse": 0.6, "mysql": 0.7, "서버": 0.5}
    text = "\n".join(" ".join(words) for words in lines)
    got, _ = passage_coverage(weights, text, QueryWords(weights))
    assert got == pytest.approx(_passages_by_hand(weights, text, PASSAGE_CHARS))


def test_common_words_alone_never_make_high(workspace, make_engine):
    """"swim plan" where most notes say both words: a passage holding all of the query used to
    be `high` ("100 % of term weight"); words that common say little whatever share of the
    query they are, so it is `low` now. A word this index holds once is `medium` alone: one
    word, however rare, is what a coincidence gives (another person's history holding "breed"
    was `high`); what sets a passage apart must weigh as much as a word no passage holds
    (search.untrusted)."""
    for i in range(70):
        write(workspace / "memory" / f"2026-01-{i:03d}.md", f"- swim plan {i}: laps in the pool\n")
    write(workspace / "memory" / "2026-03-01.md", "- swim plan for the triathlon: open water\n")
    eng = make_engine()
    eng.run_index()
    res = eng.search("swim plan", explain=True)
    top = res["results"][0]
    assert top["explain"]["confidence"]["termWeight"] < 1.0 and top["band"] == "low"
    rare = eng.search("triathlon", explain=True)["results"][0]
    assert rare["path"] == "memory/2026-03-01.md" and rare["explain"]["confidence"]["own"] >= ranking.band_floor("high")
    assert rare["band"] == "medium" and "weigh less than one word no passage holds" in rare["explain"]["confidence"]["notHigh"]
    assert eng.search("triathlon open water", explain=True)["results"][0]["band"] == "high"


def test_term_coverage_of_common_words_counts_against_one_rare_word():
    w = {"swim": 0.02, "plan": 0.03}
    assert ranking.term_coverage(w, {"swim", "plan"}) == pytest.approx(1.0)
    assert ranking.term_coverage(w, {"swim", "plan"}, least=1.0) == pytest.approx(0.05)
    assert ranking.term_coverage({"triathlon": 0.95}, {"triathlon"}, least=1.0) == pytest.approx(0.95)


def test_a_vector_only_hit_that_scores_0_never_comes_first():
    """The vectors' first hit holds no query word and stands no higher than chance (score 0):
    the first hit with evidence of its own takes first place, the others keep their order. An
    exact identifier's hit, or a first hit with any evidence, is left where it is."""
    from clawmem.engine.search.evidence import no_evidence_last_first
    from clawmem.engine.search.options import Candidate

    def cands(first_score=0.0):
        out = [Candidate(1, vec_rank=1), Candidate(2, vec_rank=2), Candidate(3, kw_rank=1, vec_rank=3), Candidate(4, kw_rank=2)]
        for c, s in zip(out, (first_score, 0.0, 0.4, 0.2)):
            c.score = s
        return out

    got = cands()
    no_evidence_last_first(got, {})
    assert [c.id for c in got] == [3, 1, 2, 4]
    got = cands(first_score=0.05)
    no_evidence_last_first(got, {})
    assert [c.id for c in got] == [1, 2, 3, 4]
    got = cands()
    no_evidence_last_first(got, {1: {"token": "kx7q2vm9", "chunks": 1, "identifier": True}})
    assert [c.id for c in got] == [1, 2, 3, 4]


def test_a_vector_only_hit_never_stands_above_a_rare_word_hit_the_vectors_see_alike():
    """The vectors put a passage holding no query word just above one holding the question's
    rare word, their cosines half a standard deviation apart or less: the rare word decides.
    Far apart, or a common word only, the fusion's order stands."""
    from clawmem.engine.search.evidence import rare_words_over_vectors_alone
    from clawmem.engine.search.options import Candidate

    weights = {"sealant": 0.95, "boat": 0.02}

    def pair(z_top, z_next, terms):
        a, b = Candidate(1, vec_rank=1), Candidate(2, kw_rank=1, vec_rank=2)
        a.vec_z, b.vec_z = z_top, z_next
        a.parts["confidence"], b.parts["confidence"] = {"terms": []}, {"terms": terms}
        return [a, b]

    got = pair(4.2, 3.9, ["sealant"])
    rare_words_over_vectors_alone(got, weights, 400)
    assert [c.id for c in got] == [2, 1]
    for z_next, terms in ((3.0, ["sealant"]), (3.9, ["boat"])):
        got = pair(4.2, z_next, terms)
        rare_words_over_vectors_alone(got, weights, 400)
        assert [c.id for c in got] == [1, 2], (z_next, terms)
