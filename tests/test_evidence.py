"""A score is the hit's own evidence, and search says the answer is probably not here only on
evidence that this memory does not hold it: weak hits keep their own low score (never the best
hit's), a list reads strong to weak, a question naming someone this memory never mentions comes
back flagged `absent` with the reason (shown, not emptied: only a verdict keyword-only search
reaches from the query's words alone empties it), a weak but present answer is still shown,
and hybrid never loses a rare name or identifier that keyword-only puts first."""

import math

import pytest

from clawmem.engine.agent import context
from clawmem.engine.search import ranking
from clawmem.engine.index.store import SMALL_MEMORY
from clawmem.engine.search.everyday import is_everyday
from clawmem.engine.search import candidates
from clawmem.engine.search.candidates import BROAD_VOCABULARY
from clawmem.engine.search import verdict
from clawmem.engine.search.evidence import chance_decides, chance_held
from clawmem.engine.search import abstain_reason, named_terms, snippet_match, speakers, term_spans
from clawmem.engine.text import spellings, word_forms
from clawmem.tui.present import format_results
from clawmem.tui.present import explain_parts

from helpers import write

CABIN = """# Cabin

- The wifi password for the cabin by the lake is pinecone-42.
- The boat key hangs by the door.
"""
WORK = """# 2026-03-02

- The data-lake migration runs on Fridays.
- Marta quoted 2,400 euros for the roof repair.
"""


@pytest.fixture
def notes(workspace):
    write(workspace / "MEMORY.md", CABIN)
    write(workspace / "memory" / "2026-03-02.md", WORK)
    for i in range(12):  # enough other notes for word rarity to mean something
        write(workspace / "memory" / f"2026-02-{i + 1:02d}.md",
              f"# 2026-02-{i + 1:02d}\n\n- Gym plan {i}: run on monday, swim on wednesday.\n- Groceries: milk, bread, apples.\n"
              f"- Tags: {broad_words(SMALL_MEMORY + i)}\n")
    filler(workspace, "swim")
    return workspace


def broad_words(i: int, n: int = BROAD_VOCABULARY // SMALL_MEMORY + 1) -> str:
    """The i-th note's share of a broad vocabulary: words of letters no test asks about
    (qx + four letters), so that SMALL_MEMORY notes use BROAD_VOCABULARY distinct words."""
    def word(k: int) -> str:
        return "qx" + "".join(chr(97 + (k // 26 ** p) % 26) for p in range(4))
    return " ".join(word(i * n + j) for j in range(n))


def filler(workspace, common: str, n=SMALL_MEMORY):
    """Notes on `common` (a word the tests want in most notes) and nothing else they ask about:
    a memory big enough, in notes and in words, for the words it lacks to say something (in
    fewer chunks, only a name or no word at all says absent: test_small_memory; in fewer
    distinct words, a word it lacks is mostly an ordinary one it says otherwise)."""
    for i in range(n):
        write(workspace / "memory" / "misc" / f"podcast-{i:03d}.md",
              f"- Podcast episode {i} about {common}, queued for the commute.\n- Tags: {broad_words(i)}\n")


@pytest.fixture
def keyword(notes, make_engine):
    eng = make_engine()
    list(eng.index())
    return eng


def test_a_weak_hit_keeps_its_own_score(keyword):
    """Only "lake" (inside "data-lake") matches the second note: it used to score 0.955, the top
    hit's evidence times its fused share; now it scores what it holds itself."""
    res = keyword.search("wifi password for the cabin by the lake", explain=True)
    top, *rest = res["results"]
    assert top["path"] == "MEMORY.md" and top["band"] == "high" and top["score"] >= 0.6
    weak = next(r for r in rest if r["path"] == "memory/2026-03-02.md")
    conf = weak["explain"]["confidence"]
    assert conf["terms"] == ["lake"]
    assert weak["score"] == pytest.approx(conf["own"], abs=1e-4) and weak["score"] < 0.3
    assert weak["band"] == "low"


@pytest.mark.parametrize("query", ["wifi password for the cabin by the lake", "roof repair quote Marta",
                                   "swim on monday", "lake boat key"])
def test_a_low_hit_never_stands_above_a_stronger_one(keyword, query):
    bands = [r["band"] for r in keyword.search(query, show_hidden=True)["results"]]
    assert bands, query
    assert "low" not in bands or all(b == "low" for b in bands[bands.index("low"):]), bands
    for r in keyword.search(query, show_hidden=True)["results"]:
        assert r["band"] == ranking.band(r["score"])


def test_a_name_this_memory_never_mentions_flags_the_list(keyword):
    """The verdict is at the top of the reply (`absent`), the hits stay: emptying an answerable
    question (a name spelt otherwise, a nickname) is the costly error, and the agent reads the
    flag. It used to empty the list."""
    res = keyword.search("What did Okonkwo say about the roof repair?", explain=True)
    assert res["results"] and res["results"][0]["path"] == "memory/2026-03-02.md"
    assert "okonkwo" in res["absent"]["reason"] and res["hidden"]["count"] == 0 and "reason" not in res["hidden"]
    assert res["evidence"]["namedAbsent"] == ["okonkwo"]
    # the same question about someone the memory knows is answered, weak or not, with no flag
    known = keyword.search("What did Marta say about the roof repair?")
    assert known["results"] and known["results"][0]["path"] == "memory/2026-03-02.md" and known["absent"] is None


def test_a_rare_name_held_does_not_vouch_for_another_name_absent(keyword):
    """"Marta" is in one note, but the question is about Okonkwo, whom this memory never
    mentions: flagged absent. A name few notes hold may be another person's, so it is no
    floor of 0.7 (an identifier still is): the note holding Marta and the roof is medium, its
    own words' weight. It used to be high."""
    res = keyword.search("What did Okonkwo tell Marta about the roof?", show_hidden=True, explain=True)
    marta = next(r for r in res["results"] if r["path"] == "memory/2026-03-02.md")
    assert marta["band"] == "medium" and "exact" not in marta["explain"]["confidence"]
    assert res["evidence"]["abstain"] and "okonkwo" in res["evidence"]["abstain"]
    assert "okonkwo" in keyword.search("What did Okonkwo tell Marta about the roof?")["absent"]["reason"]


def test_a_weak_best_hit_is_still_shown(keyword):
    """Words spread over notes, none absent: the list is shown, with its weak hits, unflagged:
    that no passage holds the words together (chanceHeld) does not separate answerable questions
    from someone else's history (issue 42), so it lowers a band at most, never flags. One word
    absent ("fix") beside a passage holding a fair part of the rest: the list is shown all the
    same, flagged with the word this memory never uses (a question turning on it)."""
    for query in ("swim roof boat", "when did I swim and fix the roof"):
        res = keyword.search(query, explain=True)
        assert res["results"] and res["results"][0]["band"] == "medium", query
        assert res["hidden"]["count"] == 0 and not res["evidence"]["absent"]["emptied"] if res["evidence"]["absent"] else True
    assert keyword.search("swim roof boat", explain=True)["absent"] is None
    fix = keyword.search("when did I swim and fix the roof", explain=True)
    assert fix["evidence"]["absentTerms"] == ["fix"] and fix["absent"] == {"reason": "this memory never uses 'fix' in any form"}


def test_a_missing_word_and_no_fair_hit_flag_the_list(keyword):
    """The doctor is never mentioned, and the only word held ("swim", in most notes) says
    nothing: asked of someone else's history, a question looks like this."""
    res = keyword.search("when do I swim and what does the doctor think", explain=True)
    assert res["results"] and all(r["band"] == "low" for r in res["results"]) and res["hidden"]["count"] == 0
    assert "'doctor'" in res["absent"]["reason"] and res["evidence"]["best"] < ranking.band_floor("medium")


def test_everyday_words_terse_notes_never_use_say_nothing(keyword):
    """A chatty question: "still", "want" and "bit" occur in no note, but notes this terse never
    say them, so their absence is no evidence: the notes on swimming are shown, weak as they
    are. A topic word this memory never uses ("fjord") still empties the list."""
    res = keyword.search("I still want to swim a bit", explain=True)
    assert res["results"] and res["evidence"]["abstain"] is None
    assert res["evidence"]["absentTerms"] == [] and set(res["evidence"]["absentEveryday"]) == {"still", "want", "bit"}
    res = keyword.search("I still want to swim in the fjord", explain=True)
    assert "never uses 'fjord'" in res["absent"]["reason"]


def test_a_month_or_weekday_named_in_words_is_a_date_not_an_absent_name(keyword):
    """The notes date themselves in numbers (2026-02-01.md): "Sunday" and "February" occur in
    none of them, yet a question naming them asks about these notes, and is answered."""
    res = keyword.search("Which groceries did I buy on the first Sunday of February?", explain=True)
    assert res["results"] and res["evidence"]["abstain"] is None
    assert res["evidence"]["namedAbsent"] == [] and set(res["evidence"]["absentEveryday"]) >= {"sunday", "february"}
    assert "Groceries" in res["results"][0]["snippet"]
    # a name beside them still says absent
    res = keyword.search("Which groceries did Okonkwo buy on the first Sunday of February?", explain=True)
    assert res["absent"] and res["evidence"]["namedAbsent"] == ["okonkwo"]
    # abbreviated, they are dates all the same (Sept., Thurs, Feb: a calendar word's first letters)
    res = keyword.search("Which groceries did I buy on the first Sun. of Feb.?", explain=True)
    assert res["absent"] is None and res["evidence"]["namedAbsent"] == []


def test_everyday_words():
    assert all(is_everyday(w) for w in ["want", "wanted", "wanting", "tries", "getting", "lately", "don"])
    assert all(is_everyday(w) for w in ["sept", "thurs", "feb", "wed"])  # a calendar word's first letters
    assert all(is_everyday(w) for w in ["我试", "试过", "复查"])  # Chinese pairs: no word boundaries to tell them by
    assert all(is_everyday(w) for w in ["march", "may", "sunday", "3", "05", "mornings", "five", "recommended", "conversation"])
    assert not any(is_everyday(w) for w in ["sealant", "powwows", "reunion", "lotion", "player", "서버", "214", "2024"])


def test_a_word_used_here_in_another_form_is_not_absent(workspace, make_engine):
    """"decide" where the notes say "decided", and "billing" in every note (so it weighs
    nothing): the answer is here, shown; a word used in no form ("conclude") empties it."""
    write(workspace / "memory" / "2026-02-04.md", "- decided: billing moves to Stripe\n")
    write(workspace / "memory" / "2026-01-10.md", "- billing stays on invoices\n")
    write(workspace / "MEMORY.md", "- billing owner is Sam\n")
    filler(workspace, "billing")
    eng = make_engine()
    eng.run_index()
    res = eng.search("what did I decide about billing", explain=True)
    assert "decide" not in res["evidence"]["absentTerms"] and res["evidence"]["abstain"] is None
    top = res["results"][0]  # found by its other form, and counted as holding the word
    assert top["path"] == "memory/2026-02-04.md" and "decide" in top["explain"]["confidence"]["terms"]
    res = eng.search("what did I conclude about billing", explain=True)
    assert "'conclude'" in res["absent"]["reason"]


def test_a_word_spelled_the_other_way_is_not_absent(workspace, make_engine):
    """The notes say "favorite color", the question "favourite colour": the same words in
    British spelling, not words this memory lacks."""
    write(workspace / "MEMORY.md", "- billing owner is Sam; her favorite color is teal\n")
    filler(workspace, "billing")
    eng = make_engine()
    eng.run_index()
    res = eng.search("what is Sam's favourite colour for billing", explain=True)
    assert res["evidence"]["absentTerms"] == [] and res["evidence"]["abstain"] is None
    top = res["results"][0]
    assert top["path"] == "MEMORY.md" and {"favourite", "colour"} <= set(top["explain"]["confidence"]["terms"])


def test_a_missing_word_counts_only_once_its_other_forms_were_looked_up():
    """The fleet's index cannot look words up in other forms: there a missing word alone never
    empties the list (a name, a speaker or almost every word missing still does)."""
    ev = {"candidates": 3, "best": 0.1, "namedAbsent": [], "speakersAbsent": [], "absentShare": 0.3,
          "absentTerms": ["doctor"], "presentCoverage": 0.5, "presentWeight": 0.2, "rareWeight": 0.2, "formsChecked": True}
    assert "'doctor'" in abstain_reason(ev)
    assert abstain_reason({**ev, "formsChecked": False}) is None
    assert abstain_reason({**ev, "formsChecked": False, "namedAbsent": ["doctor"]})
    # a pasted conversation with a missing word: unless one passage holds the rest, and it is rare enough
    assert abstain_reason({**ev, "dialogue": True, "presentCoverage": 1.0}) is None
    assert abstain_reason({**ev, "dialogue": True, "presentCoverage": 1.0, "presentWeight": 0.1})  # ... but common: nothing specific here
    assert abstain_reason({**ev, "presentCoverage": 1.0})  # a question: the missing word flags it whatever the rest finds


def test_a_question_with_a_word_this_memory_never_uses_is_flagged_unless_a_strong_hit_holds_the_rest():
    """A question turning on a word used nowhere here, in any form ("sealant"): the list is shown
    flagged; the verdict never empties it. Beside a strong hit on its other words it is not
    flagged any more (issue 42: a quarter of the flagged answerable lists had the gold first;
    the answer's passage says the missing word in other words), unless the word is a name. Not in a small memory (it lacks most words of anything), not
    when the other forms could not be looked up, not for a pasted conversation with a fair hit
    (a conversation names many things in passing)."""
    ev = {"candidates": 6, "best": 0.45, "namedAbsent": [], "speakersAbsent": [], "absentShare": 0.2,
          "absentTerms": ["sealant"], "presentCoverage": 0.5, "presentWeight": 0.6, "rareWeight": 0.2,
          "formsChecked": True, "nDocs": 450, "vectors": True, "dialogue": False, "bestVector": 0.0}
    found = verdict(ev)
    assert found["kind"] == "missing" and not found["emptied"] and "never uses 'sealant' in any form" in found["reason"]
    assert verdict({**ev, "best": 0.9}) is None  # a strong hit on the other words
    assert verdict({**ev, "best": 0.9, "namedAbsent": ["sealant"]})["kind"] == "named"  # a name: someone else's
    assert verdict({**ev, "vectors": False})["kind"] == "missing"  # keyword-only reaches it too
    assert abstain_reason({**ev, "dialogue": True}) is None
    assert abstain_reason({**ev, "nDocs": SMALL_MEMORY - 1}) is None
    assert abstain_reason({**ev, "vocabulary": BROAD_VOCABULARY - 1}) is None  # a memory of few words lacks most
    assert verdict({**ev, "vocabulary": BROAD_VOCABULARY - 1, "namedAbsent": ["sealant"]})["kind"] == "named"  # not names
    assert abstain_reason({**ev, "absentTerms": []}) is None
    assert abstain_reason({**ev, "formsChecked": False}) is None
    # a word said only in a remark is no topic the memory should hold (issue 42)
    assert abstain_reason({**ev, "remarkedOnly": ["sealant"]}) is None
    assert abstain_reason({**ev, "remarkedOnly": ["sealant"], "best": 0.1}) is None
    assert verdict({**ev, "remarkedOnly": ["sealant"], "namedAbsent": ["sealant"]})["kind"] == "named"  # a name still says so
    # a pasted conversation is all remarks: its own rule weighs them (a missing word, no fair hit)
    assert verdict({**ev, "remarkedOnly": ["sealant"], "dialogue": True, "best": 0.1})["kind"] == "missing"


def test_a_word_a_memory_of_few_words_never_uses_is_no_sign_the_answer_is_elsewhere(workspace, make_engine):
    """A family's archive of 70 short notes (a few hundred words) says "gift" where the question
    says "present": asked "What present did Lisa get from her uncle?", the uncle's note is shown
    first and unflagged (it was "this memory never uses 'present' in any form"; new questions
    about MADial's archive, written without the rules, were flagged .23 so). Once the same notes
    use thousands of words (BROAD_VOCABULARY), a word they never use says something again, and
    the same question is flagged."""
    kids, things = ["Lisa", "Bart"], ["kite", "puzzle", "scarf", "drum", "lantern", "globe", "yoyo"]
    for i in range(70):
        write(workspace / "memory" / f"2024-{i // 28 + 1:02d}-{i % 28 + 1:02d}.md",
              f"- {kids[i % 2]} played with the {things[i % 7]} at the park on day {i}, feeling happy.\n")
    write(workspace / "memory" / "2024-04-01.md", "- Lisa received a blue reading pen as a gift from her uncle.\n")
    asked = "What present did Lisa get from her uncle?"
    narrow = make_engine()
    list(narrow.index())
    res = narrow.search(asked, explain=True)
    assert res["evidence"]["absentTerms"] == ["present"] and res["evidence"]["vocabulary"] < BROAD_VOCABULARY
    assert res["absent"] is None and res["results"][0]["path"] == "memory/2024-04-01.md"
    for i in range(SMALL_MEMORY):
        write(workspace / "memory" / "misc" / f"tags-{i:03d}.md", f"- Tags: {broad_words(i)}\n")
    broad = make_engine()
    list(broad.index())
    res = broad.search(asked, explain=True)
    assert res["evidence"]["vocabulary"] >= BROAD_VOCABULARY
    assert res["absent"] == {"reason": "this memory never uses 'present' in any form"} and res["results"]


def test_a_word_said_only_in_a_remark_does_not_flag_the_list(keyword):
    """The same missing word ("sealant") flags a question and a search's words, not a remark (a
    sentence ending in "." or "!": "The sealant for the commute."), whose words are no topic the
    memory should hold (MADial's last lines: flagged as often asked of their own memory as of
    someone else's). A question followed by a remark still asks. The list is shown unflagged,
    the commute notes first."""
    assert keyword.search("Which sealant did I use for the cabin by the lake?")["absent"]
    assert keyword.search("sealant for the commute")["absent"]
    assert keyword.search("Which sealant did I buy for the commute? This was in May 2023.")["absent"]  # still a question
    for said in ("The sealant for the commute.", "Sealant for the commute!", "Really? The sealant for the commute."):
        got = keyword.search(said, explain=True)
        assert got["absent"] is None and got["results"], got["evidence"]
        assert "commute" in got["results"][0]["snippet"]


def test_a_question_in_another_language_of_the_same_script_is_not_called_absent(keyword):
    """A German question of English notes: its capitalised nouns are no names and its words no
    evidence ("vor", "wie", "dem": short words every English memory of this size would hold
    were the question English), even where half its words are held (loanwords, names): "Vor
    wie vielen Monaten war ich bei dem Fotografie-Workshop?" was "this memory never mentions
    'fotografie'". An identifier the notes lack still says absent; an English question has no
    such words."""
    ev = {"candidates": 6, "best": 0.3, "namedAbsent": ["fotografie"], "speakersAbsent": [], "absentShare": 0.5,
          "topicAbsentShare": 0.5, "absentTerms": ["vor", "wie", "vielen", "monaten", "dem", "fotografie"],
          "presentCoverage": 0.5, "presentWeight": 0.6, "rareWeight": 0.2, "formsChecked": True, "nDocs": 450,
          "vectors": False, "dialogue": False, "bestVector": 0.0, "identifiersAbsent": []}
    assert verdict(ev)["kind"] == "named"
    assert verdict({**ev, "shortAbsent": ["vor", "wie", "dem"]}) is None
    assert verdict({**ev, "shortAbsent": ["vor", "wie", "dem"], "identifiersAbsent": ["a828e60"]})["kind"] == "named"
    assert verdict({**ev, "shortAbsent": ["vor"]})["kind"] == "named"  # one short word: a topic word like any other
    got = keyword.search("Wie viel wollte Marta bei dem Angebot für die Dachreparatur, habe ich das notiert?", explain=True)
    assert {"wie", "bei", "dem"} <= set(got["evidence"]["shortAbsent"]) and got["absent"] is None, got["evidence"]
    assert got["results"] and "Marta" in got["results"][0]["snippet"]
    english = keyword.search("How much did Okonkwo quote for the roof repair?", explain=True)
    assert english["evidence"]["shortAbsent"] == [] and "okonkwo" in english["absent"]["reason"]


def test_a_plural_of_capitals_is_its_singular(workspace, make_engine):
    """"EPs" is the plural of "EP": a memory that writes "EP" holds what the question asks
    (it was "this memory never mentions 'eps'"), while "DVDs" is still absent from it."""
    write(workspace / "MEMORY.md", "# Music\n\n- Bought the new EP and the first album by The Lumineers on vinyl.\n")
    filler(workspace, "music")
    eng = make_engine()
    list(eng.index())
    got = eng.search("How many albums or EPs have I bought?", explain=True)
    assert got["absent"] is None and "EP" in got["results"][0]["snippet"], got["evidence"]
    other = eng.search("How many albums or DVDs have I bought?", explain=True)
    assert other["absent"] and "dvds" in other["absent"]["reason"], other["evidence"]


def test_the_evidence_says_whether_vectors_served_and_whether_the_query_is_a_conversation(notes, make_engine, tiny_model):
    hy = make_engine({"provider": "local", "local.modelPath": str(tiny_model)})
    list(hy.index())
    kw = make_engine()
    list(kw.index())
    question = "when do I swim and what does the doctor think"
    assert hy.search(question, explain=True)["evidence"]["vectors"] is True
    assert kw.search(question, explain=True)["evidence"]["vectors"] is False
    dialogue = "Marta: when do I swim?\nAssistant: on wednesday.\nMarta: and the roof?\n"
    assert kw.search(dialogue, explain=True)["evidence"]["dialogue"] is True
    assert kw.search(question, explain=True)["evidence"]["dialogue"] is False


def test_word_forms():
    assert {"decided", "deciding", "decides", "decision"} - set(word_forms("decide")) == {"decision"}
    assert {"repot", "repotting"} <= set(word_forms("repotted")) and "repaint" in word_forms("repainted")
    assert "progress" in word_forms("progression") and "studies" in word_forms("study")
    assert {"runs", "running"} <= set(word_forms("run")) and "fridays" in word_forms("friday")
    assert "episodes" not in word_forms("eps") and word_forms("ep") == [] and word_forms("成语接龙") == []
    assert "decide" not in word_forms("decide")
    assert {"favorite", "favorites"} <= set(word_forms("favourite")) and "colours" in word_forms("color")
    assert "organized" in word_forms("organise") and "centers" in word_forms("centre") and "traveled" in word_forms("travelled")


def test_spellings():
    assert spellings("colour") == {"color"} and spellings("neighbors") == {"neighbours"}
    assert spellings("realisation") == {"realization"} and spellings("theater") == {"theatre"}
    assert spellings("catalogue") == {"catalog"} and spellings("cancelled") == {"canceled"}
    assert spellings("doctor") == set() and spellings("water") == set() and spellings("calling") == set()


def test_a_dialogue_by_someone_this_memory_never_mentions_is_not_its_history(keyword):
    """A conversation pasted as the query: its speaker is who it is about. Every word of it may
    be here (a strong hit), but a memory that never mentions Okonkwo is someone else's."""
    talk = "{0}: The wifi password for the cabin by the lake?\nAssistant: pinecone, I think.\n{0}: And the boat key?"
    res = keyword.search(talk.format("Okonkwo"), explain=True)
    assert res["results"] == [] and "'okonkwo', who speaks" in res["hidden"]["reason"]
    assert res["evidence"]["best"] >= 0.6  # the words alone would have answered
    assert keyword.search(talk.format("Marta"))["results"][0]["path"] == "MEMORY.md"


TWO_CHILDREN = {
    "lisa-homework": "- Lisa helped a classmate with the maths homework and felt proud.\n",
    "bart-homework": "- Bart helped a classmate with the maths homework, explained the problems step by step, "
                     "and said teaching was rewarding.\n",
}
LISA_TALK = ("Lisa: I helped a classmate with homework today!\nAssistant: Lovely. What did you explain?\n"
             "Lisa: The maths problems, step by step. Teaching is rewarding!")


def two_children(workspace, others: int):
    """The two notes on the topic, and `others` notes naming one child or the other."""
    for name, text in TWO_CHILDREN.items():
        write(workspace / "memory" / f"{name}.md", text)
    for i in range(others):
        who = ("Lisa", "Bart")[i % 2]
        write(workspace / "memory" / f"day-{i:03d}.md", f"- {who} fed the goldfish number {i} before school.\n")


def test_a_conversation_by_one_of_two_people_puts_the_notes_naming_them_first(workspace, make_engine):
    """A memory that names whom each note is about (two children's), a dialogue by Lisa: her
    note on the topic comes first, though Bart's holds more of the dialogue's words."""
    two_children(workspace, 20)
    eng = make_engine()
    list(eng.index())
    res = eng.search(LISA_TALK, explain=True, show_hidden=True)["results"]
    assert [r["path"] for r in res[:2]] == ["memory/lisa-homework.md", "memory/bart-homework.md"]
    assert res[0]["explain"]["speaker"] == {"names": ["lisa"]}
    assert res[1]["explain"]["speaker"] == {"names": []}
    assert res[1]["explain"]["confidence"]["own"] > res[0]["explain"]["confidence"]["own"]  # the order changed, not the hits' own evidence
    assert "after the hits that do" in dict(explain_parts(res[1]["explain"]))["speaker"]


def test_a_memory_that_rarely_names_the_speaker_keeps_its_order(workspace, make_engine):
    """The same notes among many that name nobody (an agent's notes say "User"): a note
    without Lisa's name says nothing about whose it is, and the words decide."""
    two_children(workspace, 2)
    filler(workspace, "goldfish")
    eng = make_engine()
    list(eng.index())
    res = eng.search(LISA_TALK, explain=True, show_hidden=True)["results"]
    assert res[0]["path"] == "memory/bart-homework.md" and "speaker" not in res[0]["explain"]


def test_speakers():
    assert speakers("Bart: hi\nAssistant: yes\nBart: and?\nLisa: once") == ["bart"]  # Lisa speaks once
    assert speakers("Lisa：你好\nAssistant：好\nLisa：嗯") == ["lisa"]
    assert speakers("User: a\nAssistant: b\nUser: c") == []  # roles, not people
    assert speakers("Dr. Smith: a\nDr. Smith: b") == ["smith"]
    assert speakers("Note: buy milk\nWhat did I say?") == []
    assert speakers("TODO: milk\nTODO: bread") == [] and speakers("Note: a\nNote: b") == []
    assert speakers("小明：你好\nAssistant：好\n小明：嗯") == ["小明"]


def test_words_this_memory_never_uses_empty_the_list(keyword):
    res = keyword.search("quantum chromodynamics lattice gauge theory")
    assert res["results"] == []
    zh = keyword.search("昨天我和爸爸下棋了")
    assert zh["results"] == []


def test_a_question_in_a_script_this_memory_never_writes_is_not_called_absent(keyword, workspace, make_engine):
    """Marta's words in Chinese asked of English notes: the Chinese words could not be here in
    any form, so their absence raises no verdict, and Marta's note is shown unflagged (it was
    flagged "this memory uses almost none of the query's words"). In a memory that writes
    Chinese the same words count as before."""
    asked = "Marta: 你知道吗？屋顶修理的报价出来了，我有点紧张，我们明年夏天再修可以吗？"
    zh = keyword.search(asked, explain=True)
    assert zh["evidence"]["unwrittenShare"] >= 0.9 and zh["evidence"]["absentShare"] >= 0.95
    assert zh["absent"] is None and zh["results"] and "Marta" in zh["results"][0]["snippet"], zh["absent"]
    en = keyword.search("Marta quantum chromodynamics lattice gauge theory", explain=True, show_hidden=True)
    assert en["evidence"]["unwrittenShare"] == 0.0  # these notes write its script: its words count
    # a few Chinese notes do not make Chinese this memory's script ...
    for i in range(3):
        write(workspace / "memory" / "misc" / f"zh-{i}.md", f"- 今天去公园散步 {i}。\n")
    some_zh = make_engine()
    list(some_zh.index())
    assert some_zh.search(asked, explain=True)["absent"] is None
    # ... a memory that mostly writes Chinese: the same words count, and English ones do not
    for note in (workspace / "memory").rglob("*.md"):  # fewer English words than the Chinese ones below
        write(note, "".join(x for x in note.read_text().splitlines(keepends=True) if not x.startswith("- Tags: qx")))
    for i in range(60):
        write(workspace / "memory" / "misc" / f"zh-{i}.md",
              f"- 第{i}天：马尔塔说屋顶修理的报价是两千四百欧元，我们讨论了夏天的计划、花园里的番茄和邻居家的小狗{i}号。\n")
    writes_zh = make_engine()
    list(writes_zh.index())
    got = writes_zh.search(asked, explain=True, show_hidden=True)
    assert got["evidence"]["unwrittenShare"] == 0.0 and got["absent"] is None and got["results"], got["evidence"]
    strange = writes_zh.search("量子色动力学格点规范理论", explain=True, show_hidden=True)
    assert strange["evidence"]["unwrittenShare"] == 0.0 and strange["absent"], strange["evidence"]
    english = writes_zh.search("Marta quantum chromodynamics lattice gauge theory?", explain=True, show_hidden=True)
    assert english["evidence"]["unwrittenShare"] >= 0.8 and english["absent"] is None, english["evidence"]


def test_keyword_only_says_a_question_in_another_script_cannot_match_not_that_it_is_absent(keyword):
    """A question in Chinese of English notes, keyword-only (no model): no word of it can match,
    so the list is empty whatever the notes hold. The reply does not say "probably not in this
    memory" (an agent told so says it does not remember); `hidden.reason` says why nothing
    matched and to search again in the memory's language, and the CLI prints that line."""
    res = keyword.search("我家屋顶修理的报价是多少？")
    assert res["results"] == [] and res["absent"] is None, res["absent"]
    why = res["hidden"]["reason"]
    assert "Chinese" in why and "Latin letters" in why and "search again in the memory's language" in why
    assert "Nothing shown: the query is in Chinese" in (line := format_results(res, query="屋顶"))
    assert "search again in the memory's language, or index with a multilingual model." in line  # not clipped
    # words of this memory's script that no passage holds are another matter: that is a verdict
    en = keyword.search("quantum chromodynamics lattice gauge theory")
    assert en["absent"] and "script" not in en["hidden"].get("reason", "")


def test_keyword_only_says_a_question_in_another_language_of_the_same_script_cannot_match(keyword, workspace, make_engine):
    """A German question of English notes sharing no word with them, keyword-only: "Wo habe ich
    mein Auslandsstudium gemacht?" found no passage and was told "no passage holds any query
    word", a verdict of absence, though no German question could match whatever the notes
    hold. Its short words ("wo", "ich", "mein", "habe") are words a memory of this many words
    would hold were it written in the question's language, so the list is empty with
    `hidden.reason` saying why, not "not here". A question whose short words the memory holds
    ("Is the riad on the map?"), or of long words only, or asked of a memory of few words,
    is still absent."""
    res = keyword.search("Wo habe ich mein Auslandsstudium gemacht?", explain=True)
    assert res["results"] == [] and res["absent"] is None, res["evidence"]
    why = res["hidden"]["reason"]
    assert "another language" in why and "search again in the memory's language" in why
    line = format_results(res, query="Auslandsstudium")
    assert "Nothing shown: no word of the query is here" in line and "search again in the memory's language." in line
    # short words this memory uses ("is", "the", "on") say the question is in its language
    for lacking in ("quantum chromodynamics lattice gauge theory", "Okonkwo Ebele Chukwuemeka", "Is the riad on the map?"):
        got = keyword.search(lacking, explain=True)
        assert got["results"] == [] and got["absent"], (lacking, got["evidence"])
    # a memory of few words lacks short words of its own language: there it is a verdict
    for note in (workspace / "memory").rglob("*.md"):
        write(note, "".join(x for x in note.read_text().splitlines(keepends=True) if not x.startswith("- Tags: qx")))
    narrow = make_engine()
    list(narrow.index())
    got = narrow.search("Wo habe ich mein Auslandsstudium gemacht?", explain=True)
    assert got["evidence"]["vocabulary"] < BROAD_VOCABULARY and got["absent"], got["evidence"]


def test_a_threshold_someone_sets_hides_every_hit_below_it(notes, make_engine):
    eng = make_engine({"query.minScore": 0.5})
    list(eng.index())
    res = eng.search("wifi password for the cabin by the lake", show_hidden=False)
    assert [r["path"] for r in res["results"]] == ["MEMORY.md"]
    assert res["hidden"]["count"] >= 1 and res["hidden"]["bestScore"] < 0.5
    assert "reason" not in res["hidden"]
    flag = make_engine().search("wifi password for the cabin by the lake", min_score=0.5)
    assert [r["path"] for r in flag["results"]] == ["MEMORY.md"]


def test_named_terms():
    assert named_terms("What did Dr. Okonkwo say about ENOSPC_BK42 and kx7q2vm9?") == ["okonkwo", "enospc_bk42", "kx7q2vm9"]
    assert named_terms("Where did I park?") == []  # a sentence's first word is no name
    assert named_terms("Bart: I met Lisa at the New Year party") == ["lisa", "new", "year"]
    assert named_terms("What is Sam's favourite colour?") == ["sam"]  # not the "s" of the possessive
    assert named_terms("Did Okonkwo’s sister call?") == ["okonkwo"]


NAMES = ["Halvorsen", "Okonkwo", "Zsuzsanna", "Thibault"]
IDS = ["kx7q2vm9", "ENOSPC_BK42", "88314207"]


@pytest.mark.parametrize("fusion", ["relative", "rrf", "weighted"])
def test_hybrid_finds_every_rare_name_and_id_keyword_only_puts_first(workspace, make_engine, tiny_model, fusion):
    """Vectors from a model that never saw these names (the tiny one knows nothing at all) must
    not push the one note holding them out of first place."""
    topics = ["deploy", "garden", "billing", "travel", "dentist", "piano", "backup", "budget"]
    for i in range(40):
        t = topics[i % len(topics)]
        write(workspace / "memory" / f"2026-01-{i % 28 + 1:02d}-{i}.md",
              f"# note {i}\n\n- The {t} work with the {t} team went fine on day {i}.\n- More {t} tomorrow.\n")
    for i, token in enumerate(NAMES + IDS):
        write(workspace / "memory" / f"2026-02-{i + 1:02d}.md", f"# 2026-02-{i + 1:02d}\n\n- Talked about the garden; note {token} for later.\n")
    kw = make_engine()
    list(kw.index())
    hy = make_engine({"provider": "local", "local.modelPath": str(tiny_model), "query.hybrid.fusion": fusion})
    list(hy.index())
    for i, token in enumerate(NAMES + IDS):
        path = f"memory/2026-02-{i + 1:02d}.md"
        for query in (token, f"what did I note about {token} in the garden"):
            first_kw = kw.search(query)["results"][0]["path"]
            if first_kw == path:
                got = hy.search(query)["results"]
                assert got and got[0]["path"] == path, (fusion, query, [r["path"] for r in got])
                assert got[0]["band"] == "high"


def test_cli_marks_the_matched_line_and_bolds_the_words(keyword):
    query = "roof repair Marta"
    res = keyword.search(query)
    plain = format_results(res, query=query)
    marked = [line for line in plain.splitlines() if line.startswith("  › ")]
    assert marked == ["  › - Marta quoted 2,400 euros for the roof repair."]
    assert "\x1b[" not in plain
    coloured = format_results(res, query=query, color=True)
    assert "\x1b[1mroof\x1b[0m" in coloured and "\x1b[1mMarta\x1b[0m" in coloured
    r = res["results"][0]
    assert res["results"][0]["snippet"].split("\n")[snippet_match(r, ["roof"])].startswith("- Marta")


def test_term_spans_never_overlap():
    assert term_spans("Deploying the deploy", ["deploy", "deploying"]) == [(0, 9), (14, 20)]


def test_the_context_cut_falls_between_words():
    text = "word " * 400  # no line ends anywhere: the cut must still fall between words
    head, tail = context.cut(text.strip(), 600)
    assert head.endswith(" ") or head.endswith("word")
    assert tail.startswith("word") and head.split()[-1] == "word"


def test_the_results_row_cuts_between_words():
    from clawmem.tui.widgets.search_pane import _one_line

    line = _one_line("alpha beta gamma " * 20, 40)
    assert line.endswith("…") and len(line) <= 40
    assert line[:-1].split()[-1] in ("alpha", "beta", "gamma")


# ----------------------------------------------------------------------------- near forms (issue 31)


def test_a_name_with_a_typo_is_found_in_its_spelling_here(keyword):
    """"Marya" is one keyboard slip from "Marta", whom the notes name: not an absent name, and
    the note about her comes first, unflagged however little else the question says (a name
    held in a near spelling is held: issue 42 measured such flags on answerable questions). A
    name two letters away is another person's at this length."""
    res = keyword.search("What did Marya say about the roof repair?", explain=True)
    assert res["evidence"]["namedAbsent"] == [] and res["evidence"]["nearNames"] == {"marya": ["marta"]}
    assert res["absent"] is None  # the note holds the rest of the question too: a strong hit
    weak = keyword.search("What did Marya say?", explain=True)  # nothing else to go by: still hers
    assert weak["absent"] is None
    assert weak["results"][0]["path"] == "memory/2026-03-02.md"
    assert res["results"][0]["path"] == "memory/2026-03-02.md"
    assert "marya" in res["results"][0]["explain"]["confidence"]["terms"]  # the near form counts as the word
    far = keyword.search("What did Maryo say about the roof repair?", explain=True)  # marta -> maryo: 2 letters
    assert far["evidence"]["namedAbsent"] == ["maryo"] and far["absent"]
    # a name's near form must be a name here: "lake" is one letter from "Bake", but no note
    # writes it as a name (else "Bart" would be found as "bar" or "part" in anyone's memory)
    word = keyword.search("What did Bake say about the roof repair?", explain=True)
    assert word["evidence"]["namedAbsent"] == ["bake"] and word["absent"]


def test_max_edits_by_length():
    """None under 4 letters (cat lies one letter from bat, cut, cart), 1 up to 6, 2 beyond;
    only words of letters (an id one character off is another id). The vocabulary's look-ups
    (rapidfuzz, jellyfish): edits with the most used first among equals, sound, prefixes."""
    assert [candidates.max_edits(w) for w in ["cat", "lisa", "ingrid", "bartholomew", "a828e60", "小明小明"]] == [0, 1, 1, 2, 0, 0]
    vocab = candidates.Vocabulary([("ingrid", 3), ("ingram", 9), ("catherine", 1), ("forum", 2), ("form", 7),
                                   ("muhammad", 4), ("jonathan", 2), ("james", 5), ("lisa", 1), ("12345", 1)])
    assert [w for _, _, w in vocab.within("ingrud", 1)] == ["ingrid"]
    assert [w for _, _, w in vocab.within("ignrid", 1)] == ["ingrid"]  # two neighbours swapped: one slip
    assert [w for _, _, w in vocab.within("katharine", 2)] == ["catherine"]
    assert [w for _, _, w in vocab.within("fotum", 1)] == ["forum"]
    assert [w for _, _, w in vocab.within("foum", 1)] == ["form", "forum"]  # the most used first
    assert vocab.sounding("muhhamed") == ["muhammad"] and vocab.starting("jon") == ["jonathan"]
    assert "12345" not in vocab.words  # words of letters only


def test_a_near_form_found_by_sound_keeps_enough_of_the_name():
    """Metaphone keeps a name's consonants only. Hannah (HN) shares them with Hina, and they
    start Henderson's and "honestly"'s sound: all three were Hannah's near forms, so a question
    about Hannah asked of another couple's chats came back unflagged (bench/chats.py). Where
    the sound is that short, a sound-alike is another spelling of the name only if it keeps
    most of its letters too (one edit more than a slip: Hina is three of six from Hannah, Jon
    one of three from John), and a short form keeps the name's first letters or at least half
    its sound (Jim's JM of James's JMS; Maisie's MS of Massachusetts's MSXSTS is no short
    form). A sound of four consonants or more tells a name by itself, however its letters
    differ: Muhhamed finds Muhammad, a German question's "Fotografie" finds "photography"."""
    keeps = candidates.keeps_the_name
    assert all(keeps(n, w) for n, w in [("muhhamed", "muhammad"), ("muhhamed", "mohammed"), ("fotografie", "photography"),
                                        ("jim", "james"), ("jon", "john"), ("jon", "jonathan"), ("mel", "melanie"),
                                        ("noor", "nora"), ("maisie", "mississauga")])
    assert not any(keeps(n, w) for n, w in [("hannah", "hina"), ("hannah", "henderson"), ("hannah", "honestly"),
                                            ("maisie", "massachusetts")])


def test_a_dialogue_whose_speaker_is_misspelt_is_still_theirs(workspace, make_engine):
    """Speech-to-text wrote "Lisq" for Lisa: her memory holds Lisa, so the conversation is hers:
    shown, unflagged (it used to come back empty: 'this memory never mentions lisq', then
    flagged with the name it was taken for; issue 42: a name held in a near spelling is held)."""
    two_children(workspace, 70)
    eng = make_engine()
    eng.run_index()
    res = eng.search(LISA_TALK.replace("Lisa", "Lisq"), explain=True)
    assert res["evidence"]["speakersAbsent"] == [] and res["results"] and res["absent"] is None
    assert res["evidence"]["nearNames"] == {"lisq": ["lisa"]}
    assert any(r["path"] == "memory/lisa-homework.md" for r in res["results"][:3])
    gone = eng.search(LISA_TALK.replace("Lisa", "Okonkwo"))  # someone else entirely: still emptied
    assert gone["results"] == [] and "okonkwo" in gone["absent"]["reason"]


def test_a_slip_in_an_inflection_finds_the_word_in_the_form_this_memory_writes(workspace, make_engine):
    """"sneezung" is one slip from "sneezing", which this memory writes as "sneeze": the word is
    here, not flagged (it was "this memory never uses 'sneezung' in any form"); a word with no
    kin here ("wheezung") still is."""
    write(workspace / "memory" / "2026-02-04.md", "- the new rug in the living room makes me sneeze every morning\n")
    filler(workspace, "budget")
    eng = make_engine()
    eng.run_index()
    res = eng.search("Why do I keep sneezung in the living room?", explain=True)
    assert res["absent"] is None and res["results"][0]["path"] == "memory/2026-02-04.md", res["evidence"]
    other = eng.search("Why do I keep wheezung in the living room?", explain=True)
    assert other["absent"] and "wheezung" in other["absent"]["reason"], other["evidence"]


def test_abbreviations_are_found_in_their_long_and_dotted_forms(workspace, make_engine):
    """"USA" where a note writes "U.S.A.", "dept." where it writes "department", and "U.S."
    whose single letters are no words: none of them says absent."""
    write(workspace / "memory" / "2026-02-04.md", "- moved to the U.S.A. in 2019 for the job\n- the finance department approved the budget\n")
    filler(workspace, "budget")
    eng = make_engine()
    eng.run_index()
    for q in ("When did I move to the USA?", "Which dept. approved the budget?", "When did I move to the U.S. for the job?"):
        res = eng.search(q, explain=True)
        assert res["absent"] is None and res["evidence"]["absentTerms"] == [], (q, res["evidence"]["absentTerms"])
        assert res["results"][0]["path"] == "memory/2026-02-04.md", q


def test_the_verdict_reaches_the_cli_and_the_agent(keyword):
    """`absent` is at the top of the reply (the engine's result, --json, MCP: one dict), the CLI
    prints it above the hits, and the agent's tool description says how to read it."""
    from clawmem.engine.agent.prompts import SEARCH_ABSENT_RULE
    from clawmem.engine.agent.tools import memory_search

    res = keyword.search("What did Okonkwo say about the roof repair?")
    assert res.as_json()["absent"] == {"reason": "this memory never mentions 'okonkwo'"}
    text = format_results(res.as_json(), query="What did Okonkwo say about the roof repair?")
    assert "# probably not in this memory: this memory never mentions 'okonkwo'" in text
    assert "0." in text.split("probably not in this memory")[1]  # the hits are printed below it
    payload = memory_search(keyword, "What did Okonkwo say about the roof repair?")
    assert payload["absent"]["reason"] == "this memory never mentions 'okonkwo'" and payload["results"]
    assert memory_search(keyword, "roof repair Marta")["absent"] is None
    assert "`absent`" in SEARCH_ABSENT_RULE


QUESTIONS_ASKED_OF_THE_WRONG_MEMORY = [
    "What did Okonkwo say about the roof repair?",            # an absent name
    "when do I swim and what does the doctor think",          # a missing word, weak hits
    "Which sealant did I use on the boat deck?",              # a missing word beside a near topic
]


@pytest.mark.slow
@pytest.mark.parametrize("query", QUESTIONS_ASKED_OF_THE_WRONG_MEMORY)
def test_the_default_never_hides_what_keyword_only_shows(notes, make_engine, tiny_model, query):
    """Whatever the vectors say, a verdict of absence that keyword-only search would not
    empty on never empties the default's list: keyword-only's first hit is in it, flagged."""
    hy = make_engine({"provider": "local", "local.modelPath": str(tiny_model)})
    list(hy.index())
    kw = make_engine()
    list(kw.index())
    shown_kw = kw.search(query, max_results=10)
    shown_hy = hy.search(query, max_results=10, explain=True)
    assert shown_kw["results"] and shown_hy["mode"] == "hybrid"
    assert shown_hy["hidden"]["count"] == 0 and (shown_hy["absent"] or "sealant" in query)
    first = (shown_kw["results"][0]["path"], shown_kw["results"][0]["startLine"])
    assert first in {(r["path"], r["startLine"]) for r in shown_hy["results"]}


def test_verdicts_that_empty_are_the_ones_keyword_only_reaches_from_the_words_alone():
    ev = {"candidates": 3, "best": 0.1, "namedAbsent": ["okonkwo"], "speakersAbsent": [], "absentShare": 0.3,
          "absentTerms": ["okonkwo"], "presentCoverage": 0.5, "presentWeight": 0.2, "rareWeight": 0.2, "formsChecked": True}
    assert verdict(ev)["kind"] == "named" and not verdict(ev)["emptied"]
    assert verdict({**ev, "speakersAbsent": ["okonkwo"]})["emptied"]
    assert verdict({**ev, "namedAbsent": [], "absentShare": 1.0})["emptied"]
    assert verdict({**ev, "namedAbsent": [], "candidates": 0})["emptied"]
    assert not verdict({**ev, "namedAbsent": []})["emptied"]  # a missing word, weak hits: flagged
    assert verdict({**ev, "namedAbsent": [], "absentTerms": [], "best": 0.45}) is None
    # a question's missing word flags unless a strong hit holds the rest (issue 42), and never
    # before a verdict that empties
    assert verdict({**ev, "namedAbsent": [], "best": 0.9}) is None
    assert verdict({**ev, "namedAbsent": [], "best": 0.9, "absentShare": 1.0})["kind"] == "share"
    assert verdict({**ev, "namedAbsent": [], "candidates": 0})["kind"] == "none"


def garden_memory(workspace, others: int = 40):
    """One note on the garden plan among `others` notes on other things."""
    write(workspace / "memory" / "2026-04-02.md", "- Garden plan: tomatoes and basil along the south fence.\n")
    topics = ["deploy", "billing", "travel", "dentist", "piano", "backup", "budget", "invoice"]
    for i in range(others):
        t = topics[i % len(topics)]
        write(workspace / "memory" / f"2026-01-{i % 28 + 1:02d}-{i}.md", f"- The {t} work went fine on day {i}, more {t} tomorrow.\n")


def test_high_only_when_the_passage_holds_the_whole_question_and_the_memory_every_word(workspace, make_engine):
    """`high` says "this passage answers the question" (search.untrusted). The one note holding
    every word of the question is high; asked with a word this memory never uses ("zucchini"),
    the same note holds only part of the question and is medium, its reason in the explanation;
    so is a passage holding some of the words while another holds them all."""
    garden_memory(workspace)
    eng = make_engine()
    eng.run_index()
    whole = eng.search("garden plan tomatoes basil", explain=True)["results"][0]
    assert whole["path"] == "memory/2026-04-02.md" and whole["band"] == "high"
    part = eng.search("garden plan tomatoes zucchini", explain=True)
    top = part["results"][0]
    assert top["path"] == "memory/2026-04-02.md" and top["explain"]["confidence"]["own"] >= ranking.band_floor("high")
    assert top["band"] == "medium" and "never uses" in top["explain"]["confidence"]["notHigh"]
    assert "not high: the query has a word this memory never uses" in dict(explain_parts(top["explain"]))["score"]
    assert part["evidence"]["high"] == 0


def test_high_counts_the_chunks_merged_into_a_hit_as_its_own():
    """Both channels must pick the passage (search.untrusted); a hit that absorbed an
    overlapping chunk (merge_overlapping) holds that chunk's text, so the chunk's ranks count as
    its own: with vectors the fusion can make the vectors' first the host of the keyword
    search's first, which is the same passage. Vectors that see nothing above chance
    (bestVector 0) have no say."""
    from clawmem.engine.search import Candidate
    from clawmem.engine.search.evidence import untrusted

    ev = {"absent": None, "absentTerms": [], "nearNames": {}, "weights": {"vatican": 0.9, "deli": 0.8}, "bestVector": 0.4}

    def hit(kw, vec, merged=()):
        c = Candidate(7, kw_rank=kw, vec_rank=vec)
        c.parts = {"confidence": {"terms": ["vatican", "deli"], "termCoverage": 1.0}, "merged": list(merged)}
        return c

    assert untrusted(hit(1, 1), ev, True, {}) is None
    assert untrusted(hit(2, 1), ev, True, {}) == "not the keyword search's first hit"
    assert untrusted(hit(2, 1, [{"keywordRank": 1, "vectorRank": 9}]), ev, True, {}) is None
    assert untrusted(hit(1, 4), ev, True, {}) == "the vectors rank another passage first"
    assert untrusted(hit(1, 4, [{"keywordRank": None, "vectorRank": 1}]), ev, True, {}) is None
    assert untrusted(hit(1, 4), {**ev, "bestVector": 0.0}, True, {}) is None
    assert untrusted(hit(1, 4), ev, True, {7: {"token": "okonkwo"}}) is None  # a rare name: vectors never saw it
    assert untrusted(hit(1, None), ev, False, {}) is None  # keyword-only: one channel


def zoo_memory(workspace):
    """Two children's days at the zoo among other notes: the same words but for the animals."""
    write(workspace / "memory" / "2026-05-01.md", "- Bart went to the zoo and saw the elephants and the giraffes.\n")
    write(workspace / "memory" / "2026-05-02.md", "- Lisa went to the zoo and saw the penguins.\n")
    filler(workspace, "gardening")


def test_high_only_when_its_words_set_the_passage_apart_from_every_other(workspace, make_engine):
    """`high` says this passage answers, not the next one (search.untrusted). Asked "zoo
    elephants", Bart's day holds both words and Lisa's day holds "zoo": what sets Bart's apart is
    one word that one note holds, less than a word no note holds (the chance level), so the hit
    is medium with the reason. Asked "zoo elephants giraffes", two such words set it apart: high.
    On conversations the first kind was another child's day, or the next turn repeating a title."""
    zoo_memory(workspace)
    eng = make_engine()
    eng.run_index()
    one = eng.search("zoo elephants", explain=True)
    top = one["results"][0]
    assert top["path"] == "memory/2026-05-01.md" and top["explain"]["confidence"]["own"] >= ranking.band_floor("high")
    assert top["band"] == "medium" and "another passage holds nearly the same words" in top["explain"]["confidence"]["notHigh"]
    assert one["evidence"]["high"] == 0
    two = eng.search("zoo elephants giraffes", explain=True)["results"][0]
    assert two["path"] == "memory/2026-05-01.md" and two["band"] == "high"


def test_a_passage_is_set_apart_only_from_passages_whose_lines_it_does_not_overlap():
    """A chunk overlapping the hit's lines (one merge_overlapping left out for size) is the
    same passage, not a rival: only the others count in the hit's margin (search.apart)."""
    from clawmem.engine.search import Candidate
    from clawmem.engine.search.evidence import apart

    weights = {"bedroom": 0.7, "walls": 0.5, "color": 0.5}

    def chunk(path, start, end, terms):
        c = Candidate(start)
        c.row = (path, "memory", start, end, "", 0, None, None, 0)
        c.parts = {"confidence": {"terms": terms}}
        return c

    hit = chunk("memory/a.md", 10, 30, ["bedroom", "walls", "color"])
    neighbour = chunk("memory/a.md", 25, 40, ["bedroom", "walls"])
    elsewhere = chunk("memory/b.md", 25, 40, ["bedroom", "walls"])
    assert apart(hit, [hit], weights) == 1.7  # over the passages holding none of its words
    assert apart(hit, [hit, neighbour], weights) == 1.7
    assert apart(hit, [hit, neighbour, elsewhere], weights) == 0.5
    assert apart(hit, [hit, chunk("memory/a.md", 31, 40, ["color"])], weights) == 1.2


def scattered_memory(workspace, together: bool):
    """A memory of SMALL_MEMORY+ chunks using "photography" and "workshop": in one note
    (`together`), or in two notes on other things."""
    if together:
        write(workspace / "memory" / "2026-03-01.md", "- Signed up for the photography workshop at the library.\n")
    else:
        write(workspace / "memory" / "2026-03-01.md", "- Sold the old photography books at the flea market.\n")
        write(workspace / "memory" / "2026-03-02.md", "- The pottery workshop moved to Thursdays.\n")
    filler(workspace, "gardening")


@pytest.mark.parametrize("together", [True, False])
def test_a_question_whose_words_occur_only_apart_is_not_high(workspace, make_engine, together):
    """Someone else's long history uses every word of most questions somewhere, but not
    together: a memory naming photography in one note and a workshop in another holds as much
    together as chance gives a memory this size (chanceHeld). chanceHeld does not separate answerable questions from someone else's history (medians 89-93 %
    either way on held-out conversations, issue 42): it lowers a band at most (no hit is `high`),
    never flags: the old expectation here (flagged `scattered`) is what the issue calls wrong.
    The memory whose note holds both words answers unflagged."""
    scattered_memory(workspace, together)
    eng = make_engine()
    eng.run_index()
    res = eng.search("When was the photography workshop?", explain=True)
    ev = res["evidence"]
    assert ev["absentTerms"] == [] and res["results"]
    if together:
        assert res["absent"] is None and ev["bestHeld"] >= ev["usedWeight"] - 0.001
        assert res["results"][0]["path"] == "memory/2026-03-01.md"
    else:
        assert ev["bestHeld"] < ev["usedWeight"] and ev["chanceHeld"] >= 0.5 and ev["absent"] is None
        assert res["hidden"]["count"] == 0 and all(r["band"] != "high" for r in res["results"])


FILLER_WORDS = ("kitchen city code deploy trip coffee weekend dinner car budget paint report call garden music "
                "movie travel book running guitar train server plan beach project hike bus rent email review "
                "lunch meeting").split()


def marta_memory(workspace, notes: int = 150):
    """MEMORY.md says Marta likes hiking; a few daily notes name Marta, two others say "like"
    of something else, the rest are lines of everyday words: a memory of 150+ chunks."""
    import random
    rng = random.Random(31)
    write(workspace / "MEMORY.md", "# Memory\n- Marta likes hiking and black coffee.\n")
    for i in range(notes):
        lines = [" ".join(rng.sample(FILLER_WORDS, 7)).capitalize() + "." for _ in range(5)]
        if i in (10, 40, 70, 100, 130):
            lines.append("Marta called about the weekend trip.")
        if i in (25, 90):
            lines.append("Everyone seems to like the garden.")
        day = f"2025-{1 + i // 28:02d}-{1 + i % 28:02d}"
        write(workspace / "memory" / f"{day}.md", "".join(f"- {line}\n" for line in lines))


def test_a_passage_holding_another_form_of_a_query_word_holds_that_word(workspace, make_engine):
    """"What does Marta like?" of a memory whose MEMORY.md says "Marta likes hiking", with
    "like" itself in two unrelated notes: the passage holds both words of the question (the
    index's forms of every query word count, not only of words no note holds as written), so
    the list answers with MEMORY.md first and no flag. Before, it counted "marta" alone and the
    list was flagged `scattered` (the words "occur here only apart")."""
    marta_memory(workspace)
    eng = make_engine()
    eng.run_index()
    res = eng.search("What does Marta like?", explain=True)
    assert res["absent"] is None, res["absent"]
    first = res["results"][0]
    assert first["path"] == "MEMORY.md"
    assert set(first["explain"]["confidence"]["terms"]) == {"marta", "like"}
    # the word weighs as common as all its forms: "like" in 2 notes, "likes" in 1
    n = res["evidence"]["nDocs"]
    assert res["evidence"]["weights"]["like"] == round(ranking.idf(3, n) / ranking.idf(0, n), 4)
    # FTS5 is still asked for the word as written: BM25 counts no form twice
    from clawmem.engine.index.store import Store
    from clawmem.engine.search.options import Options
    st = Store(eng.index_path)
    try:
        _, info = candidates.keyword_candidates(st, "What does Marta like?", Options(6, 0.0))
    finally:
        st.close()
    assert info["forms"] == {} and "likes" not in info["df"] and "likes" not in info.get("orTerms", [])


def test_scattered_words_lower_a_band_and_never_flag():
    """chanceHeld does not separate answerable questions from someone else's history (medians 89-93 %
    either way on held-out conversations, issue 42): it lowers a band at most (no hit is `high`),
    never flags: the old expectation here (flagged `scattered`) is what the issue calls wrong.
    The rule (search.scattered) compares what the best passage holds with chance (how
    likely chance alone holds as much together somewhere here) and with what the memory uses:
    a passage holding every word used here is never scattered however common the words, nor
    is a small memory, or a question with a missing word (that verdict says more). A pasted
    conversation is judged on the words this memory uses, missing ones or not (it names many
    things in passing)."""
    ev = {"candidates": 6, "best": 0.7, "namedAbsent": [], "speakersAbsent": [], "absentShare": 0.0,
          "absentTerms": [], "presentCoverage": 1.0, "presentWeight": 1.6, "rareWeight": 0.2,
          "formsChecked": True, "nDocs": 450, "vectors": True, "dialogue": False, "bestVector": 0.3,
          "bestHeld": 0.8, "bestHeldTerms": ["workshop"], "usedWeight": 1.6, "chanceHeld": 0.93}
    from clawmem.engine.search.evidence import scattered
    assert scattered(ev) and verdict(ev) is None and verdict({**ev, "best": 0.1}) is None
    assert not scattered({**ev, "chanceHeld": 0.3}) and not scattered({**ev, "chanceHeld": None})
    assert verdict({**ev, "dialogue": True, "absentTerms": ["pottery"], "absentShare": 0.2}) is None
    assert verdict({**ev, "best": 0.2, "absentTerms": ["pottery"], "absentShare": 0.2})["kind"] == "missing"
    assert verdict({**ev, "candidates": 0})["kind"] == "none"
    # where chanceHeld is computed at all (search.query_evidence)
    assert chance_decides(ev)
    assert not chance_decides({**ev, "bestHeld": 0.5, "usedWeight": 0.5})  # holds every word used here
    assert not chance_decides({**ev, "nDocs": SMALL_MEMORY - 1})
    assert not chance_decides({**ev, "candidates": 0})
    assert not chance_decides({**ev, "absentTerms": ["pottery"]})  # a question: the missing word says more
    assert chance_decides({**ev, "dialogue": True, "absentTerms": ["pottery"]})  # a conversation names things in passing


def test_a_hits_terms_of_equal_weight_are_listed_by_name(notes, make_engine):
    """--explain lists the query words a hit holds rarest first, and words of equal weight by
    name: the same JSON in every process (a set's order changes with the hash seed; with six
    words of one weight, set order matches name order once in 720)."""
    write(notes / "memory" / "2026-03-05.md", "# 2026-03-05\n\n- zulu yankee xray whiskey victor uniform drill.\n")
    eng = make_engine()
    list(eng.index())
    hit = eng.search("uniform victor whiskey xray yankee zulu", explain=True)["results"][0]
    assert hit["explain"]["confidence"]["terms"] == ["uniform", "victor", "whiskey", "xray", "yankee", "zulu"]


def brute_chance(shares, n_docs, held):
    """chance_held by its definition, every set of the words (2^k sets), weights counted in
    1/512ths of what the passage holds."""
    import itertools
    unit = sum(held) / 512
    need = sum(round(w / unit) for w in held)
    one = 0.0
    for picks in itertools.product((False, True), repeat=len(shares)):
        if sum(round(w / unit) for (w, _), p in zip(shares, picks) if p) >= need:
            prob = 1.0
            for (_, share), p in zip(shares, picks):
                prob *= share if p else 1.0 - share
            one += prob
    return -math.expm1(n_docs * math.log1p(-one)) if one < 1.0 else 1.0  # 1 - (1 - one)^n, exact for a tiny `one`


from hypothesis import given, settings, strategies as st


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 999), st.floats(0.0, 1.0)), min_size=1, max_size=8),
       st.integers(1, 5000), st.data())
def test_chance_held_is_the_probability_chance_holds_as_much_somewhere(words, n_docs, data):
    """evidence.chance_held against its definition: over every set of the words (placed in each
    chunk independently, each as often as the index holds it), the probability that at least one
    of n chunks holds words weighing as much as the best passage's (a set of the same words).
    That passage's own set always counts, so chance is at least that set's."""
    shares = [(w / 1000, share) for w, share in words]
    picks = data.draw(st.lists(st.booleans(), min_size=len(shares), max_size=len(shares)).filter(any))
    held = [w for (w, _), p in zip(shares, picks) if p]
    got = chance_held(shares, n_docs, held)
    # chance_held drops sums less likely than 1e-12 (at most 512 of them per word): each chunk's
    # chance may be off by that much, and n chunks' by n times it
    pruned = 1e-9 + n_docs * len(shares) * 512e-12
    assert got == pytest.approx(brute_chance(shares, n_docs, held), abs=pruned)
    own = 1.0
    for (_, share), p in zip(shares, picks):
        own *= share if p else 1.0
    assert got >= 1.0 - (1.0 - own) ** n_docs - pruned


def test_a_words_share_is_read_back_from_its_weight():
    """ranking.doc_share inverts the weight search gives a word (idf scaled by a missing
    word's): the share of chunks holding it, 0 for a word no chunk holds."""
    for n in (64, 450, 20000):
        for df in (0, 1, 7, n // 3, n):
            w = ranking.idf(df, n) / ranking.idf(0, n)
            assert ranking.doc_share(w, n) == pytest.approx(df / n, abs=1e-9)


def common_words_memory(workspace, answer: bool):
    """250 notes, each one line; six everyday words of a question each stand in a random seventh of
    them, so two or three meet on some line by chance. `answer`: one more note holds four of them
    together (the passage that answers)."""
    import random
    rng = random.Random(7)
    words = ["garden", "weekend", "neighbour", "fence", "paint", "colour"]
    for i in range(250):
        held = [w for w in words if rng.random() < 0.15]
        write(workspace / "memory" / "log" / f"n{i:03d}.md", f"- Day {i}: {' '.join(held)} and the usual chores.\n")
    if answer:
        write(workspace / "MEMORY.md", "# Memory\n- We will paint the garden fence with the neighbour this weekend.\n")


@pytest.mark.parametrize("answer", [True, False])
def test_a_question_of_common_words_that_meet_only_by_chance_is_not_high(workspace, make_engine, answer):
    """A question of six words each a seventh of the notes use: some line holds two or three of
    them by chance, and a memory of 250 notes holds that much together by chance more often than
    not. chanceHeld does not separate answerable questions from someone else's history (medians 89-93 %
    either way on held-out conversations, issue 42): it lowers a band at most (no hit is `high`),
    never flags: the old expectation here (flagged `scattered`) is what the issue calls wrong. The memory with one note holding four of them together (as
    rare as chance almost never makes it) answers unflagged, that note first."""
    common_words_memory(workspace, answer)
    eng = make_engine()
    eng.run_index()
    res = eng.search("Which colour did we paint the garden fence with the neighbour last weekend?", explain=True)
    ev = res["evidence"]
    assert ev["absentTerms"] == [] and res["results"] and res["hidden"]["count"] == 0
    if answer:
        assert res["absent"] is None and ev["chanceHeld"] < 0.5, ev
        assert res["results"][0]["path"] == "MEMORY.md"
    else:
        assert ev["bestHeld"] >= 1.0 and ev["chanceHeld"] >= 0.5, ev
        assert ev["absent"] is None and all(r["band"] != "high" for r in res["results"])


@pytest.mark.parametrize("answer", [True, False])
def test_a_pasted_conversation_whose_words_meet_only_by_chance_is_not_high(workspace, make_engine, answer):
    """A pasted conversation (Lisa and Bart speak, both known here) about painting the garden
    fence, asked of 250 notes where those everyday words each stand in a seventh of the notes:
    its words meet here only where chance puts them. chanceHeld does not separate answerable questions from someone else's history (medians 89-93 %
    either way on held-out conversations, issue 42): it lowers a band at most (no hit is `high`),
    never flags: the old expectation here (flagged `scattered`) is what the issue calls wrong.
    (The conversation holds words this memory never uses, "ladder": a pasted conversation names
    many things in passing.) With one note holding the fence, the paint
    and the neighbour together, that note answers first, unflagged."""
    common_words_memory(workspace, answer)
    for i in range(40):  # the speakers are known here, each in notes of their own
        write(workspace / "memory" / "people" / f"p{i:02d}.md", f"- {'Lisa' if i % 2 else 'Bart'} called on day {i}.\n")
    eng = make_engine()
    eng.run_index()
    talk = ("Lisa: We will paint the garden fence this weekend.\nBart: Ask the neighbour for a ladder.\n"
            "Lisa: And which colour?\nBart: The one the neighbour likes.\n")
    res = eng.search(talk, explain=True)
    ev = res["evidence"]
    assert ev["dialogue"] and "ladder" in ev["absentTerms"] and res["results"] and res["hidden"]["count"] == 0
    if answer:
        assert res["absent"] is None, res["absent"]
        assert res["results"][0]["path"] == "MEMORY.md"
    else:
        assert ev["chanceHeld"] >= 0.5 and ev["absent"] is None, ev
        assert all(r["band"] != "high" for r in res["results"])


def test_a_year_is_no_identifier_and_no_missing_topic_word(workspace, make_engine):
    """"... in June 2022" asked of a memory whose only 2022 is an unrelated greeting: the year
    neither pins that greeting as an identifier would (it came back `high`, issue 42), nor says
    absent where the memory lacks it ("2023" below)."""
    write(workspace / "memory" / "2026-01-01.md", "- Happy new year 2022 to the whole team!\n")
    write(workspace / "memory" / "2026-01-02.md", "- The kayak trip to the fjord was booked for the summer.\n")
    filler(workspace, "kayak")
    eng = make_engine()
    eng.run_index()
    res = eng.search("Which team dinner did we have in June 2022?", explain=True)
    assert all(r["band"] != "high" and "exact" not in r["explain"]["confidence"] for r in res["results"]), res["results"]
    trip = eng.search("Where did the kayak trip to the fjord go in 2023?", explain=True)
    assert "2023" not in trip["evidence"]["absentTerms"] and trip["absent"] is None, trip["evidence"]["absent"]


def forum_memory(workspace):
    write(workspace / "memory" / "2026-04-01.md", "- Muhammad posted the club rules on the forum.\n- Jonathan moderates the forum threads.\n")
    filler(workspace, "forum")


@pytest.mark.parametrize("query", [
    "What did Muhammad post on the fotum?",  # a slip in a topic word (it flagged 94-99 %)
    "What did Muhhamed post on the forum?",  # a name spelt by its sound
    "What did Jon moderate on the forum?",  # a short form of a name here
    "According to my notes, how would you describe what was discussed regarding the forum rules?",  # words of the asking
])
def test_near_forms_and_words_of_the_asking_never_say_absent(workspace, make_engine, query):
    """Issue 42: a missing word is looked up in the index's vocabulary by edit distance with
    the most used first (rapidfuzz), a name also by sound (metaphone) and as a short form; words
    about the question (according, regarding, discussed) are not its topic. Each used to flag."""
    forum_memory(workspace)
    eng = make_engine()
    eng.run_index()
    res = eng.search(query, explain=True)
    assert res["absent"] is None, res["evidence"]["absent"]
    assert res["results"][0]["path"] == "memory/2026-04-01.md"
    # someone else's name or topic still is: a word no form of which is here
    other = eng.search("What did Okonkwo post on the forum?", explain=True)
    assert other["absent"] and "'okonkwo'" in other["absent"]["reason"]
    topic = eng.search("Which sealant is on the forum?", explain=True)
    assert topic["absent"] and "'sealant'" in topic["absent"]["reason"]


def searched_afresh(make_engine, query: str) -> dict:
    """`query` asked (with --explain) of a new engine over the workspace as it now stands."""
    eng = make_engine()
    eng.run_index()
    return eng.search(query, explain=True)


def assert_speaker_never_mentioned(res: dict, name: str) -> None:
    """The list is emptied: the memory never mentions `name`, who speaks in the query."""
    assert res["evidence"]["speakersAbsent"] == [name] and res["results"] == [], res["evidence"]["nearNames"]
    assert res["hidden"]["reason"] == f"this memory never mentions '{name}', who speaks in the query"


def test_a_word_capitalised_now_and_then_is_no_near_spelling_of_a_name(workspace, make_engine):
    """A conversation Bart pasted, asked of someone else's notes on art and bars that once name
    a book ("The Art of War") and once start a line with "Art": "art" is a word here, written
    mostly without its capital, not a near spelling of Bart. So the list is emptied, "this
    memory never mentions 'bart', who speaks in the query" (it was shown unflagged: Bart held
    as "Art"; MADial's dialogues asked of LongMemEval's histories found "art", "bar", "list"
    for Bart and Lisa so, issue 42). Once the notes name a Bert, always with his capital, a
    slip of the ear or the keyboard may mean him: shown, not emptied."""
    write(workspace / "memory" / "2026-05-01.md",
          "- Finished reading The Art of War on the train.\n- Art class on Tuesday: clay.\n")
    for i in range(12):
        write(workspace / "memory" / f"2026-05-{i + 2:02d}.md", f"- Visited the art museum {i}, then a bar by the river.\n")
    filler(workspace, "art")
    pasted = "Bart: I made a clay pot at school today!\nAssistant: That sounds wonderful, what colour is it?\nBart: Blue, like the river."
    assert_speaker_never_mentioned(searched_afresh(make_engine, pasted), "bart")
    write(workspace / "memory" / "2026-06-01.md", "- Bert fixed the clay oven.\n- Met Bert and Anna at the river.\n")
    res = searched_afresh(make_engine, pasted)
    assert res["evidence"]["speakersNear"] == ["bart"] and res["results"] and res["absent"] is None


def test_a_capital_that_opens_a_line_does_not_make_a_word_a_name(workspace, make_engine):
    """Lisa's pasted conversation asked of someone else's notes whose headings and list items
    open with "Listen" (a word that sounds as Lisa starts), which they write in lower case
    inside sentences and capitalised inside one only as a book's title: counted by capitals,
    "listen" was mostly capitalised and so a near spelling of Lisa, and the list came back
    unflagged. A capital where a line or sentence starts says nothing (any word takes one), so
    "listen" is a word here and the list is emptied: "this memory never mentions 'lisa'". Notes
    where a Liza speaks, her name only ever opening a line as a speaker's label, still hold a
    near spelling of Lisa: shown, not emptied."""
    write(workspace / "memory" / "2026-05-01.md", "- Finished the novel Listen Slowly on the train.\n")
    for i in range(12):
        write(workspace / "memory" / f"2026-05-{i + 2:02d}.md",
              f"## Listen\n\n- Listen to rain recording {i} before sleep.\n- Listen again on the bus.\n"
              f"- I listen to podcasts on the bus {i}.\n")
    filler(workspace, "podcast")
    pasted = "Lisa: I planted tulips in the garden today!\nAssistant: Lovely, which colours?\nLisa: Red and yellow, by the fence."
    eng = make_engine()
    eng.run_index()
    res = eng.search(pasted, explain=True)
    assert res["evidence"]["speakersAbsent"] == ["lisa"] and res["results"] == [], res["evidence"]["nearNames"]
    for i in range(3):
        write(workspace / "memory" / f"2026-06-{i + 1:02d}.md", f"- **Liza:** the garden fence needs paint {i}.\n- **Assistant:** Noted.\n")
    eng = make_engine()
    eng.run_index()
    res = eng.search(pasted, explain=True)
    assert res["evidence"]["speakersNear"] == ["lisa"] and res["results"] and res["absent"] is None, res["evidence"]["nearNames"]


def test_a_capital_that_opens_a_table_cell_does_not_make_a_word_a_name(workspace, make_engine):
    """Lisa's pasted conversation asked of someone else's notes that log their week in tables
    ("| Lesson planning | 2 h |") and write "lesson" in lower case in their prose: counted by
    capitals, the table's "Lesson" (whose sound starts as Lisa's does) outnumbered the prose's
    "lesson" and made it a near spelling of Lisa, so the list came back shown, unflagged. A
    cell opens like a line, where any word takes a capital: "lesson" is a word here, and the
    list is emptied, "this memory never mentions 'lisa', who speaks in the query"."""
    for i in range(12):
        write(workspace / "memory" / f"2026-05-{i + 1:02d}.md",
              f"| task | hours |\n|---|---|\n| Lesson planning | {i % 3 + 1} h |\n| Marking {i} | 1 h |\n")
    for i in range(3):
        write(workspace / "memory" / f"2026-06-{i + 1:02d}.md", f"- The lesson on fractions ran long {i}.\n")
    filler(workspace, "podcast")
    pasted = "Lisa: I planted tulips in the garden today!\nAssistant: Lovely, which colours?\nLisa: Red and yellow, by the fence."
    assert_speaker_never_mentioned(searched_afresh(make_engine, pasted), "lisa")


def test_a_speaker_held_only_in_near_spellings_that_never_speak_in_these_transcripts_is_flagged(workspace, make_engine):
    """Bart's pasted conversation asked of someone else's chat logs ("- **User:** ...",
    "- **Assistant:** ..."), which name a Bert in passing, always with his capital: Bert is a
    near spelling of Bart, and the list came back unflagged, though in a memory of transcripts
    whoever speaks has their lines labelled and no line here is Bert's (MADial's dialogues asked
    of LongMemEval's histories: "Bard", "Bride", "British" for Bart; issue 42). Now it is shown
    flagged: "no one speaks here as 'bart', who speaks in the query (only near spellings:
    'bert')"; so too where Bert stands only in a long message's middle, a passage that holds no
    turn's label (a chat log's long messages leave a passage one turn or none: the turns are
    counted over the passages holding him, or else over those naming a role). Once Bert speaks
    in the logs (a "- **Bert:**" line), a slip of the ear may mean him: shown, unflagged. Notes
    that label no one's lines keep a near name as held (the test above: Bert in notes; and
    test_a_dialogue_whose_speaker_is_misspelt_is_still_theirs)."""
    def chats(bert: str):
        for i in range(12):
            write(workspace / "memory" / f"2026-05-{i + 1:02d}.md", f"## 10:00 chat {i}\n\n- **User:** My neighbour{bert} lent "
                  f"me a ladder {i}.\n- **Assistant:** Kind of them! What will you paint?\n")  # a turn each
    filler(workspace, "river")
    pasted = "Bart: I made a clay pot at school today!\nAssistant: That sounds wonderful, what colour is it?\nBart: Blue, like the river."
    flagged = {"reason": "no one speaks here as 'bart', who speaks in the query (only near spellings: 'bert')"}
    chats(" Bert")
    res = searched_afresh(make_engine, pasted)
    assert res["results"] and res["absent"] == flagged, res["evidence"]["nearNames"]
    assert res["evidence"]["speakersUnheard"] == ["bart"] and verdict(res["evidence"])["emptied"] is False
    chats("")
    write(workspace / "memory" / "2026-05-20.md", "  2. **Bert's Ladders**: rents ladders by the day, ask for Bert.\n")
    res = searched_afresh(make_engine, pasted)
    assert res["results"] and res["absent"] == flagged, res["evidence"]["nearNames"]
    write(workspace / "memory" / "2026-06-01.md", "- **Bert:** I fired the clay pot in the kiln.\n- **Assistant:** Nice.\n")
    res = searched_afresh(make_engine, pasted)
    assert res["evidence"]["speakersUnheard"] == [] and res["results"] and res["absent"] is None, res["evidence"]["absent"]


def test_a_name_the_memory_lacks_does_not_make_a_question_another_language(workspace, make_engine):
    """"What did Dr. Okonkwo tell Ingrid about my knee after the swim?" asked of someone else's
    notes on swimming: "okonkwo", "ingrid" and "knee" are used here in no form. Most of a
    question's topic words missing reads as another language, whose words say nothing (German
    asked of English notes), but a name is no language's word: counted, the two names tipped
    this question over half (3 of 5) and it came back unflagged. Of its other topic words
    (knee, swim, after) one is missing: it is flagged "this memory never mentions 'okonkwo' ...".
    A German question still raises nothing."""
    filler(workspace, "swim")
    eng = make_engine()
    eng.run_index()
    res = eng.search("What did Dr. Okonkwo tell Ingrid about my knee after the swim?", explain=True)
    assert res["evidence"]["topicAbsentShare"] <= 0.5 and "never mentions 'okonkwo'" in res["absent"]["reason"], res["evidence"]
    german = eng.search("Was hat Dr. Okonkwo im Podcast über mein Knie gesagt?", explain=True)
    assert german["evidence"]["topicAbsentShare"] > 0.5 and german["absent"] is None, german["evidence"]["absent"]


def test_words_of_the_asking_and_slips_of_everyday_words():
    from clawmem.engine.search.everyday import is_asking, near_everyday
    assert all(is_asking(w) for w in ["inferred", "regarding", "according", "discussing", "recently"])
    assert not any(is_asking(w) for w in ["sealant", "forum", "powwows", "describe", "ring"])
    assert near_everyday("tonifht") and near_everyday("ysterday") and not near_everyday("sealant")


def test_a_short_name_this_memory_holds_only_as_a_word_is_not_held(workspace, make_engine):
    """"What did Bar say about the sale?" asked of notes where "bar" is only a word (the bar by
    the harbour, the Harbour Bar): the name Bar was held in letters, so the list came back
    unflagged, as if Bar were someone here (LongMemEval's questions with a nickname, asked of
    someone else's history: "Bar", "Per", "Win" found as words, "Wil" in "will"; issue 42). A
    name stands alone with its capital: now the list is shown flagged, "this memory never
    writes 'bar' as a name, only as words ('bar')". Once a note says "Coffee with Bar on
    Monday", Bar is someone here: shown, unflagged; so too where the memory writes Barbara, of
    whom Bar is a short form. Nor is a word of a title in the question a name ("the Bar Harbor
    sale")."""
    filler(workspace, "sale")
    write(workspace / "memory" / "2026-04-01.md", "- Drinks at the bar by the harbour; we will go again.\n- Lunch at the Harbour Bar.\n")
    res = searched_afresh(make_engine, "What did Bar say about the sale?")
    assert res["results"] and res["evidence"]["namesAsWords"] == ["bar"], res["evidence"]["nearNames"]
    assert res["absent"] == {"reason": "this memory never writes 'bar' as a name, only as words ('bar')"}
    assert verdict(res["evidence"])["emptied"] is False
    inflected = searched_afresh(make_engine, "What did Wil say about the sale?")  # held only in "will"
    assert inflected["evidence"]["namesAsWords"] == ["wil"], inflected["evidence"]["absent"]
    title = searched_afresh(make_engine, "What happened at the Bar Harbor sale?")
    assert title["evidence"]["namesAsWords"] == [], title["evidence"]["absent"]
    write(workspace / "memory" / "2026-04-02.md", "- Coffee with Bar on Monday.\n")
    res = searched_afresh(make_engine, "What did Bar say about the sale?")
    assert res["evidence"]["namesAsWords"] == [] and res["evidence"]["nearNames"] == {}
    assert res["results"] and res["absent"] is None, res["evidence"]["absent"]
    write(workspace / "memory" / "2026-04-02.md", "- Called Barbara about the sale; she brings lemon bars.\n")
    res = searched_afresh(make_engine, "What did Bar say about the sale?")
    assert res["evidence"]["namesAsWords"] == [], res["evidence"]["absent"]
    assert res["results"] and res["absent"] is None, res["evidence"]["absent"]


def test_a_relation_capitalised_as_a_name_is_held(workspace, make_engine):
    """"What did Mom say about the sale?" asked of notes that say "Called my mom about the
    sale": the memory writes "mom" only in lower case, so the question's Mom, a name by its
    capital, counted as held only as a word and the list came back flagged "this memory never
    writes 'mom' as a name", for a question it answers. A word written mostly after a
    possessive ("my mom", "her coach") names a relation, and capitalised it names that person:
    now the list is shown unflagged, the note first. "Bar" stays a word where "my bar exam" is
    one use of it among others ("the bar by the harbour")."""
    filler(workspace, "sale")
    write(workspace / "memory" / "2026-04-01.md", "- Called my mom about the sale; she wants the blue lamp.\n")
    write(workspace / "memory" / "2026-04-02.md", "- Her coach moved practice to Friday.\n")
    write(workspace / "memory" / "2026-04-03.md", "- Drinks at the bar by the harbour.\n")
    write(workspace / "memory" / "2026-04-04.md", "- Studied for my bar exam.\n")
    for question, note in [("What did Mom say about the sale?", "2026-04-01.md"), ("When did Coach move practice?", "2026-04-02.md")]:
        res = searched_afresh(make_engine, question)
        assert res["evidence"]["namesAsWords"] == [] and res["absent"] is None, (question, res["absent"])
        assert res["results"][0]["path"] == f"memory/{note}", question
    res = searched_afresh(make_engine, "What did Bar say about the sale?")
    assert res["evidence"]["namesAsWords"] == ["bar"], res["absent"]
    assert res["absent"] == {"reason": "this memory never writes 'bar' as a name, only as words ('bar')"}


def test_lone_names():
    assert candidates.lone_names("What did Bar say at the Bar Harbor sale?") == ["bar"]
    assert candidates.lone_names("Did Mel's team win? Ask Win.") == ["mel", "win"]
    assert candidates.lone_names("What did I buy in New York City with Dr. Okonkwo?") == []
    assert candidates.lone_names("Which DIY EPs did Mom buy?") == ["mom"]  # a run of capitals is no name
    assert candidates.lone_names("What did I buy at SaveMart?") == ["savemart"]  # a capital inside a name is
    # a list's mark, a heading's or a table's bar opens what follows, as a sentence's start does
    assert candidates.lone_names("## Lesson plan\n- **Mark:** I met Mark there. Mark the date. | Art | x |") == ["mark"]
    # with openers, a word opening a line or a sentence too, if it stands alone
    assert candidates.lone_names("- Lisa played.\n**Bart:** Moulin Rouge, then Milan.", openers=True) == ["lisa", "bart", "milan"]


def test_a_name_held_only_in_near_forms_that_are_words_here_is_not_held(workspace, make_engine):
    """"What did Melanie say about the sale?" asked of notes that hold "millennium" (the
    millennium bug; the Millennium Falcon in a title): by sound it is a near form of Melanie,
    and some passage capitalises it, so Melanie counted as held and the list came back
    unflagged (LongMemEval's questions naming someone, asked of another history: "millennium",
    "million", "Mulaney" for Melanie; issue 42). Now a near form holds a name only where this
    memory writes it as a name, standing alone with its capital (at a line's start too, for a
    word it never writes in lower case): shown flagged, "this memory never writes 'melanie' as
    a name, only as words ('millennium')". So too Ingrid's "ingredients", a word that a label
    ("**Ingredients:**") capitalises, Augustin's "August", a month, and Cresta's "Crest", which
    only a title writes ("the Falcon Crest tickets"). The form is still searched. A slip in a
    name written with a capital inside ("Savemaet" for SaveMart) still finds it, and a slip in
    the name of someone the memory writes about ("Melanei" for Melanie) finds her: shown,
    unflagged."""
    filler(workspace, "sale")
    write(workspace / "memory" / "2026-04-01.md", "- Fixed the millennium bug in the old till.\n- Built the Millennium Falcon kit.\n"
          "- Lost the Falcon Crest tickets.\n- Bought milk at SaveMart.\n"
          "\n## Cake\n\n**Ingredients:** flour, eggs; the ingredients came from the market.\n\n- Back in August we sold out.\n")
    res = searched_afresh(make_engine, "What did Melanie say about the sale?")
    assert res["evidence"]["nearNames"] == {"melanie": ["millennium"]} and res["evidence"]["namesAsWords"] == ["melanie"]
    assert res["results"] and res["absent"] == {"reason": "this memory never writes 'melanie' as a name, only as words ('millennium')"}
    eng = make_engine()
    # a label opening a line; a month; a word only a title writes (with its capital, always)
    for name, near in (("ingrid", "ingredients"), ("augustin", "august"), ("cresta", "crest")):
        res = eng.search(f"What did {name.title()} say about the sale?", explain=True)
        assert res["evidence"]["nearNames"] == {name: [near]} and res["evidence"]["namesAsWords"] == [name], res["evidence"]["absent"]
    camel = eng.search("What did I buy at Savemaet?", explain=True)  # a slip in a name written with a capital inside
    assert camel["evidence"]["nearNames"] == {"savemaet": ["savemart"]} and camel["evidence"]["namesAsWords"] == []
    write(workspace / "memory" / "2026-04-02.md", "- Melanie ran the cake stall.\n")
    res = searched_afresh(make_engine, "What did Melanei say about the sale?")
    assert res["evidence"]["nearNames"]["melanei"][0] == "melanie" and res["evidence"]["namesAsWords"] == []
    assert res["results"] and res["absent"] is None, res["evidence"]["absent"]



JON_AND_HANNAH = [  # a chat between two friends, as conversation benchmarks lay one out (LoCoMo)
    ("Jon", "Hannah! Guess who signed a lease this afternoon, for the old laundromat on Carver Street."),
    ("Hannah", "No way, congrats! What is the name of the shop, and where is the party?"),
    ("Jon", "Second Gear Cycles. A second chance for old bikes, and a second career for me. The party is at the bar by the river."),
    ("Hannah", "I love it. I finished a lopsided bowl at pottery class, and the kiln cracked my mug."),
    ("Jon", "Ha. My dad is coming to look at the space with me in August; he will have opinions of it."),
    ("Hannah", "Tell him I said hi. Pickles chewed another seed packet, the tomatoes are late again."),
    ("Jon", "What did your class say about the bowl? I did not know you had a kiln at the studio."),
]


def chat_memory(workspace, sessions: int = 12) -> None:
    """Jon and Hannah's chats, a session a day: a memory of under SMALL_MEMORY chunks and a
    few hundred distinct words, as one conversation benchmark's history is."""
    for n in range(sessions):
        day = f"2023-0{1 + n // 6}-{10 + n:02d}"
        turns = "\n".join(f"- **{who}:** {text} ({n})" for who, text in JON_AND_HANNAH)
        write(workspace / "memory" / f"{day}.md", f"# {day}\n\n## 19:45 — chat session {n + 1}\n\n{turns}\n")


def chat_engine(workspace, make_engine, later: str = ""):
    """An engine over Jon and Hannah's chats, indexed; `later`: turns of a session after them."""
    chat_memory(workspace)
    if later:
        write(workspace / "memory" / "2023-03-01.md", f"# 2023-03-01\n\n{later}")
    eng = make_engine()
    eng.run_index()
    return eng


def test_a_name_never_mentioned_is_evidence_in_the_memorys_own_language(workspace, make_engine):
    """"What is the name of the climbing gym where Ayesha started bouldering?" asked of Jon and
    Hannah's chats: most of its topic words (gym, climbing, bouldering) are used here in no
    form, as they would not be in another language, so no word of it said anything and the list
    came back unflagged (a conversation benchmark's questions asked of another couple's chats,
    bench/chats.py: .55 flagged). Most of its words ("what", "is", "the", "name", "of",
    "where", "started") are this memory's: it is in the memory's language, about another life,
    and a name it never mentions is someone else's: flagged "this memory never mentions
    'ayesha'". Its German twin shares few words with the memory ("in", "die"): none of its words
    says anything, not even a capitalised noun ("Kletterhalle"); a question about Jon is
    answered unflagged; and "Ayesha gym bouldering shop", most of whose words are not here,
    raises nothing either."""
    eng = chat_engine(workspace, make_engine)
    res = eng.search("What is the name of the climbing gym where Ayesha started bouldering?", explain=True)
    ev = res["evidence"]
    assert ev["nDocs"] < SMALL_MEMORY and ev["topicAbsentShare"] > 0.5 and ev["heldShare"] > 0.5, ev["heldShare"]
    assert res["results"] and res["absent"] == {"reason": "this memory never mentions 'ayesha'"}, ev["absent"]
    german = eng.search("Wie heißt die Kletterhalle neben Second Gear Cycles, in der Ayesha mit dem Bouldern angefangen hat?", explain=True)
    assert german["evidence"]["heldShare"] <= 0.5 and german["absent"] is None, german["evidence"]["absent"]
    own = eng.search("What is the name of the bike shop Jon opened in the old laundromat?", explain=True)
    assert own["absent"] is None and "Second Gear" in " ".join(r["snippet"] for r in own["results"][:2])
    terse = eng.search("Ayesha gym bouldering shop", explain=True)
    assert terse["evidence"]["heldShare"] <= 0.5 and terse["absent"] is None


def test_a_question_in_another_language_says_nothing_by_its_capitalised_nouns(workspace, make_engine):
    """"Welche Haustiere haben Jon und Hannah?" asked of their chats, which say the shop is a
    safe haven and the hats are under the counter: "Haustiere" reads as a name this memory
    never mentions, and too few of its topic words were missing to read as another language,
    "haben" and "und" being held in English forms ("haven", "under"): flagged (bench/chats.py's
    questions in German asked of their own history: 19 of 192 so). None of its words is this
    memory's as written (heldShare 0): no word of it says anything. The same evidence with most
    words held (an English question naming someone never mentioned) is flagged; where nothing
    was counted, most topic words missing still say another language."""
    eng = chat_engine(workspace, make_engine, "- **Jon:** The shop is a safe haven; the old plant died under the window, "
                      "and the hats are under the counter.\n")
    res = eng.search("Welche Haustiere haben Jon und Hannah?", explain=True)
    ev = res["evidence"]
    assert ev["namedAbsent"] == ["haustiere"] and ev["topicAbsentShare"] <= 0.5 and ev["heldShare"] == 0, ev
    assert res["results"] and res["absent"] is None
    assert verdict({**ev, "heldShare": 0.8})["kind"] == "named"
    assert verdict({**ev, "heldShare": None})["kind"] == "named"  # not counted: the topic words' rule alone
    assert verdict({**ev, "heldShare": None, "topicAbsentShare": 0.75}) is None


def test_a_name_held_only_as_words_is_flagged_in_a_small_memory_too(workspace, make_engine):
    """A question's name this memory holds only as words is no one here in a memory of any
    size: "What did Bar say about the shop?" asked of Jon and Hannah's chats, which say "the bar
    by the river", and "What did Augustin say about the shop?", held only in the month "August",
    are flagged "this memory never writes ... as a name". They were left unflagged in a memory
    of under SMALL_MEMORY chunks, where one conversation benchmark's histories lie: "Jon" asked
    of another couple's chats found only "January" and "June" there (bench/chats.py). A name
    the memory writes is held: "What did Hannah say about the shop?"."""
    eng = chat_engine(workspace, make_engine)
    for name, forms in (("bar", "'bar'"), ("augustin", "'august'")):
        res = eng.search(f"What did {name.title()} say about the shop?", explain=True)
        ev = res["evidence"]
        assert ev["nDocs"] < SMALL_MEMORY and ev["namesAsWords"] == [name], (ev["nearNames"], ev["absent"])
        assert res["results"] and res["absent"] == {"reason": f"this memory never writes '{name}' as a name, only as words ({forms})"}
    held = eng.search("What did Hannah say about the shop?", explain=True)
    assert held["evidence"]["namesAsWords"] == [] and held["absent"] is None, held["evidence"]["absent"]


def test_a_hypothesis_about_the_memorys_own_person_is_not_flagged_for_what_it_supposes(workspace, make_engine):
    """"Would Jon like the party at the bar by the river in Washington?" asked of Jon and
    Hannah's chats, which never mention Washington, came back flagged "this memory never
    mentions 'washington'": the question asks for an inference from what the chats hold (the
    party at the bar), and the place is the asker's supposition (a conversation benchmark's
    inference questions, bench/chats.py: "Would Jon be a good person to ask about biking from
    Pittsburgh to Washington, D.C.?", flagged so with the gold first). Now a question asking
    what would or might be true of someone most of this memory's passages name is shown
    unflagged. Asked about someone this memory never mentions ("Would Ayesha ..."), or as a
    plain question ("What did Jon say about ..."), with "would" only in a remark, it is still
    flagged."""
    eng = chat_engine(workspace, make_engine)
    res = eng.search("Would Jon like the party at the bar by the river in Washington?", explain=True)
    ev = res["evidence"]
    assert ev["namedAbsent"] == ["washington"] and res["results"] and res["absent"] is None, ev["absent"]
    assert ev["hypothesisAbout"] == ["jon"]
    assert verdict({**ev, "hypothesisAbout": []})["reason"] == "this memory never mentions 'washington'"
    likely = eng.search("Is Hannah likely to take her pottery class to Shohei Ohtani?", explain=True)
    assert likely["absent"] is None and likely["evidence"]["hypothesisAbout"] == ["hannah"], likely["evidence"]["absent"]
    for flagged, named in (("Would Ayesha like the party at the bar by the river in Washington?", "'ayesha', 'washington'"),
                           ("What did Jon say about the party at the bar by the river in Washington?", "'washington'"),
                           ("I would love that. What did Jon say about the party at the bar in Washington?", "'washington'")):
        res = eng.search(flagged, explain=True)
        assert res["absent"] == {"reason": f"this memory never mentions {named}"}, res["evidence"]["absent"]
        assert res["evidence"]["hypothesisAbout"] == []


def test_an_ordinal_and_chinese_glued_to_a_capitalised_word_name_no_one(workspace, make_engine):
    """"What did Jon get at the bar for his 32nd birthday?" asked of Jon and Hannah's chats,
    which never write "32nd", came back flagged "this memory never mentions '32nd'": digits
    with letters read as an identifier, but an ordinal is a count, written in many ways
    ("thirty-second", "32"), as a year is. And a Chinese question quoting an English title,
    "Hannah觉得《Second Gear Cycles》怎么样？", had the Chinese glued to the title's capital
    ("Cycles》怎么样") read as a name the memory never mentions ('么样'): a script without
    capitals names no one by them (bench/chats.py's paraphrased and Chinese questions, each
    flagged so with the gold first). An identifier mixing letters and digits still counts."""
    assert named_terms("Hannah觉得《Second Gear Cycles》怎么样？") == ["gear", "cycles"]
    assert named_terms("What did Jon get for his 32nd birthday, order A828E60?") == ["jon", "a828e60"]
    eng = chat_engine(workspace, make_engine)
    for query in ("What did Jon get at the bar for his 32nd birthday?", "Hannah觉得《Second Gear Cycles》怎么样？"):
        res = eng.search(query, explain=True)
        assert res["results"] and res["absent"] is None, (query, res["evidence"]["absent"])
    coded = eng.search("What did Jon get at the bar for order A828E60?", explain=True)
    assert coded["absent"] == {"reason": "this memory never mentions 'a828e60'"}, coded["evidence"]["absent"]


def test_a_name_written_only_in_full_or_opening_a_sentence_is_held_as_a_name(workspace, make_engine):
    """"When was Jon's grandson Owen born, the one in Denver?" asked of chats that write him
    only in full ("Owen Michael Hayes, born on the 9th") or opening a sentence ("Owen Michael!
    Michael after your dad"), never standing alone, came back flagged "this memory never writes
    'owen' as a name, only as words ('owen')" (bench/chats.py's questions with words about the
    question around them, gold first). A memory that never writes the word in lower case does
    not hold it as a word: it is the name. One it writes in lower case as well ("the bar by the
    river") is still a word: "What did Bar say about the shop?" stays flagged."""
    eng = chat_engine(workspace, make_engine, "- **Jon:** Thank you! Owen Michael Hayes, born on the 9th in Denver.\n"
                      "- **Hannah:** Owen Michael! Michael after your dad, I love it.\n")
    res = eng.search("When was Jon's grandson Owen born, the one in Denver?", explain=True)
    assert res["evidence"]["namesAsWords"] == [] and res["absent"] is None, res["evidence"]["absent"]
    assert "Owen Michael Hayes" in res["results"][0]["snippet"]
    bar = eng.search("What did Bar say about the shop?", explain=True)
    assert bar["evidence"]["namesAsWords"] == ["bar"] and bar["absent"] is not None, {k: bar["evidence"][k] for k in ("named", "nearNames", "namedAbsent", "absent")}


def test_a_chinese_question_names_in_latin_letters_what_an_english_memory_would_hold(workspace, make_engine):
    """"Ayesha在Carver Street租的店叫什么名字？" asked of Jon and Hannah's chats came back
    unflagged: a question mostly in a script this memory never writes raised no verdict but an
    absent identifier, though its Latin words are what a Chinese speaker keeps in the memory's
    letters, names, shops and titles, held here as written if this is whose memory it asks
    (a conversation benchmark's questions in Chinese asked of another couple's chats,
    bench/chats.py: .009 flagged). Now such a name this memory never mentions in any form flags
    the list: "this memory never mentions 'ayesha'". Asked about Jon it is shown unflagged, and
    so is "Shohei Ohtani" where the chats write "Ohtani": one person, whom the memory mentions.
    A run of capitals (EP) is an abbreviation a memory may spell out, and names no one."""
    assert named_terms("Ayesha的姐妹Zara是做什么工作的？") == ["ayesha", "zara"]
    assert named_terms("我买过或下载过多少张音乐专辑或EP？") == []
    eng = chat_engine(workspace, make_engine, later="- **Jon:** My dad watched Ohtani pitch again, he will not stop talking about it.\n")
    own = eng.search("Jon在Carver Street租的店叫什么名字？", explain=True)
    assert own["results"] and own["absent"] is None, own["evidence"]["absent"]
    other = eng.search("Ayesha在Carver Street租的店叫什么名字？", explain=True)
    assert other["evidence"]["unwrittenShare"] >= 0.5 and other["results"]
    assert other["absent"] == {"reason": "this memory never mentions 'ayesha'"}, other["evidence"]["absent"]
    held_in_part = eng.search("Jon的爸爸大概是Shohei Ohtani的粉丝吗？", explain=True)
    assert held_in_part["absent"] is None and held_in_part["evidence"]["namedAbsent"] == ["shohei"], held_in_part["evidence"]["absent"]
    unheld = eng.search("Jon的爸爸大概是Shohei Tanaka的粉丝吗？", explain=True)
    assert unheld["absent"] == {"reason": "this memory never mentions 'shohei', 'tanaka'"}, unheld["evidence"]["absent"]


@pytest.mark.slow
@pytest.mark.parametrize("fusion", ["relative", "rrf", "weighted"])
def test_a_question_in_another_language_of_the_same_script_is_ordered_by_the_vectors(workspace, make_engine, tiny_model, fusion):
    """A German question of Jon and Hannah's English chats shares words with them by chance
    ("die", "in", "hat"), and those chance matches ordered half of the hybrid list: German
    questions of `bench/chats.py`'s histories found the answer in the first five .695 of the
    time, .727 with the vectors alone ordering (bench/results/abstention.md, 2026-12-08). The
    list of such a question is now in the vectors' order, each hit's explanation saying so;
    an English question, even one said in words the chats never use, is fused as before."""
    chat_memory(workspace)
    for i, topic in enumerate(["the plants die in the cold", "a party at the river", "the kiln at the studio",
                               "bikes in the old laundromat", "tomatoes and seed packets"]):
        write(workspace / "memory" / "notes" / f"{i}.md", f"# note {i}\n\n- Jon said {topic}, and Hannah laughed.\n")
    eng = make_engine({"provider": "local", "local.modelPath": str(tiny_model), "query.hybrid.fusion": fusion})
    list(eng.index())

    def search(query):
        res = eng.search(query, explain=True, show_hidden=True, max_results=10)
        assert res["mode"] == "hybrid" and res["results"], query
        return res

    german = search("Wie heißt der Laden, den Jon in der alten Wäscherei eröffnet hat, und wo ist die Party?")
    assert german["evidence"]["heldShare"] <= 0.5, german["evidence"]["heldShare"]
    hits = german["results"]
    assert {r["explain"]["fusion"]["method"] for r in hits} == {f"{fusion}, vectors alone (another language)"}
    cosines = [r["explain"]["vector"]["cosine"] for r in hits if r["band"] != "high" and r["explain"].get("vector")]
    assert len(cosines) >= 5 and cosines == sorted(cosines, reverse=True), cosines  # in the vectors' order
    for english in ("What is the name of the shop Jon opened in the old laundromat?",
                    "What moniker did Jon bestow upon his bicycle emporium?"):  # most words not here
        assert {r["explain"]["fusion"]["method"] for r in search(english)["results"]} == {fusion}, english
