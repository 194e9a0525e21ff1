"""bench/results holds one file per benchmark, named by what it measures, each entry dated with
its commit, machine and exact command; bench/README.md lists every benchmark and its file."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
RESULTS = BENCH / "results"
# citus.md is the plan of a run nobody could make (nothing measured, so no entries).
NOT_OURS = re.compile(r"^citus\.md$")
WORK_STEP = re.compile(r"session|issue|study|run\d|(^|[-_])s\d+\b|\d+b?\.(txt|json|md)$", re.I)
HELPERS = {"chats.py", "corpus.py", "record.py", "variants.py", "written_draw.py"}


def readme_table() -> dict[str, str]:
    rows = {}
    for line in (BENCH / "README.md").read_text().splitlines():
        m = re.match(r"\| `([\w.]+\.py)` \|.*\| `([^`]+)`", line)
        if m:
            rows[m.group(1)] = m.group(2)
    return rows


def test_no_results_file_is_named_after_a_session_issue_or_run():
    named = [p.name for p in RESULTS.iterdir() if WORK_STEP.search(p.name)]
    assert named == []


def test_the_work_step_rule_catches_the_names_it_is_for():
    for old in ("core-issue33-s5-run2.json", "quiet-session6.txt", "fleet-roles-s6.md", "core-issue34-face.txt"):
        assert WORK_STEP.search(old), old
    for good in ("keyword-index-and-search-costs.md", "fleet-search-by-role.md", "mcp-search.md"):
        assert not WORK_STEP.search(good), good


def test_the_readme_lists_every_benchmark_and_every_results_file():
    table = readme_table()
    scripts = {p.name for p in BENCH.glob("*.py")} - HELPERS
    assert scripts - set(table) == set(), "benchmarks missing from bench/README.md"
    assert set(table) - scripts == set(), "bench/README.md lists a script that is gone"
    listed = set(table.values()) | {"citus.md"}
    for p in RESULTS.iterdir():
        assert p.name in listed, f"{p.name} is not in bench/README.md's table"


def entries(text: str) -> list[str]:
    """The text of each `## ` entry (a `## ` inside a fenced block is a run's own output)."""
    out: list[list[str]] = []
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if line.startswith("## ") and not fenced:
            out.append([])
        if out:
            out[-1].append(line)
    return ["\n".join(e) + "\n" for e in out]


def test_every_entry_has_its_date_commit_machine_and_command():
    checked = 0
    for p in sorted(RESULTS.glob("*.md")):
        if NOT_OURS.match(p.name):
            continue
        es = entries(p.read_text())
        assert es, f"{p.name} has no entry"
        for e in es:
            head = e.splitlines()[0]
            assert re.match(r"## \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$", head), f"{p.name}: {head}"
            for field in ("commit", "machine", "command"):
                assert re.search(rf"(?m)^- {field}: \S", e), f"{p.name} {head}: no {field}"
            checked += 1
        dates = [e.splitlines()[0] for e in es]
        assert dates == sorted(dates, reverse=True), f"{p.name}: entries not newest first"
    assert checked >= 12


def test_record_adds_a_dated_entry_first_with_commit_machine_and_the_command(tmp_path):
    results = tmp_path / "demo.md"
    results.write_text("# Demo\n\nWhat it measures.\n\n## 2020-01-01 00:00 UTC\n\n- commit: abc\n- machine: m\n- command: `x`\n")
    cmd = [sys.executable, "-c", "print('p50 1.0 ms')"]
    run = subprocess.run([sys.executable, str(BENCH / "record.py"), str(results), "--", *cmd], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    text = results.read_text()
    assert text.startswith("# Demo\n\nWhat it measures.\n\n## 20")
    new, old = entries(text)
    assert "p50 1.0 ms" in new and "2020-01-01" in old
    assert re.search(r"(?m)^- commit: [0-9a-f]{7,}", new)
    assert re.search(r"(?m)^- machine: .+ CPUs.*load", new)
    assert f"- command: `{shlex.join(cmd)}`" in new


def test_record_keeps_nothing_of_a_failed_run(tmp_path):
    results = tmp_path / "demo.md"
    results.write_text("# Demo\n")
    run = subprocess.run([sys.executable, str(BENCH / "record.py"), str(results), "--", sys.executable, "-c", "raise SystemExit(3)"],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 3 and results.read_text() == "# Demo\n"
