"""The memories `:written` questions are about, drawn seeded, for someone to write a question each.

    python bench/written_draw.py madial_en 40 > lines.tsv   # id, path, line, the memory line

MADial's archives hold one memory per list line; 40 of them are drawn with
random.Random(20261129) (the same draw in both languages, since the archives are line for line
the same memories translated). The writer is shown the memory line alone (not the archive, the
benchmark's dialogues or any rule of the search) and writes one question a person would type
to find it; the question goes into bench/written/<set>.tsv as
`id, workspace, path, startLine, endLine, question`, the memory line being the gold.
bench/written/longmemeval_s30.tsv was drawn the same way from user turns (its header says how);
the code of that draw was not kept, the file is the record of it.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

EVAL = Path(__file__).resolve().parent.parent.parent / "shared" / "eval"
SEED = 20261129


def memory_lines(name: str) -> list[tuple[str, int, str]]:
    out = []
    for p in sorted((EVAL / name / "archive" / "memory").glob("*.md")):
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            if line.startswith("- "):
                out.append((f"memory/{p.name}", i, line[2:]))
    return out


def draw(name: str, n: int) -> list[tuple[str, str, int, str]]:
    picked = sorted(random.Random(SEED).sample(memory_lines(name), n))
    return [(f"{name}-w{k:02d}", path, line, text) for k, (path, line, text) in enumerate(picked, 1)]


if __name__ == "__main__":
    name, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 40
    for row in draw(name, n):
        print(*row, sep="\t")
