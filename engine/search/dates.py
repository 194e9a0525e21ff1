"""Time phrases in short queries become a date range.

Only unambiguous expressions in a short query count ("last week", "yesterday",
"since 2026-05", "in March", 上周, 昨天): a long conversational query that says "today"
in passing is not a filter. Ranges are half-open, [after, before), in the user's local
dates (daily-log names are local dates). Weeks start on Monday.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import namedtuple

from ..errors import BadValue

# the English names the phrases below are written in (calendar.month_name follows the C locale's,
# the same words, but importing calendar cost every search ~0.5 ms)
_MONTH_NAMES = "january february march april may june july august september october november december".split()
MONTHS = {name: i for i, name in enumerate(_MONTH_NAMES, 1)}
MONTHS.update({name[:3]: i for i, name in enumerate(_MONTH_NAMES, 1)})
MONTHS.pop("may", None)
MONTHS["may"] = 5
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "ten": 10, "fourteen": 14, "thirty": 30}

MAX_WORDS = 12  # longer queries are conversation, not a question with a time qualifier
MAX_CJK = 30


# collections.namedtuple, not typing.NamedTuple: the latter compiles each field's (string) annotation,
# ~0.3 ms a class on every search's start
class DateRange(namedtuple("DateRange", "after before phrase")):
    """after, before (exclusive): dt.date or None; phrase: the words that said it."""

    __slots__ = ()

    def as_json(self) -> dict:
        return {
            "after": self.after.isoformat() if self.after else None,
            "before": self.before.isoformat() if self.before else None,
            "from": self.phrase,
        }


def _month_start(d: dt.date) -> dt.date:
    return d.replace(day=1)


def _add_months(d: dt.date, n: int) -> dt.date:
    m = d.month - 1 + n
    return dt.date(d.year + m // 12, m % 12 + 1, 1)


def _week_start(d: dt.date) -> dt.date:
    return d - dt.timedelta(days=d.weekday())


def _month_range(month: int, year: int | None, today: dt.date) -> tuple[dt.date, dt.date]:
    if year is None:
        year = today.year if month <= today.month else today.year - 1
    start = dt.date(year, month, 1)
    return start, _add_months(start, 1)


def _rules(today: dt.date):
    one = dt.timedelta(days=1)
    tomorrow = today + one
    n = r"(\d{1,3}|" + "|".join(NUMBER_WORDS) + r")"

    def num(s: str) -> int:
        return int(s) if s.isdigit() else NUMBER_WORDS[s]

    month_names = "|".join(sorted(MONTHS, key=len, reverse=True))
    return [
        (r"\bthe day before yesterday\b|前天|그저께", lambda m: (today - 2 * one, today - one)),
        (r"\byesterday\b|昨天|昨日|어제", lambda m: (today - one, today)),
        (r"\btoday\b|今天|今日|오늘", lambda m: (today, tomorrow)),
        (r"\bthis week\b|本周|这周|这个星期|本星期|이번 ?주", lambda m: (_week_start(today), tomorrow)),
        (r"\blast week\b|\bprevious week\b|上周|上个星期|上星期|上週|先週|지난 ?주", lambda m: (_week_start(today) - 7 * one, _week_start(today))),
        (r"\bthis month\b|本月|这个月|今月|이번 ?달", lambda m: (_month_start(today), tomorrow)),
        (r"\blast month\b|\bprevious month\b|上个月|上月|先月|지난 ?달", lambda m: (_add_months(_month_start(today), -1), _month_start(today))),
        (r"\bthis year\b|今年|올해", lambda m: (dt.date(today.year, 1, 1), tomorrow)),
        (r"\blast year\b|去年|작년", lambda m: (dt.date(today.year - 1, 1, 1), dt.date(today.year, 1, 1))),
        (rf"\b(?:in the )?(?:past|last) {n} days\b", lambda m: (today - (num(m.group(1)) - 1) * one, tomorrow)),
        (r"最近(\d{1,3})天|过去(\d{1,3})天", lambda m: (today - (int(m.group(1) or m.group(2)) - 1) * one, tomorrow)),
        (rf"\b{n} days ago\b", lambda m: (today - num(m.group(1)) * one, today - (num(m.group(1)) - 1) * one)),
        (r"\bsince (\d{4})-(\d{2})(?:-(\d{2}))?\b", lambda m: (dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3) or 1)), tomorrow)),
        (rf"\bsince ({month_names})(?: (\d{{4}}))?\b", lambda m: (_month_range(MONTHS[m.group(1)], int(m.group(2)) if m.group(2) else None, today)[0], tomorrow)),
        (rf"\b(?:in|during) ({month_names})(?: (\d{{4}}))?\b", lambda m: _month_range(MONTHS[m.group(1)], int(m.group(2)) if m.group(2) else None, today)),
        (r"\bon (\d{4})-(\d{2})-(\d{2})\b", lambda m: (dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3))), dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3))) + one)),
        (r"(\d{1,2})月份?", lambda m: _month_range(int(m.group(1)), None, today) if 1 <= int(m.group(1)) <= 12 else None),
    ]


def is_short(query: str) -> bool:
    if "\n" in query.strip():
        return False
    latin = re.findall(r"[A-Za-z0-9_]+", query)
    cjk = 0 if query.isascii() else sum(1 for ch in query if _is_cjk_for_length(ch))  # a regex of these ranges compiles slowly
    return len(latin) <= MAX_WORDS and cjk <= MAX_CJK


# Words at least one rule needs (or a non-ASCII character, for the CJK and Hangul ones): most
# queries have none, and then no rule's regex is compiled (that cost more than the search).
_NEEDED = ("yesterday", "today", "week", "month", "year", "days", "since", "on ")


def _may_have_a_phrase(low: str) -> bool:
    if not low.isascii() or any(word in low for word in _NEEDED):
        return True
    # "in March", "during may 2025": a month name right after "in " or "during "
    return ("in " in low or "during " in low) and any(name in low for name in MONTHS)


def _is_cjk_for_length(ch: str) -> bool:
    return "\u3040" <= ch <= "\u30ff" or "\u3400" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af"


def extract(query: str, today: dt.date) -> tuple[str, DateRange | None]:
    """(query without the time phrase, range) for a short query with one time phrase."""
    low = query.lower()
    if not _may_have_a_phrase(low) or not is_short(query):
        return query, None
    for pattern, make in _rules(today):
        m = re.search(pattern, low)
        if not m:
            continue
        try:
            span = make(m)
        except (ValueError, KeyError):
            continue
        if not span:
            continue
        after, before = span
        phrase = query[m.start() : m.end()]
        rest = (query[: m.start()] + " " + query[m.end() :]).strip()
        rest = re.sub(r"\s{2,}", " ", rest)
        return rest, DateRange(after, before, phrase)
    return query, None


def parse_day(text: str, *, option: str) -> dt.date:
    """YYYY-MM-DD or YYYY-MM (first of month) from a flag or tool parameter."""
    text = text.strip()
    try:
        if re.fullmatch(r"\d{4}-\d{2}", text):
            return dt.date.fromisoformat(text + "-01")
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        raise BadValue(f"{option}: expected a date like 2026-02-10, got {text!r}") from None
