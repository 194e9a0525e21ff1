"""The engine's parts each do one job and work alone, joined only by Engine's constructor; the
operations the fronts used to assemble themselves (the journal caught up, a restore, "do
vectors serve searches") are engine methods; and every result type prints as the JSON the
fronts have always printed."""

from __future__ import annotations

import json

import pytest

from clawmem.engine import (AccessDenied, Engine, FileText, Hit, Restored, SearchResults, Status, events as ev,
                            load_config, vectors_serving)
from clawmem.engine.events import JobFinished as IndexReport
from clawmem.engine.index.freshness import Freshness
from clawmem.engine.files.history import History
from clawmem.engine.index.jobs import IndexJobs
from clawmem.engine.files.reading import MemoryFiles
from clawmem.engine.embeddings.providers import Providers
from clawmem.engine.index.reader import IndexReader
from clawmem.engine.search.searcher import Searcher
from helpers import write


def keyword_cfg(workspace):
    return load_config(None, workspace=str(workspace), overrides={"provider": "none"})


def test_the_parts_index_and_search_without_the_facade(workspace):
    write(workspace / "memory" / "2026-02-10.md", "# birds\n\nthe herons came back to the lake\n")
    cfg = keyword_cfg(workspace)
    reader = IndexReader(cfg)
    providers = Providers(cfg)
    freshness = Freshness(cfg, reader)
    assert reader.reader() is None and freshness.freshness()["filesBehind"] == 1
    finished = [e for e in IndexJobs(cfg, reader, providers, freshness).index() if isinstance(e, ev.JobFinished)]
    assert finished[0].files_indexed == 1 and not freshness.seen_behind()
    asked = []
    searcher = Searcher(cfg, reader, providers, freshness, on_stale=lambda: asked.append("sync"))
    res = searcher.search("herons")
    assert isinstance(res, SearchResults) and res.keyword_only
    assert [h["path"] for h in res.hits] == ["memory/2026-02-10.md"] and not res["stale"]
    hit = res.hits[0]  # typed: its fields by name, and as_json() the very JSON the tools print
    assert isinstance(hit, Hit) and (hit.path, hit.start_line, hit.source) == ("memory/2026-02-10.md", 1, "memory")
    assert hit.end_line >= hit.start_line and "herons" in hit.snippet and hit.score == res["results"][0]["score"]
    assert [h.as_json() for h in res.hits] == res.as_json()["results"]
    assert json.dumps(hit.as_json()) == json.dumps(res["results"][0])
    write(workspace / "memory" / "2026-02-11.md", "# more\n\nherons again\n")
    assert searcher.search("herons")["stale"] and asked == ["sync"]  # told, never waited for
    got = MemoryFiles(cfg).get("memory/2026-02-10.md", 3, 1)
    assert isinstance(got, FileText) and got == {"path": "memory/2026-02-10.md", "text": "the herons came back to the lake"}
    reader.close()


def test_results_print_as_the_json_they_always_were(make_engine, workspace):
    write(workspace / "MEMORY.md", "# Memory\n\n- the herons nest by the lake\n")
    eng = make_engine()
    report = eng.run_index()
    assert isinstance(report, IndexReport)
    assert report.as_json() == {"files": 1, "removed": 0, "unchanged": 0, "embedded": 0, "seconds": round(report.seconds, 3)}
    res = eng.search("herons")
    assert type(res.as_json()) is dict and json.dumps(res) == json.dumps(res.as_json())
    assert res["results"][0]["citation"].startswith("Source: MEMORY.md#L")  # indexing as before still works
    st = eng.status()
    assert isinstance(st, Status) and json.dumps(st.as_json()) == json.dumps(dict(st))


def test_whether_vectors_serve_is_decided_once(make_engine, workspace, embed_server):
    write(workspace / "MEMORY.md", "# Memory\n\n- the herons nest by the lake\n")
    keyword = make_engine()
    keyword.run_index()
    st = keyword.status()
    assert not st.vectors_serving and not vectors_serving(json.loads(json.dumps(st))["provider"])
    hybrid = make_engine({"provider": "openai", "remote.baseUrl": embed_server.url + "/v1", "remote.apiKey": embed_server.api_key})
    assert not hybrid.status().vectors_serving  # configured, but no vector indexed yet
    hybrid.run_index()
    st = hybrid.status()
    assert st.vectors_serving and vectors_serving(json.loads(json.dumps(st))["provider"])
    assert hybrid.search("herons")["mode"] == "hybrid"


def test_history_and_restore_are_engine_operations(make_engine, workspace):
    log = write(workspace / "memory" / "2026-03-10.md", "# day\n\n- first thought\n")
    eng = make_engine()
    eng.run_index()
    log.write_text("placeholder\n", encoding="utf-8")  # an outside overwrite no sync has seen
    changes = eng.history("memory/2026-03-10.md")  # caught up first: the overwrite is there
    assert [c.after.writer for c in changes] == ["outside"]
    first = changes[0].before.id
    restored = eng.restore("memory/2026-03-10.md", first)
    assert isinstance(restored, Restored) and log.read_text() == "# day\n\n- first thought\n"
    assert list(restored.as_json()) == ["path", "restored", "version", "undo"]
    assert restored["restored"] == first and restored["undo"] == changes[0].after.id
    eng.restore("memory/2026-03-10.md", restored["undo"])  # a restore is itself undoable
    assert log.read_text() == "placeholder\n"
    with pytest.raises(ValueError, match="no version 999"):
        eng.restore("memory/2026-03-10.md", 999)
    with pytest.raises(AccessDenied):
        eng.restore("../elsewhere.md", first)


def test_undoing_one_hunk_keeps_the_other_lines(make_engine, workspace):
    lines = [f"line {i}\n" for i in range(20)]
    log = write(workspace / "memory" / "2026-03-11.md", "".join(lines))
    eng = make_engine()
    eng.run_index()
    log.write_text("".join(["FIRST\n", *lines[1:19], "LAST\n"]), encoding="utf-8")
    (change,) = eng.history("memory/2026-03-11.md")
    assert len(change.hunks()) == 2
    eng.undo_hunk("memory/2026-03-11.md", change.before.id, change.after.id, 1)
    assert log.read_text() == "".join(["FIRST\n", *lines[1:]])


def test_the_journal_opens_caught_up_only_when_asked(workspace):
    cfg = keyword_cfg(workspace)
    write(workspace / "MEMORY.md", "# Memory\n")
    history = History(cfg, MemoryFiles(cfg))
    with history.open(catch_up=False) as jr:
        assert jr.versions() == []
    with history.open() as jr:
        assert [v.path for v in jr.versions()] == ["MEMORY.md"]


def test_reloading_the_config_rewires_every_part(make_engine, workspace, tmp_path):
    eng = make_engine()
    parts = (eng.index_reader, eng.providers, eng.searcher, eng.jobs, eng.health)
    other = tmp_path / "other"
    (other / "memory").mkdir(parents=True)
    write(other / "MEMORY.md", "# Memory\n\n- owls\n")
    eng.reload_config(load_config(None, workspace=str(other), overrides={"provider": "none"}))
    assert all(new is not old for new, old in zip((eng.index_reader, eng.providers, eng.searcher, eng.jobs, eng.health), parts))
    assert eng.searcher.cfg is eng.jobs.cfg is eng.health.cfg is eng.cfg and eng.workspace == other
    eng.run_index()
    assert [h["path"] for h in eng.search("owls")["results"]] == ["MEMORY.md"]
    assert isinstance(eng, Engine)


def test_a_search_request_travels_whole_and_means_what_its_keywords_mean(make_engine, workspace):
    """What a front asks for is one SearchRequest: the same search as its fields given as
    keywords, checked where it becomes Options (a bad value names its option), never changed."""
    from clawmem.engine import SearchRequest

    for day in ("2026-02-10", "2026-02-11", "2026-03-01"):
        write(workspace / "memory" / f"{day}.md", f"# {day}\n\nthe herons came back on {day}\n")
    eng = make_engine()
    eng.run_index()
    ask = SearchRequest(max_results=2, after="2026-02-11", explain=True, private=True, stale_check=False)
    by_value = eng.search("herons", ask)
    by_keywords = eng.search("herons", max_results=2, after="2026-02-11", explain=True, private=True, stale_check=False)
    timeless = lambda res: {k: v for k, v in res.as_json().items() if k != "timingMs"}  # noqa: E731
    assert timeless(by_value) == timeless(by_keywords)
    assert [h["path"] for h in by_value["results"]] and all(h["path"] >= "memory/2026-02-11.md" for h in by_value["results"])
    assert len(by_value["results"]) <= 2 and "explain" in by_value["results"][0]
    assert ask.after == "2026-02-11" and ask.max_results == 2  # the engine's dates went into Options, not here
    with pytest.raises(ValueError, match="min-score"):
        eng.search("herons", SearchRequest(min_score=2))
    with pytest.raises(ValueError, match="max-results"):
        eng.options(SearchRequest(max_results=0))


def test_the_eta_leaves_out_the_start_up_before_the_first_items(monkeypatch):
    """A model that takes 0.4 s to load, then 10 items per 0.1 s: the ETA after 20 of 100 is
    0.8 s (it read ~1.6 s, the load counted as if it were the pace). The clock is the test's,
    so a loaded machine cannot stretch a sleep into another pace."""
    import types

    from clawmem.engine import events

    clock = [1000.0]
    monkeypatch.setattr(events, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    meter = events.RateMeter(100)
    assert meter.progress("embed", 0).eta is None
    clock[0] += 0.5  # loading, then the first ten items
    first = meter.progress("embed", 10)
    assert first.eta is None  # one report cannot tell the pace from the start-up
    clock[0] += 0.1
    second = meter.progress("embed", 20)
    assert second.eta == pytest.approx(0.8) and second.rate == pytest.approx(100), (second.eta, second.rate)
