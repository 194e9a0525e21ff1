"""Keyword candidates: FTS5 BM25 over clawmem's own tokens, a relaxed pass for long questions, rare
identifiers and names the query holds."""

from __future__ import annotations

import functools
import os
import re
TYPE_CHECKING = False  # typing's constant without importing typing: a search never needs it (~3 ms)
if TYPE_CHECKING:
    from typing import Any

from ..index.store import OperationalError, Store
from ..text import STOPWORDS, has_cjk, is_cjk, query_terms, relaxed_terms, word_forms
from .everyday import is_calendar
from .options import Candidate, Options


def fts_query(terms: list[str], joiner: str) -> str | None:
    if not terms:
        return None
    return f" {joiner} ".join('"' + t.replace('"', '""') + '"' for t in terms)


def _kept(opts: Options) -> tuple:
    """What a search keeps, as the store's queries take it: (sources, after, before)."""
    return opts.sources, opts.after, opts.before


OR_POSTINGS = 2000  # the relaxed pass scores about this many chunks at most: a long question would otherwise score most of the index


def doc_freqs(store: Store, terms: list[str], cap: int | None = None) -> dict[str, int]:
    """How many chunks hold each term, counted up to `cap` (reading a common word's whole
    posting list is the cost being avoided). FTS5 itself matches each term, so its tokenizer
    (diacritics folded) decides, as it does for the search."""
    cap = cap or OR_POSTINGS + 1
    return {t: store.match_count(fts_query([t], "AND"), cap) for t in terms}


def selective_terms(terms: list[str], df: dict[str, int], budget: int | None = None) -> list[str]:
    """The query's rarest keywords whose chunks add up to about `budget` (at least the rarest
    one), in query order. An OR of every word of a long question makes FTS5 score most of a
    big index; the common words it leaves out weigh little in BM25 anyway."""
    budget = budget or OR_POSTINGS
    keep: set[str] = set()
    total = 0
    for t in sorted((t for t in terms if df.get(t)), key=lambda t: df[t]):
        if keep and total + df[t] > budget:
            break
        keep.add(t)
        total += df[t]
    return [t for t in terms if t in keep]


def vocabulary_forms(store: Store, terms: list[str], query: str = "", names: set[str] | None = None) -> dict[str, list[str]]:
    """{term: the other forms of it this index holds}, for terms no chunk holds as written: its
    inflections and other spelling (cookie: cookies; favourite: favorite), else its near forms
    (near_forms: a misspelt name, an abbreviation). The index stores words as written, so
    without them a question that says "cookie" never finds the notes that say "cookies".
    `names`: filled with the names found only in a near spelling (another person, or a typo)."""
    out = inflected_forms(store, terms)
    # a plural of capitals (EPs, CDs, URLs): its singular, too short for inflected_forms
    for caps in re.findall(r"\b([A-Z]{2,})s\b", query):
        t, one = caps.lower() + "s", caps.lower()
        if t in terms and t not in out and store.any_match(fts_query([one], "AND")):
            out[t] = [one]
    rest = [t for t in terms if t not in out]
    if rest:
        out.update(near_forms(store, rest, query, names))
    return out


def inflected_forms(store: Store, terms: list[str]) -> dict[str, list[str]]:
    """{term: its inflections and other spelling this index holds}, for English words."""
    out: dict[str, list[str]] = {}
    wanted = {t: set(word_forms(t)) for t in terms}
    try:
        for t, forms in wanted.items():
            if not forms:
                continue
            prefix = os.path.commonprefix(sorted(forms | {t})) or t  # one range of the vocabulary holds them all
            found = [term for term in store.words_between(prefix, prefix + "\uffff") if term in forms]
            if found:
                out[t] = found
    except OperationalError:  # no fts5vocab: words match as written
        pass
    return out


def held_forms(store: Store, terms: list[str]) -> dict[str, tuple[list[str], int]]:
    """{term: (its other forms this index holds, chunks holding it in any form)}, for terms the
    index may hold as written too ("like": "likes"), for passage evidence alone: a passage
    saying "Marta likes" holds the question's "like" whether or not another note says "like".
    The keyword pass still asks FTS5 for the word as written (its forms would count twice in
    BM25). One vocabulary range read per word (inflected_forms), one count per word with forms."""
    out: dict[str, tuple[list[str], int]] = {}
    asked = set(terms)
    for t, fs in inflected_forms(store, terms).items():
        fs = [f for f in fs if f not in asked]  # a form the query asks for itself counts as itself
        if fs:
            out[t] = (fs, store.match_count(fts_query([t] + fs, "OR"), OR_POSTINGS + 1))
    return out


NEAR_FORMS = 4  # the closest forms kept per word (the most used first among equals)


def _in_order(short: str, word: str) -> bool:
    """Whether `word` holds the letters of `short` in order (dept: department, sept: september)."""
    rest = iter(word)
    return all(ch in rest for ch in short)


BROAD_VOCABULARY = 5000  # distinct words: a memory that uses fewer lacks most ordinary words (vocabulary_size)


def vocabulary_size(store: Store) -> int:
    """How many distinct words this index holds, counted up to BROAD_VOCABULARY (once per
    index generation). A word a question asks about that a memory never uses says "someone
    else's" only where the memory speaks broadly: a few hundred notes use a few hundred words,
    so the question's "present" is missing where they say "gift", "contest" where they say
    "competition". Where that verdict was measured to hold, LongMemEval's chat histories use
    6,800-7,800 words; MADial's archive of 160 notes uses 784, and new questions about it,
    written without the rules, were flagged .23 on such words (bench/results/abstention.md).
    Any line from 785 to 6,788 splits the two alike: it is set under the smallest memory
    measured to hold, not fitted between them. Unknown (no fts5vocab): BROAD_VOCABULARY."""
    try:
        return store.memo("vocabulary size", lambda: store.count_words("a", "\U0010ffff", BROAD_VOCABULARY))
    except OperationalError:
        return BROAD_VOCABULARY


# letters: the commonest words of a language written in letters are this short. Where some
# passage holds a word of the query, evidence's shortAbsent asks more (two 3-letter topic words
# missing), as the words found there already say the question may be in the memory's language
SHORT_WORD = 4


def _words_of_letters(query: str) -> list[str]:
    """The query's distinct words of letters (no CJK), in order, names aside: the words that
    tell its language (short_words, held_share)."""
    names = set(named_terms(query))
    return [t for t in dict.fromkeys(query_terms(query)) if t.isalpha() and not has_cjk(t) and t not in names]


def short_words(store: Store, query: str, stop_words_held: bool = False) -> tuple[int, int]:
    """(held, not held): the query's distinct words of up to SHORT_WORD letters, names aside, by
    whether this index holds them as written. Every memory uses the short words of its own
    language, its commonest: evidence.reads_as_another_language. `stop_words_held`: a stop word
    (text.STOPWORDS: English's function words, "his", "did", and the asking words of Spanish
    and Portuguese) counts as held, as a memory of few words may never write it."""
    short = [t for t in _words_of_letters(query) if len(t) <= SHORT_WORD]
    try:
        held = sum((stop_words_held and t in STOPWORDS) or store.word_count(t) > 0 for t in short)
    except OperationalError:  # no fts5vocab: cannot tell, they count as held
        return len(short), 0
    return held, len(short) - held


def held_share(store: Store, query: str) -> float | None:
    """The share of the query's words of letters (two or more, names aside) that this index
    holds as written or that are stop words (text.STOPWORDS: the asking words of English,
    Spanish and Portuguese, "what", "did", "about", which terse notes may never write); None
    when it has none. A question in this memory's language shares most of its words with it
    whatever its topic: one about another life's climbing gym holds "what", "is", "the", "name",
    "of", "where", "started" of its 11 words. One in another language shares few: its loanwords
    and chance spellings ("hat", "in", "was" of a German question). evidence.in_memory_language
    reads it."""
    words = [t for t in _words_of_letters(query) if len(t) > 1]
    if not words:
        return None
    try:
        return round(sum(t in STOPWORDS or store.word_count(t) > 0 for t in words) / len(words), 4)
    except OperationalError:  # no fts5vocab: cannot tell
        return None


SCRIPT_SAMPLE = 5000  # words counted per script: enough to tell which one a memory mostly writes


def unwritten_share(store: Store, weights: dict[str, float]) -> float:
    """The share of the query's words that are absent here and written in a script this memory
    does not mostly write: a Chinese question of English notes, an English one of Chinese notes.
    Such words could not be here in any form, so their absence says nothing of whether the
    answer is (_absence). A memory's script is the one most of its index's words are written
    in (CJK against letters below U+0250, counted up to SCRIPT_SAMPLE words each): a Chinese
    memory holds a few Latin names and weekdays, an English one may hold a Chinese note, and
    neither makes the other script its own. 0.0 when fewer than half the query's words are
    such; the vocabulary is counted only for a query that has that many (once per index)."""
    cjk = [t for t in weights if has_cjk(t)]
    letters = [t for t in weights if t.isalpha() and not has_cjk(t)]
    asks_cjk = len(cjk) > len(letters)
    absent = [t for t in (cjk if asks_cjk else letters) if weights[t] >= 1.0]
    if not absent or 2 * len(absent) < len(weights):
        return 0.0
    try:
        writes_cjk = store.memo("writes mostly cjk", lambda: store.count_words("\u1100", "\U0010ffff", SCRIPT_SAMPLE)
                                > store.count_words("a", "\u0250", SCRIPT_SAMPLE))
    except OperationalError:  # no fts5vocab: cannot tell, the words count as written
        return 0.0
    return 0.0 if writes_cjk == asks_cjk else round(len(absent) / len(weights), 4)


class Vocabulary:
    """The index's words of letters, 3+ long, with how many chunks hold each, ready for the
    string work of near_forms: edit distance (rapidfuzz), sound (jellyfish's metaphone) and
    prefixes. Read once per index generation (fts5vocab counts every posting list: 0.1-0.5 s on
    a big index, too slow to repeat for each query that has a word missing)."""

    def __init__(self, rows: list[tuple[str, int]]):
        pairs = sorted((t, d) for t, d in rows if t.isalpha())
        self.words = [t for t, _ in pairs]
        self.count = dict(pairs)
        self._sounds: dict[str, list[str]] | None = None
        self._codes: list[str] = []

    def within(self, term: str, k: int, forms: list[str] = ()) -> list[tuple[int, int, str]]:
        """(edits, -chunks, word) of the words within k edits of `term` or of one of its `forms`
        (a letter changed, added, dropped, or two neighbours swapped: optimal string alignment),
        closest and most used first: repsint finds repainted through repsinted."""
        import numpy as np
        from rapidfuzz import process
        from rapidfuzz.distance import OSA

        asked = [term, *forms]
        dist = process.cdist(asked, self.words, scorer=OSA.distance, score_cutoff=k, dtype=np.int8).min(axis=0)
        return sorted((int(dist[i]), -self.count[self.words[i]], self.words[i]) for i in np.flatnonzero(dist <= k)
                      if self.words[i] not in asked)

    def _by_sound(self) -> tuple[dict[str, list[str]], list[str]]:
        """({metaphone code: the words of 3+ letters with it}, the codes in order), made once."""
        import jellyfish

        if self._sounds is None:
            self._sounds = {}
            for w in self.words:
                self._sounds.setdefault(jellyfish.metaphone(w), []).append(w)
            self._codes = sorted(self._sounds)
        return self._sounds, self._codes

    def sounding(self, term: str) -> list[str]:
        """The words that sound like `term` (the same metaphone code: muhammad, muhhamed, mohammed)."""
        import jellyfish

        return [w for w in self._by_sound()[0].get(jellyfish.metaphone(term), []) if w != term]

    def sounding_longer(self, term: str) -> list[str]:
        """The longer words of `term`'s first letter whose sound starts as `term`'s does (jim: james)."""
        import bisect
        import jellyfish

        code = jellyfish.metaphone(term)
        if len(code) < 2:
            return []
        sounds, codes = self._by_sound()
        out, i = [], bisect.bisect_left(codes, code)
        while i < len(codes) and codes[i].startswith(code):
            out += [w for w in sounds[codes[i]] if w[0] == term[0] and len(w) > len(term)]
            i += 1
        return out

    def starting(self, prefix: str) -> list[str]:
        """The words that start with `prefix` and are longer (jon: jonathan)."""
        import bisect

        i = bisect.bisect_right(self.words, prefix)
        out = []
        while i < len(self.words) and self.words[i].startswith(prefix):
            out.append(self.words[i])
            i += 1
        return out


def vocabulary(store: Store) -> Vocabulary:
    return store.memo("vocabulary", lambda: Vocabulary(store.words_with_counts(min_length=3)))


NAME_CHECKS = 16  # near forms of a name checked for being a name here, closest first


SHORT_NAME = 5  # letters: a name this short has many ordinary words within a letter or a sound of it


def _written_as_name(store: Store, term: str, mostly: bool = True, passages: int = 20) -> bool:
    """Whether this index writes `term` as a name: some passage names it (named_terms:
    capitalised inside a sentence; or a speaker's label opening a line), and with `mostly`,
    it is never written in lower case, or capitalised inside a sentence (or a speaker's label)
    more often than in lower case: a capital that opens a line or a sentence weighs nothing
    against the lower case, as any word takes one there
    (LongMemEval's chat logs open list items and headings with "Listen", "Lesson", "Border",
    which found Lisa and Bart in them by sound). A name's near form must be a name here too, or
    "Bart" would find "bar", "part" and "cart" in anyone's memory; and for a short name
    (SHORT_NAME), which has dozens of such neighbours, a word a long memory capitalises now and
    then ("The Art of War", "**List:**", "Bright Eyes") is still a word: a name is written with
    its capital wherever it stands, a word mostly without. A longer name has few neighbours by
    chance, and a question's capitalised noun in a language that capitalises nouns finds its
    cognate so (Kaffee: coffee, Fotografie: photography, written "Coffee" in some heading)."""
    label = _speaker_label(term)
    texts = store.matching_texts(fts_query([term], "AND"), passages)
    if not any(term in named_terms(text) or label.search(text) for text in texts):
        return False
    if not mostly:
        return True
    as_name = as_word = 0
    for text in texts:
        for m in re.finditer(rf"(?<!\w){re.escape(term)}(?!\w)", text, re.I):
            if m.group()[0].islower():
                as_word += 1
            elif not _sentence_start(text, m.start()) or label.match(text, text.rfind("\n", 0, m.start()) + 1):
                as_name += 1  # capitalised inside a sentence, or a speaker's label
    return as_name > as_word or not as_word  # never in lower case: its capitals, wherever they stand


def _speaker_label(term: str) -> re.Pattern:
    """A line that `term` opens as a speaker's label: "- **Melanie:** ...", "Bart: ..."."""
    return re.compile(rf"(?m)^[\s>*-]*{re.escape(term[:1].upper() + term[1:])}\**\s*[:：]")


_LABELS = re.compile(r"(?m)^[\s>*-]*([^\W\d_][\w.' -]{0,30}?)\**[ \t]*[:：]")  # "- **User:** ...", "Lisa: ..."


def unheard(store: Store, forms: list[str], passages: int = 20) -> bool:
    """Whether none of `forms` (near spellings of someone who speaks in a query) labels a line
    in the passages holding them, in a memory of chat logs (a conversation's roles label two or
    more lines of those passages, or of the passages naming a role: "- **User:** ...",
    "Assistant: ..."). Who speaks in a memory of conversations has their lines labelled there;
    a memory of notes ("Lisa fed the fish", "Tags: ...") labels no one's, and says nothing so.
    A chat log's long messages leave a passage one turn or none, so the turns are counted over
    the passages, and over those naming a role if need be."""
    def turns(texts: list[str]) -> int:
        return sum(label.lower() in CHAT_ROLES for text in texts for label in _LABELS.findall(text))

    counted = 0
    for form in forms:
        texts = store.matching_texts(fts_query([form], "AND"), passages)
        if any(_speaker_label(form).search(text) for text in texts):
            return False
        counted += turns(texts)
    roles = [r for r in sorted(CHAT_ROLES) if len(r) > 3]  # (me, you, a: in any passage)
    return counted >= 2 or turns(store.matching_texts(fts_query(roles, "OR"), passages)) >= 2


def _sentence_start(text: str, at: int) -> bool:
    """Whether `at` starts a line, a table's cell or a sentence (after markdown's marks and
    quotes), where any word takes a capital: "Listen to your body", "## Lesson plan",
    "- **Border** crossing", "| Lesson planning | 2 h |".
    Not named_terms' test, which reads a question's prose: a memory's Markdown opens lines
    with list marks, headings and bold, which that test would take for a sentence's words."""
    before = text[max(0, at - 40):at].rstrip(" \t*_#>\"'(\u201c\u2018-\u2022")
    return not before or before.endswith(("\n", "|", ".", "!", "?", ":", "\uff1a", "\u3002", "\uff01", "\uff1f"))


def max_edits(term: str) -> int:
    """How many letters a near form of `term` may differ by (near_forms): none under 4 letters
    (a word of 3 lies within one letter of dozens of others: cat, bat, cut, cart), 1 up to 6,
    2 beyond. A slip of the keyboard or the ear is one letter; a name's other spelling
    (Katharine / Catherine, Mohammed / Muhammad) is two in longer names, and the longer a word,
    the fewer words of a vocabulary lie within two letters of it by chance. Only words of
    letters: an identifier or a number that differs by one character is another one."""
    if len(term) < 4 or not term.isalpha() or any(is_cjk(ch) for ch in term):
        return 0
    return 1 if len(term) <= 6 else 2


SHORT_FORM = 3  # a name's short form keeps at least this many letters of it (Jon, Jim, Mel)
DISTINCT_SOUND = 4  # consonants of a metaphone code that tell a name by its sound alone (keeps_the_name)


def keeps_the_name(name: str, word: str) -> bool:
    """Whether `word`, found by sound or as a longer form of `name` (near_forms), keeps enough of
    it to be its other spelling or its long form. Metaphone keeps a word's consonants only: a
    sound of DISTINCT_SOUND or more tells a name by itself (Muhhamed, Muhammad: MHMT; a German
    cognate, Fotografie, photography: FTKRF), but Hannah's HN is Hina's too, and many words' of
    a long memory: where the sound is that short, a sound-alike must keep the letters too, at
    most one edit more than a slip (max_edits: Hina is three of six from Hannah). A short form
    keeps the name's first letters (Jon: Jonathan) or at least half its sound (Jim: James, JM
    of JMS); Hannah's HN starts Henderson's HNTRSN and "honestly"'s HNSTL, and shortens neither."""
    import jellyfish
    from rapidfuzz.distance import OSA

    if word.startswith(name):
        return True
    code, other = jellyfish.metaphone(name), jellyfish.metaphone(word)
    if other == code and (len(code) >= DISTINCT_SOUND or OSA.distance(name, word) <= max_edits(name) + 1):
        return True
    return len(word) > len(name) and other.startswith(code) and len(other) <= 2 * len(code)


def near_forms(store: Store, terms: list[str], query: str = "", names: set[str] | None = None) -> dict[str, list[str]]:
    """{term: forms of it this index holds}, for terms no chunk holds as written nor inflected,
    from the index's own vocabulary (FTS5), by rules that mean the same in any memory:
    - any word of letters within max_edits of a word the index holds (a slip of the keyboard:
      fotum, forum), the closest and most used first (the frequency prior: a slip of a word this
      memory uses often is likelier than of a rare one). Ordinary words within one edit: a
      word two letters from another is mostly another word;
    - a name of the query (named_terms, a speaker's label) also by sound (jellyfish's metaphone:
      Muhhamed, Muhammad) and as a short form of a longer name (Jon: Jonathan; Jim: James, whose
      sound starts as Jim's does, same first letter), each a name some passage writes as a name
      (a short form or a sound-alike of a name is otherwise any word: Bart would find "barter");
    - an abbreviation the query writes with a dot (Sept., Dept., Govt.): the longer words of
      its first letter that hold its letters in order (september, department, government);
    - a short word of letters the index holds letter by letter (USA: U.S.A.), as that phrase."""
    out: dict[str, list[str]] = {}
    try:
        store.vocabulary()  # OperationalError at once where SQLite lacks fts5vocab
        dotted = {m.lower() for m in re.findall(r"\b([^\W\d_]{2,})\.(?=\s+[a-z0-9]|\S)", query)}
        for t in terms:
            if t in dotted:  # the longer words of its first letter that hold its letters in order
                longer = [(not term.startswith(t), -doc, term) for term, doc in store.words_with_counts(len(t) + 1, t[0], t[0] + "\uffff")
                          if _in_order(t, term)]
                if longer:
                    out[t] = [term for _, _, term in sorted(longer)[:NEAR_FORMS]]
                    continue
            if 2 <= len(t) <= 5 and t.isascii() and t.isalpha():
                letters = ".".join(t)  # a phrase of single letters to FTS5, as "u.s.a" reads in a note
                if store.any_match(fts_query([letters], "AND")):
                    out[t] = [letters]
        named = set(named_terms(query)) | set(speakers(query))
        rest = [t for t in terms if t not in out and t.isalpha() and not any(is_cjk(ch) for ch in t)]
        vocab = vocabulary(store) if rest else None
        for t in rest:
            if t in named:
                close = [w for _, _, w in vocab.within(t, max_edits(t))] if max_edits(t) else []
                alike = vocab.sounding(t) if len(t) >= 4 else []
                if len(t) >= SHORT_FORM:  # a short form: the name's start (jon), or its sound's start (jim: james)
                    alike += vocab.starting(t) + vocab.sounding_longer(t)
                seen = list(dict.fromkeys(close + sorted(set(alike) - set(close), key=lambda w: (-vocab.count[w], w))))
                # the closest NAME_CHECKS are checked, then those by sound or short form that keep
                # too little of the name dropped: filtering before the cut would let rarer
                # candidates into it, and a name gain near forms it never had
                found = [w for w in seen[:NAME_CHECKS] if (w in close or keeps_the_name(t, w))
                         and _written_as_name(store, w, mostly=len(t) <= SHORT_NAME)]
                if found:
                    out[t] = found[:NEAR_FORMS]
                    if names is not None:
                        names.add(t)
            elif len(t) >= 5:  # an ordinary word: one slip, of the word or of its longer inflections
                # (repsint: repainted), into a word of 5+ letters (fjord is not a slip of "for")
                found = [f for f in vocab.within(t, 1, [f for f in word_forms(t) if f.startswith(t) and len(f) > len(t)])
                         if len(f[2]) >= 5]
                if not found and len(t) >= 7:  # a slip in an inflection this memory writes in another
                    from rapidfuzz.distance import OSA

                    found = sorted((1, -vocab.count[w], w) for w in vocab.starting(t[:-3])  # (sneezung: sneezing, held as sneeze)
                                   if len(w) >= 5 and any(OSA.distance(t, f, score_cutoff=1) <= 1 for f in word_forms(w)))
                if found:
                    out[t] = [w for _, _, w in found[:NEAR_FORMS]]
    except OperationalError:  # no fts5vocab: words match as written
        pass
    return out


def keyword_candidates(store: Store, query: str, opts: Options) -> tuple[list[Candidate], dict]:
    """Strict AND first; if it finds fewer than the pool needs, relaxed OR hits fill the rest below
    them, a word the index lacks as written looked for in the forms it holds."""
    info: dict[str, Any] = {"strict": 0, "relaxed": 0}
    terms = query_terms(query)
    relaxed = relaxed_terms(query)
    df = doc_freqs(store, relaxed)
    # a word no chunk holds as written is looked for in the forms the index holds (a word it
    # does hold is searched as written: its other forms would count twice in BM25)
    near: set[str] = set()
    forms = vocabulary_forms(store, [t for t in relaxed if df[t] == 0], query, near)
    info["nearNames"] = {t: forms[t] for t in near}
    more = [f for fs in forms.values() for f in fs if f not in df]
    df.update(doc_freqs(store, more))
    relaxed = list(dict.fromkeys(relaxed + more))
    info["forms"] = forms
    info["df"] = df
    out: list[Candidate] = []
    seen: set[int] = set()
    strict = fts_query(terms, "AND") if strict_can_match(store, terms, df) else None
    if strict:
        for rowid, r in ranked_matches(store, strict, opts):
            out.append(Candidate(rowid, kw_rank=len(out) + 1, kw_bm25=r, kw_strict=True))
            seen.add(rowid)
        info["strict"] = len(out)
    if len(out) < opts.candidates:
        chosen = selective_terms(relaxed, df)
        q = fts_query(chosen, "OR")
        if q and not (strict and relaxed == terms and len(terms) <= 1):
            for rowid, r in ranked_matches(store, q, opts):
                if rowid in seen:
                    continue
                out.append(Candidate(rowid, kw_rank=len(out) + 1, kw_bm25=r))
                seen.add(rowid)
                if len(out) >= opts.candidates:
                    break
            info["relaxed"] = len(out) - info["strict"]
            info["orTerms"] = chosen
    info["terms"] = terms
    return out, info


def ranked_matches(store: Store, match: str, opts: Options) -> list[tuple[int, float]]:
    """The best `opts.candidates` chunks (id, bm25) for an FTS5 query, within the sources and
    dates asked for. FTS5 ranks alone first and the few it returns are filtered after (joining
    every match to its row doubled a long question's time); only when the filter leaves too
    few of them is the whole join run, so the answer is the same either way."""
    n = opts.candidates
    top = store.ranked(match, 2 * n)
    if not top:
        return []
    ok = store.kept([i for i, _ in top], *_kept(opts))
    kept = [(i, r) for i, r in top if i in ok]
    if len(kept) >= n or len(top) < 2 * n:  # enough, or every match was looked at
        return kept[:n]
    return store.ranked_within(match, n, *_kept(opts))


def strict_can_match(store: Store, terms: list[str], df: dict[str, int]) -> bool:
    """False when no chunk can hold every term, found cheaply: a keyword no chunk holds, or no
    chunk holding all the keywords. The full AND also reads the posting lists of the question's
    stop words ("what", "the", "i"), the slow part of a long question's strict pass."""
    if not terms:
        return False
    keys = [t for t in terms if t in df]
    if any(df[t] == 0 for t in keys):
        return False
    if len(keys) < 2 or len(keys) == len(terms):
        return True
    rarest_first = sorted(keys, key=lambda t: df[t])
    # the four rarest first: their short posting lists answer in ~0.1 ms, and a long question's
    # rare words seldom share a chunk; the common ones' long lists make the whole AND cost ms
    for n in sorted({min(4, len(keys)), len(keys)}):
        q = fts_query(rarest_first[:n], "AND")
        if not store.any_match(q):
            return False
    return True


def date_filtered_ids(store: Store, opts: Options) -> list[int]:
    return store.ids_within(*_kept(opts))


def load_rows(store: Store, ids: list[int]) -> dict[int, tuple]:
    return store.rows(ids)


TITLES = frozenset("dr mr mrs ms mx st prof sr jr mt".split())  # "Dr." does not end a sentence


# labels of a conversation's roles, which any chat log's turns carry (unheard), and of kinds of
# line; none of them a person: any transcript or list may carry them
CHAT_ROLES = frozenset("user assistant human ai bot system agent model me you q a".split())
ROLES = CHAT_ROLES | frozenset("question answer note todo step example input output error warning".split())


LINE_LABEL = re.compile(r"(?m)^[ \t]*([^\W\d_][\w.' -]{0,30}?)[ \t]*[:：]")  # "Bart: ...", "Lisa：..."


@functools.lru_cache(maxsize=256)  # asked of one query by the keyword pass, the pins, the order and the evidence
def _speakers(query: str) -> tuple[str, ...]:
    """speakers(), kept for the query's next asker."""
    labels = re.findall(LINE_LABEL, query)
    out = [t for label in dict.fromkeys(x for x in labels if labels.count(x) >= 2)
           # a name: not lower-case (bart: is a word), not all capitals (TODO:, NB:)
           if label.lower() not in ROLES and not label[0].islower() and not (len(label) > 1 and label.isupper()) for t in query_terms(label) if t not in STOPWORDS and t not in TITLES]
    return tuple(dict.fromkeys(out))


WORD_EDGES = "\"'()[]{},*.!?"  # quotes, brackets, bold and end marks around a written word ("**Lisa**," -> Lisa)


@functools.lru_cache(maxsize=256)
def _named_terms(query: str) -> tuple[str, ...]:
    """named_terms(), kept for the query's next asker."""
    out: dict[str, None] = {}
    cjk = mostly_cjk(query)
    if cjk:
        # a question in Chinese or Japanese writes a name, a shop or a title in Latin letters
        # ("Caleb和Hannah最初是怎么认识的？"): the switch of script marks it, wherever it stands
        # (a CJK sentence has no capitals nor spaces to tell a sentence's first word by). A
        # word with a capital and a small letter, not a run of capitals (EP, TV: an
        # abbreviation a memory may spell out), nor a label of a pasted conversation's lines
        # (User:, Assistant:), whose speakers speakers() weighs
        labels = set(re.findall(LINE_LABEL, query))
        out.update(dict.fromkeys(t for word in SCRIPT_SWITCHED.findall(query) if word not in labels for t in query_terms(word)
                                 if t not in STOPWORDS and t not in ROLES and len(t) > 1))
    for line in () if cjk else re.split(r"[\n:;]+", query):
        opens = True
        for word in line.split():
            bare = word.strip(WORD_EDGES)
            title = bare.lower() in TITLES or (len(bare) == 1 and bare.isupper())
            if not opens and not title and bare[:1].isupper() and bare.lower() not in STOPWORDS:
                # not the "s" of Sam's: a memory that never writes a possessive does not lack Sam
                # nor the Chinese glued to it ("Chemistry》怎么样"): a script without capitals names no one by them
                out.update(dict.fromkeys(t for t in query_terms(bare) if t not in STOPWORDS and len(t) > 1 and not has_cjk(t)))
            opens = word.endswith((".", "!", "?")) and not title
    out.update(dict.fromkeys(exact_tokens(query)))
    return tuple(out)


SCRIPT_SWITCHED = re.compile(r"(?<![A-Za-z])[A-Z][A-Za-z]*[a-z][A-Za-z]*")


def latin_runs(query: str) -> list[list[str]]:
    """The terms of each run of Latin words in a CJK query ("Shohei Ohtani" in
    "Kenji的爸爸大概是Shohei Ohtani的粉丝吗？"): one name, title or phrase each."""
    return [query_terms(run) for run in re.findall(r"[A-Za-z][A-Za-z' \t.-]*", query)]


def mostly_cjk(query: str) -> bool:
    """Whether most of the query's terms are CJK (Chinese, Japanese, Korean): its Latin words
    are then what it names, as unwritten_share counts a query's script."""
    terms = query_terms(query)
    return has_cjk(query) and 2 * sum(has_cjk(t) for t in terms) > len(terms)


@functools.lru_cache(maxsize=256)
def _lone_names(text: str, openers: bool = False) -> tuple[str, ...]:
    """lone_names(), kept for the next asker (a query's, or a passage's read again)."""
    out: dict[str, None] = {}
    for line in re.split(r"[\n:;]+", text):
        words = line.split()
        bare = [w.strip(WORD_EDGES) for w in words]
        capital, first = [], []  # a name's capital inside a sentence; a sentence's first word (which takes one anyway)
        opens = True
        for word, b in zip(words, bare):
            if not any(ch.isalnum() for ch in b):  # a list's or a heading's mark, a table's bar, a dash
                capital.append(False)
                first.append(False)
                opens = True
                continue
            # a capital first, not a run of capitals (DIY, EPs), which says an acronym; SaveMart is a name
            one = b[:1].isupper() and not (len(b) > 1 and (b.isupper() or (b[-1] == "s" and b[:-1].isupper())))
            capital.append(one and not opens)
            first.append(one and opens)
            opens = word.endswith((".", "!", "?")) and b.lower() not in TITLES
        for i, b in enumerate(bare):
            # a capitalised first word beside it: a title's in a memory's text ("Moulin Rouge
            # was"), the asking's in a question ("Did Mel say")
            alone = not (i and (capital[i - 1] or openers and first[i - 1])) and not (i + 1 < len(bare) and capital[i + 1])
            if (capital[i] or (openers and first[i])) and alone and b.lower() not in TITLES and b.lower() not in STOPWORDS:
                out.update(dict.fromkeys(t for t in query_terms(b) if t not in STOPWORDS and len(t) > 1))
    return tuple(out)


def lone_names(text: str, openers: bool = False) -> list[str]:
    """The index terms of the names that stand alone in `text`: a word that opens with a
    capital, inside a sentence, between words without one ("what did Mel say at the bar");
    not a word of a title or a place's name ("New York City", "Starbucks Reserve Bar"), whose
    words are ordinary ones capitalised together, nor a run of capitals (DIY, EPs). With
    `openers`, also such a word opening a sentence or a line ("- Lisa played", "**Lisa:**")."""
    return list(_lone_names(text, openers))


def _written_as_lone_name(store: Store, term: str, passages: int = 20, as_asked: bool = False) -> bool:
    """Whether this index writes `term` as a name: standing alone with its capital in some
    passage (lone_names), the question's own test: "I met Mark there", not "Mark the date",
    "Reserve Bar", "Millennium Falcon", nor a label of a word ("**Ingredients:**"). Where the
    memory never writes it in lower case, also where it opens a line or a sentence ("- Lisa
    played", "**Lisa:**"); a word it also writes in lower case takes a capital there anyway.
    As written: "Wil" held only in "will" is not. The capitalised passages are looked for
    among those holding it (SQLite's instr minds case: "mark", common in lower case, has its
    capitalised passages found among thousands). `as_asked`, for the name as the question
    spells it: one the memory never writes in lower case is no word of it but a proper noun,
    however it stands (a grandson written only in full, "Owen Michael Brooks"); not for a near
    form, which so written may be a title's word ("Falcon Crest" for Cresta)."""
    match, lower = fts_query([term], "AND"), re.compile(rf"(?<![^\W\d_]){re.escape(term)}(?![^\W\d_])")
    texts = store.matching_texts(match, passages)
    if texts and not any(lower.search(text) for text in texts):
        return as_asked or any(term in lone_names(text, openers=True) for text in texts)
    texts = store.matching_texts(match, passages, containing=term[:1].upper() + term[1:])
    return any(term in lone_names(text) for text in texts)


# English's possessive determiners: a word written after one is something someone has
POSSESSIVES = ("my", "your", "his", "her", "its", "our", "their")


def _said_as_relation(store: Store, term: str) -> bool:
    """Whether this memory writes `term` mostly as what someone has: in more than half the
    passages holding it, after a possessive ("my mom", "her coach"). Such a word names a
    relation, and capitalised in a question it names that person: "What did Mom say?" asks
    of the mom this memory writes about. A word the memory uses otherwise ("the bar", "a win",
    "my bar exam" once among them) is not one: more often than not is even odds, no fitted
    share. A possession reads the same ("my car" holds a nickname Car): the cost, against a
    false "not here" on every question naming a relation."""
    holding = doc_freqs(store, [term])[term]
    owned = store.match_count(fts_query([f"{p} {term}" for p in POSSESSIVES], "OR"), OR_POSTINGS)
    return holding > 0 and 2 * owned > holding


def names_only_as_words(store: Store, query: str, held: set[str], near: dict[str, list[str]]) -> list[str]:
    """The question's lone names (lone_names) this index holds only as words. A name stands
    alone with its capital, in the question and in the memory (_written_as_lone_name), so:
    - a short one (SHORT_FORM to SHORT_NAME letters) this index holds (`held`, in some form)
      but never writes as a name: asked of a memory where "bar" and "win" are words, "Bar" and
      "Win" (Barbara's and Winifred's short names) are held in letters only; unless a near form
      of it is a name here (near_forms: Barbara), or the memory says it mostly as a relation
      ("my mom": Mom; _said_as_relation);
    - one held only in near forms (`near`), none of which this index writes as a name: a word
      ("millennium", "million" for Melanie by sound), a title's ("Slumdog Millionaire"), a
      month or a day (August for Augustin). Those forms are still searched (a German
      question's noun finds its English cognate so).
    Not a role (User) nor a month or a day (May, June), which a memory may write in lower case."""
    lone = lone_names(query)
    words = [t for t in lone if t in held and SHORT_FORM <= len(t) <= SHORT_NAME and t.isalpha() and t.isascii()
             and t not in ROLES and not is_calendar(t) and not _written_as_lone_name(store, t, as_asked=True)
             and not _said_as_relation(store, t)]
    if words:
        named: set[str] = set()
        near_forms(store, words, query, named)
        words = [t for t in words if t not in named]
    return words + [t for t in lone if t in near and not is_calendar(t)
                    and not any(not is_calendar(f) and _written_as_lone_name(store, f) for f in near[t])]


def speakers(query: str) -> list[str]:
    """The index terms of who speaks in a query pasted as a transcript: a label that opens two
    or more of its lines ("Bart: ...", "Lisa：..."), unless it names a role (User, Assistant)."""
    return list(_speakers(query))


def named_terms(query: str) -> list[str]:
    """The index terms of what the query names: a capitalised word that does not open a
    sentence or a line (Mongolia, Okafor, New Year's), and identifiers (exact_tokens)."""
    return list(_named_terms(query))


EXACT_MAX_CHUNKS = 3  # an identifier found in at most this many chunks is "rare"


LONG_NUMBER = 6  # digits from which a number is a code (an order, an account, a phone), not a year or a count


def is_count(term: str) -> bool:
    """A year, a count or an ordinal (2022, 4711, 32nd): it names no one thing ("June 2022" is
    in anyone's memory), and a memory writes it in many ways (2022-06-03, "thirty-second")."""
    return (term.isdigit() and len(term) < LONG_NUMBER) or re.fullmatch(r"\d+(?:st|nd|rd|th)", term) is not None


def exact_tokens(query: str) -> list[str]:
    """Query words that look like identifiers: an id mixing letters and digits (a828e60), a
    name with underscores (OPENAI_API_KEY), an all-caps code (ENOENT), a number of LONG_NUMBER+
    digits (88314207; not a year or a count: 2022, 4711)."""
    out = []
    for raw in re.findall(r"[A-Za-z0-9_]+", query):
        word = raw.strip("_")
        if len(word) < 4:
            continue
        digits = any(ch.isdigit() for ch in word)
        letters = any(ch.isalpha() for ch in word)
        if is_count(word.lower()):
            continue
        if digits or "_" in word or word.isupper():
            out.append(word.lower())
    return list(dict.fromkeys(out))


def exact_hits(store: Store, query: str, opts: Options) -> dict[int, dict]:
    """Chunks holding a rare identifier or name of the query: {chunk id: {token, chunks}}.

    Vectors say little about ids, env vars, error codes and names they never saw, and a fused
    score can bury the one chunk that holds them; the caller pins these near the top.
    """
    hits: dict[int, dict] = {}
    ids_named = set(exact_tokens(query))
    for tok in named_terms(query):
        try:
            ids = store.matching_ids_within(fts_query([tok], "AND"), EXACT_MAX_CHUNKS + 1, *_kept(opts))
        except OperationalError:
            continue
        if 0 < len(ids) <= EXACT_MAX_CHUNKS:
            for cid in ids:
                if cid not in hits or (tok in ids_named and not hits[cid]["identifier"]):
                    hits[cid] = {"token": tok, "chunks": len(ids), "identifier": tok in ids_named}
    return hits
