"""A synthetic agent-memory workspace for benchmarks: N daily logs over several years plus MEMORY.md.

Notes read like an agent's daily log (decisions, todos, people, errors, preferences), with
some Chinese, German and Korean lines and a few planted needle tokens that occur exactly
once. Deterministic for a given (n, seed).

    python bench/corpus.py OUT_DIR --files 5000
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
from pathlib import Path

TOPICS = ["billing", "deploy", "postgres", "kubernetes", "invoice", "newsletter", "garden", "travel", "tokyo", "berlin",
          "seoul", "dentist", "budget", "marathon", "piano", "recipe", "lasagna", "backup", "vpn", "keyboard", "printer",
          "birthday", "insurance", "mortgage", "router", "release", "roadmap", "hiring", "interview", "onboarding"]
PEOPLE = ["Sam", "Alex", "Priya", "Jonas", "Mei", "Min-jun", "Lena", "Omar", "Chloe", "Ravi"]
VERBS = ["decided", "agreed", "noted", "asked", "reminded me", "fixed", "postponed", "booked", "reviewed", "cancelled"]
TEMPLATES = [
    "- {person} {verb} that the {topic} work should wait until {weekday}.",
    "- Decision: use {topic2} for the {topic} project; revisit in {n} weeks.",
    "- TODO: follow up with {person} about {topic} ({n} items left).",
    "- Error while running the {topic} job: exit code {n}, retried and it passed.",
    "- User prefers {topic} updates in the morning, short and in bullet points.",
    "- Spent {n} minutes on {topic}; {person} will pick up the rest tomorrow.",
    "- Idea: combine {topic} and {topic2} into one weekly review.",
]
ZH = ["- 今天和{person}讨论了{n}个关于预算的问题。", "- 明天要去银行办理信用卡。", "- 周末玩成语接龙游戏，很开心。", "- 服务器在凌晨三点重启了。"]
DE = ["- Termin beim Zahnarzt am {weekday} um {n} Uhr.", "- Die Steuererklärung muss bis Ende des Monats fertig sein.", "- Grüße an die Familie in München."]
KO = ["- 서버에서 에러가 발생해서 {person}에게 연락했다.", "- 내일 회의는 오전 {n}시에 시작한다.", "- 주말에 부산 여행을 계획했다."]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]


def needles(n_files: int) -> dict[str, int]:
    """Planted tokens: token -> index of the daily file that holds it."""
    rng = random.Random(99)
    return {f"needle{rng.randrange(16**6):06x}": rng.randrange(n_files) for _ in range(5)}


def line(rng: random.Random) -> str:
    r = rng.random()
    fmt = rng.choice(ZH if r < 0.07 else DE if r < 0.11 else KO if r < 0.15 else TEMPLATES)
    return fmt.format(person=rng.choice(PEOPLE), verb=rng.choice(VERBS), topic=rng.choice(TOPICS), topic2=rng.choice(TOPICS),
                      weekday=rng.choice(WEEKDAYS), n=rng.randrange(2, 60))


def generate(out: Path, n_files: int, seed: int = 7) -> dict[str, int]:
    rng = random.Random(seed)
    mem = out / "memory"
    mem.mkdir(parents=True, exist_ok=True)
    start = dt.date(2026, 11, 1) - dt.timedelta(days=n_files - 1)
    planted = needles(n_files)
    by_file: dict[int, list[str]] = {}
    for tok, idx in planted.items():
        by_file.setdefault(idx, []).append(tok)
    for i in range(n_files):
        day = start + dt.timedelta(days=i)
        lines = [f"# {day.isoformat()} ({day.strftime('%A')})", ""]
        for s in range(rng.randrange(1, 4)):
            lines.append(f"## {rng.randrange(7, 22):02d}:{rng.randrange(60):02d} {rng.choice(TOPICS)}")
            lines += [line(rng) for _ in range(rng.randrange(3, 12))]
            lines.append("")
        for tok in by_file.get(i, []):
            lines.insert(3, f"- Reference id {tok} for the {rng.choice(TOPICS)} ticket.")
        (mem / f"{day.isoformat()}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    facts = ["# Memory", "", "## Preferences"] + [line(rng) for _ in range(40)] + ["", "## People"]
    facts += [f"- {p} works on {rng.choice(TOPICS)} and {rng.choice(TOPICS)}." for p in PEOPLE]
    (out / "MEMORY.md").write_text("\n".join(facts) + "\n", encoding="utf-8")
    return planted


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("out", type=Path)
    ap.add_argument("--files", type=int, default=1000)
    a = ap.parse_args()
    print(generate(a.out, a.files))
