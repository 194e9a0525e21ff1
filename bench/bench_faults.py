"""100,000 tiny memory files (issue 9, fault suite): a benchmark, not a test.

Prints the time and peak memory (max RSS of the `clawmem index` process) of a full index, a
no-op re-index and `clawmem status`, keyword-only, in a temporary workspace and data dir.

    python bench/bench_faults.py [--files 100000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def make_files(ws: Path, n: int) -> None:
    for i in range(n):
        d = ws / "memory" / f"d{i // 1000:03d}"
        if i % 1000 == 0:
            d.mkdir(parents=True, exist_ok=True)
        (d / f"n{i}.md").write_text(f"- tiny note {i}: tok{i}\n", encoding="utf-8")


def timed(cmd: list[str], env: dict, log: Path) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of one child process, from its own rusage (os.wait4)."""
    t0 = time.perf_counter()
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    took = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {log.read_text()[-500:]}")
    return took, usage.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=100_000)
    n = ap.parse_args().files
    with tempfile.TemporaryDirectory(prefix="clawmem-bench-faults-") as tmp:
        root = Path(tmp)
        env = dict(os.environ, XDG_DATA_HOME=str(root / "data"), XDG_CACHE_HOME=str(root / "cache"),
                   XDG_STATE_HOME=str(root / "state"), XDG_CONFIG_HOME=str(root / "config"))
        t0 = time.perf_counter()
        make_files(root / "ws", n)
        print(f"{n} files written in {time.perf_counter() - t0:.1f}s")
        base = [sys.executable, "-m", "clawmem.tui", "--workspace", str(root / "ws")]
        cfg = root / "clawmem.toml"
        cfg.write_text('provider = "none"\n[sync]\nonSearch = false\n')
        base += ["--config", str(cfg)]
        for label, args in (("full index", ["index", "--quiet"]), ("no-op re-index", ["index", "--quiet"]),
                            ("status", ["status"]), ("search", ["search", f"tok{n - 1}"])):
            took, peak = timed(base + args, env, root / "out.log")
            print(f"{label:15} {took:7.2f} s   peak RSS {peak:6.0f} MB")
        index = root / "data" / "clawmem" / "index" / "main.sqlite"
        print(f"index file      {index.stat().st_size / 1e6:7.1f} MB")


if __name__ == "__main__":
    main()
