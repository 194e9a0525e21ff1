"""Our config file read without tomllib (config.simple_toml): importing tomllib cost ~8 ms of
every keyword `clawmem search`, an eighth of the whole process. The fast path reads a subset
(headers, one-line `key = value` with plain strings, decimal numbers, booleans and one-line
arrays) and declines everything else, which tomllib then reads and reports errors for. These
tests hold it to one rule: whatever it answers, tomllib answers the same, and whenever tomllib
refuses a text, it declines."""

import re
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from clawmem.engine import config
from helpers import write

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def typed(v):
    """A value with its types spelled out: True == 1 and 1 == 1.0 in Python, not in TOML."""
    if isinstance(v, dict):
        return {k: typed(x) for k, x in v.items()}
    if isinstance(v, list):
        return [typed(x) for x in v]
    return (type(v).__name__, repr(v))


def agrees_with_tomllib(text: str) -> bool:
    """False when simple_toml answers differently from tomllib; True when it declines or agrees."""
    got = config.simple_toml(text)
    if got is None:
        return True
    try:
        want = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return False  # answered where tomllib refuses
    return typed(got) == typed(want)


# forms the fast path reads, and forms it must leave to tomllib; an odd one drawn one time in five
KEYS = ["a", "b", "c", "key", "A-1", "_x", "0", '"a"', "'b'", '"a.b"', '""', '"é ✓"']
ODD_KEYS = ["a.b", "a . b", "é", '"q\\"t"', "-", "a b", "[a]", '"a', "b=", "'a\"", ""]
SCALARS = [
    '"x"', "'x'", '"a b # c = [1]"', "''", '""', '"it\'s"', "'say \"hi\"'", '"é ✓ 中"', '"\t"', "true", "false", "1", "+1",
    "-1", "0", "-0", "+0", "123456789012345678", "1.5", "-1.5", "+0.0", "1e5", "1E5", "1e+05", "1e-5", "1.5e3", "0e0",
    "1.5e-300", "0.1",
]
ODD_SCALARS = [
    '"a\\nb"', '"\\u00e9"', '"""x"""', "'''x'''", "True", "tru", "01", "00", "1_000", "1234567890123456789",
    "99999999999999999999", "1.", ".5", "1e", "1e+", "1e1000", "1e999", "0x1f", "0o7", "0b1", "inf", "nan", "-inf",
    "+nan", "1979-05-27", "07:32:00", "1979-05-27T07:32:00Z", "{a = 1}", "{}", "x", "", "1 2", '"a" "b"', "'a'b", "-",
    "+", "٣", "１", '"x', "'x", "[1", "]",
]
SPACE = st.sampled_from(["", " ", "\t", "  "])


def one_of(good, odd, clean):
    """A good form; in a document that is not clean, an odd one a time in five."""
    if clean:
        return st.sampled_from(good)
    return st.integers(0, 4).flatmap(lambda i: st.sampled_from(odd if i == 0 else good))


@st.composite
def arrays(draw, clean):
    items = draw(st.lists(one_of(SCALARS, ODD_SCALARS + ["[1]", "[", ","], clean), max_size=4))
    seps = [draw(one_of([",", ", ", " ,", ",\t"], ["", ",,", " "], clean)) for _ in items]
    body = "".join(i + s for i, s in zip(items, seps))
    return "[" + draw(SPACE) + body + draw(one_of(["]", " ]"], ["", "]]", ",]", "] ]"], clean))


@st.composite
def lines(draw, clean):
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(SPACE) + draw(one_of(["", "# a comment", "#", "# é \"[x]\" = 1"], ["#\x7f", "#\x01", "x"], clean))
    if kind in (1, 2):
        parts = draw(st.lists(one_of(KEYS, ODD_KEYS, clean), min_size=1, max_size=3))
        dot = draw(one_of([".", " . "], [".."], clean))
        ends = [("[", "]"), ("[", "] # c")], [("[[", "]]"), ("[", ""), ("[", "]x"), ("[", "]]")]
        opening, closing = draw(one_of(*ends, clean))
        return draw(SPACE) + opening + draw(SPACE) + dot.join(parts) + draw(SPACE) + closing
    value = draw(arrays(clean)) if kind == 3 else draw(one_of(SCALARS, ODD_SCALARS, clean))
    eq = draw(one_of(["=", " = ", "\t=\t"], [" ", "=="], clean))
    tail = draw(one_of(["", " # note", "#x"], [" x", " ,", "]"], clean))
    return draw(SPACE) + draw(one_of(KEYS, ODD_KEYS, clean)) + eq + value + tail + draw(SPACE)


@st.composite
def documents(draw):
    clean = draw(st.booleans())  # half the documents hold only forms the fast path reads
    text = draw(one_of(["\n", "\r\n", "\n\n"], ["\r"], clean)).join(draw(st.lists(lines(clean), max_size=8)))
    if draw(st.booleans()):
        text += "\n"
    if not clean and draw(st.integers(0, 4)) == 0:  # a character TOML refuses, or one it allows, somewhere
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(["\x00", "\x1f", "\x7f", "\r", "\ufeff", "\u2028", "\t"])) + text[at:]
    return text


@settings(max_examples=400, deadline=None)
@given(documents())
@pytest.mark.slow  # over 1.5 s: the full suite runs it, the fast lane does not
def test_whatever_the_fast_path_reads_tomllib_reads_the_same(text):
    """Documents built from TOML's pieces, valid and not: each header, key, value and separator
    drawn from forms the fast path reads and forms it must leave to tomllib (escapes, dotted
    keys, dates, inline tables, multi-line strings, leading zeros, a key or table defined twice,
    a value a later header would extend, bare CRs and control characters). Half the documents
    hold only forms it reads (about a third of all are valid TOML)."""
    assert agrees_with_tomllib(text), (text, config.simple_toml(text))


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(documents())
def test_whatever_the_fast_path_reads_tomllib_reads_the_same_many_documents(text):
    """The same, three thousand documents."""
    assert agrees_with_tomllib(text), (text, config.simple_toml(text))


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet="ab1.-_ =\"'[],#\n\t\\{}etrufls+0e\r", max_size=40))
def test_random_text_is_read_as_tomllib_reads_it_or_left_to_it(text):
    assert agrees_with_tomllib(text), (text, config.simple_toml(text))


def test_the_configs_people_write_take_the_fast_path():
    """The TOML examples of README and docs/ (what people copy) and what `config set` writes are read without
    tomllib; were they not, a search would load it again and only the speed would say so."""
    blocks = [b for page in PAGES for b in re.findall(r"```toml\n(.*?)```", page.read_text(encoding="utf-8"), re.S)]
    assert len(blocks) >= 3
    written = 'provider = "none"\n\n[query]\nmaxResults = 3\n\n[query.hybrid]\nfusion = "rrf"\n'
    for text in blocks + [written, 'provider = "none"\n[sync]\nonSearch = false\n']:
        got = config.simple_toml(text)
        assert got is not None, text
        assert typed(got) == typed(tomllib.loads(text))


@pytest.mark.parametrize("text", [
    'a = 1\na = 2\n',  # a key twice
    '[t]\n[t]\n',  # a table twice
    'a = 1\n[a]\n',  # a table where a value is
    '[a]\nb = 1\n[a.b]\n',
    '[a.b]\n[a]\nb = 1\n',  # a value where a table is
    'a = 01\n', 'a = 1.\n', 'a = [1 2]\n', 'a = "x" y\n', '[a]]\n', 'a = 1\rb = 2\n', 'a = "\x01"\n', "\ufeffa = 1\n",
])
def test_what_tomllib_refuses_is_left_to_it(text):
    """Each is invalid TOML: the fast path declines, so the error is tomllib's, worded as before."""
    with pytest.raises(tomllib.TOMLDecodeError):
        tomllib.loads(text)
    assert config.simple_toml(text) is None


@pytest.mark.parametrize("text", [
    'a.b = 1\n', 'a = "\\t"\n', 'a = """x"""\n', 'a = 1979-05-27\n', 'a = {b = 1}\n', 'a = [\n  1,\n]\n', 'a = 1_000\n',
    'a = inf\n', '[[t]]\n', 'a = 0x10\n',
])
def test_valid_toml_outside_the_subset_is_read_by_tomllib(text, tmp_path):
    """Declined, and still read: the file loads through tomllib as before."""
    assert config.simple_toml(text) is None
    assert config.read_toml_file(write(tmp_path / "c.toml", text)) == tomllib.loads(text)
