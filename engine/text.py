"""Tokenisation shared by the keyword index, the query planner, snippets and MMR.

Words are runs of letters, digits and `_`. Han, kana and Hangul have no spaces between
words, so runs of them are indexed as single characters plus adjacent bigrams: a query of
one or two characters then finds any passage containing them, and a longer run must match
all of its bigrams (an AND that approximates a substring match).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from bisect import bisect_right

WORD_RE = re.compile(r"\w+")

_CJK_RANGES = (
    (0x1100, 0x11FF),  # Hangul jamo
    (0x2E80, 0x2FDF),  # CJK radicals
    (0x3040, 0x30FF),  # hiragana, katakana
    (0x3130, 0x318F),  # Hangul compatibility jamo
    (0x31F0, 0x31FF),  # katakana extensions
    (0x3400, 0x4DBF),  # Han extension A
    (0x4E00, 0x9FFF),  # Han
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # Han compatibility
    (0xFF66, 0xFF9F),  # half-width katakana
    (0x20000, 0x2FA1F),  # Han extensions B..
)

# the ranges as sorted boundaries: a code point is CJK when an odd number of them are <= it
_CJK_BOUNDS = [edge for lo, hi in _CJK_RANGES for edge in (lo, hi + 1)]


class _CjkFinder:
    """CJK_RE: the CJK ranges as a regex, compiled when a text may hold one. The class spans
    ~70k code points, which `re` compiles in ~2.5 ms: paid at import, that was every
    `clawmem search`'s cost. `search` first looks at the text's distinct characters from
    U+1100 up (most text has none, or only punctuation such as ’ and —), which cannot change
    its answer: no character below U+1100 or outside the ranges matches."""

    def __init__(self, pattern: str):
        self._pattern = pattern
        self._compiled: re.Pattern | None = None

    def _regex(self) -> re.Pattern:
        if self._compiled is None:
            self._compiled = re.compile(self._pattern)
        return self._compiled

    def search(self, text: str, *args) -> re.Match | None:
        if not args and not has_cjk(text):
            return None
        return self._regex().search(text, *args)

    def __getattr__(self, name: str):
        return getattr(self._regex(), name)


# the same ranges as a regex character class (no range holds ], \\, ^ or -): finds one in C
CJK_RE = _CjkFinder("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _CJK_RANGES) + "]")


def is_cjk(ch: str) -> bool:
    return ch >= "\u1100" and bisect_right(_CJK_BOUNDS, ord(ch)) % 2 == 1


def has_cjk(text: str) -> bool:
    """Whether `text` holds a CJK/Hangul character: CJK_RE.search(text) is not None, without
    compiling it (only its distinct characters from U+1100 up are looked at)."""
    return not text.isascii() and any(is_cjk(ch) for ch in set(text) if ch >= "\u1100")


def is_hangul(ch: str) -> bool:
    cp = ord(ch)
    return 0xAC00 <= cp <= 0xD7AF or 0x1100 <= cp <= 0x11FF or 0x3130 <= cp <= 0x318F


def normalize(text: str) -> str:
    # NFKC folds full-width letters and compatibility forms; casefold also maps ß to ss
    return unicodedata.normalize("NFKC", text).casefold()


def cjk_count(text: str) -> int:
    """How many characters of `text` are CJK/Hangul."""
    return 0 if text.isascii() else sum(1 for ch in text if is_cjk(ch))


def _segments(word: str) -> list[tuple[str, bool]]:
    """Split a word into maximal runs that are all-CJK or all-other."""
    if word.isascii():  # most words: no character to look at
        return [(word, False)]
    out: list[tuple[str, bool]] = []
    start, kind = 0, is_cjk(word[0])
    for i in range(1, len(word)):
        now = is_cjk(word[i])
        if now != kind:
            out.append((word[start:i], kind))
            start, kind = i, now
    out.append((word[start:], kind))
    return out


def _grams(run: str) -> list[str]:
    return list(run) + [run[i : i + 2] for i in range(len(run) - 1)]


def words(text: str) -> list[str]:
    return WORD_RE.findall(normalize(text))


def index_tokens(text: str) -> list[str]:
    """Tokens stored in the full-text index for a chunk of text."""
    if text.isascii():  # most notes: NFKC changes no ASCII character and casefold is lower
        return WORD_RE.findall(text.lower())
    out: list[str] = []
    for line in text.split("\n"):  # no word spans a line, nor does NFKC compose across one
        if line.isascii():
            out += WORD_RE.findall(line.lower())
            continue
        for word in words(line):
            if word.isascii():
                out.append(word)
                continue
            for seg, cjk in _segments(word):
                if cjk:
                    out.extend(_grams(seg))
                else:
                    out.append(seg)
    return out


# Korean particles, longest first, stripped from the end of a Hangul word at query time.
KO_PARTICLES = sorted(
    "에서 으로 에게 한테 처럼 같이 보다 까지 부터 마다 밖에 대로 은 는 이 가 을 를 의 에 로 와 과 도 만".split(),
    key=len,
    reverse=True,
)


def strip_particle(word: str) -> str:
    for p in KO_PARTICLES:
        if word.endswith(p) and len(word) - len(p) >= 1:
            stem = word[: -len(p)]
            if len(stem) >= 2 or not is_hangul(stem[-1]):
                return stem
    return word


def query_groups(query: str) -> list[list[str]]:
    """Query terms for the strict (AND) search, one group per word of the query.

    A CJK run of n > 1 characters becomes its n-1 bigrams; one character stays a unigram.
    A Hangul word loses a trailing particle first (서버에서 -> 서버).
    """
    groups: list[list[str]] = []
    for word in words(query):
        segs = _segments(word)
        terms: list[str] = []
        for idx, (seg, cjk) in enumerate(segs):
            if cjk and is_hangul(seg[0]):
                stripped = strip_particle(seg)
                # "api를": the Hangul part is only a particle after a non-Hangul stem
                if stripped == seg and idx > 0 and seg in KO_PARTICLES:
                    continue
                seg = stripped
            if cjk:
                terms.extend([seg] if len(seg) == 1 else [seg[i : i + 2] for i in range(len(seg) - 1)])
            else:
                terms.append(seg)
        if terms:
            groups.append(terms)
    return groups


def query_terms(query: str) -> list[str]:
    seen: dict[str, None] = {}
    for group in query_groups(query):
        for t in group:
            seen.setdefault(t, None)
    return list(seen)


STOPWORDS = frozenset(
    # English: function words, pronouns, auxiliaries, fillers, and words about remembering itself.
    # Content words (day, week, time, meet, go…) stay: BM25's IDF already discounts common ones.
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing done down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not of off on once only or other our ours ourselves
    out over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which while
    who whom why will with would you your yours yourself yourselves
    i'm im i've ive i'd id i'll ill you're youre it's that's there's what's don't dont didn't didnt
    can't cant won't wont isn't isnt wasn't wasnt aren't arent let lets
    hey hi hello oh ok okay yeah yes yep wow haha hmm um uh please thanks thank really actually maybe
    something anything everything someone anyone everyone thing things stuff
    remember recall mentioned mention discussed discuss talked told
    """
    # Spanish / Portuguese
    """el la los las un una unos unas de del al y o que en es por para con sin sobre como pero
    mas más muy se su sus lo le les qué cuál cuando cuándo donde dónde quien quién
    o os as um uma uns umas do da dos das no na nos nas em é com sem muito seu sua seus suas qual
    quando onde quem foi ser estar está
    """
    # Arabic
    """في من على إلى عن مع هذا هذه ذلك تلك التي الذي هو هي كان كانت ما ماذا متى أين كيف لماذا
    أن إن لا نعم أو و ثم قد لقد
    """
    # Chinese (unigrams and common function words)
    """的 了 是 在 我 你 他 她 它 们 我们 你们 他们 这 那 这个 那个 和 与 及 或 也 都 就 还
    吗 呢 吧 啊 呀 哦 嗯 有 没 没有 不 很 太 又 再 会 能 要 想 说 把 被 给 让 从 到 对 为 着 过 个 一
    一个 什么 怎么 怎样 为什么 哪 哪里 谁 多少 啦 得 地 记得 提到 讨论 之前
    """
    # Korean
    """나 너 우리 저 제 그 이 저것 그것 이것 것 수 등 및 또는 그리고 하지만 그래서
    뭐 무엇 어떻게 왜 언제 어디 누구 있다 없다 하다 했다 했나요 하는 있는 없는
    """
    # Japanese
    """これ それ あれ この その あの ここ そこ あそこ こと もの ため よう です ます でした ました
    する した して いる ある ない から まで より など の に は を が で と も へ や か
    """.split()
)


def relaxed_terms(query: str) -> list[str]:
    """Keywords for the relaxed (OR) search, in query order, each once.

    Stop words, one- and two-letter Latin words and bare numbers are dropped. CJK runs give
    their single characters as well as their bigrams, so a passage that shares part of a
    phrase still scores (the strict search already required whole phrases).
    """
    out: dict[str, None] = {}
    for word in words(query):
        for seg, cjk in _segments(word):
            if cjk and is_hangul(seg[0]):
                seg = strip_particle(seg)
            for t in _grams(seg) if cjk else [seg]:
                if t in STOPWORDS:
                    continue
                if t.isascii() and (t.isdigit() or (t.isalpha() and len(t) < 3)):
                    continue
                if len(t) == 2 and is_cjk(t[0]) and t[0] in STOPWORDS and t[1] in STOPWORDS:
                    continue
                out.setdefault(t, None)
    return list(out)


def mmr_tokens(text: str) -> frozenset[str]:
    """Token set for MMR's Jaccard similarity: words plus CJK unigrams and adjacent bigrams."""
    return frozenset(index_tokens(text))


# Characters that are instructions, not text: C0 controls but tab and newline, DEL, C1 controls;
# bidi controls (U+061C, U+200E/F, U+202A-E, U+2066-9), which reorder what follows so a line
# reads other than it is; zero-width characters (U+200B-D, U+2060, U+FEFF), which hide text
# inside words; and the Unicode line and paragraph separators (U+2028/9), which some readers
# take as new lines. Chosen by what the characters do, not by what any memory held. A regex
# character class without its brackets and without CR (a CR before a newline is a line end);
# the editor shows the same characters, CR included (its lines hold no line ends).
HIDDEN = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff"
_CONTROL = f"\r(?!\n)|[{HIDDEN}]"
_LINE_CONTROL = f"[\t\n\r{HIDDEN}]"  # printable_line(): in a name or a log line, every control
# what the write tools refuse: the same, a bare CR (it moves line numbers: a search's matchLine
# and `get --from` would disagree), and lone surrogates (not text)
_REFUSED = f"\r(?!\n)|[{HIDDEN}\ud800-\udfff]"


@functools.cache
def _regex(pattern: str) -> re.Pattern:
    """_CONTROL and _REFUSED compiled when first used: a --json search uses neither, and compiling
    both cost each search ~0.4 ms."""
    return re.compile(pattern)


def printable(text: str) -> str:
    """Text made safe to show on a terminal: the one policy of every front (CLI, app panes and
    tree, dialogs, MCP text). A control character is an instruction to the terminal, not text:
    ESC starts sequences that set the clipboard (OSC 52), the window title or colours, C1 codes
    do the same on some terminals, a bare CR moves back to overwrite a line, a bidi override
    makes a line read backwards, a zero-width joiner hides inside a word. Each is shown visibly
    instead (^[, ^M, <U+009B>, <U+202E>); tabs, newlines and CRLF line ends stay."""
    return _regex(_CONTROL).sub(_visible, text.replace("\r\n", "\n"))


def printable_line(text: str) -> str:
    """One line made safe to show: printable(), and tabs, newlines and CRs shown visibly too
    (^I, ^J, ^M). Every file name and log line goes through it: a name is one line, so a file
    named "x\n0.990 high MEMORY.md:1-1\n  › …" cannot print a line that looks like a hit."""
    return _regex(_LINE_CONTROL).sub(_visible, text)


def _visible(m: re.Match) -> str:
    c = ord(m.group())
    return f"^{chr(c + 64)}" if c < 0x20 else "^?" if c == 0x7F else f"<U+{c:04X}>"


_HIDDEN_OUTSIDE_ASCII = "[\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff]"
_HIDDEN_OUTSIDE_ASCII_CHARS = frozenset(
    chr(c) for lo, hi in ((0x7F, 0x9F), (0x61C, 0x61C), (0x200B, 0x200F), (0x2028, 0x202E), (0x2060, 0x2060),
                          (0x2066, 0x2069), (0xFEFF, 0xFEFF)) for c in range(lo, hi + 1)
)


def json_visible(dumped: str) -> str:
    """JSON text (json.dumps, ensure_ascii=False) whose strings show the characters printable()
    makes visible as \\uXXXX escapes: the same value to a parser, nothing hidden on a terminal
    (json.dumps escapes C0 controls itself; the rest of JSON outside strings is ASCII).
    Most text holds none of them: looking costs ~0.04 ms for a search's JSON, compiling the
    class ~0.6 ms, so it is compiled only for a text that holds one."""
    if _HIDDEN_OUTSIDE_ASCII_CHARS.isdisjoint(dumped):
        return dumped
    return _regex(_HIDDEN_OUTSIDE_ASCII).sub(lambda m: f"\\u{ord(m.group()):04x}", dumped)


def refused_character(text: str) -> re.Match | None:
    """The first character the write tools refuse in `text` (see _REFUSED), or None."""
    return _regex(_REFUSED).search(text)


def character_name(c: str) -> str:
    """What a refused character is, in a few words, for the refusal line."""
    o = ord(c)
    if c == "\r":
        return "a bare carriage return"
    if o < 0x20 or o == 0x7F:
        return "a control character" if c != "\x1b" else "an escape (ESC)"
    if 0x80 <= o <= 0x9F:
        return "a C1 control character"
    if c in "\u061c\u200e\u200f" or 0x202A <= o <= 0x202E or 0x2066 <= o <= 0x2069:
        return "a bidi control (it reorders the text after it)"
    if c in "\u2028\u2029":
        return "a Unicode line separator"
    if 0xD800 <= o <= 0xDFFF:
        return "a lone surrogate (not text)"
    return "a zero-width character"


# English inflections and derivations a memory may use where a query has another form
# ("decide" / "decided", "repaint" / "repainted", "progression" / "progress"): longest first
_ENDINGS = ("ations", "ation", "ions", "ion", "ings", "ing", "ers", "er", "ies", "es", "ed", "ly", "s", "e", "y", "d")


def word_forms(term: str) -> list[str]:
    """Other forms of an English word (a light stemmer: its stem plus common endings, in
    British and American spelling), for a question whose word this memory only uses in
    another form. Empty for other words."""
    forms = set(_endings(term))
    for other in spellings(term) if forms else ():  # favourite -> favorite, favorites
        forms.add(other)
        forms.update(_endings(other))
    forms.discard(term)
    return sorted(forms)


def _endings(term: str) -> list[str]:
    if not (term.isascii() and term.isalpha() and len(term) >= 3):
        return []
    stem = next((term[: -len(e)] for e in _ENDINGS if term.endswith(e) and len(term) - len(e) >= 3), term)
    stems = {stem, term}  # friday -> fridays as well as frida -> fridas
    if len(stem) >= 4 and stem[-1] == stem[-2]:  # repott(ed) -> repot
        stems.add(stem[:-1])
    else:  # repot -> repott(ed)
        stems.add(stem + stem[-1])
    forms = {s + e for s in stems for e in ("",) + _ENDINGS}
    if term.endswith("y"):
        forms.add(term[:-1] + "ies")
    forms.discard(term)
    return sorted(forms)


# British <-> American endings, each way: organise/organize, centre/center, catalogue/catalog
_ISE = ("ise", "ised", "ises", "ising", "isation", "isations")
_ENDING_SWAPS = (
    tuple((e, e.replace("s", "z", 1)) for e in _ISE) + tuple((e.replace("s", "z", 1), e) for e in _ISE),
    (("tre", "ter"), ("tres", "ters"), ("ter", "tre"), ("ters", "tres"), ("ogue", "og"), ("ogues", "ogs")),
)
_DOUBLE_L = (("lled", "led"), ("lling", "ling"), ("ller", "ler"), ("led", "lled"), ("ling", "lling"))


def spellings(word: str) -> set[str]:
    """The word in the other of British and American spelling: colour/color, organise/organize,
    centre/center, catalogue/catalog, travelled/traveled (in each group, the first change that applies)."""
    out = set()
    i = word.find("our", 1)
    if i > 0 and word[i - 1] not in "aeiouy":  # colour, favourite, neighbours (not four, tour)
        out.add(word[:i] + "or" + word[i + 3 :])
    else:
        i = word.find("or", 1)
        if i > 0 and word[i - 1] in "lvbmn" and word[i + 2 : i + 3] != "u":  # color, favorite, neighbor, humor, honor
            out.add(word[:i] + "our" + word[i + 2 :])
    for swaps in _ENDING_SWAPS:
        a, b = next(((a, b) for a, b in swaps if word.endswith(a) and len(word) - len(a) >= 3), ("", ""))
        if a:
            out.add(word[: -len(a)] + b)
    for a, b in _DOUBLE_L:  # travelled/traveled: one vowel before the l, a consonant before it
        if word.endswith(a) and len(word) - len(a) >= 3 and word[-len(a) - 1] in "aeiou" and word[-len(a) - 2] not in "aeiou":
            out.add(word[: -len(a)] + b)
            break
    out.discard(word)
    return out
