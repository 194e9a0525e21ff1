"""memory_search over MCP stdio versus the same search in process (issue 10's benchmark).

Builds a synthetic workspace (bench/corpus.py, as bench_core.py), indexes it keyword-only,
then times N `memory_search` calls through the MCP SDK's client against a real
`clawmem mcp` process, each beside the same `engine.search` on a long-lived engine in this
process (what the server runs per call). Reports p50/p95 per call, the p95 ratio (target
<= 2), and the bare MCP round trip (memory_get of one line) for scale.

    python bench/bench_mcp.py [--files 5000] [--calls 1000] [--out FILE.json]   (record a run: bench/record.py, see bench/README.md)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import QUERIES, median, p95  # noqa: E402
from corpus import generate  # noqa: E402


def measure(cfg, ws: Path, calls: int) -> dict[str, list[float]]:
    """Call i of each kind runs back to back (in process, then over stdio), so a change in
    the machine's load hits both sides alike. Also times memory_get of a small file over
    stdio: the MCP round trip by itself."""
    import anyio
    from mcp import Client, StdioServerParameters

    from clawmem.engine import Engine

    eng = Engine(cfg, persistent=True)  # what the server keeps: one long-lived engine
    params = StdioServerParameters(command=sys.executable, args=["-m", "clawmem.tui", "--workspace", str(ws), "mcp"],
                                   env=dict(os.environ))
    out: dict[str, list[float]] = {"in-process": [], "mcp stdio": [], "mcp round trip": []}

    async def main():
        async with Client(params, cache=None, read_timeout_seconds=120) as client:
            for q in QUERIES * 2:  # warm-up; the server's first sync (a no-op scan) runs meanwhile
                eng.search(q)
                await client.call_tool("memory_search", {"query": q})
            await anyio.sleep(2.0)
            for i in range(calls):
                q = QUERIES[i % len(QUERIES)]
                t0 = time.perf_counter()
                eng.search(q)
                out["in-process"].append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                res = await client.call_tool("memory_search", {"query": q})
                out["mcp stdio"].append((time.perf_counter() - t0) * 1000)
                if i == 0:
                    payload = json.loads(res.content[0].text)
                    assert payload["results"] and "disabled" not in payload, payload
            for i in range(min(calls, 200)):
                t0 = time.perf_counter()
                await client.call_tool("memory_get", {"path": "MEMORY.md", "lines": 1})
                out["mcp round trip"].append((time.perf_counter() - t0) * 1000)

    anyio.run(main)
    eng.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=5000)
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    from clawmem.engine import Engine, load_config

    with tempfile.TemporaryDirectory(prefix="clawmem-bench-mcp-") as tmp:
        root = Path(tmp)
        ws = root / "ws"
        generate(ws, args.files)
        for var, sub in (("XDG_DATA_HOME", "data"), ("XDG_CACHE_HOME", "cache"), ("XDG_STATE_HOME", "state"), ("XDG_CONFIG_HOME", "config")):
            os.environ[var] = str(root / sub)
        os.environ["OPENCLAW_STATE_DIR"] = str(root / "openclaw")  # no OpenClaw config leaks in
        (root / "config" / "clawmem").mkdir(parents=True)
        (root / "config" / "clawmem" / "config.toml").write_text('provider = "none"\n')
        cfg = load_config(None, workspace=str(ws))
        t0 = time.perf_counter()
        Engine(cfg).run_index()
        index_s = time.perf_counter() - t0
        times = measure(cfg, ws, args.calls)
    out = {"files": args.files, "calls": args.calls, "mode": "keyword (provider none)", "index seconds": round(index_s, 2)}
    for name, xs in times.items():
        out[f"{name} p50 ms"] = round(median(xs), 2)
        out[f"{name} p95 ms"] = round(p95(xs), 2)
    out["p95 ratio"] = round(out["mcp stdio p95 ms"] / out["in-process p95 ms"], 2)
    out["target p95 ratio"] = 2.0
    print(json.dumps(out, indent=2))
    if args.out:
        args.out.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
