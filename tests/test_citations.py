"""Citations never point past the end of a file: every result's lines exist (SPEC §2, §7)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from clawmem.engine import Engine, load_config
from clawmem.engine.index.chunking import chunk_markdown
from clawmem.engine.index.store import Store
from helpers import write


def line_count(text: str) -> int:
    """Lines as an editor (and memory_get) numbers them: a final newline ends the last line."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


WORDS = st.sampled_from(["owl", "heron", "", " ", "kestrel kestrel", "x" * 700, "# Heading", "- item owl", "你好 owl"])
FILES = st.lists(WORDS, min_size=0, max_size=120).map("\n".join).flatmap(
    lambda body: st.sampled_from(["", "\n", "\n\n", " \n"]).map(lambda end: body + end))


@settings(max_examples=300, deadline=None)
@given(FILES, st.integers(16, 120), st.integers(0, 40))
def test_chunks_stay_inside_the_file(text, tokens, overlap):
    n = line_count(text)
    for c in chunk_markdown(text, tokens, min(overlap, tokens - 1)):
        assert 1 <= c.start_line <= c.end_line
        if c.text.strip():
            assert c.end_line <= n, (c, n)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(FILES, min_size=1, max_size=4), st.sampled_from([(400, 80), (40, 10), (16, 0)]))
def test_every_search_result_cites_lines_that_exist(files, chunking):
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        texts = {}
        for i, text in enumerate(files):
            rel = f"memory/2026-01-0{i + 1}.md"
            write(ws / rel, text + "owl\n" if i % 2 else "owl " + text)  # every file matches
            texts[rel] = (ws / rel).read_text(encoding="utf-8")
        cfg = load_config(None, workspace=str(ws), overrides={
            "provider": "none", "store.path": str(Path(tmp) / "index.sqlite"), "sync.onSearch": False,
            "chunking.tokens": chunking[0], "chunking.overlap": chunking[1]})
        eng = Engine(cfg)
        try:
            list(eng.index())
            res = eng.search("owl", max_results=50, min_score=0)
            assert res["results"]
            for r in res["results"]:
                n = line_count(texts[r["path"]])
                assert 1 <= r["startLine"] <= r["endLine"] <= n, (r["path"], r["startLine"], r["endLine"], n)
                assert r["citation"].endswith(f"#L{r['startLine']}-L{r['endLine']}")
        finally:
            eng.close()


def test_a_91_line_file_is_cited_up_to_line_91(workspace, make_engine):
    write(workspace / "memory" / "2026-02-01.md", "".join(f"line {i} about owls\n" for i in range(1, 92)))
    eng = make_engine({"chunking.tokens": 100, "chunking.overlap": 20})
    list(eng.index())
    results = eng.search("owls", max_results=50, min_score=0, explain=True)["results"]
    # the chunks reach the last line; a citation (the matched lines) stays inside its chunk
    assert max(r["explain"]["chunk"]["endLine"] for r in results) == 91
    assert all(r["explain"]["chunk"]["startLine"] <= r["startLine"] <= r["endLine"] <= r["explain"]["chunk"]["endLine"] for r in results)


def test_an_index_made_before_the_fix_is_corrected_in_place(workspace, make_engine):
    """Rows an older clawmem wrote (the last chunk ending on the empty line after the final
    newline) are fixed once by the next index, keeping their ids and vectors."""
    write(workspace / "memory" / "2026-02-01.md", "".join(f"line {i} about owls\n" for i in range(1, 92)))
    write(workspace / "MEMORY.md", "owls\n\n")  # a real empty last line: line 2 exists
    eng = make_engine({"chunking.tokens": 100, "chunking.overlap": 20})
    list(eng.index())
    st = Store(eng.index_path, write=True)
    before = st.conn.execute("select id, end_line, text from chunks order by id").fetchall()
    last = {p: i for p, i in st.conn.execute("select path, max(id) from chunks group by path")}
    for cid in last.values():  # as the old chunker left them: one more line, one more newline
        st.conn.execute("update chunks set end_line = end_line + 1, text = text || char(10) where id = ?", (cid,))
    st.conn.execute("delete from meta where key = 'lines'")
    st.close()
    assert max(r["explain"]["chunk"]["endLine"] for r in eng.search("owls", max_results=50, min_score=0, explain=True)["results"]) == 92
    list(eng.index())
    st = Store(eng.index_path)
    assert st.conn.execute("select id, end_line, text from chunks order by id").fetchall() == before
    st.close()
    assert max(r["explain"]["chunk"]["endLine"] for r in eng.search("owls", max_results=50, min_score=0, explain=True)["results"]) == 91
