"""The local model in its worker process: real quantised kernels, one model per process, and a
crash, a kill or a hang that ends in a disclosed keyword fallback instead of taking clawmem down."""

import json
import os
import signal
import subprocess
import sys
import threading
import time

import anyio
import numpy as np
import pytest

from clawmem.engine import events as ev
from clawmem.engine.embeddings import ProviderError, worker
from clawmem.engine.embeddings.local import LocalProvider
from helpers import gone, wait_for, write

LONG = " ".join(["the cat likes fish and the dog sleeps in the garden after lunch"] * 30)  # ~400 tokens


@pytest.fixture(scope="session")
def kernel_models(tmp_path_factory):
    """The sizes of e5-small's matrices (384 wide, feed-forward 1536, 12 heads), stored as
    float32, Q8_0 and Q4_0, with every output projection non-zero so the kernels' results count."""
    from tinymodel import make

    folder = tmp_path_factory.mktemp("kernels")
    return {q or "F32": make(folder / f"kernel-{q or 'f32'}.gguf", dim=384, heads=12, ff=1536, quant=q, bag=False)
            for q in (None, "Q8_0", "Q4_0")}


def children(pid: int) -> set[int]:
    """Child processes of pid, whichever of its threads started them."""
    out: set[int] = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out.update(int(x) for x in fh.read().split())
        except OSError:
            pass
    return out


def test_quantised_models_run_the_real_kernels(kernel_models):
    """A llama-cpp-python build whose SIMD kernels this machine cannot run fails here (the tiny
    bag-of-words model never reaches them); a build whose kernels compute wrongly fails too."""
    vecs = {}
    for name, path in kernel_models.items():
        p = LocalProvider(path, threads=2)
        vecs[name] = (p.embed_passages([LONG, "cat fish"]), p.embed_query("where does the dog sleep"))
        p.close()
    (ref_long, ref_short), ref_q = vecs["F32"]
    for name, floor in (("Q8_0", 0.995), ("Q4_0", 0.95)):
        (long_v, short_v), q = vecs[name]
        assert float(long_v @ ref_long) > floor, name
        assert float(short_v @ ref_short) > floor, name
        assert float(np.dot(q, ref_q)) > floor, name  # a query vector is an array('f')
    assert float(ref_long @ ref_short) < 0.99  # different texts stay different


def test_engines_in_one_process_share_one_model(tmp_path, make_engine, tiny_model):
    """Ten agents in one process without a resident model: one worker, one loaded model; it
    stops with its last user."""
    engines = []
    for i in range(10):
        ws = tmp_path / f"agent{i}"
        write(ws / "memory" / "2026-01-01.md", f"cat and fish {i}\n")
        engines.append(make_engine({"provider": "local", "local.modelPath": str(tiny_model), "agentId": f"a{i}",
                                    "local.residentMinutes": 0}, ws=ws))
    for eng in engines:
        list(eng.index())
        res = eng.search("cat fish")
        assert res["mode"] == "hybrid", res.get("reason")
    pids = {eng.providers.built["local"]._model_host.pid for eng in engines}
    assert len(pids) == 1 and None not in pids
    (pid,) = pids
    assert pid in children(os.getpid())
    for eng in engines[:-1]:
        eng.close()
    assert engines[-1].search("cat fish")["mode"] == "hybrid"
    host = engines[-1].providers.built["local"]._model_host
    assert host.pid == pid
    engines[-1].close()
    wait_for(lambda: pid not in children(os.getpid()), what="the worker to stop with its last user")


def test_a_crash_mid_index_falls_back_discloses_and_keeps_what_was_indexed(workspace, make_engine, tiny_model):
    for i in range(40):
        write(workspace / "memory" / f"2026-01-{i % 28 + 1:02d}-n{i}.md", "\n\n".join(f"cat fish tokyo {i} {j} " * 30 for j in range(6)))
    eng = make_engine({"provider": "local", "local.modelPath": str(tiny_model)})
    killed = None
    events = []
    for e in eng.index():
        events.append(e)
        if isinstance(e, ev.ChunksEmbedded) and killed is None:
            killed = eng.providers.built["local"]._model_host.pid
            os.kill(killed, signal.SIGILL)  # what an instruction the VM does not allow does to it
    assert killed is not None
    switched = [e for e in events if isinstance(e, ev.ProviderSwitched)]
    assert switched and switched[0].to_provider is None
    assert switched[0].reason.startswith("local model crashed: SIGILL in llama.cpp")
    assert "docs/troubleshooting.md" in switched[0].reason
    st = eng.status()
    embedded = sum(m["vectors"] for m in st["vector"]["models"])
    assert 32 <= embedded < st["index"]["chunks"]  # the batches before the crash are kept
    assert st["index"]["files"] == 40  # every file is indexed for keywords
    res = eng.search("tokyo")
    assert res["results"] and res["mode"] == "keyword"
    assert "SIGILL" in res["reason"]
    deep = eng.status(deep=True)
    probe = deep["provider"]["probe"]
    assert probe["ok"] is False and "SIGILL" in probe["error"] and "not retried before" in probe["error"]
    assert eng.providers.built["local"]._model_host.pid is None  # no restart inside the waiting time


def test_a_crash_is_retried_later_not_in_a_loop(workspace, make_engine, tiny_model):
    write(workspace / "MEMORY.md", "cat and fish\n")
    eng = make_engine({"provider": "local", "local.modelPath": str(tiny_model)})
    list(eng.index())
    prov = eng.providers.built["local"]
    prov.embed_query("cat")
    pid = prov._model_host.pid
    os.kill(pid, signal.SIGSEGV)
    wait_for(lambda: gone(pid), what="the model to die")
    with pytest.raises(ProviderError, match="local model crashed: SIGSEGV"):
        prov.embed_query("cat")
    # another process (another engine here) reads the record and does not start the model either
    other = LocalProvider(tiny_model)
    other_host = other._host()
    with pytest.raises(ProviderError, match="not retried before"):
        other.embed_query("cat")
    assert other_host.pid is None
    record = json.loads(worker.Failures().path.read_text())
    (rec,) = record.values()
    assert rec["count"] == 1 and 55 < rec["retryAt"] - rec["at"] <= 60
    # the waiting time passes: the next call starts the model again, and success clears the record
    rec["retryAt"] = time.time() - 1
    worker.Failures().path.write_text(json.dumps({next(iter(record)): rec}))
    assert len(prov.embed_query("cat")) == 64
    assert json.loads(worker.Failures().path.read_text()) == {}
    other.close()


def test_a_hang_is_stopped_but_a_slow_model_is_not(tiny_model, kernel_models, monkeypatch):
    monkeypatch.setattr(worker, "STALL_TIMEOUT", 2.0)
    # slow but working: a batch that takes longer than the stall time is left to finish
    slow = LocalProvider(kernel_models["F32"], threads=1)
    slow.embed_query("warm up")
    monkeypatch.setattr(worker, "PASSAGES_PER_REQUEST", 1000)
    t0 = time.monotonic()
    assert len(slow.embed_passages([LONG] * 120)) == 120
    assert time.monotonic() - t0 > 2.0, "the batch was too quick to show anything; make it longer"
    slow.close()
    # hung: alive, using no CPU, never answering
    p = LocalProvider(tiny_model)
    p.embed_query("cat")
    pid = p._model_host.pid
    os.kill(pid, signal.SIGSTOP)
    t0 = time.monotonic()
    with pytest.raises(ProviderError, match=r"local model stopped working \(no CPU time for 2 s\) and was stopped"):
        p.embed_query("fish")
    assert time.monotonic() - t0 < 10
    assert p._model_host.pid is None and pid not in children(os.getpid())
    p.close()


def test_a_busy_model_is_stopped_after_the_request_limit(tiny_model, monkeypatch):
    monkeypatch.setattr(worker, "REQUEST_TIMEOUT", 1.0)
    p = LocalProvider(tiny_model, threads=1)
    p.embed_query("cat")
    monkeypatch.setattr(worker, "PASSAGES_PER_REQUEST", 100000)
    with pytest.raises(ProviderError, match=r"did not answer within 1 s and was stopped"):
        p.embed_passages(["cat fish tokyo " * 150] * 20000)
    p.close()


def test_a_model_that_fails_to_load_is_not_a_crash(tmp_path):
    bad = write(tmp_path / "notes.gguf", "this is not a model\n")
    p = LocalProvider(bad)
    with pytest.raises(ProviderError, match="^local: cannot load notes.gguf"):
        p.embed_query("x")
    assert not worker.Failures().all()  # a wrong file is a configuration error, not a crash to wait out
    p.close()


def test_the_mcp_server_outlives_its_model(workspace, tiny_model):
    """An agent's tools keep working when the model dies under them: the next search answers
    from keywords and says why."""
    from mcp import Client, StdioServerParameters

    write(workspace / "MEMORY.md", "# Memory\n\n- The heron migration is planned for spring.\n")
    cfg = workspace.parent / "cfg.toml"
    cfg.write_text(f'provider = "local"\n[local]\nmodelPath = "{tiny_model}"\n')
    params = StdioServerParameters(command=sys.executable, env=dict(os.environ),
                                   args=["-m", "clawmem.tui", "--workspace", str(workspace), "--config", str(cfg), "mcp"])

    async def main():
        async with Client(params, cache=None, read_timeout_seconds=60) as client:
            end = time.monotonic() + 60
            while True:
                got = json.loads((await client.call_tool("memory_search", {"query": "heron migration"})).content[0].text)
                if got.get("mode") == "hybrid" and got["results"]:
                    break
                assert time.monotonic() < end, got
                await anyio.sleep(0.3)
            server = next(p for p in _descendants(os.getpid()) if _cmdline(p).endswith("mcp"))
            model = next(p for p in children(server) if "embeddings.worker" in _cmdline(p) or "embeddings.resident" in _cmdline(p))  # its own or the resident one
            os.kill(model, signal.SIGILL)
            # ask once the crash has happened: on a loaded machine the kill may still be pending
            # (or its fault handler still writing) when the next request reaches the model
            wait_for(lambda: gone(model), 30, "the model to die")
            got = json.loads((await client.call_tool("memory_search", {"query": "heron migration"})).content[0].text)
            assert got["mode"] == "keyword" and got["results"][0]["path"] == "MEMORY.md"
            assert "local model crashed: SIGILL" in json.dumps(got)
            got = json.loads((await client.call_tool("memory_get", {"path": "MEMORY.md"})).content[0].text)
            assert "heron" in got["text"]

    anyio.run(main)


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        for c in children(todo.pop()):
            out.append(c)
            todo.append(c)
    return out


def test_a_query_does_not_wait_for_a_whole_batch(kernel_models):
    """A search typed while indexing embeds between two slices of the batch: it comes back
    while the batch is still running, not after it."""
    import threading

    p = LocalProvider(kernel_models["Q8_0"], threads=1)
    p.embed_query("warm up")
    done = {}

    def batch():
        p.embed_passages([LONG] * 48)
        done["batch"] = time.monotonic()

    t = threading.Thread(target=batch)
    t.start()
    time.sleep(0.2)
    assert t.is_alive()
    q = p.embed_query("where does the dog sleep")
    done["query"] = time.monotonic()
    t.join()
    assert len(q) == 384
    assert done["query"] < done["batch"]
    p.close()


def test_the_worker_outlives_the_thread_that_started_it(tiny_model):
    """The app and the MCP server embed from short-lived worker threads: the model must stay."""
    import threading

    p = LocalProvider(tiny_model)
    t = threading.Thread(target=p.embed_query, args=("cat",))
    t.start()
    t.join()
    pid = p._model_host.pid
    time.sleep(0.5)
    assert p._model_host.pid == pid is not None
    assert len(p.embed_query("fish")) == 64
    p.close()


def test_the_worker_ends_when_clawmem_is_killed(tiny_model):
    code = ("import sys, time\n"
            "from clawmem.engine.embeddings.local import LocalProvider\n"
            f"p = LocalProvider({str(tiny_model)!r})\n"
            "p.embed_query('cat')\n"
            "print(p._model_host.pid, flush=True)\n"
            "time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    model = int(proc.stdout.readline())
    assert model in children(proc.pid)
    proc.kill()
    proc.wait()
    wait_for(lambda: gone(model), what="the worker to end with its parent")


@pytest.mark.slow
def test_a_query_goes_before_another_processs_batch_on_the_resident_model(kernel_models):
    """One resident worker serves an indexing process and a searching one: the search's query
    is answered between two slices of the other process's batch, not after it. (With a single
    batch the query also gets in without its `urgent` flag, between the batch's round trips;
    the flag is what keeps it first when several processes' slices are queued.)"""
    code = ("import sys, time\n"
            "from clawmem.engine.embeddings.local import LocalProvider\n"
            f"p = LocalProvider({str(kernel_models['Q8_0'])!r}, threads=1, resident_minutes=5)\n"
            "p.embed_query('warm up')\n"
            "print('ready', flush=True)\n"
            f"p.embed_passages([{LONG!r}] * 48)\n"
            "print(time.time(), flush=True)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.5)  # its batch is under way
        p = LocalProvider(kernel_models["Q8_0"], threads=1, resident_minutes=5)
        q = p.embed_query("where does the dog sleep")
        answered = time.time()
        assert p._model_host.resident and len(q) == 384
        batch_done = float(proc.stdout.readline())
        assert answered < batch_done
        p.close()
    finally:
        proc.wait(timeout=120)


def test_turns_one_at_a_time_and_a_query_before_waiting_passages():
    """worker.Turns: while a turn is held, a slice of passages and then a query queue up; when it
    ends the query goes first though it came last, and no two turns ever overlap."""
    turns = worker.Turns()
    order, inside = [], []

    def take(urgent: bool, name: str) -> None:
        with turns.turn(urgent):
            inside.append(name)
            assert len(inside) == 1, inside
            order.append(name)
            time.sleep(0.01)
            inside.remove(name)

    with turns.turn(False):
        batch = threading.Thread(target=take, args=(False, "passages"))
        batch.start()
        time.sleep(0.2)  # the slice is waiting for its turn
        query = threading.Thread(target=take, args=(True, "query"))
        query.start()
        wait_for(lambda: turns._urgent == 1, what="the query to wait for its turn")
    query.join(10)
    batch.join(10)
    assert order == ["query", "passages"]
    with turns.turn(True):  # nothing is left holding or waiting
        pass
