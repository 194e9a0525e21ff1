"""Provider faults against our loopback embeddings server (issue 9, fault suite): timeout, 429
with Retry-After, 500, malformed JSON, wrong dimensions, NaN vectors, connection refused, the
server dying mid-index. Indexing always finishes its keyword side, `status` shows the fallback and
its real reason (not "fewer vectors indexed"), and nothing waits past the configured timeout."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

from faultkit import run
from helpers import write

FILES = 40


def notes(ws: Path, n: int = FILES) -> None:
    for i in range(n):
        write(ws / "memory" / f"2026-03-{1 + i % 28:02d}-n{i}.md",
              "\n".join(f"- the ferry timetable changed again, line {j}, token tok{i}x{j}" for j in range(30)) + "\n")


def config(tmp_path: Path, url: str, key: str, extra: str = "") -> Path:
    return write(tmp_path / "clawmem.toml", (
        f'provider = "openai"\n{extra}[remote]\nbaseUrl = "{url}/v1"\napiKey = "{key}"\ntimeoutSeconds = 1.0\n'
        "[cache]\nenabled = false\n[sync]\nonSearch = false\n"))


def index(ws: Path, cfg: Path) -> tuple[dict, str, float]:
    t0 = time.monotonic()
    res = run("--workspace", str(ws), "--config", str(cfg), "index", "--json", timeout=120)
    took = time.monotonic() - t0
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1]), res.stderr, took


def status(ws: Path, cfg: Path) -> dict:
    res = run("--workspace", str(ws), "--config", str(cfg), "status", "--json", timeout=60)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    return json.loads(res.stdout)


def search(ws: Path, cfg: Path, query: str) -> dict:
    res = run("--workspace", str(ws), "--config", str(cfg), "search", query, "--json", timeout=60)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    return json.loads(res.stdout)


def said(st: dict) -> str:
    """Everything status says about the provider: reason and fallback."""
    pv = st["provider"]
    return " | ".join(filter(None, [pv.get("reason"), pv.get("lastError"), json.dumps(pv.get("fallback")) if pv.get("fallback") else None]))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# (what the server does, what status must name); every case: keyword side complete, no vectors
FAILURES = {
    "timeout": (lambda s: setattr(s, "always", "hang"), "no answer from", "within 1 s (timeout)"),
    "500": (lambda s: setattr(s, "always", 500), "500 internal error", "gave up after 4 attempts"),
    "429": (lambda s: (setattr(s, "always", 429), setattr(s, "retry_after", 0.2)), "429 Rate limit reached", "gave up after 4 attempts"),
    "malformed": (lambda s: setattr(s, "always", "malformed"), "malformed response", "not JSON"),
}


@pytest.mark.parametrize("fault", sorted(FAILURES))
def test_a_failing_provider_leaves_a_keyword_index_and_status_says_why(fault, workspace, tmp_path, embed_server):
    notes(workspace)
    embed_server.hang_seconds = 5.0
    setup, *reasons = FAILURES[fault]
    setup(embed_server)
    cfg = config(tmp_path, embed_server.url, embed_server.api_key)
    done, err, took = index(workspace, cfg)
    assert done["files"] == FILES and done["embedded"] == 0
    assert took < 20, f"index took {took:.1f}s with a 1 s timeout"
    for r in reasons:
        assert r in err
    st = status(workspace, cfg)
    assert st["index"]["files"] == FILES
    for r in reasons:
        assert r in said(st), said(st)
    res = search(workspace, cfg, "tok7x3")
    assert res["mode"] == "keyword" and res["results"][0]["path"] == "memory/2026-03-08-n7.md"
    # the server recovers: the next run embeds everything
    embed_server.always = None
    assert index(workspace, cfg)[0]["embedded"] > 0
    st = status(workspace, cfg)
    assert said(st) == ""
    assert search(workspace, cfg, "ferry timetable")["mode"] == "hybrid"


def test_429_with_retry_after_is_waited_for_and_then_succeeds(workspace, tmp_path, embed_server):
    notes(workspace, 1)  # one request at a time
    embed_server.script = [429, 429]
    embed_server.retry_after = 1.5
    cfg = config(tmp_path, embed_server.url, embed_server.api_key)
    done, err, _ = index(workspace, cfg)
    st = status(workspace, cfg)
    assert done["embedded"] == st["index"]["chunks"] > 0
    reqs = embed_server.embedding_requests()
    assert len(reqs) == 3
    gaps = [b["start"] - a["end"] for a, b in zip(reqs, reqs[1:])]
    assert all(g >= 1.4 for g in gaps), gaps  # the server's Retry-After, not the 0.5 s backoff
    assert said(st) == ""


def test_connection_refused(workspace, tmp_path):
    notes(workspace)
    cfg = config(tmp_path, f"http://127.0.0.1:{free_port()}", "sk-refused-key-0001")
    done, err, took = index(workspace, cfg)
    assert done["files"] == FILES and done["embedded"] == 0 and took < 20
    assert "cannot reach http://127.0.0.1" in err
    assert "cannot reach http://127.0.0.1" in said(status(workspace, cfg))
    assert search(workspace, cfg, "tok3x3")["results"][0]["path"] == "memory/2026-03-04-n3.md"


def test_server_death_mid_index(workspace, tmp_path, embed_server):
    notes(workspace)
    embed_server.die_after = 3
    embed_server.delay = 0.05
    cfg = config(tmp_path, embed_server.url, embed_server.api_key, "[chunking]\ntokens = 64\noverlap = 0\n")
    done, err, took = index(workspace, cfg)
    assert done["files"] == FILES and took < 30
    st = status(workspace, cfg)
    (model,) = st["vector"]["models"]
    assert 0 < model["vectors"] < st["index"]["chunks"]  # some batches made it before the crash
    assert st["provider"]["active"] == "openai"
    assert "the last index could not embed every chunk: openai: cannot reach" in said(st), said(st)
    assert search(workspace, cfg, "tok9x29")["results"][0]["path"] == "memory/2026-03-10-n9.md"


@pytest.mark.parametrize("marker", ["WRONGDIM", "NANVEC", "ZEROVEC"])
def test_a_bad_vector_for_one_input_keeps_that_chunk_keyword_only(marker, workspace, tmp_path, embed_server):
    notes(workspace, 5)
    write(workspace / "memory" / "odd.md", f"this note comes back as {marker} tokodd\n")
    cfg = config(tmp_path, embed_server.url, embed_server.api_key)
    done, err, _ = index(workspace, cfg)
    assert done["files"] == 6
    assert "returned no usable vector for 1 chunks (wrong size, NaN or zeros); they stay keyword-only" in err
    st = status(workspace, cfg)
    (model,) = st["vector"]["models"]
    assert model["vectors"] == st["index"]["chunks"] - 1
    # a rare token comes back in the top 3 (SPEC §3), its chunk having no vector or not
    assert "memory/odd.md" in [r["path"] for r in search(workspace, cfg, "tokodd")["results"][:3]]


def test_the_server_changes_its_dimensions(workspace, tmp_path, embed_server):
    notes(workspace, 5)
    cfg = config(tmp_path, embed_server.url, embed_server.api_key)
    index(workspace, cfg)
    embed_server.dims = 48  # same model name, other vectors: none of them may enter the 32-dim table
    write(workspace / "memory" / "later.md", "a later note about the ferry, toklater\n")
    done, err, _ = index(workspace, cfg)
    assert done["files"] == 1
    res = search(workspace, cfg, "toklater")
    assert res["results"][0]["path"] == "memory/later.md"
    assert res["mode"] == "keyword" and "48" in json.dumps(res), res


def test_status_names_the_primary_failure_when_a_fallback_serves(workspace, tmp_path, embed_server, tiny_model):
    notes(workspace, 6)
    embed_server.always = 500
    cfg = config(tmp_path, embed_server.url, embed_server.api_key, f'fallback = ["local"]\n[local]\nmodelPath = "{tiny_model}"\n')
    done, err, _ = index(workspace, cfg)
    assert done["embedded"] > 0  # the local model embedded everything
    st = status(workspace, cfg)
    assert st["provider"]["active"] == "local"
    assert st["provider"]["fallback"]["from"] == "openai"
    assert "openai: 500 internal error" in st["provider"]["fallback"]["reason"]  # not "fewer vectors indexed"
    res = search(workspace, cfg, "ferry timetable")
    assert res["mode"] == "hybrid" and "500 internal error" in res["fallback"]["reason"]


def test_a_broken_local_model_file(workspace, tmp_path, tiny_model):
    notes(workspace, 3)
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(tiny_model.read_bytes()[: tiny_model.stat().st_size // 2])  # a download cut short
    cfg = write(tmp_path / "clawmem.toml", f'provider = "local"\n[local]\nmodelPath = "{broken}"\n[sync]\nonSearch = false\n')
    done, err, _ = index(workspace, cfg)
    assert done["files"] == 3 and done["embedded"] == 0
    why = "local: cannot load broken.gguf"
    assert why in err
    assert why in said(status(workspace, cfg))  # status, a later process, names the real reason
    assert search(workspace, cfg, "tok1x2")["results"][0]["path"] == "memory/2026-03-02-n1.md"
