"""Everyday words: so common in speech that a memory of terse notes may never use them, so their
absence from it says nothing about whether it holds the answer.

A question's word missing from a whole memory is evidence that the memory is someone else's
only when it is a topic word ("sealant", "powwows", "reunion"). A chatty question ("I still
don't want to lose it, I'm a bit scared") asked of notes written in the third person lacks
"still", "want", "bit" even when the notes hold the answer: asked of their own memory, the
last turns of MADial's dialogues came back empty 55 % of the time on such words
(bench/abstention.py, "last turn" sets). Stop words are dropped before this; these are the
common verbs, adverbs and adjectives beyond them (English; other languages have only their stop
words), the pieces a tokenizer cuts from contractions (don't -> don, t), and every Chinese or
Japanese term (see is_everyday); and dates, times and counts in words or small numbers (a note
dates itself 2024-05-03, where a question says "the first Friday of May"), and words about the
conversation itself ("you recommended", "our previous chat").
"""

from __future__ import annotations

from ..text import is_cjk, is_hangul

# A memory dates itself in numbers (memory/2024-05-03.md, "## 14:05"), so a month a question
# names in words is missing from it even when the answer is there: a date, not a topic or a
# name, whatever its capital letter says.
CALENDAR = frozenset(
    """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday""".split()
)



def is_calendar(term: str) -> bool:
    """A month or weekday, or its first three letters or more (Sept, Thurs, Feb): a memory says
    dates in numbers (2024-09-05), so no rule over its vocabulary can find them there; this
    list of 19 words is the one kept by hand."""
    return term in CALENDAR or (len(term) >= 3 and term.isalpha() and any(w.startswith(term) for w in CALENDAR))


ENGLISH = CALENDAR | frozenset(
    # pieces of contractions (the one- and two-letter ones, t s m d ve ll re, are fragments:
    # evidence.fragment)
    """don doesn didn isn wasn aren weren haven hasn hadn wouldn couldn shouldn mustn needn ain wont"""
    # common verbs (-s, -ed, -ing forms are found by _bases; irregular ones are listed)
    """
    want like love hate hope wish need get got gotten go goes went gone make made know knew known
    think thought see saw seen come came look take took taken give gave given tell say said ask
    try tried tries use find found feel felt keep kept put let seem seemed leave left call mean
    meant become became begin began start stop help show hear heard play run ran move live bring
    brought happen happened wait stay turn believe guess suppose care enjoy finish continue change
    talk speak spoke spoken listen watch read write wrote written learn understand understood
    remember forget forgot forgotten agree decide plan send sent buy bought pay paid spend spent
    lose lost win won hold held sit sat stand stood meet met set add open close walk drive drove
    eat ate sleep slept work works worked
    """
    # common adverbs, adjectives, quantities and times
    """
    still also always never ever often sometimes usually already yet again almost quite rather
    pretty enough even especially exactly probably recently lately soon now later today tonight
    tomorrow yesterday early late much many lot lots little bit big small good bad great nice fine
    best better worse worst hard easy new old long short high low right wrong sure true real whole
    different kind sort type way time times day days week month year ago every each another else
    least less together sometime anyway instead though although however since around away back
    first last next most ones one two three well fun cool awesome amazing wonderful terrible
    happy sad glad sorry scared afraid worried excited tired
    """
    # times of day, quantities in words (a note writes 5, not five), and words about the
    # conversation itself ("the restaurant you recommended in our previous chat")
    """
    morning afternoon evening night noon midnight weekend weekday four five six seven eight nine
    ten eleven twelve fifteen twenty thirty forty fifty hundred thousand million half twice dozen
    second third remind recommend suggest conversation chat previous earlier prior people person
    """.split()
)


def is_asking(term: str) -> bool:
    """An English verb or adverb form (-ed, -ing, -ly, 6+ letters): what the question does or how
    ("inferred", "regarding", "according", "discussing"), or what someone did, which a memory
    says in other words; the thing a question is about is a noun or a name. A rule of the
    language, not of any data set: no word of it is listed."""
    return term.isascii() and term.isalpha() and len(term) >= 6 and term.endswith(("ed", "ing", "ly"))


def near_everyday(term: str) -> bool:
    """A slip of the keyboard away from an everyday word (tonifht: tonight): as weak as it.
    rapidfuzz's edit distance (optimal string alignment), one edit, 5+ letters."""
    if len(term) < 5 or not (term.isascii() and term.isalpha()):
        return False
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    return process.extractOne(term, _EVERYDAY_WORDS, scorer=OSA.distance, score_cutoff=1) is not None


def is_everyday(term: str) -> bool:
    """Whether a query term's absence from a memory says nothing (see the module's note)."""
    if any(is_cjk(ch) and not is_hangul(ch) for ch in term):
        # Chinese and Japanese are indexed as characters and character pairs, not words: most
        # pairs of a question span two words ("我试" of 我试过), and a memory of short notes lacks
        # most of them (a Chinese last turn asked of its own memory: 55 % came back empty)
        return True
    if term.isdigit() and len(term) <= 2:  # a day or a count: 3 May is 2024-05-03 in a note
        return True
    return term in ENGLISH or is_calendar(term) or (term.isascii() and term.isalpha() and any(b in ENGLISH for b in _bases(term)))


_EVERYDAY_WORDS = sorted(w for w in ENGLISH if len(w) >= 4)


def _bases(word: str) -> set[str]:
    """What an inflected English word may come from: wants, wanted, wanting -> want; tries,
    tried -> try; liked -> like; getting -> get. Only inflections: a derived word (lotion,
    player) is a word of its own."""
    out = set()
    for suffix, repl in (("ies", "y"), ("ied", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e"), ("ly", "")):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            stem = word[: -len(suffix)] + repl
            out.add(stem)
            if len(stem) > 2 and stem[-1] == stem[-2]:  # getting -> gett -> get
                out.add(stem[:-1])
    return out
