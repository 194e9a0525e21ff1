"""Remote providers against our own embeddings server: exact requests, batching, retries,
timeouts, bad vectors and what the user is told (SPEC §4, study §8.5–8.7)."""

import math
import time

import numpy as np
import pytest

from clawmem.engine.embeddings import ProviderError
from clawmem.engine.embeddings.remote import Retry, group_by_bytes, make_remote


def provider(server, name="openai", **kw):
    kw.setdefault("model", "")
    kw.setdefault("api_key", server.api_key)
    kw.setdefault("base_url", server.url + ("/v1beta" if name == "gemini" else "/v1"))
    return make_remote(name, **kw)


# ----------------------------------------------------------------------------- request shapes


def test_openai_request_shape(embed_server):
    p = provider(embed_server, "openai", model="openai/text-embedding-3-small", base_url=embed_server.url + "/v1/")
    vecs = p.embed_passages(["alpha beta", "gamma"])
    q = p.embed_query("  delta  ")
    batch, query = embed_server.requests
    assert batch["path"] == "/v1/embeddings"
    assert batch["body"] == {"model": "text-embedding-3-small", "input": ["alpha beta", "gamma"]}
    assert query["body"] == {"model": "text-embedding-3-small", "input": ["delta"]}
    h = batch["headers"]
    assert h["authorization"] == f"Bearer {embed_server.api_key}"
    assert h["content-type"] == "application/json"
    assert len(vecs) == 2 and all(v.dtype == np.float32 and abs(np.linalg.norm(v) - 1) < 1e-5 for v in vecs)
    assert q.shape == (embed_server.dims,)
    assert p.dims == embed_server.dims


def test_voyage_input_type(embed_server):
    p = provider(embed_server, "voyage", model="voyage/voyage-3")
    p.embed_passages(["one", "two"])
    p.embed_query("three")
    batch, query = embed_server.requests
    assert batch["path"] == "/v1/embeddings"
    assert batch["body"] == {"model": "voyage-3", "input": ["one", "two"], "input_type": "document"}
    assert query["body"] == {"model": "voyage-3", "input": ["three"], "input_type": "query"}
    assert batch["headers"]["authorization"] == f"Bearer {embed_server.api_key}"


def test_gemini_request_shape(embed_server):
    # an OpenAI-compatibility URL and a prefixed model name are normalised to the native API
    p = provider(embed_server, "gemini", model="models/gemini-embedding-001", base_url=embed_server.url + "/v1beta/openai/")
    p.embed_passages(["one", "two"])
    p.embed_query("three")
    batch, query = embed_server.requests
    assert batch["path"] == "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    assert batch["body"] == {
        "requests": [
            {"content": {"parts": [{"text": "one"}]}, "taskType": "RETRIEVAL_DOCUMENT", "model": "models/gemini-embedding-001"},
            {"content": {"parts": [{"text": "two"}]}, "taskType": "RETRIEVAL_DOCUMENT", "model": "models/gemini-embedding-001"},
        ]
    }
    assert query["path"] == "/v1beta/models/gemini-embedding-001:embedContent"
    assert query["body"] == {"content": {"parts": [{"text": "three"}]}, "taskType": "RETRIEVAL_QUERY"}
    assert query["headers"]["x-goog-api-key"] == embed_server.api_key
    assert "authorization" not in query["headers"]


def test_gemini_2_preview_sends_dimensionality(embed_server):
    p = provider(embed_server, "gemini", model="google/gemini-embedding-2-preview")
    p.embed_query("x")
    assert embed_server.requests[0]["body"]["outputDimensionality"] == 3072


def test_header_overrides_and_fingerprint_without_secrets(embed_server):
    p = provider(embed_server, "openai", headers={"X-Team": "memory", "authorization": f"Bearer {embed_server.api_key}", "X-Api-Token": "s3cret-token"})
    p.embed_query("x")
    h = embed_server.requests[0]["headers"]
    assert h["x-team"] == "memory" and h["x-api-token"] == "s3cret-token"
    # the override replaced Authorization instead of sending it twice
    raw = [k for k in embed_server.requests[0]["headers"] if k == "authorization"]
    assert raw == ["authorization"]
    # the endpoint identifies the server (base URL, non-secret headers) but holds no secret
    assert p.endpoint.startswith(embed_server.url + "/v1")
    assert "memory" in p.endpoint
    assert embed_server.api_key not in p.endpoint and "s3cret" not in p.endpoint
    assert embed_server.api_key not in repr(p)
    other = provider(embed_server, "openai", headers={"X-Team": "other"})
    assert other.fingerprint() != p.fingerprint()
    same_key_changed = provider(embed_server, "openai", api_key="sk-another", headers={"X-Team": "memory", "X-Api-Token": "s3cret-token"})
    assert same_key_changed.fingerprint() == p.fingerprint()


# ----------------------------------------------------------------------------- batching


def test_group_by_bytes():
    texts = ["a" * 5000, "b" * 4000, "c" * 9000, "d" * 10]
    assert group_by_bytes(texts, 8000) == [[0], [1], [2], [3]]
    assert group_by_bytes(["é" * 2000, "x" * 3999, "y"], 8000) == [[0, 1, 2]]
    assert group_by_bytes(["é" * 2000, "x" * 4000, "y"], 8000) == [[0, 1], [2]]


def test_requests_hold_at_most_8000_bytes(embed_server):
    p = provider(embed_server)
    texts = [f"note {i} " + "word " * 300 for i in range(20)]  # ~1.5 kB each
    vecs = p.embed_passages(texts)
    assert all(v is not None for v in vecs)
    sizes = [sum(len(t.encode()) for t in r["body"]["input"]) for r in embed_server.requests]
    assert all(s <= 8000 for s in sizes)
    assert len(embed_server.requests) == 4  # 5 texts of 1.5 kB per request
    assert sorted(embed_server.inputs()) == sorted(texts)  # every text once (requests run concurrently)


def test_requests_run_concurrently(embed_server):
    embed_server.delay = 0.2
    p = provider(embed_server)
    texts = ["word " * 1500 + str(i) for i in range(8)]  # 7.5 kB each: one request per text
    t0 = time.monotonic()
    p.embed_passages(texts)
    took = time.monotonic() - t0
    assert len(embed_server.requests) == 8
    assert 2 <= embed_server.max_in_flight <= 4
    assert took < 8 * 0.2 * 0.75  # clearly faster than one at a time


def test_over_limit_input_is_split_not_truncated(embed_server):
    p = provider(embed_server, "gemini")  # gemini-embedding-001: 2048 bytes per input
    assert p.max_input_bytes == 2048
    long = " ".join(f"w{i}" for i in range(1500))  # ~8.4 kB
    short = "short text"
    v_long, v_short = p.embed_passages([long, short])
    sent = embed_server.inputs()
    assert all(len(s.encode()) <= 2048 for s in sent)
    assert "".join(sent[:-1]) == long  # every byte was sent, in pieces
    assert sent[-1] == short
    assert v_long is not None and abs(np.linalg.norm(v_long) - 1) < 1e-5


# ----------------------------------------------------------------------------- retries


def test_retries_429_and_500_with_backoff(embed_server):
    waits = []
    p = provider(embed_server, sleep=waits.append, rand=lambda: 0.5)
    embed_server.script = [429, 500, 503]
    v = p.embed_query("hello")
    assert v is not None
    assert len(embed_server.requests) == 4  # three failures, then success
    assert waits == [0.5, 1.0, 2.0]


def test_retry_gives_up_after_four_attempts(embed_server):
    waits = []
    p = provider(embed_server, sleep=waits.append, rand=lambda: 0.999999)
    embed_server.always = 429
    with pytest.raises(ProviderError) as exc:
        p.embed_passages(["x"])
    assert len(embed_server.requests) == 4
    assert waits == pytest.approx([0.6, 1.2, 2.4], rel=1e-3)  # +20 % jitter at most
    assert str(exc.value) == "openai: 429 Rate limit reached (gave up after 4 attempts)"


def test_retry_wait_policy():
    r = Retry()
    assert r.wait(1, 0.0) == pytest.approx(0.4)
    assert r.wait(1, 0.5) == pytest.approx(0.5)
    assert r.wait(2, 0.5) == pytest.approx(1.0)
    assert r.wait(3, 1.0) == pytest.approx(2.4)
    assert r.wait(6, 1.0) == 8.0  # capped
    assert r.wait(6, 0.0) == 8.0


def test_retries_really_wait(embed_server):
    p = provider(embed_server, retry=Retry(base=0.1))
    embed_server.script = [500, 500]
    p.embed_query("x")
    starts = [r["start"] for r in embed_server.requests]
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert gaps[0] >= 0.08 and gaps[1] >= 0.16  # 0.1 then 0.2 s, ±20 %


def test_connection_refused_is_retried_then_explained():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    waits = []
    p = make_remote("openai", model="", api_key="sk-x", base_url=f"http://127.0.0.1:{port}/v1", sleep=waits.append)
    with pytest.raises(ProviderError) as exc:
        p.embed_query("x")
    assert len(waits) == 3
    msg = str(exc.value)
    assert msg.startswith(f"openai: cannot reach http://127.0.0.1:{port}/v1") and "\n" not in msg


def test_timeout_is_reported_not_endured(embed_server):
    embed_server.always = "hang"
    embed_server.hang_seconds = 2.0
    p = provider(embed_server, timeout=0.3)
    t0 = time.monotonic()
    with pytest.raises(ProviderError) as exc:
        p.embed_query("x")
    assert time.monotonic() - t0 < 1.5
    assert len(embed_server.requests) == 1  # a timeout is not retried
    assert str(exc.value) == f"openai: no answer from {embed_server.url}/v1 within 0.3 s (timeout)"


# ----------------------------------------------------------------------------- errors and bad vectors


def test_401_names_provider_and_never_the_key(embed_server):
    p = provider(embed_server, api_key="sk-wrong-secret-987")
    with pytest.raises(ProviderError) as exc:
        p.embed_query("x")
    assert str(exc.value) == "openai: 401 invalid api key (check remote.apiKey or OPENAI_API_KEY)"
    assert len(embed_server.requests) == 1  # not retried


def test_400_message_is_one_line_and_scrubbed(embed_server):
    embed_server.script = [400]
    p = provider(embed_server)
    with pytest.raises(ProviderError) as exc:
        p.embed_passages(["x"])
    assert str(exc.value) == "openai: 400 bad request"
    assert len(embed_server.requests) == 1


def test_malformed_json_is_an_error_not_retried(embed_server):
    embed_server.always = "malformed"
    p = provider(embed_server)
    with pytest.raises(ProviderError) as exc:
        p.embed_passages(["x"])
    assert "openai: malformed response" in str(exc.value)
    assert len(embed_server.requests) == 1


@pytest.mark.parametrize("name", ["openai", "voyage", "gemini"])
def test_bad_vectors_are_rejected_per_input(embed_server, name):
    p = provider(embed_server, name)
    vecs = p.embed_passages(["good one", "bad WRONGDIM here", "bad NANVEC here", "bad ZEROVEC here", "good two"])
    assert [v is not None for v in vecs] == [True, False, False, False, True]
    for v in (vecs[0], vecs[4]):
        assert v.shape == (embed_server.dims,) and np.all(np.isfinite(v))


def test_query_with_bad_vector_fails_cleanly(embed_server):
    p = provider(embed_server)
    p.embed_passages(["learn the size"])
    with pytest.raises(ProviderError) as exc:
        p.embed_query("NANVEC")
    assert str(exc.value) == "openai: returned no usable vector for the query (wrong size, NaN or zeros)"


def test_similar_texts_are_similar(embed_server):
    p = provider(embed_server)
    a, b, c = p.embed_passages(["dark mode theme for the editor", "the editor dark mode", "lasagna recipe with cheese"])
    assert float(a @ b) > float(a @ c) + 0.2
    assert math.isclose(float(a @ a), 1.0, rel_tol=1e-5)
