"""Chunking (SPEC §2): OpenClaw's golden cases where we agree, our budget rule where we differ."""

from clawmem.engine.embeddings.remote import split_by_bytes
from clawmem.engine.index.chunking import budget, chunk_markdown, sha256, weight


def spans(chunks):
    return [(c.start_line, c.end_line, len(c.text)) for c in chunks]


def test_weight_counts_cjk_as_four():
    assert weight("hello") == 5
    assert weight("你好") == 8
    assert weight("中文abc") == 11


def test_small_documents_are_one_chunk():
    # unlike OpenClaw (1-5), a final newline does not count as a fifth line: citations stay in the file
    assert spans(chunk_markdown("# Title\n\nline one\nline two\n")) == [(1, 4, 26)]
    assert [c.text for c in chunk_markdown("a\n\nb\n")] == ["a\n\nb"]
    # maxChars is floored at 32
    assert spans(chunk_markdown("a\n\n\nb", tokens=1, overlap=0)) == [(1, 4, 5)]


def test_hash_of_hello():
    (c,) = chunk_markdown("hello")
    assert (c.start_line, c.end_line) == (1, 1)
    assert c.hash == "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" == sha256("hello")


def _lines80():
    return "\n".join(f"- note {i:02d}: " + "lorem ipsum dolor sit amet consectetur adipiscing elit sed do"[: 64 - 11] for i in range(1, 81))


def test_golden_overlap_ranges_match_openclaw():
    text = _lines80()
    assert all(len(line) == 64 for line in text.split("\n"))
    assert spans(chunk_markdown(text, 400, 80)) == [(1, 24, 1559), (20, 43, 1559), (39, 62, 1559), (58, 80, 1494)]
    assert [(s, e) for s, e, _ in spans(chunk_markdown(text, 400, 0))] == [(1, 24), (25, 48), (49, 72), (73, 80)]


def test_no_chunk_exceeds_its_budget_unlike_openclaw():
    # OpenClaw gives 1600, 3201, 1701 here: the overlap carry overshoots. We never do.
    chunks = chunk_markdown("a" * 3300, 400, 80)
    assert all(len(c.text) <= 1600 for c in chunks)
    assert "".join(c.text for c in chunks) == "a" * 3300
    assert all((c.start_line, c.end_line) == (1, 1) for c in chunks)


def test_no_chunk_over_budget_with_mixed_long_lines():
    text = "\n".join(["x" * 900, "y" * 2500, "short", "中" * 700, "z" * 100] * 3)
    max_chars, _ = budget(400, 80)
    for c in chunk_markdown(text, 400, 80):
        assert weight(c.text) <= max_chars


def test_cjk_is_cut_by_weight():
    chunks = chunk_markdown("中" * 500, tokens=100, overlap=0)
    assert [len(c.text) for c in chunks] == [100] * 5
    assert len(chunk_markdown("中" * 2000, tokens=200, overlap=0)) >= 8


def test_long_line_never_splits_a_character():
    text = "😀é中" * 1000
    chunks = chunk_markdown(text, tokens=99, overlap=0)
    assert "".join(c.text for c in chunks) == text


def test_split_by_bytes_keeps_characters_whole_and_loses_nothing():
    pieces = split_by_bytes("héllo wörld", 5)
    assert all(len(p.encode()) <= 5 for p in pieces)
    assert "".join(pieces) == "héllo wörld"
    big = "x" * 9000
    parts = split_by_bytes(big, 8192)
    assert all(len(p.encode()) <= 8192 for p in parts) and "".join(parts) == big
    emoji = "😀" * 3000
    parts = split_by_bytes(emoji, 1000)
    assert "".join(parts) == emoji and all(len(p.encode()) <= 1000 for p in parts)
