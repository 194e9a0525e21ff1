"""Embedding throughput against its limits (issue 33): the whole indexer, a bare llama.cpp
loop, and the machine's compute limit for the model, measured in one run.

- **Indexer**: `clawmem index` as a user runs it (a whole process, the resident model warm,
  the embedding cache off, a fresh index each time) on a workspace of --chunks notes, one
  chunk each (the first LongMemEval workspace of ../shared/eval, chunked by clawmem):
  chunks / wall seconds of the process.
- **Bare loop**: llama-cpp-python's `Llama.embed` over the same texts ("passage: " + text,
  as clawmem sends them), one text per call, the same model, build and thread count, in a
  child process (time of the loop only, the model loaded before).
- **Compute limit**: FLOPs per chunk from the model's shape (GGUF metadata) and each chunk's
  token count (the model's own tokenizer): per layer 2*T*(4d^2 + 2*d*f) for the weight
  matrices (Q, K, V, output; the two feed-forward ones: 2 x the layer's weights x tokens) plus
  4*T^2*d for attention (QK^T and AV); embeddings, norms, GELU, softmax and pooling left out
  (under 1 %). Set against the peak of this CPU in the same run: a numpy float32 matmul
  (2048 x 2048, best of several) on the same number of threads, and the nominal FP32 peak
  from the clock and the vector width the build uses (2 FMA pipes x 8 lanes of AVX2 x 2 FLOPs).
  The model's weight matrices are 4-bit (Q4_0) and multiply as int8 dot products against
  8-bit activations, so a FLOP here is a multiply or an add whatever its type: the FP32 peak
  is a yardstick, not the int8 units' own limit.
- With --lib-path DIR (a llama.cpp build's libraries, e.g. one with AVX-512), the bare loop
  also runs on that build (LLAMA_CPP_LIB_PATH), alternated with the installed one.

Rounds alternate (bare, indexer, peak, other build; the order turns each round), so the
load of a shared machine hits all alike; report ratios from one run.

    python bench/bench_throughput.py                       # 48 chunks, 3 rounds, 1 thread
    python bench/bench_throughput.py --lib-path /tmp/build-avx512/bin --out /tmp/throughput.md
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_embed import MODEL, isolate, load_avg, make_workspace  # noqa: E402

PREFIX = "passage: "


def model_shape(llm) -> dict:
    m = llm.metadata
    arch = m["general.architecture"]
    return {"layers": int(m[f"{arch}.block_count"]), "d": int(m[f"{arch}.embedding_length"]),
            "ff": int(m[f"{arch}.feed_forward_length"]), "heads": int(m[f"{arch}.attention.head_count"]), "arch": arch}


def flops(shape: dict, tokens: int) -> tuple[float, float]:
    """(weight-matrix FLOPs, attention FLOPs) of one chunk of `tokens` tokens."""
    d, f, layers = shape["d"], shape["ff"], shape["layers"]
    return layers * 2 * tokens * (4 * d * d + 2 * d * f), layers * 4 * tokens * tokens * d


# ----------------------------------------------------------------------------- children


def bare_child(model: str, texts_file: str, threads: int, repeats: int) -> None:
    """Run in a child: load the model, embed every text `repeats` times, print JSON."""
    import llama_cpp

    texts = json.loads(Path(texts_file).read_text())
    llm = llama_cpp.Llama(model_path=model, embedding=True, n_ctx=512, n_batch=512, n_ubatch=512, flash_attn=True,
                          n_threads=threads, n_threads_batch=threads, verbose=False)
    llm.embed(PREFIX + "warm up", normalize=True)
    times, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        for t in texts:
            llm.embed(PREFIX + t, normalize=True)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    print(json.dumps({"seconds": times, "cpu": cpu, "system": llama_cpp.llama_print_system_info().decode(errors="replace")}))


def peak_child(threads: int, size: int, repeats: int) -> None:
    """Run in a child whose BLAS got `threads` threads before numpy was imported."""
    import numpy as np

    a = np.random.default_rng(0).standard_normal((size, size), dtype=np.float32)
    b = np.random.default_rng(1).standard_normal((size, size), dtype=np.float32)
    a @ b
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    print(json.dumps({"gflops": 2 * size ** 3 / best / 1e9}))


def child(args: list[str], env: dict) -> dict:
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"child {args[0]} failed: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# ----------------------------------------------------------------------------- facts


def worker_cpu(runtime: Path) -> float:
    """CPU seconds so far of the resident model worker(s) serving this run's runtime folder."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for proc in Path("/proc").iterdir():
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if "embeddings.resident" in cmd and str(runtime) in cmd:
                fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, ValueError, IndexError):
            continue
    return total


def cpu_facts() -> dict:
    flags = set()
    mhz = None
    name = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags") and not flags:
            flags = set(line.split(":", 1)[1].split())
        elif line.startswith("cpu MHz") and mhz is None:
            mhz = float(line.split(":", 1)[1])
        elif line.startswith("model name") and not name:
            name = line.split(":", 1)[1].strip()
    return {"name": name, "mhz": mhz, "avx2": "avx2" in flags, "fma": "fma" in flags, "avx512f": "avx512f" in flags,
            "avx512_vnni": "avx512_vnni" in flags}


def nominal_fp32_peak(mhz: float, lanes: int, threads: int) -> float:
    """GFLOP/s: 2 FMA pipes x `lanes` FP32 lanes x 2 FLOPs per FMA x clock x threads."""
    return 2 * lanes * 2 * mhz / 1000 * threads


# ----------------------------------------------------------------------------- the run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chunks", type=int, default=48)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="threads of the model (both sides) and of the matmul")
    ap.add_argument("--model", default=str(MODEL))
    ap.add_argument("--lib-path", type=Path, help="another llama.cpp build's libraries for the bare loop (LLAMA_CPP_LIB_PATH)")
    ap.add_argument("--out", type=Path, help="write the table (Markdown) here")
    ap.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        kind, *rest = a.child
        if kind == "bare":
            bare_child(rest[0], rest[1], int(rest[2]), int(rest[3]))
        else:
            peak_child(int(rest[0]), int(rest[1]), int(rest[2]))
        return 0

    import llama_cpp

    tmp = Path(tempfile.mkdtemp(prefix="clawmem-bench-throughput-"))
    try:
        isolate(tmp)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "LLAMA_CPP_LIB_PATH")}
        ws = make_workspace(tmp, a.chunks)
        from clawmem.engine import Engine, load_config

        # the chunks as the indexer stores them (a keyword-only index of the same workspace)
        eng = Engine(load_config(None, workspace=str(ws), overrides={"provider": "none"}))
        list(eng.index())
        store = eng.reader()
        texts = [r[0] for r in store.conn.execute("select text from chunks order by id")]
        eng.close()
        for suffix in ("", "-wal", "-shm"):
            Path(str(eng.index_path) + suffix).unlink(missing_ok=True)
        texts_file = tmp / "texts.json"
        texts_file.write_text(json.dumps(texts))
        llm = llama_cpp.Llama(model_path=a.model, embedding=True, n_ctx=512, verbose=False)
        shape = model_shape(llm)
        tokens = [min(512, len(llm.tokenize((PREFIX + t).encode(), add_bos=True))) for t in texts]
        system = llama_cpp.llama_print_system_info().decode(errors="replace")
        del llm
        w, att = zip(*(flops(shape, t) for t in tokens))
        flops_chunk = (sum(w) + sum(att)) / len(texts)

        cfg = tmp / "index.toml"
        cfg.write_text(f'provider = "local"\n[local]\nmodelPath = "{a.model}"\nthreads = {a.threads}\nresidentMinutes = 10\n'
                       f'[cache]\nenabled = false\n')
        cli = [sys.executable, "-m", "clawmem.tui", "--workspace", str(ws), "--config", str(cfg)]
        probe = Engine(load_config(str(cfg), workspace=str(ws)))
        index_path = Path(probe.index_path)
        probe.close()

        runtime = Path(os.environ["XDG_RUNTIME_DIR"])

        def indexer() -> tuple[float, float]:
            """Wall seconds of `clawmem index`, and CPU seconds of it and the resident worker."""
            for suffix in ("", "-wal", "-shm"):  # a fresh index: every chunk embedded again
                Path(str(index_path) + suffix).unlink(missing_ok=True)
            w0 = worker_cpu(runtime)
            t0 = time.perf_counter()
            proc = subprocess.Popen(cli + ["index"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
            err = proc.stderr.read().decode(errors="replace")
            _, status, usage = os.wait4(proc.pid, 0)
            took = time.perf_counter() - t0
            proc.stderr.close()
            if os.waitstatus_to_exitcode(status) != 0 or not index_path.exists():
                raise SystemExit(f"clawmem index failed ({index_path}): {err.strip()[-500:]}")
            return took, usage.ru_utime + usage.ru_stime + worker_cpu(runtime) - w0

        print(f"# {len(texts)} chunks, tokens mean {statistics.mean(tokens):.0f} (min {min(tokens)}, max {max(tokens)});"
              f" {shape['arch']} {shape['layers']} layers d={shape['d']} ff={shape['ff']}; {flops_chunk / 1e9:.2f} GFLOP per chunk;"
              f" threads {a.threads}; load {load_avg()}", flush=True)
        indexer()  # untimed: starts the resident model, compiles bytecode
        other_env = {**env, "LLAMA_CPP_LIB_PATH": str(a.lib_path)} if a.lib_path else None
        bare_args = ["--child", "bare", a.model, str(texts_file), str(a.threads), "1"]
        peak_env = {**env, **{v: str(a.threads) for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}}
        runs: dict[str, list[float]] = {"bare": [], "indexer": [], "peak": [], "other": []}
        per_cpu: dict[str, list[float]] = {"bare": [], "indexer": [], "other": []}  # chunks per CPU second
        other_system = None
        for r in range(a.rounds):
            steps = ["bare", "indexer", "peak"] + (["other"] if other_env else [])
            steps = steps if r % 2 == 0 else steps[::-1]
            for step in steps:
                if step in ("bare", "other"):
                    got = child(bare_args, env if step == "bare" else other_env)
                    if step == "other":
                        other_system = got["system"]
                    runs[step].append(len(texts) / got["seconds"][0])
                    per_cpu[step].append(len(texts) / got["cpu"][0])
                elif step == "indexer":
                    wall, cpu_s = indexer()
                    runs["indexer"].append(len(texts) / wall)
                    per_cpu["indexer"].append(len(texts) / cpu_s)
                else:
                    runs["peak"].append(child(["--child", "peak", str(a.threads), "2048", "5"], peak_env)["gflops"])
            print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.2f}" for k, v in runs.items() if v)
                  + " | per CPU s: " + ", ".join(f"{k} {v[-1]:.2f}" for k, v in per_cpu.items() if v) + f" (load {load_avg()})", flush=True)
        subprocess.run(cli + ["model", "stop"], capture_output=True, env=env)

        med = {k: statistics.median(v) for k, v in runs.items() if v}
        med_cpu = {k: statistics.median(v) for k, v in per_cpu.items() if v}
        cpu = cpu_facts()
        lanes = 8  # the installed build's widest FP32 vectors: AVX2 (256 bits)
        nominal = nominal_fp32_peak(cpu["mhz"], lanes, a.threads) if cpu["mhz"] else None

        def gflops(rate: float) -> float:
            return rate * flops_chunk / 1e9

        rows = [("bare llama.cpp loop (installed build)", "bare"), ("`clawmem index` (whole process, resident model warm)", "indexer")]
        if "other" in med:
            rows.append((f"bare loop, build at {a.lib_path}", "other"))
        lines = [f"| run | chunks/s, wall (median of {a.rounds}) | chunks per CPU second | vs bare loop (wall / CPU) |"
                 f" GFLOP per CPU second | of numpy FP32 peak ({med['peak']:.0f} GFLOP/s) |"
                 + (f" of nominal AVX2 FP32 peak ({nominal:.0f}) |" if nominal else ""),
                 "|---|---|---|---|---|---|" + ("---|" if nominal else "")]
        for name, key in rows:
            rate, crate = med[key], med_cpu[key]
            lines.append(f"| {name} | {rate:.2f} | {crate:.2f} | {rate / med['bare']:.1%} / {crate / med_cpu['bare']:.1%} |"
                         f" {gflops(crate):.1f} | {gflops(crate) / med['peak']:.1%} |"
                         + (f" {gflops(crate) / nominal:.1%} |" if nominal else ""))
        table = "\n".join(lines)
        facts = {"chunks": len(texts), "tokens mean": round(statistics.mean(tokens), 1), "GFLOP per chunk": round(flops_chunk / 1e9, 3),
                 "weight share": round(sum(w) / (sum(w) + sum(att)), 3), "shape": shape, "cpu": cpu, "threads": a.threads,
                 "numpy FP32 peak GFLOP/s (median)": round(med["peak"], 1), "nominal AVX2 FP32 GFLOP/s": nominal and round(nominal, 1),
                 "runs": runs, "chunks per CPU second": per_cpu, "system": system,
                 "other system": other_system, "load at end": load_avg()}
        print(table)
        print(json.dumps({k: v for k, v in facts.items() if k != "runs"}, indent=1))
        if a.out:
            a.out.write_text(table + "\n\n```json\n" + json.dumps(facts, indent=1) + "\n```\n")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
