"""`chats`: conversations between two named friends over months, LoCoMo-style, as a memory
nobody tuned the search on (bench/chats/*.json).

Each file is one history: two people, 18-20 dated sessions of casual chat, 32 questions about
it naming them (single-hop, temporal, multi-hop, open-domain, each with the turns that answer
it) and 5 questions naming them about things the history never mentions. Each was written by
a helper shown only the task (the shape of LoCoMo's data, the two people's names and jobs), not
this project's code, its rules or the other data sets. Two histories share a name's sound (Jon,
John), and people one history talks about speak in another (Hannah), as in LoCoMo. The last two
(leon-adaeze, beatriz-sam) were written so after the verdict's rules, and measured first as
held-out histories (bench/results/abstention.md, 2026-12-08).

`build()` lays them out as the eval sets are (../shared/eval/README.md: one daily log per session
date, `## HH:MM — chat session N`, one `- **Name:** text` item per turn) under the bench cache,
and `queries()` gives their questions in queries.jsonl's shape, gold lines computed from the
layout. `bm25_ranked()` is the plain BM25 the eval sets publish, computed over the same files:

    python bench/eval.py --sets chats             # hit@k and MRR@10 beside the BM25 baseline
    python bench/abstention.py --sets chats --other 0   # each question also asked of the other histories
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sqlite3
from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "chats"
NAME = "chats"


def histories() -> dict[str, dict]:
    """{workspace (the file's stem): the history as written}"""
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(SOURCE.glob("*.json"))}


def _layout(history: dict) -> tuple[dict[str, list[str]], dict[str, tuple[str, int]], dict[int, tuple[str, int, int]]]:
    """({memory/DATE.md: its lines}, {turn id: (path, line)}, {session number: (path, first, last line)})"""
    files: dict[str, list[str]] = {}
    where: dict[str, tuple[str, int]] = {}
    sessions: dict[int, tuple[str, int, int]] = {}
    for n, s in enumerate(history["sessions"], start=1):
        day = dt.date.fromisoformat(s["date"])
        path = f"memory/{s['date']}.md"
        lines = files.setdefault(path, [f"# {s['date']} ({day.strftime('%A')})", ""])
        lines += [f"## {s['time']} — chat session {n} (1 of the day)", ""]
        first = len(lines) + 1
        for t in s["turns"]:
            lines.append(f"- **{t['speaker']}:** {t['text']}")
            where[t["id"]] = (path, len(lines))
        sessions[n] = (path, first, len(lines))
        lines.append("")
    return files, where, sessions


def build(root: Path) -> None:
    """Write every history's memory files under root/<workspace>/ (rewritten only where they
    differ, so an index keeps its embeddings)."""
    for ws, history in histories().items():
        files, _, _ = _layout(history)
        for rel, lines in files.items():
            dst = root / ws / rel
            text = "\n".join(lines).rstrip("\n") + "\n"
            if not dst.exists() or dst.read_text(encoding="utf-8") != text:
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.write_text(text, encoding="utf-8")


def _asked_on(history: dict) -> tuple[str, str]:
    """(today, now): a week after the last session, as a question asked later would be."""
    last = dt.date.fromisoformat(history["sessions"][-1]["date"]) + dt.timedelta(days=7)
    return last.isoformat(), f"{last.isoformat()}T12:00:00"


def queries() -> list[dict]:
    """Every answerable question, in the eval sets' queries.jsonl shape."""
    out = []
    for ws, history in histories().items():
        _, where, sessions = _layout(history)
        today, now = _asked_on(history)
        for i, q in enumerate(history["questions"], start=1):
            gold = [{"id": e, "path": where[e][0], "startLine": where[e][1], "endLine": where[e][1]} for e in q["evidence"]]
            numbers = sorted({int(re.match(r"S(\d+):", e).group(1)) for e in q["evidence"]})
            out.append({"query_id": f"{ws}-q{i:02d}", "workspace": ws, "query": q["question"], "answer": q["answer"],
                        "category": q["category"], "today": today, "now": now, "gold": gold,
                        "gold_sessions": [{"id": f"S{n}", "path": sessions[n][0], "startLine": sessions[n][1],
                                           "endLine": sessions[n][2]} for n in numbers]})
    return out


def unanswerable() -> list[dict]:
    """The questions naming a history's people about what it never mentions, asked of it."""
    out = []
    for ws, history in histories().items():
        today, now = _asked_on(history)
        out += [{"workspace": ws, "query": text, "today": today, "now": now} for text in history["unanswerable"]]
    return out


WINDOW_TOKENS = 400


def bm25_ranked(root: Path, qs: list[dict]) -> list[list[dict]]:
    """For each question, the top 10 of the eval sets' published baseline, computed here:
    plain BM25 (SQLite FTS5, lower-cased words) over windows of whole lines of about
    WINDOW_TOKENS words per file, the question's words OR-ed; no vectors, no forms, no decay.
    Each hit is {path, startLine, endLine}, as a search result is (eval.covers reads them)."""
    ranked: dict[int, list[dict]] = {}
    by_ws: dict[str, list[int]] = {}
    for i, q in enumerate(qs):
        by_ws.setdefault(q["workspace"], []).append(i)
    for ws, idx in by_ws.items():
        con = sqlite3.connect(":memory:")
        con.execute("create virtual table w using fts5(path unindexed, lo unindexed, hi unindexed, body)")
        for f in sorted((root / ws).rglob("*.md")):
            lines = f.read_text(encoding="utf-8").splitlines()
            start, count = 0, 0
            for i, line in enumerate(lines):
                count += len(line.split())
                if count >= WINDOW_TOKENS or i == len(lines) - 1:
                    con.execute("insert into w values (?,?,?,?)", (str(f.relative_to(root / ws)), start + 1, i + 1,
                                                                  "\n".join(lines[start:i + 1])))
                    start, count = i + 1, 0
        for i in idx:
            words = sorted(set(re.findall(r"\w+", qs[i]["query"].lower())))
            rows = con.execute("select path, lo, hi from w where w match ? order by bm25(w) limit 10",
                               (" OR ".join(f'"{w}"' for w in words),)).fetchall() if words else []
            ranked[i] = [{"path": p, "startLine": lo, "endLine": hi} for p, lo, hi in rows]
        con.close()
    return [ranked[i] for i in range(len(qs))]
