"""A small memory (a new workspace's two or three notes) cannot show its model what an unrelated
text's similarity looks like, so it calibrates against background notes embedded once at index
time: a paraphrase of a note is found with vector evidence there, not withheld as "nothing"."""

from pathlib import Path

import pytest

from clawmem.engine.search.background import BACKGROUND
from clawmem.engine.index.store import SMALL_MEMORY, Store

from helpers import write

E5 = Path(__file__).resolve().parents[2] / "shared" / "models" / "multilingual-e5-small-q4_0.gguf"


def model_id(store: Store) -> int:
    (mid,) = store.conn.execute("select id from models").fetchone()
    return mid


def test_a_small_memory_keeps_vectors_of_the_background_notes(workspace, make_engine, tiny_model):
    write(workspace / "MEMORY.md", "# Cabin\n\nThe wifi password for the cabin by the lake is loon-call-42.\n")
    write(workspace / "memory" / "2026-11-20.md", "# 2026-11-20\n\nBooked the dentist for Tuesday at 9.\n")
    eng = make_engine({"provider": "local", "local.modelPath": str(tiny_model)})
    list(eng.index())
    store = Store(eng.index_path)
    mid = model_id(store)
    background = store.background_vectors(mid)
    assert background is not None and background.shape[0] == len(BACKGROUND)
    # the two chunks' own vectors and the background notes': enough to say what unrelated looks like
    assert store.reference_sample(mid).shape == (2 + len(BACKGROUND), background.shape[1])


def test_a_memory_that_grows_past_the_threshold_calibrates_on_its_own_chunks(workspace, make_engine, tiny_model):
    write(workspace / "MEMORY.md", "# Notes\n\nThe first note of a new memory.\n")
    eng = make_engine({"provider": "local", "local.modelPath": str(tiny_model)})
    list(eng.index())
    for i in range(SMALL_MEMORY + 6):
        write(workspace / "memory" / f"topic-{i:03d}.md", f"# Topic {i}\n\nnote number {i} about subject {i * 7}\n")
    list(eng.index())
    store = Store(eng.index_path)
    mid = model_id(store)
    n = store.conn.execute(f"select count(*) from vectors_{mid}").fetchone()[0]
    assert n > SMALL_MEMORY
    assert store.reference_sample(mid).shape[0] == n  # its own sample only, the background left out


def test_a_large_memory_never_embeds_the_background(workspace, make_engine, tiny_model):
    for i in range(SMALL_MEMORY + 6):
        write(workspace / "memory" / f"topic-{i:03d}.md", f"# Topic {i}\n\nnote number {i} about subject {i * 7}\n")
    eng = make_engine({"provider": "local", "local.modelPath": str(tiny_model)})
    list(eng.index())
    store = Store(eng.index_path)
    assert store.background_vectors(model_id(store)) is None


@pytest.mark.skipif(not E5.is_file(), reason="needs ../shared/models beside the clone")
@pytest.mark.slow  # over 1.5 s: the full suite runs it, the fast lane does not
def test_a_paraphrase_in_a_two_note_memory_is_found_with_its_vector_evidence(workspace, make_engine):
    """Without the background, e5's cosines have nothing to stand above in a two-chunk memory: the
    wifi note came back scored 0.000 `low` for a paraphrase that shares almost none of its words."""
    write(workspace / "MEMORY.md", "# Cabin\n\nThe wifi password for the cabin by the lake is \"loon-call-42\". "
          "The router sits behind the bookshelf.\n")
    write(workspace / "memory" / "2026-11-20.md", "# 2026-11-20\n\nBooked the dentist for Tuesday at 9. Bring the insurance card.\n")
    eng = make_engine({"provider": "local", "local.modelPath": str(E5), "local.threads": 1})
    list(eng.index())
    for query, path in (("where is the internet code for the lake house", "MEMORY.md"),
                        ("how do I get online at the cabin", "MEMORY.md"),
                        ("when is my dentist appointment", "memory/2026-11-20.md")):
        res = eng.search(query, stale_check=False)
        assert res["mode"] == "hybrid"
        first, *rest = res["results"]
        assert first["path"] == path and first["band"] in ("high", "medium"), (query, first)
        assert all(r["band"] == "low" for r in rest), (query, rest)
    # a question this memory holds nothing about still gets nothing
    res = eng.search("what did the vet say about the cat", stale_check=False)
    assert res["results"] == [] and res["hidden"]["reason"]


def openai_cfg(server):
    return {"provider": "openai", "remote.baseUrl": server.url + "/v1", "remote.apiKey": server.api_key}


def test_the_background_is_asked_for_once_per_model_then_the_cache_answers(tmp_path, make_engine, embed_server):
    for name in ("one", "two"):
        write(tmp_path / name / "MEMORY.md", f"# {name}\n\nthe {name} note about the garden\n")
    list(make_engine(openai_cfg(embed_server), ws=tmp_path / "one").index())
    (req,) = embed_server.background_requests()
    assert sorted(req["body"]["input"]) == sorted(BACKGROUND)
    embed_server.reset()
    second = make_engine(openai_cfg(embed_server), ws=tmp_path / "two")
    list(second.index())
    assert embed_server.background_requests() == [] and embed_server.inputs() == ["# two\n\nthe two note about the garden"]
    store = Store(second.index_path)
    assert store.background_vectors(model_id(store)).shape[0] == len(BACKGROUND)


def test_a_provider_refusing_the_background_leaves_the_index_whole(workspace, make_engine, embed_server):
    write(workspace / "MEMORY.md", "# Garden\n\nthe roses need water on dry days\n")
    embed_server.script = ["ok", 400]  # the chunks' request, then the background notes'
    eng = make_engine(openai_cfg(embed_server))
    list(eng.index())
    store = Store(eng.index_path)
    assert store.background_vectors(model_id(store)) is None
    res = eng.search("roses water")
    assert res["mode"] == "hybrid" and res["results"][0]["path"] == "MEMORY.md"


def test_in_a_few_notes_a_missing_word_is_no_evidence_of_absence(workspace, make_engine):
    """Three notes lack most words of any question: a question about two of them is answered
    even though "exam" and "order" occur nowhere (a memory of SMALL_MEMORY chunks or more would
    have said nothing, test_evidence); a question none of whose words occur here still gets
    nothing, and one naming someone never mentioned is flagged `absent` (shown, not emptied)."""
    write(workspace / "MEMORY.md", "# Bart\n\n- Bart got full marks in maths and was very happy.\n")
    write(workspace / "memory" / "2026-01-03.md", "- Bart's favourite pizza has sausage and bacon.\n")
    write(workspace / "memory" / "2026-01-04.md", "- Bart wants to be an astronaut.\n")
    eng = make_engine()
    list(eng.index())
    res = eng.search("how did the maths exam go, and which pizza did we order after", explain=True)
    assert {r["path"] for r in res["results"][:2]} == {"MEMORY.md", "memory/2026-01-03.md"}, res["hidden"]
    assert set(res["evidence"]["absentTerms"]) >= {"exam", "order"} and res["evidence"]["abstain"] is None
    assert eng.search("what is the capital of australia")["results"] == []
    res = eng.search("What did Okonkwo say about maths?")
    assert res["results"] and "okonkwo" in res["absent"]["reason"]


def test_in_a_few_notes_a_pasted_dialogue_naming_things_in_passing_is_answered(workspace, make_engine):
    """A conversation names things in passing (Jupiter here); in a memory of a few notes one of
    them missing says little, while its speaker missing still says it is someone else's."""
    write(workspace / "MEMORY.md", "- Bart wants to be an astronaut and loves the planets.\n")
    write(workspace / "memory" / "2026-01-03.md", "- Bart's favourite pizza has sausage and bacon.\n")
    eng = make_engine()
    list(eng.index())
    dialogue = ("Bart: I watched a video about planets, Jupiter is the biggest!\nAssistant: Wow, what else did you learn?\n"
                "Bart: I want to fly to the planets one day.\nAssistant: That sounds like a great dream.\n")
    res = eng.search(dialogue, explain=True)
    assert "jupiter" in res["evidence"]["namedAbsent"] and res["evidence"]["dialogue"]
    assert res["results"] and res["results"][0]["path"] == "MEMORY.md"
    res = eng.search(dialogue.replace("Bart:", "Lisa:"))
    assert res["results"] == [] and "lisa" in res["hidden"]["reason"]


def test_a_long_lived_engine_takes_in_the_background_kept_after_its_first_search(workspace, make_engine, embed_server):
    """The app searches while the first index runs; the background kept afterwards still serves
    its next search (a long-lived engine keeps the reference sample until the index changes)."""
    write(workspace / "MEMORY.md", "# Garden\n\nthe roses need water on dry days\n")
    embed_server.script = ["ok", 400]  # the background is refused the first time
    eng = make_engine(openai_cfg(embed_server), persistent=True)
    list(eng.index())
    before = eng.search("roses water", explain=True)["results"][0]["explain"]["vectorReference"]
    list(eng.index())  # nothing to embed; the background is asked for again, and kept
    store = Store(eng.index_path)
    assert store.background_vectors(model_id(store)) is not None
    after = eng.search("roses water", explain=True)["results"][0]["explain"]["vectorReference"]
    assert after != before
