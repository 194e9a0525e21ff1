"""Hybrid search end to end on a tiny real model: the CLI, the JSON shape, fusion modes, one
score scale, and rare exact tokens (SPEC §3, §5, §7)."""

import json

import pytest

from helpers import run_cli, write

TOPICS = [
    "the server crash happened after the deploy, the server log shows an error",
    "server error again: the deploy crashed the database server",
    "crash report from the server: network error during deploy",
    "the team plan for the server deploy and the crash fix",
    "backup of the server database before the deploy",
    "error in the server config after the update",
    "dark mode theme for the editor and the terminal",
    "flight to tokyo and hotel in paris",
    "lasagna cheese recipe for dinner",
    "the cat likes fish and milk",
]


@pytest.fixture
def corpus(workspace):
    for i, text in enumerate(TOPICS):
        write(workspace / "memory" / f"2026-01-{i + 1:02d}.md", text + "\n")
    # the one chunk with the rare id: its words say nothing about servers or crashes
    write(workspace / "memory" / "2026-02-01.md", "commit a828e60 changed the font of the book\n")
    return workspace


def local_cfg(tiny_model, **more):
    return {"provider": "local", "local.modelPath": str(tiny_model), **more}


def test_cli_index_then_hybrid_search_json(corpus, tiny_model, tmp_path):
    cfg = write(tmp_path / "config.toml", f'provider = "local"\n[local]\nmodelPath = "{tiny_model}"\n')
    base = ("--workspace", str(corpus), "--config", str(cfg))
    out = run_cli(*base, "index")
    assert out.returncode == 0, out.stderr
    assert "hybrid search with local (tiny-bert)" in out.stderr
    res = run_cli(*base, "search", "tokyo", "flight", "--json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["mode"] == "hybrid"
    assert (data["provider"], data["model"], data["fallback"]) == ("local", "tiny-bert", None)
    assert set(data) >= {"results", "mode", "provider", "model", "fallback", "hidden", "dateRange", "stale"}
    assert set(data["hidden"]) == {"count", "bestScore"}
    top = data["results"][0]
    assert top["path"] == "memory/2026-01-08.md"
    assert top["citation"] == f"Source: memory/2026-01-08.md#L{top['startLine']}-L{top['endLine']}"
    assert all(0 <= r["score"] <= 1 for r in data["results"])
    text = run_cli(*base, "search", "tokyo", "flight")
    assert text.stdout.splitlines()[0] == "# hybrid (local/tiny-bert)"
    st = json.loads(run_cli(*base, "status", "--json").stdout)
    assert (st["provider"]["active"], st["provider"]["model"], st["provider"]["reason"]) == ("local", "tiny-bert", None)
    assert st["vector"]["models"] == [{"provider": "local", "model": "tiny-bert", "dims": 64, "vectors": 11}]


@pytest.mark.parametrize("fusion", ["relative", "weighted", "rrf"])
@pytest.mark.parametrize("query", ["a828e60", "server crash a828e60", "what broke the server in a828e60"])
def test_rare_exact_token_is_in_the_top_3(corpus, make_engine, tiny_model, fusion, query):
    eng = make_engine(local_cfg(tiny_model, **{"query.hybrid.fusion": fusion}))
    list(eng.index())
    res = eng.search(query)
    assert res["mode"] == "hybrid"
    top3 = [r["path"] for r in res["results"][:3]]
    assert "memory/2026-02-01.md" in top3, res["results"]


@pytest.mark.parametrize("fusion", ["relative", "weighted", "rrf"])
def test_scores_are_on_one_scale(corpus, make_engine, tiny_model, fusion):
    eng = make_engine(local_cfg(tiny_model, **{"query.hybrid.fusion": fusion}))
    list(eng.index())
    res = eng.search("lasagna recipe", explain=True, show_hidden=True)
    assert res["results"][0]["path"] == "memory/2026-01-09.md"
    scores = [r["score"] for r in res["results"]]
    assert all(0 <= s <= 1 for s in scores) and scores == sorted(scores, reverse=True)
    ex = res["results"][0]["explain"]
    assert ex["fusion"]["method"] == fusion
    assert ex["vector"]["rank"] == 1 and ex["keyword"]["rank"] == 1


def test_keyword_and_vector_candidates_both_count(corpus, make_engine, tiny_model):
    # "hotel" only matches by keyword in one note; "cat" and "fish" only by words the model knows
    eng = make_engine(local_cfg(tiny_model))
    list(eng.index())
    res = eng.search("fish cat", explain=True)
    assert res["results"][0]["path"] == "memory/2026-01-10.md"
    assert "vector" in res["results"][0]["explain"] and "keyword" in res["results"][0]["explain"]


def test_min_score_hides_and_counts(corpus, make_engine, tiny_model):
    eng = make_engine(local_cfg(tiny_model))
    list(eng.index())
    res = eng.search("lasagna", min_score=0.99)
    shown = len(res["results"])
    assert res["hidden"]["count"] >= 1 and res["hidden"]["bestScore"] < 0.99
    everything = eng.search("lasagna", min_score=0.99, show_hidden=True)
    assert len(everything["results"]) >= shown + 1


def test_max_results(corpus, make_engine, tiny_model):
    eng = make_engine(local_cfg(tiny_model))
    list(eng.index())
    assert len(eng.search("server", max_results=2)["results"]) == 2


def test_vector_only_when_hybrid_is_off(corpus, make_engine, tiny_model):
    eng = make_engine(local_cfg(tiny_model, **{"query.hybrid.enabled": False}))
    list(eng.index())
    res = eng.search("tokyo flight")
    assert res["mode"] == "vector" and res["results"][0]["path"] == "memory/2026-01-08.md"


def test_persistent_engine_searches_in_memory(corpus, make_engine, tiny_model):
    eng = make_engine(local_cfg(tiny_model), persistent=True)
    list(eng.index())
    one = eng.search("tokyo flight")
    write(corpus / "memory" / "2026-03-01.md", "tokyo flight moved to monday\n")
    list(eng.index())
    two = eng.search("tokyo flight")  # the in-memory vectors follow the index
    assert one["mode"] == two["mode"] == "hybrid"
    assert "memory/2026-03-01.md" in [r["path"] for r in two["results"][:2]]


def test_product_beside_the_keyword_pass_changes_nothing(corpus, make_engine, tiny_model, monkeypatch):
    """A big in-memory matrix has its product started on the helper thread before FTS5 runs:
    the results (order, scores, lines) are those of the one-thread search."""
    from clawmem.engine import search

    eng = make_engine(local_cfg(tiny_model), persistent=True)
    list(eng.index())
    queries = ("tokyo flight", "server crash deploy", "a828e60")
    alone = [eng.search(q, explain=True)["results"] for q in queries]
    started = []
    real = search.Product
    monkeypatch.setattr(real, "BLOCK", 3)  # several blocks for the two threads to share
    monkeypatch.setattr(search, "Product", lambda mat, q: started.append(len(mat)) or real(mat, q))
    monkeypatch.setattr(search.vectors, "SPLIT_ROWS", 2)  # "big": every matrix here
    beside = [eng.search(q, explain=True)["results"] for q in queries]
    assert started[0] == 11 and len(started) >= 3  # the whole matrix, once per search (then small ones)
    assert beside == alone


def test_a_busy_helper_leaves_the_product_to_the_caller():
    """When the helper thread is taken (another search's product), the caller computes every
    block itself and gets the right answer instead of waiting."""
    import threading

    import numpy as np

    from clawmem.engine import search

    rng = np.random.default_rng(5)
    mat = rng.standard_normal((60_001, 16)).astype(np.float32)
    q = rng.standard_normal(16).astype(np.float32)
    release = threading.Event()
    blocker = search.vectors._helper_thread().submit(release.wait, 30)
    try:
        product = search.Product(mat, q)
        product._work()  # the caller's share: every block, with the helper still blocked
        assert np.allclose(product.out, mat @ q, atol=1e-4)
        assert not product.helper.done()
    finally:
        release.set()
    blocker.result()
    assert np.allclose(product.result(), mat @ q, atol=1e-4)  # the helper then finds nothing left


def test_exact_tokens_look_like_identifiers():
    from clawmem.engine.search import exact_tokens

    q = "what broke in a828e60 with OPENAI_API_KEY and ENOENT, ticket 4711, v2 of the API"
    # a bare number (a year, a count, 4711) names no one thing: "June 2022" is in anyone's
    # memory, and it made two `high` hits on unrelated greetings (issue 42; it used to count)
    assert exact_tokens(q) == ["a828e60", "openai_api_key", "enoent"]
    assert exact_tokens("order 88314207 in 2022") == ["88314207"]  # a long number is a code
    assert exact_tokens("dark mode theme") == []


def test_pinned_hit_explains_itself(corpus, make_engine, tiny_model):
    eng = make_engine(local_cfg(tiny_model, **{"query.hybrid.fusion": "weighted"}))
    list(eng.index())
    res = eng.search("server crash a828e60", explain=True)
    hit = next(r for r in res["results"] if r["path"] == "memory/2026-02-01.md")
    assert hit["explain"]["exact"]["token"] == "a828e60" and hit["explain"]["exact"]["chunks"] == 1


@pytest.mark.parametrize("rows", [0, 7, 60_001])
def test_matvec_matches_numpy(rows):
    import numpy as np

    from clawmem.engine.search import matvec

    rng = np.random.default_rng(rows)
    mat = rng.standard_normal((rows, 48)).astype(np.float32)
    q = rng.standard_normal(48).astype(np.float32)
    assert np.allclose(matvec(mat, q), mat @ q, atol=1e-4)


def test_a_one_shot_search_compares_vectors_as_numpy_would():
    """A one-shot search sums its few hundred products in plain Python (no numpy import): the
    similarities and the reference's mean and spread agree with numpy's, with an array('f')
    query vector as the local model returns it, and with the fleet reading the same rows."""
    from array import array

    import numpy as np

    from clawmem.engine.search import matvec
    from clawmem.engine.search.vectors import dots, mean_std, median

    rng = np.random.default_rng(33)
    mat = rng.standard_normal((300, 384)).astype(np.float32)
    q = rng.standard_normal(384).astype(np.float32)
    blobs = [row.tobytes() for row in mat]
    sims = dots(blobs, array("f", q.tobytes()))
    assert np.allclose(sims, mat @ q, atol=1e-4) and sims == dots(blobs, q)
    assert np.allclose(mean_std(sims), ((mat @ q).mean(), (mat @ q).std()), atol=1e-5)
    assert median(sims) == float(np.median(sims)) and median(sims[:7]) == float(np.median(sims[:7]))
    assert np.allclose(matvec(blobs, array("f", q.tobytes())), mat @ q, atol=1e-4)


def test_line_tokens_match_the_index_tokenizer():
    from clawmem.engine.search import line_tokens
    from clawmem.engine.text import index_tokens

    for line in ["Hello World_1 a828e60", "Café “quoted” — naïve STRASSE Straße", "今天玩成语接龙游戏 and 서버에서 ok",
                 "㈠ parenthesised ideograph", "ｆｕｌｌ ｗｉｄｔｈ ＡＢＣ", "", "  - **User:** I'd like 3.5 kg"]:
        assert line_tokens(line) == index_tokens(line), line
