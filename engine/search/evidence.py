"""Each hit's score from its own evidence (term coverage by rarity, similarity above the
background, rare names), the ordered list, and when search says nothing: only on evidence of
absence."""

from __future__ import annotations

import functools
import math
import re

TYPE_CHECKING = False  # typing's constant without importing typing: a search never needs it (~3 ms)
if TYPE_CHECKING:
    from typing import Any, Callable

from . import ranking
from ..index.store import SMALL_MEMORY, OperationalError, Store
from ..text import has_cjk, is_cjk, mmr_tokens, normalize, query_terms
from .options import Candidate, Options
from . import candidates
from .candidates import named_terms, speakers
from .everyday import is_asking, is_calendar, is_everyday, near_everyday
from .fusion import apply_decay, fuse, merge_overlapping, pin_exact_hits


# ----------------------------------------------------------------------------- scoring


def term_weights(store: Store, terms: list[str], counted: dict[str, int] | None = None) -> tuple[dict[str, float], int]:
    """({term: idf over the index}, chunks in the index). `counted`: the keyword pass's
    document counts (doc_freqs, exact below its cap); the FTS5 vocabulary gives the others."""
    if not terms:
        return {}, 0
    counted = counted or {}
    try:
        n = store.chunk_count()
        df = {t: counted[t] for t in terms if counted.get(t, candidates.OR_POSTINGS + 1) <= candidates.OR_POSTINGS}
        missing = [t for t in terms if t not in df]
        if missing:
            for t in missing:
                df[t] = store.word_count(t)
    except OperationalError:  # no fts5vocab: every term counts alike
        return {t: 1.0 for t in terms}, 0
    top = ranking.idf(0, n)
    return {t: ranking.idf(d, n) / top for t, d in df.items()}, n


def absent_forms(store: Store, absent: list[str], query: str = "", names: set[str] | None = None) -> dict[str, str]:
    """{a query term no chunk has: another form of it some chunk has} ("decide": "decided");
    `names`: filled with the names found only in a near spelling (candidates.near_forms)."""
    return {t: found[0] for t, found in candidates.vocabulary_forms(store, absent, query, names).items()}


PASSAGE_CHARS = 200  # the query's words must stand together: within a line, or lines this long together


def passage_coverage(weights: dict[str, float], text: str, words: QueryWords | None = None,
                     least: float = 0.0) -> tuple[float, set[str]]:
    """The best term coverage of one passage of the chunk (a line, or consecutive lines of at
    most PASSAGE_CHARS), and the query terms that passage holds. Measured on other people's
    chat histories, a question's rare words turn up somewhere in some chunk far more often than
    side by side: over the whole chunk, 10 % of LongMemEval questions asked of the wrong history
    came back empty; over a passage, 47 %, with no answerable question emptied that was not before.
    `words`: QueryWords(weights), made once per query; `least`: see ranking.term_coverage."""
    norm = normalize(text)
    found = (words or QueryWords(weights)).find(norm)
    if not found:
        return 0.0, set()
    held: dict[int, tuple[int, set[str]]] = {}  # start of a line with a term -> (its end, its terms)
    for at, word in found:
        start = norm.rfind("\n", 0, at) + 1
        if start not in held:
            end = norm.find("\n", at)
            held[start] = (len(norm) if end < 0 else end, set())
        held[start][1].add(word)
    starts = sorted(held)
    best, best_terms = 0.0, set()
    # only a passage starting on a line with a term can be best: starting later reaches further
    for a, start in enumerate(starts):
        terms = held[start][1]
        for later in starts[a + 1 :]:
            end, more = held[later]
            if end - start > PASSAGE_CHARS:  # lines start..end do not fit in one passage
                break
            terms = terms | more
        cov = ranking.term_coverage(weights, terms, least=least)
        if cov > best:
            best, best_terms = cov, terms
    return best, best_terms


class QueryWords:
    """Finds the query's terms in normalized text exactly where its tokenizer would cut them:
    a CJK unigram or bigram wherever it stands, any other term as a whole run of word
    characters, bounded by a non-word or a CJK character (mysql服务器 holds the token mysql).
    str.find per term: four times faster than one regex of alternatives on chat text."""

    def __init__(self, weights: dict[str, float], aliases: dict[str, str] | None = None):
        """`aliases`: {another form: the query term it stands for} (cookies: cookie)."""
        found = [(t, t) for t in weights if t] + [(f, t) for f, t in (aliases or {}).items() if t in weights]
        self.terms = [(text, all(is_cjk(ch) for ch in text), term) for text, term in found]

    def find(self, norm: str) -> list[tuple[int, str]]:
        """(offset, term) of every occurrence, of the term or of a form standing for it."""
        out = []
        for text, cjk, term in self.terms:
            i = norm.find(text)
            while i >= 0:
                if cjk or not (_glued(norm, i - 1) or _glued(norm, i + len(text))):
                    out.append((i, term))
                i = norm.find(text, i + 1)
        return out


def _glued(text: str, at: int) -> bool:
    """Whether the character at `at` would join a word there (a \\w character that is not CJK).
    Asked of the one character, not of whether the text holds CJK first (a set of every
    character of the chunk, for each candidate of each search)."""
    if at < 0 or at >= len(text):
        return False
    ch = text[at]
    return (ch.isalnum() or ch == "_") and not is_cjk(ch)


EXACT_CONFIDENCE = 0.7  # holding a rare identifier the query names: high, whatever else the chunk holds
# A passage can be sure to answer only when the words it holds weigh, together, as much as one
# word no other passage holds (weights are idf over this index, 1 for such a word): two words
# half the notes use say little however much of the query they are (they made `high` with
# "100 % of term weight" on held-out conversations). The index's own document frequencies
# decide what is common, so the rule means the same in any memory.
RARE_ENOUGH = 1.0


def confidence(cands: list[Candidate], weights: dict[str, float], n_docs: int, exact: dict[int, dict],
               aliases: dict[str, str] | None = None) -> None:
    """Each candidate's score: its own evidence that it answers the query (see ranking,
    "confidence"), never borrowed from a better hit: the query terms one passage of it holds,
    weighted by their rarity here, its own cosine's standing, a rare identifier it names."""
    total = sum(weights.values())
    words = QueryWords(weights, aliases)
    for c in cands:
        cov, present = passage_coverage(weights, c.row[4], words, least=RARE_ENOUGH) if weights else (0.0, set())
        k = ranking.keyword_confidence(cov)
        v = 0.0
        if c.vec_cos is not None:
            ref = c.parts.get("vectorReference") or {}
            v = ranking.vector_confidence(c.vec_cos, ref.get("mean", 0.0), ref.get("std", 1.0), n_docs)
        own = ranking.combine_confidence(k, v)
        conf = {
            "terms": sorted(present, key=lambda t: (-weights.get(t, 0.0), t)),  # ties by name: not set order, which changes per process
            "termWeight": round(sum(w for t, w in weights.items() if t in present), 3),
            "queryWeight": round(total, 3),
            "termCoverage": round(cov, 4),
            "keyword": round(k, 4),
            "vector": round(v, 4),
        }
        conf["words"] = round(own, 4)  # what its words and vector say, before a rare name lifts it
        if c.id in exact and exact[c.id].get("identifier", True):
            # an identifier (a828e60, ENOSPC_BK42) names one thing; a name that few notes hold
            # may be another person's (its rarity already weighs in the coverage)
            conf["exact"] = exact[c.id]["token"]
            own = max(own, EXACT_CONFIDENCE)
        conf["own"] = round(own, 4)
        c.parts["confidence"] = conf
        c.score = own


def select(cands: list[Candidate], query: str, weights: dict[str, float], n_docs: int, exact: dict[int, dict],
           opts: Options, mode: str, merge: Callable[[list[Candidate], int], list[Candidate]] | None = None,
           forms: dict[str, str] | None = None, aliases: dict[str, str] | None = None,
           near: dict[str, list[str]] | None = None, unwritten: float = 0.0,
           vocabulary: int = candidates.BROAD_VOCABULARY, short_words: tuple[int, int] = (0, 0),
           held: float | None = None, unheard: list[str] | None = None,
           as_words: list[str] | None = None, vectors_lead: bool = False) -> tuple[list[Candidate], dict[str, Any], dict]:
    """From scored candidates to what is shown, in order: each hit's own evidence, fusion,
    decay, pinned identifiers, overlap merging (`merge`, default merge_overlapping), MMR, then
    the list stands or falls on the query's evidence. (shown, hidden info, evidence).
    `forms`: the query's terms this memory uses only in another form (absent_forms); None when
    the caller cannot look them up (then a missing word alone never empties the list).
    `aliases`: {another form this index holds: the query term it stands for}.
    `near`: {a name of the query this index holds only in a near spelling: those spellings}.
    `unwritten`: the share of the query's words in a script this memory never writes (unwritten_share).
    `vocabulary`: how many distinct words this memory uses, up to BROAD_VOCABULARY (vocabulary_size).
    `short_words`: of the query's short words, how many this memory holds and how many it does
    not (candidates.short_words; counted only when no passage holds a word of the query).
    `held`: the share of the query's words this memory holds as written, or stop words (held_share;
    counted only when a word of it is missing here).
    `unheard`: who speaks in the query and is held here only in near spellings, none of which
    labels a line of the transcripts holding them (candidates.unheard).
    `as_words`: the question's names this memory holds only as words, as written or in near
    forms, never as a name (candidates.names_only_as_words).
    `vectors_lead`: the query is in another language of this memory's script, whose words match
    here by chance (search.run): the vectors alone order a hybrid list (fusion.fuse)."""
    confidence(cands, weights, n_docs, exact, aliases)
    # the names and identifiers the keyword pass finds stay pinned (pin_exact_hits) when the
    # vectors alone order the list. Not for a question in a script this memory never writes,
    # whose only words that can match are those it writes in the memory's (Lisa, Costco)
    fuse(cands, opts, mode, vectors_lead)
    if opts.decay:
        apply_decay(cands, opts)
    pin_exact_hits(cands, exact)
    cands.sort(key=lambda c: (-c.rank, c.id))
    cands = (merge or merge_overlapping)(cands, opts.merge_chars)
    if opts.mmr and len(cands) > 1:
        order = ranking.mmr_order([c.rank for c in cands], [mmr_tokens(c.row[4]) for c in cands], opts.mmr_lambda)
        reordered = []
        for step, (i, sim) in enumerate(order, start=1):
            cands[i].parts["mmr"] = {"step": step, "maxSimilarity": round(sim, 4), "lambda": opts.mmr_lambda}
            reordered.append(cands[i])
        cands = reordered
    speakers_first(cands, speakers(query), weights, n_docs)
    if mode != "keyword":
        rare_words_over_vectors_alone(cands, weights, n_docs)
    no_evidence_last_first(cands, exact)
    evidence = query_evidence(query, weights, n_docs, cands, forms, near, unwritten, vocabulary, short_words, unheard, as_words,
                              held)
    trust_high(cands, evidence, mode != "keyword", exact)
    in_score_order(cands, mode == "keyword")
    absent = evidence.get("absent")
    if opts.min_score_explicit:  # asked for: every hit below it is hidden
        shown = [c for c in cands if c.score >= opts.min_score]
    else:  # by default the list is emptied only on a verdict keyword-only search reaches too (EMPTYING)
        shown = [] if absent and absent["emptied"] else cands
    kept = {c.id for c in shown}
    hidden = [c for c in cands if c.id not in kept]
    if opts.show_hidden:
        shown = cands
    hidden_info: dict[str, Any] = {"count": len(hidden) if not opts.show_hidden else 0,
                                   "bestScore": round(max(h.score for h in hidden), 4) if hidden else None}
    if absent and absent["emptied"] and not opts.min_score_explicit and not opts.show_hidden:
        hidden_info["reason"] = absent["reason"]
    elif not cands and in_unwritten_script(evidence):
        hidden_info["reason"] = script_barrier(query)
    elif not cands and reads_as_another_language(evidence):
        hidden_info["reason"] = LANGUAGE_BARRIER
    return shown[: opts.max_results], hidden_info, evidence


def in_unwritten_script(evidence: dict) -> bool:
    """Whether most of the query is written in a script this memory does not write
    (candidates.unwritten_share): its words say nothing of what the memory holds."""
    return evidence.get("unwrittenShare", 0.0) >= 0.5


def script_barrier(query: str) -> str:
    """Why a query in a script this memory does not write finds nothing by its words: not that
    the answer is absent (keyword-only search of Chinese notes in English finds nothing
    whatever they hold), and what to do about it: at most 200 characters, so that the CLI's line
    keeps the advice (tui.present.clip_words)."""
    theirs, ours = ("Chinese, Japanese or Korean", "Latin letters") if has_cjk(query) else \
        ("Latin letters", "Chinese, Japanese or Korean")
    return (f"the query is in {theirs}, this memory in {ours}: no word can match, whatever it holds; "
            "search again in the memory's language, or index with a multilingual model")


def reads_as_another_language(evidence: dict) -> bool:
    """Whether a query no passage holds any word of reads as another language than this
    memory's, of the same script (German asked of English notes, keyword-only): two or more of
    its short words (candidates.short_words) are words this memory never uses, and they are at
    least half of its short words, in a memory that uses BROAD_VOCABULARY distinct words. The
    commonest words of a language are its shortest (Zipf's law of abbreviation), and a memory
    that broad uses nearly every short word of its own language: "what", "is", "the", "at" of
    "What is the wifi password at the Marrakech riad?" are here though no passage holds a word
    of its topic (a verdict of absence), while "wo", "habe", "ich", "mein" of "Wo habe ich mein
    Auslandsstudium gemacht?" are not (nothing can match: no verdict). Nothing is fitted: the
    length follows from the law, the vocabulary from _absence's own line."""
    if evidence["candidates"] or evidence.get("vocabulary", 0) < candidates.BROAD_VOCABULARY:
        return False
    short = evidence.get("shortWords", {})
    unheld = short.get("unheld", 0)
    return unheld >= 2 and unheld >= short.get("held", 0)


def in_memory_language(evidence: dict) -> bool | None:
    """Whether the query is written in this memory's language: most of its words (names aside)
    are words this memory writes, or stop words (candidates.held_share). A memory's language
    shares its commonest words with any question asked in it, whatever the topic: "What is the
    name of the climbing gym where Ayesha started bouldering?" holds 8 of its 11 words in
    another couple's chats, its German twin 1 of 10. On bench/chats.py's English questions, of
    their own history or another, 3 % and 7 % hold half or fewer; of its German ones, 99.5 %.
    Most is more than half: nothing fitted. None where nothing was counted."""
    held = evidence.get("heldShare")
    return None if held is None else held > 0.5


# at most 200 characters, so that the CLI's line keeps the advice (tui.present.clip_words)
LANGUAGE_BARRIER = ("no word of the query is here, not even its short words: it reads as another language than "
                    "this memory's, which says nothing of what it holds; search again in the memory's language")


HIGH = ranking.band_floor("high")


def in_score_order(cands: list[Candidate], keyword: bool) -> None:
    """The list reads in the order of the score it shows (issue 47: a `1.000 high` hit ranked
    8th, hidden, behind hits scoring less). A `high` hit (trusted: trust_high) comes first; in
    keyword-only search the bands order the rest too, as band and order weigh the same evidence
    there (the query's words). Otherwise the fusion's order stands: sorting every hit by its
    own score cost 0.11-0.14 of hit@5 on MADial (bench/results/abstention.md), and with vectors
    a cosine counts in the band only once it beats the best unrelated chunk. So each hit shows
    the lower of its own score and the score above it: a hit the fusion ranks below a weaker
    one claims no more than that one (its own stays in the explanation, confidence.own)."""
    rank = {"high": 0, "medium": 1, "low": 2}
    cands.sort(key=lambda c: rank[ranking.band(c.score)] if keyword else ranking.band(c.score) != "high")
    above = 1.0
    for c in cands:
        if c.score > above:
            c.parts.setdefault("confidence", {})["shownBelow"] = round(c.score, 4)
            c.score = above
        above = c.score


def untrusted(c: Candidate, evidence: dict, vectors: bool, exact: dict[int, dict],
              others: list[Candidate] = ()) -> str | None:
    """Why a hit whose own score reaches `high` cannot be trusted to answer the query, or None.
    `high` says "this passage answers the question": measured on conversations, a hit that
    merely holds many of its words was the gold passage only 35-64 % of the time. Each
    condition is a fact about this query and this index, with no constant fitted to a data set:
    - the memory uses every word of the question (in some form), and the list carries no
      verdict of absence: where the memory lacks a word the question turns on, no passage
      of it can hold the whole question;
    - the passage holds the whole question: every word of it this memory uses, or three
      words' worth no other passage holds (coverage 1). Holding part of it is the `medium` of
      a passage on the same topic;
    - its words set it apart from every other passage (`others`, the other candidates, and
      the passages holding none of the query's words; one whose lines overlap it is the same
      passage): what it holds that the other does not weighs as much as one word no passage
      holds (RARE_ENOUGH, the chance level `confidence` uses). `high` says this
      passage answers, not the next one: where another passage holds nearly the same words,
      the words cannot tell the two apart, and on conversations the first was then a neighbour
      of the answer (another child's day holding the same words, the next turn repeating the
      title). One word that a passage or two hold is not enough: another person's history
      holds such a word by coincidence ("breed", a name two people share). Only in a memory
      of SMALL_MEMORY chunks or more, as for `scattered`: in fewer, every word a passage holds
      weighs little, and the one note on a topic is what the memory has;
    - two independent channels pick it: it is the keyword pass's first and, with vectors,
      the vectors' first too (either channel's first alone is often a neighbour of the
      answer). Unless the vectors have no opinion (no passage closer to the query than the
      best of this many unrelated ones by chance: bestVector 0), or the hit holds a rare name
      or identifier the query names (exact_hits): vectors know nothing of a name they never saw.
    A rare identifier the query names (an id, an error code) stands for the passage by itself."""
    conf = c.parts["confidence"]
    if evidence.get("absent") or evidence["absentTerms"] or evidence.get("nearNames"):
        return "the query has a word this memory never uses, or a verdict of absence"
    if "exact" in conf:
        return None
    if scattered(evidence):  # does not separate answerable from not: a band at most, never a verdict
        return "chance alone puts as much of the question together in a memory this size"
    held = set(conf["terms"])
    if conf["termCoverage"] < 1.0 and not all(t in held for t, w in evidence["weights"].items() if w < 1.0):
        return "the passage holds only part of the query's words"
    if evidence.get("nDocs", 0) >= SMALL_MEMORY and (margin := apart(c, others, evidence["weights"])) < RARE_ENOUGH:
        if margin >= conf["termWeight"] - 0.001:  # termWeight is rounded to 0.001
            return "the words it holds weigh less than one word no passage holds"
        return "another passage holds nearly the same words: what sets this one apart weighs less than a word no passage holds"
    # a hit holds the chunks merged into it (merge_overlapping): their ranks are its own too
    merged = c.parts.get("merged", [])
    if c.kw_rank != 1 and not any(m.get("keywordRank") == 1 for m in merged):
        return "not the keyword search's first hit"
    vector_first = c.vec_rank == 1 or any(m.get("vectorRank") == 1 for m in merged)
    if vectors and evidence["bestVector"] > 0.0 and not vector_first and c.id not in exact:
        return "the vectors rank another passage first"
    return None


def apart(c: Candidate, others: list[Candidate], weights: dict[str, float]) -> float:
    """The weight of the query words `c` holds that the other passage nearest to it in words
    lacks: its margin over every other candidate whose lines do not overlap it, and over the
    passages holding none of the query's words (every memory has them, candidates or not: so
    keyword-only and hybrid, whose vectors add such candidates, agree)."""
    held = set(c.parts["confidence"]["terms"])
    margin = sum(weights.get(t, 0.0) for t in held)
    for o in others:
        if o is c or (o.row[:2] == c.row[:2] and o.row[2] <= c.row[3] and c.row[2] <= o.row[3]
                      and o.parts.get("fleet") == c.parts.get("fleet")):  # a fleet: one agent's file
            continue
        lacks = held.difference(o.parts["confidence"]["terms"])
        margin = min(margin, sum(weights.get(t, 0.0) for t in lacks))
    return margin


def trust_high(cands: list[Candidate], evidence: dict, vectors: bool, exact: dict[int, dict]) -> None:
    """A hit scoring `high` that untrusted() finds a reason against scores just below it
    (`medium`), with the reason in its explanation: the score stays the hit's own evidence,
    and `high` keeps one meaning in every memory. Counted in the evidence (how often `high` is given)."""
    for c in cands:
        if c.score >= HIGH and (why := untrusted(c, evidence, vectors, exact, cands)):
            c.parts["confidence"]["notHigh"] = why
            c.score = HIGH - 0.0001
    evidence["high"] = sum(c.score >= HIGH for c in cands)


SIMILAR_Z = 0.5  # cosines this many of the query's background standard deviations apart are alike


def rare_words_over_vectors_alone(cands: list[Candidate], weights: dict[str, float], n_docs: int) -> None:
    """A hit only the vectors found (no query word) never stands directly above a hit holding
    a rare word of the query (one fewer than half the passages hold) whose cosine stands about
    as high (within SIMILAR_Z): with the vectors saying the same of both, the words decide.
    Adjacent swaps, so every other pair keeps the fusion's order."""
    if len(cands) < 2 or not n_docs:
        return
    rare = ranking.idf(n_docs // 2, n_docs) / ranking.idf(0, n_docs)

    def vectors_only(c):
        return c.kw_rank is None and not c.parts["confidence"]["terms"]

    def holds_rare(c):
        return any(weights.get(t, 0.0) > rare for t in c.parts["confidence"]["terms"])

    for i in range(1, len(cands)):
        j = i
        while j > 0 and vectors_only(cands[j - 1]) and holds_rare(cands[j]) and \
                (cands[j].vec_z or 0.0) >= (cands[j - 1].vec_z or 0.0) - SIMILAR_Z:
            cands[j - 1], cands[j] = cands[j], cands[j - 1]
            cands[j - 1].parts["overVectorsAlone"] = True
            j -= 1


def no_evidence_last_first(cands: list[Candidate], exact: dict[int, dict]) -> None:
    """A hit only the vectors found that scores 0 (no query word, a cosine no higher than the
    best unrelated passage reaches by chance) never comes first while a hit with any evidence
    of its own is there: the best of such a hit is what chance gives, and it stood first above
    the gold on held-out conversations. That hit moves to first place; the rest keep their order."""
    if len(cands) < 2 or cands[0].kw_rank is not None or cands[0].id in exact or cands[0].score > 0.0:
        return
    better = next((c for c in cands if c.score > 0.0), None)
    if better is not None:
        cands.remove(better)
        cands.insert(0, better)
        better.parts["firstOverChance"] = True


SPEAKER_SHARE = 4  # a speaker named in at least 1 passage in this many: the memory names whom each note is about


def speakers_first(cands: list[Candidate], who: list[str], weights: dict[str, float], n_docs: int) -> None:
    """In a query pasted as a conversation, passages naming one of its speakers come before
    those naming none (stable: each group keeps its order), when this memory names a speaker
    routinely. Such a memory names whom each note is about, so a note without the speaker is
    about someone else: MADial's archive is two children's, and the vectors of a dialogue
    by Lisa put Bart's notes on the same topic first. A memory that names its user rarely (an
    agent's notes say "User") is left as it is: there, a note without the name says nothing."""
    routine = ranking.idf(n_docs // SPEAKER_SHARE, n_docs) / ranking.idf(0, n_docs) if n_docs else 0.0
    named = {t: 1.0 for t in who if 0.0 < weights.get(t, 1.0) <= routine}
    if not named or not cands:
        return
    words = QueryWords(named)
    for c in cands:
        c.parts["speaker"] = {"names": sorted({t for _, t in words.find(normalize(c.row[4]))})}
    cands.sort(key=lambda c: not c.parts["speaker"]["names"])


def _some(words: list[str], shown: int = 5) -> str:
    """The first few words, quoted, and how many more: a reason is one line, whatever the query's length."""
    more = f" and {len(words) - shown} more" if len(words) > shown else ""
    return ", ".join(repr(t) for t in words[:shown]) + more


STRONG_HIT = 0.6  # a hit this strong answers for the list, whatever the query names that is absent
ABSENT_SHARE = 0.95  # nearly all of the query's words never used in this memory (another language, another life)
WEAK_HIT = ranking.band_floor("medium")  # below it, no passage holds a fair part of the query


# The verdicts that empty the list: each rests on the query's words alone, looked up in this
# index's vocabulary, so keyword-only search reaches the same verdict and shows nothing either
# (a dialogue by someone this memory never mentions, nearly none of the query's words here, no
# passage holding any). The others (an absent name, a missing topic word beside weak hits, no
# passage closer than chance) flag the list instead: shown, with `absent` saying why the answer
# is probably not here. Emptying an answerable question is the costly error (the agent says "I
# don't remember"), and on held-out conversations those verdicts emptied 12-24 % of answerable
# questions, 74-81 % once a name had a typo: bench/results/abstention.md.
EMPTYING = frozenset({"speaker", "none", "share"})


def abstain_reason(evidence: dict, strong: float = STRONG_HIT, absent_share: float = ABSENT_SHARE,
                   weak: float = WEAK_HIT) -> str | None:
    """Why this memory probably does not hold the answer (query_evidence), or None."""
    found = verdict(evidence, strong, absent_share, weak)
    return found["reason"] if found else None


def verdict(evidence: dict, strong: float = STRONG_HIT, absent_share: float = ABSENT_SHARE,
            weak: float = WEAK_HIT) -> dict | None:
    """{"reason": why the answer is probably not in this memory, "kind", "emptied": whether
    the list is emptied (EMPTYING) rather than shown flagged}, or None."""
    got = _absence(evidence, strong, absent_share, weak)
    if got is None:
        return None
    kind, reason = got
    return {"reason": reason, "kind": kind, "emptied": kind in EMPTYING}


def public_absent(evidence: dict) -> dict | None:
    """The search reply's top-level `absent`: {"reason"} when the evidence says the answer is
    probably not in this memory (the list flagged, or emptied), else None."""
    found = evidence.get("absent")
    return {"reason": found["reason"]} if found else None


def _absent_in_any_language(evidence: dict) -> tuple[str, str] | None:
    """The verdict left to a question in another language, from what any language writes the
    same: an identifier it names (a828e60, ENOSPC_BK42), or a name a question in Chinese writes
    in this memory's Latin letters (Caleb, SaveMart), that this memory never mentions in any form."""
    ids = evidence.get("identifiersAbsent") or evidence.get("switchedAbsent")
    return ("named", f"this memory never mentions {_some(ids)}") if ids else None


def _absence(evidence: dict, strong: float, absent_share: float, weak: float) -> tuple[str, str] | None:
    """(kind, reason) of the evidence that the answer is not here, or None. Only evidence that
    separates answerable questions from questions about someone else's history raises it: a
    name or topic word of the question this memory never uses in any form (inflections, a
    slip of the keyboard, a name's sound and short forms looked up first: candidates.near_forms),
    or none of the question's words at all. How the best passage holds the words (chanceHeld)
    does not separate the two (89-93 % either way on held-out conversations): it lowers a band
    at most (trust_high), never says absent. A name held only in a near spelling is held, but
    for a pasted conversation's speaker whose near spellings speak in none of this memory's
    chat logs (speakersUnheard), and a question's name whose forms here are only words, never
    written as a name (namesAsWords)."""
    if evidence.get("speakersAbsent"):  # a strong hit on the words of a dialogue by someone else is still theirs
        return "speaker", f"this memory never mentions {_some(evidence['speakersAbsent'])}, who speaks in the query"
    # one who speaks in the query and is held here only in near spellings, none of which speaks
    # in the transcripts holding them: a short name lies within a letter or a sound of many
    # words a long memory writes (Bart: bard, Bride, British), while a slip in a speaker's name,
    # asked of the conversations they had, finds the name that labels their lines there. Not
    # in notes, which label no one's lines (a near name there may be theirs); flagged, not
    # emptied: a near spelling is still a mention
    if evidence.get("speakersUnheard"):
        near = [f for t in evidence["speakersUnheard"] for f in evidence["nearNames"].get(t, ())]
        return "named", (f"no one speaks here as {_some(evidence['speakersUnheard'])}, who speaks in the query "
                         f"(only near spellings: {_some(near, 3)})")
    small = evidence.get("nDocs", SMALL_MEMORY) < SMALL_MEMORY
    # the vectors find a passage close enough to stand as a fair hit by its cosine alone (as far
    # above chance as the `medium` band asks): they lead, and words this memory never uses may
    # be another language's (a German question of English notes). Not in a few notes, where
    # the best of a handful of cosines stands above chance for any question at all
    close = evidence.get("vectors") and evidence.get("bestVector", 0.0) >= weak and not small
    # a question mostly in a script this memory never writes (Chinese asked of English notes):
    # its words could not be here in any form, so their absence says nothing (on MADial's
    # dialogues asked of the other language's archive, which holds their answers, this verdict
    # flagged 98 %; nor do the vectors' own statistics separate them from someone else's
    # history: bench/results/abstention.md). Only an identifier it names that is absent says so.
    # Keyword-only finds no passage then, and says why instead (script_barrier), not "not here";
    # so for another language of the same script (reads_as_another_language)
    if in_unwritten_script(evidence):
        return _absent_in_any_language(evidence)
    if not evidence["candidates"]:
        if reads_as_another_language(evidence):  # then select() says why nothing matched (LANGUAGE_BARRIER)
            return _absent_in_any_language(evidence)
        return "none", "no passage holds any query word"
    if evidence["absentShare"] >= (1.0 if small else absent_share) and not close:
        some = "none" if evidence["absentShare"] >= 1.0 else "almost none"
        lacking = evidence["absentTerms"] + evidence.get("absentEveryday", [])
        return "share", f"this memory uses {some} of the query's words ({', '.join(repr(t) for t in lacking[:5])})"
    # a word missing says "someone else's" only where the memory speaks the question's language:
    # uses most of its words (a question in another language, or of another vocabulary, lacks
    # most of them whoever's memory it asks) and the vectors do not lead
    # Two short words it never uses say so too: a memory uses nearly every 3-letter word of its
    # own language (they are its commonest), so "ich", "wie", "dem" missing mean a German
    # question of English notes, and its capitalised nouns are no names (no English question
    # of LongMemEval, asked of its own history or another, has two)
    foreign = evidence.get("topicAbsentShare", evidence["absentShare"])
    unused_words = foreign > 0.5 or (close and foreign >= 0.5) or len(evidence.get("shortAbsent", ())) >= 2
    # The language itself is told by all of the question's words, its commonest included
    # (in_memory_language): in this memory's, most topic words missing are another life's or
    # said otherwise (they still say nothing) but its names are names, and a name this memory
    # never writes is someone else's; in another, no word of it says anything, not even a
    # capitalised noun whose other form happens to be held here ("die": "died"; "haben":
    # "haven"). Where that cannot be told, most topic words missing say another language
    native = in_memory_language(evidence)
    if (unused_words and native is None) or native is False:
        return _absent_in_any_language(evidence)
    # Nor a word said only in a remark (a sentence ending in "." or "!": "I want to make it
    # special."), which says what its writer thinks, not what the memory should hold: only the
    # words of a question, or of a search, are its topic (MADial's last lines asked of their own
    # memory: flagged 23 % on a remark's word, asked of someone else's history 23 %, no
    # separation; bench/results/abstention.md, 2026-11-29). A pasted conversation is all
    # remarks, and its own rule below weighs its words as what it is about.
    remarks = () if evidence.get("dialogue") else evidence.get("remarkedOnly", ())
    asked = [t for t in evidence["absentTerms"] if t not in remarks]
    # and only where the memory speaks broadly: a memory of a few hundred words lacks most
    # ordinary words, so the question's word is mostly one it says otherwise (vocabulary_size)
    broad = evidence.get("vocabulary", candidates.BROAD_VOCABULARY) >= candidates.BROAD_VOCABULARY
    missing = evidence.get("formsChecked", True) and asked and not small and broad and not unused_words
    absent = ", ".join(repr(t) for t in asked[:3])
    # a question (not a pasted conversation) turning on a word this memory never uses in any
    # form is flagged whatever the other words find: a strong hit on them does not supply the
    # missing one. Not for a pasted conversation, which names many things in passing (below),
    # nor a small memory, which lacks most words of anything.
    question_missing = missing and not evidence.get("dialogue")
    # a question asking what would or might be true of someone most of this memory's passages
    # name (whom it is about: "Would Jon be a good person to ask about biking to Washington?"
    # of his chats) asks for an inference from what it holds: the names and words of the
    # hypothesis are the asker's, which the memory need not mention (a conversation benchmark's
    # inference questions, bench/chats.py: flagged on 'washington', 'shohei'). Asked of someone
    # else's history, the person it is about is named nowhere there and it is still flagged
    if evidence.get("hypothesisAbout"):
        return None
    # a strong hit holds the question's other words in one passage: a topic word it lacks is
    # then mostly said in other words (the answer's passage, paraphrased), while a name the
    # memory never mentions is someone else's whatever the other words find
    if evidence["best"] >= strong and not (question_missing and (evidence["namedAbsent"] or evidence.get("namesAsWords"))):
        return None
    # a few notes lack most words of any question, and a pasted conversation names many things
    # in passing: there, only a name the question asks about says absent (without this,
    # MADial's dialogues asked of their own 1-7 notes came back empty 45 % of the time:
    # bench/small_memory.py)
    if evidence["namedAbsent"] and not (small and evidence.get("dialogue")):
        return "named", f"this memory never mentions {_some(evidence['namedAbsent'])}"
    # a name the memory holds only as words ("bar" for Bar, "millennium" for Melanie), never
    # written as a name: whoever it names is not written here. Flagged, not emptied
    if evidence.get("namesAsWords"):
        words = [f for t in evidence["namesAsWords"] for f in evidence["nearNames"].get(t, [t])]
        return "named", f"this memory never writes {_some(evidence['namesAsWords'])} as a name, only as words ({_some(words, 3)})"
    if question_missing:
        return "missing", f"this memory never uses {absent} in any form"
    # a pasted conversation: a word of it this memory never uses, and nothing here holds a fair
    # part of the rest. Unless one passage holds every word this memory does use, a rare one
    # among them: a memory with one passage on the topic lacks many of a conversation's words.
    held = evidence.get("presentCoverage", 0.0) >= 1.0 and evidence.get("presentWeight", 0.0) >= evidence.get("rareWeight", 1.0)
    if missing and evidence["best"] < weak and not held:
        return "missing", f"this memory never uses {absent}, and no passage holds much of the rest"
    return None


def scattered(evidence: dict) -> bool:
    """Whether the question's words are here only apart: chance alone, more likely than not,
    puts as much of the question together in some passage of this memory as its best passage
    holds (chanceHeld >= 1/2), while the memory as a whole uses more of the question than that
    passage holds. A long chat history uses every word of most questions somewhere; asked of
    its own history, a question's words stand together in the passage that answers it, asked
    of someone else's they meet only where chance puts them. Nothing is fitted: chanceHeld is
    a probability computed from this index's size and word frequencies, and 1/2 is even odds.
    chanceHeld is computed only where chance_decides (None elsewhere)."""
    chance = evidence.get("chanceHeld")
    return chance is not None and chance >= 0.5


def chance_decides(evidence: dict) -> bool:
    """Where scattered() can say anything: a memory of SMALL_MEMORY+ chunks (a few notes lack
    most words of anything), candidates whose best passage holds less of the query than the
    memory uses (a passage holding every word used here is not scattered), and a question with no
    missing word (the missing word says more: _absence) or a pasted conversation, judged on the
    words this memory uses: it names many things in passing, so a word of it missing says
    little, but the passage it is about holds many of its words together, which chance does not
    (MADial's dialogues asked of someone else's history: flagged or emptied .83 -> .99, asked of
    their own .01 -> .11, bench/results/abstention.md, 2026-11-27)."""
    return bool(evidence["candidates"]) and evidence["nDocs"] >= SMALL_MEMORY \
        and (evidence["dialogue"] or not evidence["absentTerms"]) \
        and evidence["bestHeld"] < evidence["usedWeight"] - 0.001  # weights are rounded to 0.001


def chance_held(shares: list[tuple[float, float]], n_docs: int, held: list[float]) -> float:
    """The probability that chance alone puts words of the query weighing as much as `held`
    (the weights of the words the best passage holds) together in some chunk of an index of
    `n_docs` chunks. `shares`: (weight, share of the chunks holding it) of each query word this
    memory uses. Each word is placed in each chunk independently, as often as the index holds
    it; any set of the words counts, not only the one the best passage holds: a question of
    many common words has many ways to come together.
    Two simplifications pull opposite ways: chance is counted per chunk (what the index counts),
    while the best passage holds its words within a line or PASSAGE_CHARS, which chance meets
    less often; and real words cluster by topic, which chance placed independently meets less
    often than real text does."""
    total = sum(held)
    if total <= 0.0:
        return 1.0
    # weights counted in 1/512ths of what the passage holds, the passage's own words by the same
    # rounding, so its set always counts: a few milliseconds for a 60-word pasted conversation
    unit = total / 512
    need = sum(round(w / unit) for w in held)
    dist = {0: 1.0}  # {weight held so far, capped at `need`: probability}
    for weight, share in shares:
        if share <= 0.0:
            continue
        step, nxt = round(weight / unit), {}
        for s, q in dist.items():
            if q < 1e-12:  # a sum this unlikely changes nothing (at most `need` of them)
                continue
            nxt[s] = nxt.get(s, 0.0) + q * (1.0 - share)
            t = min(s + step, need)
            nxt[t] = nxt.get(t, 0.0) + q * share
        dist = nxt
    one = dist.get(need, 0.0)  # one chunk holds as much
    return 1.0 if one >= 1.0 else -math.expm1(n_docs * math.log1p(-one))


def present_coverage(weights: dict[str, float], absent: list[str], cands: list[Candidate]) -> float:
    """The best passage's share of the query words this memory does use (all but `absent`)."""
    present = {t: w for t, w in weights.items() if t not in absent}
    if not present:
        return 0.0
    if not absent:
        return 1.0
    words = QueryWords(present)
    return round(max((passage_coverage(present, c.row[4], words)[0] for c in cands), default=0.0), 4)


@functools.cache
def _sentences() -> re.Pattern:
    """A sentence: up to its end mark where the next one starts with a capital ("Dr. Smith"
    splits there, "dept. approved" does not), or the rest of the text. Compiled on first use
    (about 1 ms: most searches have no remark and never need it)."""
    return re.compile(r".*?(?:[.!?]+(?=\s+[A-ZÀ-ÖØ-Þ]|\s*$)|[。！？]+|$)", re.S)


REMARK_MARKS = ".!。！"  # a sentence ending in one says what its writer thinks; "?" or none asks


def _remarks_and_asked(query: str) -> tuple[list[str], list[str]]:
    """The query's sentences: its remarks, and the rest (its questions and search words)."""
    remarks: list[str] = []
    asked: list[str] = []
    for sentence in _sentences().findall(query):
        if sentence.strip():
            (remarks if sentence.rstrip()[-1:] in REMARK_MARKS else asked).append(sentence)
    return remarks, asked


def remarked(query: str) -> set[str]:
    """The query's words said only in its remarks (sentences ending in "." or "!"), in none of
    its questions (ending in "?") nor its search words (no end mark): "Really? I used to paint
    for her." remarks "used", "paint"; "Which sealant? This was in May 2023." asks "sealant"."""
    if not any(mark in query for mark in REMARK_MARKS):
        return set()
    remarks, asked = _remarks_and_asked(query)
    return {t for r in remarks for t in query_terms(r)} - {t for a in asked for t in query_terms(a)}


# The words that make a question a hypothesis: what would or might be true, how likely it is
# (English grammar's modal of hypothesis and its adverbs of likelihood, a closed class)
HYPOTHESIS = frozenset("would might likely probably possibly perhaps".split())


def asks_hypothesis(query: str) -> bool:
    """Whether one of the query's questions (a sentence ending in "?", or a search without an
    end mark) asks what would or might be true ("Would Rosa enjoy a bluegrass festival?",
    "Is Kenji's father likely a fan of Shohei Ohtani?"): its answer is inferred from what the
    memory holds, about things the memory need not mention (_absence)."""
    def supposes(text: str) -> bool:
        return not HYPOTHESIS.isdisjoint(re.findall(r"[a-z]+", text.lower()))
    # most queries say none of the words: no sentence to split
    return supposes(query) and any(supposes(sentence) for sentence in _remarks_and_asked(query)[1])


def switched_absent(query: str, named: list[str], weights: dict[str, float], absent: list[str], forms: dict) -> list[str]:
    """The Latin names a question in Chinese or Japanese writes (candidates.mostly_cjk) that
    this memory never mentions in any form, unless another word of the same name is here:
    "Shohei Ohtani" is one person, whom a memory writing "Ohtani" mentions."""
    if not candidates.mostly_cjk(query):
        return []
    held = {t for t, w in weights.items() if w < 1.0 or t in forms}
    runs = candidates.latin_runs(query)
    return [t for t in named if t in absent and not has_cjk(t) and not is_calendar(t)
            and not any(t in run and held.intersection(run) for run in runs)]


def weak_absence(term: str) -> bool:
    """Whether a word's absence from this memory says little of whether it holds the answer:
    an everyday word (or one slip from one), or a word of the asking (everyday.is_asking)."""
    return is_everyday(term) or is_asking(term) or near_everyday(term)


def fragment(term: str) -> bool:
    """A one- or two-letter Latin term: an initial, a piece of an abbreviation (U.S. is u, s)
    or of a contraction (don't is don, t). The search's OR pass leaves them out as too short to
    say anything, and their absence says nothing either."""
    return len(term) <= 2 and term.isascii() and not term.isdigit()


def query_evidence(query: str, weights: dict[str, float], n_docs: int, cands: list[Candidate],
                   forms: dict[str, str] | None = None, near: dict[str, list[str]] | None = None, unwritten: float = 0.0,
                   vocabulary: int = candidates.BROAD_VOCABULARY, short_words: tuple[int, int] = (0, 0),
                   unheard: list[str] | None = None, as_words: list[str] | None = None,
                   held: float | None = None) -> dict:
    """Whether this memory holds the answer at all, from evidence that means the same in any
    workspace. A question about someone else's history names someone or something that never
    occurs here far more often than an answerable one does; a weak best hit alone is not such
    evidence (the answer is often a weak hit: emptying an answerable question costs more than
    a weak hit the agent can weigh). "abstain": why to show nothing (None: show the list)."""
    checked = forms is not None  # a word missing as asked may be here in another form: only looked up by run()
    who = speakers(query)
    forms = forms or {}
    common = ranking.idf(n_docs // 2, n_docs) / ranking.idf(0, n_docs) if n_docs else 0.0  # a word half the passages hold
    # a year, a count or an ordinal is no topic word: notes write them in many ways (2022-06-03)
    absent = [t for t, w in weights.items() if w >= 1.0 and t not in forms and not fragment(t)
              and not candidates.is_count(t)] if n_docs else []
    topic = [t for t in absent if not weak_absence(t)]  # each word judged once (near_everyday runs an edit distance)
    named = named_terms(query)
    names, lacking = set(named), set(absent)
    worded = [t for t in weights if not is_everyday(t) and t not in names]  # the words that tell a language
    out: dict[str, Any] = {
        "candidates": len(cands),
        # one rare name held is not a strong hit when the query names another this memory lacks
        "best": round(max((c.parts["confidence"]["words"] for c in cands), default=0.0), 4),
        # the missing words that say absent: topic words, not the everyday ones terse notes never use
        # (nor words of the asking: is_asking, or a slip of an everyday word)
        "absentTerms": topic,
        "absentEveryday": [t for t in absent if t not in topic],
        "otherForms": forms,  # absent as asked, used here in another form: not evidence of absence
        "formsChecked": checked,
        "namedAbsent": [t for t in named if t in absent and not is_calendar(t)],
        "identifiersAbsent": [t for t in candidates.exact_tokens(query) if t in absent],
        # the Latin names of a question in Chinese or Japanese (candidates.mostly_cjk), which
        # a memory written in Latin letters would hold as the question writes them (_absence)
        "switchedAbsent": switched_absent(query, named, weights, absent, forms) if unwritten else [],
        # the question's names this memory holds only as words, as written or in near forms,
        # never written as a name (candidates.names_only_as_words; _absence)
        "namesAsWords": list(as_words or ()),
        # 3-letter words of letters, not names nor everyday words, this memory never uses (_absence)
        "shortAbsent": [t for t in topic if len(t) == 3 and t.isalpha() and not is_cjk(t[0]) and t not in names],
        "speakersAbsent": [t for t in who if t in absent],
        # names held only in a near spelling: a typo of someone here, or someone else
        "nearNames": {t: fs for t, fs in (near or {}).items()},
        "speakersNear": [t for t in who if t in (near or {})],
        # of those, the ones whose near spellings never speak here (label no line): _absence
        "speakersUnheard": [t for t in who if t in (unheard or ())],
        "dialogue": bool(who),
        # a hypothesis about someone most of this memory's passages name: whom it is about (_absence)
        "hypothesisAbout": [t for t in named if 0.0 < weights.get(t, 1.0) <= common]
                           if names and not who and asks_hypothesis(query) else [],
        # the missing topic words said only in a remark, not asked about (remarked: _absence)
        "remarkedOnly": sorted(remarked(query).intersection(topic)),
        # counted, not weighed: a word common here weighs little, and the few a query shares
        # with this memory are what says it may hold the answer
        "absentShare": round(len(absent) / len(weights), 4) if weights else 0.0,
        # of the question's topic words (not everyday ones, which terse notes never use, nor
        # names, which are no language's words: Tallinn, Okonkwo), the share this memory never
        # uses in any form: most of them, and the question is in another language or another
        # vocabulary than this memory's (_absence)
        "topicAbsentShare": round(sum(t in lacking for t in worded) / len(worded), 4) if worded else 0.0,
        # the share of its words in a script this memory never writes: another language (_absence)
        "unwrittenShare": unwritten,
        # how many distinct words this memory uses (up to BROAD_VOCABULARY): few, and a word it
        # never uses is mostly an ordinary one said otherwise here (_absence)
        "vocabulary": vocabulary,
        # of the query's short words (names aside), how many this memory holds and how many not:
        # counted where no passage holds a word of it (reads_as_another_language)
        "shortWords": {"held": short_words[0], "unheld": short_words[1]},
        # the share of its words (names aside) this memory holds as written, or stop words: most,
        # and it is in this memory's language (in_memory_language); counted where a word is missing
        "heldShare": held,
        "weights": {t: round(w, 4) for t, w in weights.items()},
        "named": named,
        "nDocs": n_docs,
        "bestKeyword": round(max((c.parts["confidence"]["keyword"] for c in cands), default=0.0), 4),
        "bestCoverage": round(max((c.parts["confidence"]["termCoverage"] for c in cands), default=0.0), 4),
        "bestVector": round(max((c.parts["confidence"]["vector"] for c in cands), default=0.0), 4),
        # the words this memory uses as the query does, and how much of them one passage holds
        "presentWeight": round(sum(w for t, w in weights.items() if t not in absent and t not in forms), 4),
        "presentCoverage": present_coverage(weights, absent + list(forms), cands),
        # the weight of a word half the passages hold: the words held must weigh more to say anything
        "rareWeight": round(common, 4) if n_docs else 1.0,
        "topZ": round(max((c.vec_z for c in cands if c.vec_z is not None), default=0.0), 4),
        # what the best passage holds of the query, against what the memory as a whole uses (scattered)
        "bestHeld": round(max((c.parts["confidence"]["termWeight"] for c in cands), default=0.0), 4),
        "bestHeldTerms": max((c.parts["confidence"]["terms"] for c in cands), default=[],
                             key=lambda ts: sum(weights.get(t, 0.0) for t in ts)),
        "usedWeight": round(sum(w for t, w in weights.items() if w < 1.0 or t in forms), 3),
        "vectors": any(c.vec_cos is not None for c in cands),  # bestVector means something
    }
    # how likely chance alone holds as much together as the best passage (scattered)
    out["chanceHeld"] = None
    if chance_decides(out):
        shares = [(w, ranking.doc_share(w, n_docs)) for t, w in weights.items() if w < 1.0 or t in forms]
        out["chanceHeld"] = round(chance_held(shares, n_docs, [weights.get(t, 0.0) for t in out["bestHeldTerms"]]), 4)
    out["absent"] = verdict(out)
    out["abstain"] = out["absent"]["reason"] if out["absent"] else None
    return out
