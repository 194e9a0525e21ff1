"""remote.batch.enabled: a backfill goes through OpenAI's, Voyage's or Gemini's batch API
(upload, create, poll, results file) on the loopback server; jobs live in the index and a later
run collects them; any failure falls back to normal requests (issue 13, item 3; study §8.8)."""

import json
import re

import numpy as np
import pytest

from clawmem.engine import events as ev
from clawmem.engine.embeddings import batch as batch_mod
from clawmem.engine.embeddings import remote
from clawmem.engine.index.store import Store
from helpers import write
from embed_server import is_background

N = 12


@pytest.fixture(autouse=True)
def small_backfills(monkeypatch):
    monkeypatch.setattr(batch_mod, "MIN_CHUNKS", 5)  # the real threshold is 100 chunks
    monkeypatch.setattr(remote, "RETRY", remote.Retry(base=0.005))


@pytest.fixture
def notes(workspace):
    for i in range(N):
        write(workspace / "memory" / f"2026-01-{i + 1:02d}.md", f"note {i}: the cat number {i} likes fish kind {i}\n")
    return workspace


def batch_cfg(server, **more):
    return {"provider": "openai", "remote.baseUrl": server.url + "/v1", "remote.apiKey": server.api_key,
            "remote.batch.enabled": True, "remote.batch.pollIntervalMs": 10, **more}


def embeddings_calls(server):
    """The chunks' normal requests (a small index's one request for the background notes aside)."""
    return [r for r in server.requests if r["method"] == "POST" and r["path"].endswith("/embeddings") and not is_background(r)]


def saved_jobs(eng):
    st = Store(eng.index_path)
    try:
        return [k for k, v in st.conn.execute("select key, value from meta where key like 'batch:%'") if v]
    finally:
        st.close()


def test_backfill_goes_through_the_batch_api(notes, embed_server, make_engine):
    eng = make_engine(batch_cfg(embed_server))
    events = list(eng.index())
    progress = [e for e in events if isinstance(e, ev.BatchProgress)]
    assert [p.status for p in progress][0] == "submitted" and progress[-1].status == "completed"
    assert progress[-1].done == progress[-1].total == N
    assert "in_progress" in [p.status for p in progress]  # polled until done
    assert embeddings_calls(embed_server) == []  # every passage went through the job
    (job,) = embed_server.batches.values()
    assert job["endpoint"] == "/v1/embeddings" and job["completion_window"] == "24h"
    lines = [json.loads(x) for x in embed_server.stored_files[job["input_file_id"]].decode().splitlines()]
    assert lines[0] == {"custom_id": "0", "method": "POST", "url": "/v1/embeddings",
                        "body": {"model": "text-embedding-3-small", "input": lines[0]["body"]["input"]}}
    assert sorted(int(x["custom_id"]) for x in lines) == list(range(N))
    upload = next(r for r in embed_server.requests if r["path"] == "/v1/files")
    assert upload["headers"]["content-type"].startswith("multipart/form-data")
    assert upload["headers"]["authorization"] == f"Bearer {embed_server.api_key}"
    res = eng.search("cat number 7 fish")
    assert (res["mode"], res["provider"]) == ("hybrid", "openai")
    assert res["results"][0]["path"] == "memory/2026-01-08.md"
    assert saved_jobs(eng) == []  # done: nothing left to collect
    # the vectors went to the embedding cache: a rebuild submits nothing new
    list(eng.index(force=True))
    assert len(embed_server.batches) == 1


@pytest.mark.parametrize("fail, why", [("failed", "job batch_1 failed: the test server said no"),
                                       ("expired", "job batch_1 expired: the test server said no"),
                                       ("bad_line", "job batch_1: request 0 failed: input too long")])
def test_a_failed_job_falls_back_to_normal_requests(notes, embed_server, make_engine, fail, why):
    embed_server.batch_fail = fail
    eng = make_engine(batch_cfg(embed_server))
    events = list(eng.index())
    (warning,) = [e for e in events if isinstance(e, ev.Warning)]
    assert warning.message == f"openai batch embedding failed ({why}); embedding {N} chunks with normal requests"
    assert sorted(t.strip() for t in embed_server.inputs()) == sorted(f"note {i}: the cat number {i} likes fish kind {i}" for i in range(N))
    assert eng.search("cat number 3")["mode"] == "hybrid"
    assert saved_jobs(eng) == []


def test_jobs_are_kept_in_the_index_and_collected_by_the_next_run(notes, embed_server, make_engine):
    embed_server.batch_polls = 3
    first = make_engine(batch_cfg(embed_server, **{"remote.batch.wait": False}))
    events = list(first.index())
    assert [e.status for e in events if isinstance(e, ev.BatchProgress)][-1].startswith("waiting")
    assert embeddings_calls(embed_server) == []  # not embedded twice while the job runs
    assert len(saved_jobs(first)) == 1
    assert first.search("cat fish")["mode"] == "keyword"
    first.close()
    # a later run (a restart) polls the same job instead of submitting another
    second = make_engine(batch_cfg(embed_server))
    list(second.index())
    assert len(embed_server.batches) == 1 and embed_server.batches["batch_1"]["status"] == "completed"
    assert embeddings_calls(embed_server) == []
    assert saved_jobs(second) == []
    assert second.search("cat number 5 fish")["mode"] == "hybrid"


def test_small_backfills_use_normal_requests(workspace, embed_server, make_engine):
    write(workspace / "memory" / "a.md", "one small note\n")
    eng = make_engine(batch_cfg(embed_server))
    list(eng.index())
    assert embed_server.batches == {} and len(embeddings_calls(embed_server)) == 1


def test_voyage_backfill_uses_its_batch_shapes(notes, embed_server, make_engine):
    eng = make_engine({**batch_cfg(embed_server), "provider": "voyage", "model": "voyage-3"})
    events = list(eng.index())
    assert [e for e in events if isinstance(e, ev.BatchProgress)][-1].status == "completed"
    assert embeddings_calls(embed_server) == []
    (job,) = embed_server.batches.values()
    assert job["completion_window"] == "12h"
    assert job["request_params"] == {"model": "voyage-3", "input_type": "document"}
    first = json.loads(embed_server.stored_files[job["input_file_id"]].decode().splitlines()[0])
    assert first == {"custom_id": "0", "body": {"input": first["body"]["input"]}}
    res = eng.search("cat number 9 fish")
    assert (res["mode"], res["provider"], res["results"][0]["path"]) == ("hybrid", "voyage", "memory/2026-01-10.md")


# ----------------------------------------------------------------------------- gemini


def gemini_cfg(server, **more):
    return {"provider": "gemini", "remote.baseUrl": server.url + "/v1beta", "remote.apiKey": server.api_key,
            "remote.batch.enabled": True, "remote.batch.pollIntervalMs": 10, **more}


def gemini_calls(server):
    return [r for r in server.requests if r["path"].endswith(":batchEmbedContents") and not is_background(r)]


def gemini_batch_calls(server):
    return [r for r in server.requests if r["path"].startswith("/upload/") or ":asyncBatchEmbedContent" in r["path"]
            or "/batches/" in r["path"] or ":download" in r["path"]]


@pytest.mark.parametrize("flat, model, dims", [(False, "gemini-embedding-001", 0), (True, "gemini-embedding-2-preview", 768)])
def test_gemini_backfill_goes_through_its_batch_api(notes, embed_server, make_engine, flat, model, dims):
    """The real API answers with Operations (state BATCH_STATE_*, metadata.output.responsesFile);
    OpenClaw's tests use a flat {state, outputConfig.file}: both are read."""
    embed_server.gemini_flat = flat
    eng = make_engine(gemini_cfg(embed_server, model=model, outputDimensionality=dims))
    progress = [e for e in eng.index() if isinstance(e, ev.BatchProgress)]
    assert [p.status for p in progress][0] == "submitted" and progress[-1].status == "completed"
    assert "in_progress" in [p.status for p in progress] and progress[-1].done == progress[-1].total == N
    assert gemini_calls(embed_server) == []  # every passage went through the job
    upload = next(r for r in embed_server.requests if r["path"].startswith("/upload/"))
    assert upload["path"] == "/upload/v1beta/files?uploadType=multipart"
    assert upload["headers"]["content-type"].startswith("multipart/related; boundary=")
    create = next(r for r in embed_server.requests if r["path"].endswith(":asyncBatchEmbedContent"))
    assert create["path"] == f"/v1beta/models/{model}:asyncBatchEmbedContent"
    (file_name,) = [k for k in embed_server.stored_files if k.startswith("files/upload-")]
    assert create["body"] == {"batch": {"displayName": "memory-embeddings-main", "inputConfig": {"file_name": file_name}}}
    lines = [json.loads(x) for x in embed_server.stored_files[file_name].decode().splitlines()]
    assert lines[0] == {"key": "0", "request": {"content": {"parts": [{"text": lines[0]["request"]["content"]["parts"][0]["text"]}]},
                                                "taskType": "RETRIEVAL_DOCUMENT", "model": f"models/{model}",
                                                **({"outputDimensionality": dims} if dims else {})}}
    assert sorted(int(x["key"]) for x in lines) == list(range(N))
    assert any(":download" in r["path"] for r in embed_server.requests)
    res = eng.search("cat number 7 fish")
    assert (res["mode"], res["provider"], res["results"][0]["path"]) == ("hybrid", "gemini", "memory/2026-01-08.md")
    st = Store(eng.index_path)
    try:
        (m,) = st.models()
        _, matrix = st.load_matrix(m["id"])
    finally:
        st.close()
    assert m["dims"] == (dims or embed_server.dims) and matrix.shape[0] == N
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)  # the server's values are 2.5 long
    assert saved_jobs(eng) == [] and eng.status()["provider"]["batch"] == {"enabled": True, "lastError": None}


def test_gemini_sends_the_key_on_every_batch_call(notes, embed_server, make_engine):
    """OpenClaw sends no key on its Gemini batch calls (study §8.8): clawmem does, on each."""
    embed_server.batch_fail = "failed"  # a failed job is cancelled: that call too
    list(make_engine(gemini_cfg(embed_server)).index())
    embed_server.batch_fail = None
    for i in range(N):  # new chunks (the others are in the embedding cache now) for a job that succeeds
        write(notes / "memory" / f"dogs-{i}.md", f"dog {i} chases the ball number {i}\n")
    list(make_engine(gemini_cfg(embed_server)).index())
    calls = gemini_batch_calls(embed_server)
    kinds = {re.sub(r"(?<=[/-])\d+", "N", r["path"].split("?")[0]) for r in calls}
    assert kinds == {"/upload/v1beta/files", "/v1beta/models/gemini-embedding-N:asyncBatchEmbedContent", "/v1beta/batches/N",
                     "/v1beta/batches/N:cancel", "/v1beta/files/batch-out-N:download"}
    assert all(r["headers"].get("x-goog-api-key") == embed_server.api_key for r in calls)


def test_gemini_batch_404_turns_batching_off_and_falls_back(notes, embed_server, make_engine):
    embed_server.gemini_batch_404 = True
    eng = make_engine(gemini_cfg(embed_server))
    (warning,) = [e for e in eng.index() if isinstance(e, ev.Warning)]
    assert warning.message.startswith("gemini batch embedding failed (asyncBatchEmbedContent not available for gemini-embedding-001 at ")
    assert "404 models/gemini-embedding-001 is not found for API version v1beta" in warning.message
    assert warning.message.endswith(f"; batch jobs off until clawmem restarts; embedding {N} chunks with normal requests")
    assert sorted(t.strip() for t in embed_server.inputs()) == sorted(f"note {i}: the cat number {i} likes fish kind {i}" for i in range(N))
    assert eng.search("cat number 3")["mode"] == "hybrid"
    batch = eng.status()["provider"]["batch"]
    assert batch == {"enabled": True, "lastError": warning.message}
    from clawmem.tui.cli.status import format_status

    assert f"Batch:     on; the last index fell back: {warning.message}" in format_status(eng.status()).splitlines()
    # the same engine does not ask again: a second backfill goes straight to normal requests
    for i in range(N):
        write(notes / "memory" / f"dogs-{i}.md", f"dog {i} chases the ball number {i}\n")
    assert not [e for e in eng.index() if isinstance(e, ev.Warning)]
    assert len([r for r in embed_server.requests if r["path"].endswith(":asyncBatchEmbedContent")]) == 1
    # a restart tries again; a batch that works clears the reason
    embed_server.gemini_batch_404 = False
    for i in range(N):
        write(notes / "memory" / f"birds-{i}.md", f"bird {i} sings song number {i}\n")
    again = make_engine(gemini_cfg(embed_server))
    assert [e.status for e in again.index() if isinstance(e, ev.BatchProgress)][-1] == "completed"
    assert again.status()["provider"]["batch"] == {"enabled": True, "lastError": None}


@pytest.mark.parametrize("fail, why", [("failed", "batches/1 FAILED: the test server said no"),
                                       ("expired", "batches/1 EXPIRED: the test server said no"),
                                       ("bad_line", "batches/1: request 0 failed: input too long")])
def test_a_failed_gemini_job_falls_back_to_normal_requests(notes, embed_server, make_engine, fail, why):
    embed_server.batch_fail = fail
    eng = make_engine(gemini_cfg(embed_server))
    (warning,) = [e for e in eng.index() if isinstance(e, ev.Warning)]
    assert warning.message == f"gemini batch embedding failed ({why}); embedding {N} chunks with normal requests"
    assert len(gemini_calls(embed_server)) >= 1
    assert sorted(t.strip() for t in embed_server.inputs()) == sorted(f"note {i}: the cat number {i} likes fish kind {i}" for i in range(N))
    assert eng.search("cat number 3")["mode"] == "hybrid"
    assert saved_jobs(eng) == [] and eng.status()["provider"]["batch"]["lastError"] == warning.message


def test_a_restart_collects_the_submitted_gemini_job(notes, embed_server, make_engine):
    embed_server.batch_polls = 3
    first = make_engine(gemini_cfg(embed_server, **{"remote.batch.wait": False}))
    assert [e.status for e in first.index() if isinstance(e, ev.BatchProgress)][-1].startswith("waiting")
    assert gemini_calls(embed_server) == [] and len(saved_jobs(first)) == 1
    assert first.search("cat fish")["mode"] == "keyword"
    first.close()
    second = make_engine(gemini_cfg(embed_server))
    list(second.index())
    creates = [r for r in embed_server.requests if r["path"].endswith(":asyncBatchEmbedContent")]
    assert len(creates) == 1 and embed_server.batches["batches/1"]["state"] == "BATCH_STATE_SUCCEEDED"
    assert gemini_calls(embed_server) == [] and saved_jobs(second) == []
    assert second.search("cat number 5 fish")["mode"] == "hybrid"


def test_every_batch_provider_named_in_the_config_has_a_client():
    """status, the config's "not honoured" list and the provider plan read config.batch_providers()
    (the classes' batch_client); the batch clients must be exactly those."""
    from clawmem.engine.config import batch_providers
    from clawmem.engine.embeddings.batch import CLIENTS

    assert set(CLIENTS) == set(batch_providers()) == {"openai", "voyage", "gemini"}
