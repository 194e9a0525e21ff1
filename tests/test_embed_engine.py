"""Providers inside the engine: auto selection, fallback, status, degraded search, the
embedding cache and per-model vector tables (SPEC §4, §7)."""

import time

import pytest

from clawmem.engine import events as ev
from clawmem.engine.embeddings import plan
from clawmem.engine.embeddings import remote
from clawmem.engine.embeddings.cache import EmbeddingCache
from clawmem.engine.index.store import Store
from helpers import write

NOTES = {
    "memory/2026-01-01.md": "the cat likes fish and milk\n",
    "memory/2026-01-02.md": "dark mode theme for the editor\n",
    "memory/2026-01-03.md": "flight to tokyo next friday\n",
    "MEMORY.md": "lasagna cheese recipe from my mother\n",
}


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch):
    # real HTTP, real retries; only the waits are shortened
    monkeypatch.setattr(remote, "RETRY", remote.Retry(base=0.005))


@pytest.fixture
def notes(workspace):
    for rel, text in NOTES.items():
        write(workspace / rel, text)
    return workspace


def openai_cfg(server, **more):
    return {"provider": "openai", "remote.baseUrl": server.url + "/v1", "remote.apiKey": server.api_key, **more}


def run(eng, **kw):
    return list(eng.index(**kw))


def finished(events):
    (f,) = [e for e in events if isinstance(e, ev.JobFinished)]
    return f


def vector_counts(eng):
    st = Store(eng.index_path)
    try:
        return {f"{m['provider']}/{m['model']}": st.coverage(m["id"]) for m in st.models()}
    finally:
        st.close()


# ----------------------------------------------------------------------------- selection


def names(p):
    return [c.name for c in p.usable()]


def test_auto_prefers_local_then_keys_in_order(make_engine, tiny_model, monkeypatch):
    eng = make_engine({"provider": "auto"})
    p = plan(eng.cfg)
    assert names(p) == []
    assert p.keyword_reason().startswith("no embedding provider configured")
    monkeypatch.setenv("VOYAGE_API_KEY", "v-key")
    monkeypatch.setenv("GEMINI_API_KEY", "g-key")
    assert names(plan(eng.cfg)) == ["gemini", "voyage"]
    monkeypatch.setenv("OPENAI_API_KEY", "o-key")
    assert names(plan(eng.cfg)) == ["openai", "gemini", "voyage"]
    eng2 = make_engine({"provider": "auto", "local.modelPath": str(tiny_model)})
    assert names(plan(eng2.cfg)) == ["local", "openai", "gemini", "voyage"]


def test_auto_never_downloads_and_says_why(make_engine):
    eng = make_engine({"provider": "auto", "local.modelPath": "hf:someone/some-repo/model.gguf"})
    p = plan(eng.cfg)
    assert names(p) == []
    local = p.candidates[0]
    assert local.reason == 'local: hf:someone/some-repo/model.gguf is not downloaded yet (set provider = "local" to fetch it)'


def test_explicit_provider_then_fallback_list(make_engine, tiny_model, monkeypatch):
    monkeypatch.setenv("VOYAGE_API_KEY", "v-key")
    eng = make_engine({"provider": "openai", "remote.apiKey": "sk-x", "fallback": ["voyage", "local"], "local.modelPath": str(tiny_model)})
    assert names(plan(eng.cfg)) == ["openai", "voyage", "local"]


def test_explicit_provider_missing_key_is_keyword_only_and_says_so(notes, make_engine):
    eng = make_engine({"provider": "openai"})
    fin = finished(run(eng))
    assert fin.ok and fin.chunks_embedded == 0
    st = eng.status()
    assert st["provider"]["configured"] == "openai"
    assert st["provider"]["active"] is None
    assert st["provider"]["reason"] == "openai: no API key (set remote.apiKey or OPENAI_API_KEY)"
    res = eng.search("tokyo flight")
    assert res["mode"] == "keyword"
    assert res["provider"] is None
    assert res["reason"] == "openai: no API key (set remote.apiKey or OPENAI_API_KEY)"
    assert res["results"][0]["path"] == "memory/2026-01-03.md"


def test_provider_none_is_keyword_only_by_choice(notes, make_engine):
    eng = make_engine({"provider": "none"})
    run(eng)
    res = eng.search("cat")
    assert res["mode"] == "keyword" and "keyword-only by choice" in res["reason"]


# ----------------------------------------------------------------------------- hybrid over HTTP


def test_openai_index_and_hybrid_search(notes, make_engine, embed_server):
    eng = make_engine(openai_cfg(embed_server))
    fin = finished(run(eng))
    assert fin.chunks_embedded == 4
    assert vector_counts(eng) == {"openai/text-embedding-3-small": 4}
    res = eng.search("dark theme editor")
    assert res["mode"] == "hybrid"
    assert (res["provider"], res["model"], res["fallback"]) == ("openai", "text-embedding-3-small", None)
    assert res["results"][0]["path"] == "memory/2026-01-02.md"
    assert 0 <= min(r["score"] for r in res["results"]) <= max(r["score"] for r in res["results"]) <= 1
    st = eng.status()
    assert st["provider"]["active"] == "openai" and st["provider"]["model"] == "text-embedding-3-small"
    assert st["provider"]["reason"] is None
    assert embed_server.api_key not in str(st)
    # the query went to the server as an OpenAI query
    assert embed_server.requests[-1]["body"] == {"model": "text-embedding-3-small", "input": ["dark theme editor"]}


def test_provider_breaking_mid_use_degrades_to_keywords_and_says_why(notes, make_engine, embed_server):
    eng = make_engine(openai_cfg(embed_server))
    eng.providers.query_retry_after = 0
    run(eng)
    assert eng.search("tokyo")["mode"] == "hybrid"
    embed_server.always = 500
    before = len(embed_server.requests)
    res = eng.search("tokyo")
    assert len(embed_server.requests) - before == 4  # retried, then gave up
    assert res["mode"] == "keyword"
    assert res["results"][0]["path"] == "memory/2026-01-03.md"
    reason = "openai: 500 internal error (gave up after 4 attempts)"
    assert res["reason"] == reason
    assert res["fallback"] == {"from": "openai", "reason": f"query embedding failed: {reason}"}
    # the server recovers: hybrid again
    embed_server.always = None
    assert eng.search("tokyo")["mode"] == "hybrid"


def test_failed_provider_is_not_retried_on_every_keystroke(notes, make_engine, embed_server):
    eng = make_engine(openai_cfg(embed_server))
    run(eng)
    embed_server.always = 401
    first = eng.search("tokyo")
    n = len(embed_server.requests)
    second = eng.search("tokyo fl")
    assert len(embed_server.requests) == n  # answered from keywords at once
    assert first["reason"] == second["reason"] == "openai: 401 invalid api key (check remote.apiKey or OPENAI_API_KEY)"


def test_query_timeout_falls_back_to_keywords(notes, make_engine, embed_server):
    run(make_engine(openai_cfg(embed_server)))
    eng = make_engine(openai_cfg(embed_server, **{"remote.timeoutSeconds": 0.3}))
    embed_server.always = "hang"
    embed_server.hang_seconds = 2.0
    t0 = time.monotonic()
    res = eng.search("tokyo")
    assert time.monotonic() - t0 < 1.5
    assert res["mode"] == "keyword" and "timeout" in res["reason"]


def test_bad_vectors_are_not_stored(workspace, make_engine, embed_server):
    write(workspace / "memory" / "a.md", "good note about cats\n")
    write(workspace / "memory" / "b.md", "broken WRONGDIM note\n")
    write(workspace / "memory" / "c.md", "broken NANVEC note\n")
    write(workspace / "memory" / "d.md", "broken ZEROVEC note\n")
    eng = make_engine(openai_cfg(embed_server))
    events = run(eng)
    warnings = [e.message for e in events if isinstance(e, ev.Warning)]
    assert "openai returned no usable vector for 3 chunks (wrong size, NaN or zeros); they stay keyword-only" in warnings
    assert vector_counts(eng) == {"openai/text-embedding-3-small": 1}
    # still found by keywords
    assert eng.search("NANVEC")["results"][0]["path"] == "memory/c.md"


def test_over_limit_chunk_is_split_for_the_provider(workspace, make_engine, embed_server):
    long_line = " ".join(f"word{i}" for i in range(3000))  # one 26 kB line → chunks of ~1.6 kB
    write(workspace / "memory" / "long.md", long_line + "\n")
    eng = make_engine(openai_cfg(embed_server, **{"chunking.tokens": 4000, "chunking.overlap": 0}))
    fin = finished(run(eng))
    assert fin.chunks_embedded >= 1
    assert all(len(t.encode()) <= 8000 for t in embed_server.inputs())
    assert sum(len(t) for t in embed_server.inputs()) >= len(long_line)  # nothing truncated


# ----------------------------------------------------------------------------- fallback and coverage


def test_transient_fallback_uses_its_own_table_without_rebuild(notes, make_engine, embed_server, tiny_model):
    cfg = openai_cfg(embed_server, fallback=["local"], **{"local.modelPath": str(tiny_model)})
    eng = make_engine(cfg)
    embed_server.always = 503
    events = run(eng)
    switched = [e for e in events if isinstance(e, ev.ProviderSwitched)]
    assert [(e.from_provider, e.to_provider) for e in switched] == [("openai", "local")]
    assert switched[0].reason == "openai: 503 overloaded (gave up after 4 attempts)"
    assert finished(events).job == "index"  # no rebuild
    assert vector_counts(eng) == {"local/tiny-bert": 4}
    # a new process searching: the local model covers the index, so it serves, and says so
    eng2 = make_engine(cfg)
    embed_server.always = None
    res = eng2.search("cat fish")
    assert res["mode"] == "hybrid" and (res["provider"], res["model"]) == ("local", "tiny-bert")
    # the real reason, recorded by the index run, not a guess from the vector counts (issue 9)
    assert res["fallback"] == {"from": "openai", "reason": "openai: 503 overloaded (gave up after 4 attempts)"}
    assert res["results"][0]["path"] == "memory/2026-01-01.md"
    # the primary is back: the next index fills its own table; nothing is rebuilt or re-embedded locally
    events = run(eng2)
    assert finished(events).job == "index"
    assert vector_counts(eng2) == {"local/tiny-bert": 4, "openai/text-embedding-3-small": 4}
    res = eng2.search("cat fish")
    assert (res["provider"], res["fallback"]) == ("openai", None)


def test_search_uses_the_model_covering_the_index_best(notes, make_engine, embed_server, tiny_model):
    # openai cannot embed one note (the server answers zeros for it); the local model embeds all
    write(notes / "memory" / "2026-01-04.md", "garden flower rain ZEROVEC\n")
    cfg = openai_cfg(embed_server, fallback=["local"], **{"local.modelPath": str(tiny_model)})
    run(make_engine({"provider": "local", "local.modelPath": str(tiny_model)}))
    run(make_engine(cfg))
    assert vector_counts(make_engine(cfg)) == {"local/tiny-bert": 5, "openai/text-embedding-3-small": 4}
    res = make_engine(cfg).search("garden flower")
    assert (res["mode"], res["provider"], res["model"]) == ("hybrid", "local", "tiny-bert")
    assert res["fallback"] == {"from": "openai", "reason": "openai has fewer vectors indexed than local"}
    assert res["results"][0]["path"] == "memory/2026-01-04.md"


def test_query_failure_falls_back_to_the_next_model_with_vectors(notes, make_engine, embed_server, tiny_model):
    cfg = openai_cfg(embed_server, fallback=["local"], **{"local.modelPath": str(tiny_model)})
    eng = make_engine(cfg)
    run(eng)  # openai
    run(make_engine({"provider": "local", "local.modelPath": str(tiny_model)}))  # and local
    embed_server.always = 401
    res = eng.search("cat fish")
    assert res["mode"] == "hybrid" and res["provider"] == "local"
    assert res["fallback"] == {"from": "openai", "reason": "query embedding failed: openai: 401 invalid api key (check remote.apiKey or OPENAI_API_KEY)"}


def test_status_names_the_fallback_when_the_primary_cannot_be_built(notes, make_engine, tiny_model):
    eng = make_engine({"provider": "openai", "fallback": ["local"], "local.modelPath": str(tiny_model)})
    run(eng)
    st = eng.status()
    assert (st["provider"]["active"], st["provider"]["model"]) == ("local", "tiny-bert")
    why = "openai: no API key (set remote.apiKey or OPENAI_API_KEY)"
    assert st["provider"]["fallback"] == {"from": "openai", "reason": why}
    res = eng.search("cat")
    assert res["mode"] == "hybrid" and res["provider"] == "local"
    assert res["fallback"] == {"from": "openai", "reason": why}


# ----------------------------------------------------------------------------- the embedding cache


def test_unchanged_text_is_never_embedded_twice(notes, make_engine, embed_server):
    eng = make_engine(openai_cfg(embed_server))
    run(eng)
    assert sorted(embed_server.inputs()) == sorted(t.removesuffix("\n") for t in NOTES.values())  # a chunk's lines, no final newline
    embed_server.reset()
    run(eng, force=True)  # full rebuild into a new file
    assert embed_server.inputs() == []
    eng.close()
    eng.index_path.unlink()  # the index is gone; the cache is not
    run(eng)
    assert embed_server.inputs() == []
    assert vector_counts(eng) == {"openai/text-embedding-3-small": 4}
    # only the changed text goes out
    write(notes / "memory" / "2026-01-02.md", "light mode theme for the editor\n")
    run(eng)
    assert embed_server.inputs() == ["light mode theme for the editor"]


def test_cache_is_keyed_by_endpoint(notes, make_engine, embed_server):
    run(make_engine(openai_cfg(embed_server)))
    embed_server.reset()
    other = make_engine(openai_cfg(embed_server, **{"remote.headers": {"X-Tenant": "b"}}))
    run(other)
    assert len(embed_server.inputs()) == 4  # another server identity: its own vectors


def test_cache_evicts_least_recently_used(notes, make_engine, embed_server):
    eng = make_engine(openai_cfg(embed_server, **{"cache.maxEntries": 3}))
    run(eng)
    cache = EmbeddingCache(max_entries=3)
    try:
        assert cache.count() == 3
    finally:
        cache.close()


def test_cache_lru_order(tmp_path):
    import numpy as np

    cache = EmbeddingCache(tmp_path / "c.sqlite", max_entries=3)
    key = ("openai", "m", "e")
    v = np.ones(4, dtype=np.float32)
    for h in ("a", "b", "c"):
        cache.put_many(key, [(h, v)])
        time.sleep(0.002)
    cache.get_many(key, ["a"])  # a is used again: b is now the oldest
    time.sleep(0.002)
    cache.put_many(key, [("d", v)])
    assert cache.evict() == 1
    assert sorted(cache.get_many(key, ["a", "b", "c", "d"])) == ["a", "c", "d"]
    cache.close()


# ----------------------------------------------------------------------------- warm-up


def test_the_mcp_warm_up_never_asks_a_remote_provider(notes, make_engine, embed_server):
    """`clawmem mcp` warms up while its agent starts: the vectors go into memory, but a remote
    provider gets no request (it would spend the user's quota, and a failure would hold the
    provider back from the agent's first search); that search is hybrid and asks it once."""
    eng = make_engine(openai_cfg(embed_server), persistent=True)
    run(eng)
    from clawmem.mcp.server import _warm

    before = len(embed_server.requests)
    _warm(eng)
    assert len(embed_server.requests) == before
    assert eng.index_reader._per_model  # the vectors are in memory already
    res = eng.search("cat fish")
    assert res["mode"] == "hybrid" and len(embed_server.requests) == before + 1


def test_the_warm_up_starts_a_local_model(notes, make_engine, tiny_model):
    eng = make_engine({"provider": "local", "local.modelPath": str(tiny_model), "local.residentMinutes": 0}, persistent=True)
    run(eng)
    eng.close()
    eng = make_engine({"provider": "local", "local.modelPath": str(tiny_model), "local.residentMinutes": 0}, persistent=True)
    eng.warm_up()
    host = eng.providers.built["local"]._model_host
    assert host is not None and host.pid is not None
