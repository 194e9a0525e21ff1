"""Seeded variants of the questions in ../shared/eval, for bench/abstention.py (issue 42): the
same question as a person would ask it otherwise. Every choice (which word, which letter, which
frame) follows from a hash of the question's id and the variant's name, so a run is the same
on any machine. None of these is fitted to: each is reported beside the set it comes from.

    meta      the question inside a frame of words about the question itself ("According to
              what we discussed, ...", "How would you describe ...")
    slip      one letter of one topic word (the longest word of 5+ letters that is no stop
              word and not capitalised) changed to a neighbouring key
    slip2     two topic words each with one slip (one word twice when it has only one)
    nick      (with `named`, or of `chats`) the person's name cut to its first syllable, as a nickname is
              (Melanie: Mel, Dorothea: Dor, Ingrid: Ing)
    year      the month and year of the gold's day said in the question ("... in June 2023")
    two       (index set) each history with both speakers named on every line: the user by
              abstention.NAMES, the assistant by SECOND below, and questions naming the user
              (third_person.tsv), as conversation benchmarks such as LoCoMo are written

Not built: the question in German or Chinese. No offline translation model is at hand, and
a translation written here by hand would be a fit, not a variant.
"""

from __future__ import annotations

import hashlib
import re

KEYBOARD = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]

# the assistant's name in each history of `two`, in the order of the folders: none occurs in
# any history's text nor in abstention.NAMES
SECOND = """Anselm Brunhilde Clemens Dagmar Eberhard Fenella Gottfried Hyacinth Isidore Jocasta
Konstantin Ludmila Mortimer Nerissa Oswin Perpetua Quintus Rosamund Sebastian Theodora Ulrich
Valentina Wendelin Xanthe Yolanda Zebedee Aurelio Benedikta Crispin Drusilla""".split()

META_FRAMES = [
    "According to what we discussed, {q}",
    "Regarding our earlier conversations: {q}",
    "How would you describe it? {q}",
    "From what can be inferred from my notes, {q}",
    "I was discussing this before. {q}",
]

MONTHS = "January February March April May June July August September October November December".split()


def seeded(seed: str, variant: str) -> int:
    return int(hashlib.sha1(f"{variant}:{seed}".encode()).hexdigest(), 16)


def neighbours(ch: str) -> str:
    """The keys beside `ch` on its row of a QWERTY keyboard."""
    for row in KEYBOARD:
        i = row.find(ch.lower())
        if i >= 0:
            return row[max(0, i - 1):i] + row[i + 1:i + 2]
    return ""


def slip(word: str, h: int) -> str:
    """`word` with one letter (never the first) changed to a neighbouring key."""
    at = 1 + h % (len(word) - 1)
    keys = neighbours(word[at]) or "e"
    return word[:at] + keys[(h // 7) % len(keys)] + word[at + 1:]


def topic_words(query: str) -> list[str]:
    """The question's topic words a slip may hit: words of 5+ lower-case letters, no stop
    word, longest first (the words a search turns on), each once."""
    from clawmem.engine.text import STOPWORDS

    words = [w for w in re.findall(r"\b[a-z]{5,}\b", query) if w not in STOPWORDS]
    return sorted(dict.fromkeys(words), key=lambda w: (-len(w), words.index(w)))


def slipped(query: str, seed: str, count: int) -> str | None:
    """The question with `count` slips in its topic words; None when it has none."""
    words = topic_words(query)
    if not words:
        return None
    h = seeded(seed, f"slip{count}")
    out = query
    for n in range(count):
        w = words[n % len(words)] if len(words) > 1 else words[0]
        if n and len(words) == 1:  # one word only: its second slip lands on the slipped word
            w = re.search(rf"\b{w[:1]}\w*", out[out.find(w[:1]):]).group(0) if w in out else w
        new = slip(w, h >> (8 * n))
        out = re.sub(rf"\b{re.escape(w)}\b", new, out, count=1)
    return out if out != query else None


def meta(query: str, seed: str) -> str:
    frame = META_FRAMES[seeded(seed, "meta") % len(META_FRAMES)]
    return frame.format(q=query[:1].lower() + query[1:] if frame[-3] != "." and frame[-3] != "?" else query)


def nickname(name: str) -> str:
    """The name's first syllable: up to the consonant after its first vowels (Mel, Dor, Ing)."""
    m = re.match(r"[^aeiouy]*[aeiouy]+[^aeiouy]", name.lower())
    short = m.group(0) if m else name[:3]
    return short[:1].upper() + short[1:]


def with_year(query: str, gold: list[dict]) -> str | None:
    """The question saying the month and year of its gold's day; None without a dated gold."""
    day = next((m.groups() for g in gold if (m := re.search(r"(\d{4})-(\d\d)-\d\d", g["path"]))), None)
    if not day:
        return None
    year, month = day
    return f"{query.rstrip()} This was in {MONTHS[int(month) - 1]} {year}."
