"""Run a benchmark and add its output to its results file as a dated entry.

    python bench/record.py bench/results/mcp-search.md -- python bench/bench_mcp.py --files 5000

The entry goes first under the file's introduction (newest first) and holds what the results
files promise of every entry: the date, the commit (with "+ uncommitted changes" when the tree
differs from it), the machine (CPU model, cores, load average before and after) and the exact
command, then the command's output as it printed it. The command's exit code is returned; a
failed run is not recorded.
"""

import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def commit() -> str:
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return (head or "unknown") + (" + uncommitted changes" if dirty else "")


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def entry(command: list[str], output: str, before: str, after: str, started: str) -> str:
    return (f"## {started}\n\n- commit: {commit()}\n"
            f"- machine: {cpu_model()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}; "
            f"load {before} before, {after} after\n"
            f"- command: `{shlex.join(command)}`\n\n```text\n{output.rstrip()}\n```\n")


def insert(results: Path, text: str) -> None:
    """The new entry before the first one (the file's introduction stays on top)."""
    old = results.read_text(encoding="utf-8") if results.exists() else f"# {results.stem}\n"
    at = old.find("\n## ")
    new = old.rstrip() + "\n\n" + text if at < 0 else old[:at + 1] + text + "\n" + old[at + 1:]
    results.write_text(new, encoding="utf-8")


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python bench/record.py bench/results/NAME.md -- COMMAND ...", file=sys.stderr)
        return 2
    results, command = Path(argv[0]), argv[2:]
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    before = load()
    run = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sys.stdout.write(run.stdout)
    if run.returncode:
        print(f"record.py: the command exited {run.returncode}; nothing recorded in {results}", file=sys.stderr)
        return run.returncode
    insert(results, entry(command, run.stdout, before, load(), started))
    print(f"record.py: recorded in {results}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
