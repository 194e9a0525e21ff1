"""What reading the config file without tomllib saves a `clawmem search` (config.simple_toml).

A keyword-only `clawmem search` over a small workspace, whole processes, alternated in one run
(the order turns each round): with the config read by `config.simple_toml` (as shipped), and
with `simple_toml` switched off so tomllib reads the same file (what a plain `tomllib.loads`
would cost); beside `python -c "import tomllib"` against a bare `python -c pass` (tomllib's own
import) and `clawmem --help`. Medians of wall and CPU time (the child's rusage), and the
difference as a share of the search. Quality-neutral by construction: both sides read the same
file into the same document (checked before timing), so every search answers the same.

    python bench/bench_config_read.py [--rounds 30] [--files 200]

Check `uptime` first: a difference of a few ms means nothing on a loaded machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import generate  # noqa: E402

CONFIG = """# a config as `clawmem init` and the docs write it: a few tables of plain keys
provider = "none"

[query]
maxResults = 6
minScore = 0.35

[sync]
onSearch = false
watchDebounceMs = 1500

[ui]
theme = "clawmem-dark"
"""

# run clawmem's CLI with simple_toml declining every text, so tomllib reads the file
WITH_TOMLLIB = ("import sys, clawmem.engine.config as c; c.simple_toml = lambda text: None; "
                "from clawmem.tui.cli import main; sys.argv = ['clawmem'] + sys.argv[1:]; sys.exit(main())")


def run(argv: list[str], env: dict) -> tuple[float, float]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {err.strip()}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--files", type=int, default=200)
    a = ap.parse_args()
    from clawmem.engine import config as C
    import tomllib

    assert C.simple_toml(CONFIG) == tomllib.loads(CONFIG), "simple_toml and tomllib disagree: not quality-neutral"
    with tempfile.TemporaryDirectory(prefix="clawmem-bench-config-") as tmp:
        root = Path(tmp)
        ws = root / "ws"
        generate(ws, a.files)
        config = root / "clawmem.toml"
        config.write_text(CONFIG)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        for var in ("XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
            env[var] = str(root / var.lower())
        common = ["--workspace", str(ws), "--config", str(config)]
        subprocess.run([sys.executable, "-m", "clawmem.tui", *common, "index", "--quiet"], env=env, check=True)
        sides = {
            "search (simple_toml)": [sys.executable, "-m", "clawmem.tui", *common, "search", "postgres decision"],
            "search (tomllib)": [sys.executable, "-c", WITH_TOMLLIB, *common, "search", "postgres decision"],
            "clawmem --help": [sys.executable, "-m", "clawmem.tui", "--help"],
            "python: import tomllib": [sys.executable, "-c", "import tomllib"],
            "python: pass": [sys.executable, "-c", "pass"],
        }
        for argv in sides.values():  # untimed: bytecode written, caches warm
            run(argv, env)
        times: dict[str, list[tuple[float, float]]] = {k: [] for k in sides}
        load_before = os.getloadavg()
        for i in range(a.rounds):
            order = list(sides) if i % 2 == 0 else list(sides)[::-1]
            for name in order:
                times[name].append(run(sides[name], env))
        load_after = os.getloadavg()
    med = {k: (statistics.median(w for w, _ in v) * 1000, statistics.median(c for _, c in v) * 1000) for k, v in times.items()}
    print(f"{a.rounds} alternated rounds, {a.files} files; load {load_before[0]:.2f} before, {load_after[0]:.2f} after")
    print(f"{'':28} {'wall ms':>9} {'CPU ms':>9}")
    for name, (w, c) in med.items():
        print(f"{name:28} {w:9.1f} {c:9.1f}")
    dw = med["search (tomllib)"][0] - med["search (simple_toml)"][0]
    dc = med["search (tomllib)"][1] - med["search (simple_toml)"][1]
    iw = med["python: import tomllib"][0] - med["python: pass"][0]
    print(f"tomllib instead of simple_toml: {dw:+.1f} ms wall ({dw / med['search (simple_toml)'][0]:+.1%} of the search), "
          f"{dc:+.1f} ms CPU; tomllib's own import {iw:+.1f} ms wall")


if __name__ == "__main__":
    main()
