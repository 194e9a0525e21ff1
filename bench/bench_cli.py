"""A `clawmem search` as a user or an agent runs it, whole processes, with the local model.

Alternated in one run on one workspace (A/B, so a change in the machine's load hits both):
a hybrid search with the resident model warm, a keyword-only search (`provider = "none"`, the
same index) and `clawmem --help`; wall time, CPU time and the CLI process's own peak RSS
(ru_maxrss of that process: the resident worker is not its child's memory). Then separately:
the cold first call (`clawmem model stop` before each: the search starts the worker), the
per-process worker of `residentMinutes = 0` (what every search paid before), and `clawmem mcp`:
its first memory_search after start (three starts; at once and 2 s after the handshake) vs warm ones.

    python bench/bench_cli.py [--model PATH.gguf] [--files 60] [--repeat 7] [--json OUT] [--base DIR]

`--base DIR`: another clawmem as `DIR/clawmem/{engine,tui,mcp,themes}` (see bench_core.py): its
warm hybrid and keyword-only searches run alternated with this one's, on the same index and the
same resident model (PYTHONPATH=DIR), the before/after of a change in one run.

Everything runs under a temporary HOME/XDG tree, so its resident model is its own and is
stopped at the end. Targets (issue 33): warm hybrid <= 1.5x keyword-only, CLI peak RSS <= 60 MB,
MCP first search <= 2x a warm one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import QUERIES  # noqa: E402
from corpus import generate  # noqa: E402

DEFAULT_MODEL = Path(__file__).resolve().parents[2] / "shared" / "models" / "multilingual-e5-small-q4_0.gguf"


def run(argv: list[str], env: dict) -> dict:
    """wall and CPU seconds, peak RSS MB of one child process; it must succeed."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace")
    proc.stdout.close()
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    assert code == 0, (argv, err)
    return {"wall": took, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss / 1024, "out": out}


def mcp_first_vs_warm(ws: Path, cfg: Path, env: dict, warm_calls: int, pause: float) -> dict:
    """Start `clawmem mcp`, time its first memory_search `pause` seconds after the handshake
    (an agent's own start-up; the resident model is up, as a second agent finds it), then warm
    ones."""
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, env=env,
                                   args=["-m", "clawmem.tui", "--workspace", str(ws), "--config", str(cfg), "mcp"])
    out: dict = {"first": None, "warm": [], "modes": set()}

    async def main():
        async with Client(params, cache=None, read_timeout_seconds=120) as client:
            await anyio.sleep(pause)
            for i in range(warm_calls + 1):
                t0 = time.perf_counter()
                res = await client.call_tool("memory_search", {"query": QUERIES[i % len(QUERIES)]})
                took = time.perf_counter() - t0
                out["modes"].add(json.loads(res.content[0].text).get("mode"))
                if i == 0:
                    out["first"] = took
                else:
                    out["warm"].append(took)

    anyio.run(main)
    out["modes"] = sorted(m for m in out["modes"] if m)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--files", type=int, default=60)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--base", type=Path, help="another clawmem to alternate with (see above)")
    args = ap.parse_args()
    if not args.model.is_file():
        sys.exit(f"bench_cli: no model at {args.model}; pass --model PATH.gguf")

    root = Path(tempfile.mkdtemp(prefix="clawmem-bench-cli-"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(HOME=str(root / "home"), XDG_CONFIG_HOME=str(root / "config"), XDG_DATA_HOME=str(root / "data"),
               XDG_CACHE_HOME=str(root / "cache"), XDG_STATE_HOME=str(root / "state"), XDG_RUNTIME_DIR=str(root / "run"))
    ws = root / "ws"
    generate(ws, args.files)
    hybrid = root / "hybrid.toml"
    hybrid.write_text(f'provider = "local"\n[local]\nmodelPath = "{args.model}"\nresidentMinutes = 10\n')
    keyword = root / "keyword.toml"
    keyword.write_text('provider = "none"\n')
    per_process = root / "per-process.toml"
    per_process.write_text(f'provider = "local"\n[local]\nmodelPath = "{args.model}"\nresidentMinutes = 0\n')
    cli = [sys.executable, "-m", "clawmem.tui", "--workspace", str(ws)]

    base_env = {**env, "PYTHONPATH": str(args.base)} if args.base else None

    def search(cfg: Path, i: int, e: dict | None = None) -> dict:
        r = run(cli + ["--config", str(cfg), "search", QUERIES[i % len(QUERIES)], "--json"], e or env)
        r["mode"] = json.loads(r.pop("out"))["mode"]
        return r

    t0 = time.perf_counter()
    run(cli + ["--config", str(hybrid), "index"], env)
    print(f"index of {args.files} files with the model: {time.perf_counter() - t0:.1f} s")
    for i in range(2):  # warm-up: bytecode, page cache, the worker
        search(hybrid, i), search(keyword, i), run([sys.executable, "-m", "clawmem.tui", "--help"], env)
        if base_env:
            search(hybrid, i, base_env), search(keyword, i, base_env)

    rows: dict[str, list[dict]] = {"hybrid, resident warm": [], "keyword-only": [], "clawmem --help": [],
                                   "hybrid, cold (worker start)": [], "hybrid, residentMinutes = 0": []}
    if base_env:
        rows.update({"base: hybrid, resident warm": [], "base: keyword-only": []})
    for i in range(args.repeat):
        rows["hybrid, resident warm"].append(search(hybrid, i))
        rows["keyword-only"].append(search(keyword, i))
        r = run([sys.executable, "-m", "clawmem.tui", "--help"], env)
        r.pop("out")
        rows["clawmem --help"].append(r)
        if base_env:
            rows["base: hybrid, resident warm"].append(search(hybrid, i, base_env))
            rows["base: keyword-only"].append(search(keyword, i, base_env))
    for i in range(max(2, args.repeat // 2)):
        run(cli + ["model", "stop"], env)
        rows["hybrid, cold (worker start)"].append(search(hybrid, i))
        rows["hybrid, residentMinutes = 0"].append(search(per_process, i))
        search(hybrid, i)  # and warm again for the next round
    modes = {k: sorted({r.get("mode") for r in v} - {None}) for k, v in rows.items()}
    load_after_rounds = os.getloadavg()[0]
    assert modes["hybrid, resident warm"] == ["hybrid"], modes
    mcps = {}
    for pause in (0.0, 2.0):  # one first call per server start: three starts, medians (one sample is noise here)
        runs = [mcp_first_vs_warm(ws, hybrid, env, warm_calls=args.repeat, pause=pause) for _ in range(3)]
        mcps[pause] = {"first": statistics.median(r["first"] for r in runs), "firsts": [r["first"] for r in runs],
                       "warm": [w for r in runs for w in r["warm"]], "modes": sorted({m for r in runs for m in r["modes"]})}
    run(cli + ["model", "stop"], env)

    def med(k: str, f: str) -> float:
        return statistics.median(r[f] for r in rows[k])

    base = med("keyword-only", "wall")
    print(f"\n{args.files} files, model {args.model.name}, {args.repeat} alternated rounds (medians; "
          f"load average {load_after_rounds:.1f} on {os.cpu_count()} cores after them)\n")
    print("| one process | wall s | CPU s | peak RSS MB | vs keyword-only | mode |")
    print("|---|---|---|---|---|---|")
    summary = {}
    for k in rows:
        wall, cpu, rss = med(k, "wall"), med(k, "cpu"), max(r["rss"] for r in rows[k])
        summary[k] = {"wall": wall, "cpu": cpu, "peakRssMB": rss, "ratio": wall / base, "runs": len(rows[k])}
        print(f"| {k} | {wall:.3f} | {cpu:.3f} | {rss:.0f} | {wall / base:.2f}x | {', '.join(modes[k]) or '-'} |")
    print()
    for pause, mcp in mcps.items():
        warm = statistics.median(mcp["warm"])
        mcp["ratio"] = mcp["first"] / warm
        print(f"clawmem mcp, first memory_search {pause:.0f} s after the handshake: median {mcp['first'] * 1000:.0f} ms "
              f"({', '.join(f'{x * 1000:.0f}' for x in mcp['firsts'])}), "
              f"warm median {warm * 1000:.0f} ms ({mcp['ratio']:.2f}x; modes {mcp['modes']})")
    mcp = mcps[2.0]
    warm = statistics.median(mcp["warm"])
    ratio = summary["hybrid, resident warm"]["wall"] / base
    rss = summary["hybrid, resident warm"]["peakRssMB"]
    help_ratio = base / summary["clawmem --help"]["wall"]
    print(f"keyword-only search {help_ratio:.2f}x clawmem --help (bench_core.py's target: <= 1.5)")
    if base_env:
        b_ratio = summary["base: hybrid, resident warm"]["wall"] / summary["base: keyword-only"]["wall"]
        print(f"base (--base {args.base}): warm hybrid {b_ratio:.2f}x its keyword-only, "
              f"CLI peak RSS {summary['base: hybrid, resident warm']['peakRssMB']:.0f} MB")
    print(f"targets: warm hybrid {ratio:.2f}x keyword-only (<= 1.5: {'met' if ratio <= 1.5 else 'NOT met'}), "
          f"CLI peak RSS {rss:.0f} MB (<= 60: {'met' if rss <= 60 else 'NOT met'}), "
          f"MCP first/warm after 2 s {mcp['ratio']:.2f}x (<= 2: {'met' if mcp['ratio'] <= 2 else 'NOT met'})")
    if args.json:
        args.json.write_text(json.dumps({"files": args.files, "model": args.model.name, "repeat": args.repeat, "rows": summary,
                                         "mcp": {f"pause{p:.0f}s": {"firstMs": m["first"] * 1000, "warmMedianMs": statistics.median(m["warm"]) * 1000,
                                                                    "ratio": m["ratio"], "modes": m["modes"]} for p, m in mcps.items()}}, indent=1))


if __name__ == "__main__":
    main()
