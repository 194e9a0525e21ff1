"""The fault suite's tally: run `pytest tests/faults` (JUnit XML) and print, per test file (one
file per kind of fault), how many attempts were tried and how many survived (the fault got
through: the test failed or errored), as a Markdown table.

    python bench/fault_tally.py                       # this checkout, this interpreter
    python bench/fault_tally.py -- -k "not kill"      # extra pytest arguments after --
    python bench/fault_tally.py --paths tests/faults/test_faults_writes.py   # some kinds only
    python bench/fault_tally.py --root /path/to/other/checkout --python /path/to/its/.venv/bin/python

It counts whatever test files are in tests/faults; a test file that cannot even be imported
counts as one attempt that survived.
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path


def tally(junit: Path) -> dict[str, collections.Counter]:
    """{test file: Counter(tried, survived, skipped)} from a JUnit XML report."""
    per_file: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for case in ET.parse(junit).getroot().iter("testcase"):
        # classname is the module ("tests.faults.test_faults_writes"); a file that failed to be
        # collected has no classname and its path as the name
        src = case.get("classname") or case.get("name") or "?"
        module = src.removesuffix(".py").replace("/", ".").split(".")
        name = next((part for part in module if part.startswith("test_")), module[-1])
        kind = name.removeprefix("test_faults_")
        counts = per_file[kind]
        if case.find("skipped") is not None:
            counts["skipped"] += 1
            continue
        counts["tried"] += 1
        if case.find("failure") is not None or case.find("error") is not None:
            counts["survived"] += 1
    return per_file


def table(per_file: dict[str, collections.Counter]) -> str:
    rows = ["| kind (tests/faults/test_faults_<kind>.py) | tried | survived | skipped |", "|---|---:|---:|---:|"]
    total = collections.Counter()
    for kind in sorted(per_file):
        c = per_file[kind]
        total.update(c)
        rows.append(f"| {kind} | {c['tried']} | {c['survived']} | {c['skipped']} |")
    rows.append(f"| **all** | **{total['tried']}** | **{total['survived']}** | **{total['skipped']}** |")
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent, help="the checkout whose tests/faults to run")
    ap.add_argument("--python", default=sys.executable, help="the interpreter (a venv with that checkout installed)")
    ap.add_argument("--paths", nargs="+", default=["tests/faults"], help="test files or folders (default: tests/faults)")
    ap.add_argument("--junit", type=Path, help="keep the JUnit XML here (default: a temporary file)")
    ap.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        junit = args.junit or Path(tmp) / "faults.xml"
        cmd = [args.python, "-m", "pytest", *args.paths, "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", *args.pytest_args]
        started = time.monotonic()
        proc = subprocess.run(cmd, cwd=args.root, capture_output=True, text=True)
        if not junit.exists():
            sys.exit(f"pytest wrote no report (exit {proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
        print(table(tally(junit)))
        print(f"\n({' '.join(cmd[1:])} in {args.root}: exit {proc.returncode}, {time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
