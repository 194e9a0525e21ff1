"""The local provider on a tiny real GGUF model run by llama-cpp-python in its worker process."""

import os
import shutil
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from clawmem.engine import ConfigError
from clawmem.engine.embeddings import ProviderError, plan
from clawmem.engine.embeddings.local import LocalProvider, ThreadChooser, default_prefixes, file_identity
from helpers import write


def cos(a, b):
    return float(np.dot(a, b))


def test_generated_model_loads_in_a_subprocess(tiny_model):
    # a malformed GGUF aborts the process: prove the generator's output loads in a separate one
    code = (
        "import llama_cpp, sys\n"
        f"m = llama_cpp.Llama(model_path={str(tiny_model)!r}, embedding=True, n_ctx=512, n_batch=512, n_ubatch=512, verbose=False)\n"
        "print(m.n_embd(), len(m.embed('cat fish', normalize=True)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["64", "64"]


def test_loads_lazily_and_embeds(tiny_model):
    p = LocalProvider(tiny_model)
    assert (p.id, p.model) == ("local", "tiny-bert")
    p.fingerprint()
    assert p._model_host is None  # building a provider (for its fingerprint) does not load the model
    a, b, c = p.embed_passages(["the cat likes fish", "cat and fish", "dark mode theme for the editor"])
    assert p._model_host.pid is not None and p.dims == 64
    assert all(abs(np.linalg.norm(v) - 1) < 1e-5 for v in (a, b, c))
    assert cos(a, b) > cos(a, c) + 0.1
    q = p.embed_query("  editor theme  ")
    assert cos(q, c) > cos(q, a)
    p.close()


def test_long_input_is_split_by_tokens_not_truncated(tiny_model):
    p = LocalProvider(tiny_model)
    long = "cat " * 700 + "fish " * 700  # 1400 words: far over the 512-token window
    (v,) = p.embed_passages([long])
    from clawmem.engine.embeddings.llama_model import Embedder

    assert len(Embedder(str(tiny_model)).pieces(long)) >= 3
    both, cat_only = p.embed_passages(["cat " * 100 + "fish " * 100, "cat " * 200])  # these fit
    assert cos(v, both) > 0.99  # the fish half counts: nothing was cut off
    assert cos(v, cat_only) < 0.8
    p.close()


def test_e5_prefixes_by_default_and_configurable(tiny_model, tmp_path):
    assert default_prefixes("multilingual-e5-small-q4_0") == ("query: ", "passage: ")
    assert default_prefixes("e5-base-v2") == ("query: ", "passage: ")
    assert default_prefixes("all-MiniLM-L6-v2") == ("", "")
    assert default_prefixes("model-e50") == ("", "")
    e5_path = tmp_path / "multilingual-e5-tiny.gguf"
    shutil.copy(tiny_model, e5_path)
    e5 = LocalProvider(e5_path)
    plain = LocalProvider(tiny_model)
    assert (e5.query_prefix, e5.passage_prefix) == ("query: ", "passage: ")
    # the tiny vocabulary knows "query" and "passage": the prefix really reaches the model
    assert cos(e5.embed_query(" cat "), plain.embed_passages(["query: cat"])[0]) > 0.9999
    assert cos(e5.embed_passages(["cat\n"])[0], plain.embed_passages(["passage: cat"])[0]) > 0.9999
    assert cos(e5.embed_query("cat"), plain.embed_query("cat")) < 0.99
    none = LocalProvider(e5_path, query_prefix="", passage_prefix="")
    assert cos(none.embed_query("cat"), plain.embed_query("cat")) > 0.9999
    for p in (e5, plain, none):
        p.close()


def test_threads_setting(tiny_model):
    p = LocalProvider(tiny_model, threads=1)
    p.embed_passages(["cat"])
    assert p._threads_now == (1, 1)
    p.embed_query("cat")
    assert p._threads_now == (1, 1)
    auto = LocalProvider(tiny_model)
    auto.embed_query("cat")
    assert auto._threads_now == (1, 1)  # a short query: one thread (see README: measured)
    p.close()
    auto.close()


def test_thread_chooser_follows_the_measured_throughput():
    c = ThreadChooser((2, 1))
    assert c.pick() == 2
    c.record(2, 50, 1.0)  # one short text: not a measurement yet
    assert c.pick() == 2
    c.record(2, 4000, 0.0)
    assert c.pick() == 1 and c.rate == {2: 4050.0}
    c.record(1, 2400, 1.0)
    picks = []
    for _ in range(30):
        n = c.pick()
        picks.append(n)
        c.record(n, 4000 if n == 2 else 2400, 1.0)
    assert picks.count(1) == 2  # the faster, measuring the other again now and then
    # the box gets busy: two threads stall, one keeps going
    c.record(2, 2000, 10.0)
    assert c.pick() == 1
    assert ThreadChooser((1,)).pick() == 1


def test_automatic_threads_are_measured_while_embedding(tiny_model):
    p = LocalProvider(tiny_model)
    for _ in range(len(p.chooser.choices)):
        p.embed_passages(["cat fish tokyo " * 100] * 8)  # ~2400 tokens: one measurement
    assert set(p.chooser.rate) == set(p.chooser.choices)
    assert all(r > 0 for r in p.chooser.rate.values())
    p.close()


def test_identity_survives_a_move_not_a_replacement(tiny_model, tmp_path):
    from tinymodel import make

    moved = tmp_path / "elsewhere" / "tiny-bert.gguf"
    moved.parent.mkdir()
    shutil.copy(tiny_model, moved)
    assert LocalProvider(moved).fingerprint() == LocalProvider(tiny_model).fingerprint()
    replaced = make(tmp_path / "other" / "tiny-bert.gguf", seed=7)
    assert file_identity(replaced) != file_identity(tiny_model)
    assert LocalProvider(replaced).fingerprint() != LocalProvider(tiny_model).fingerprint()


def test_identity_is_hashed_once_per_process_yet_sees_an_edit_in_place(tmp_path):
    """The identity is kept per process (a search asks for it twice; hashing a MB costs ~5 ms),
    keyed by the open file's stat with ctime: rewriting the file in place, same size, its mtime
    put back, still gives the new content's identity. Its value is the one indexes hold:
    size and the first MB's sha256."""
    import hashlib

    f = tmp_path / "m.gguf"
    f.write_bytes(b"a" * 5000)
    first = file_identity(f)
    assert first == f"5000:{hashlib.sha256(b'a' * 5000).hexdigest()[:16]}"
    assert file_identity(f) == first
    st = f.stat()
    time.sleep(0.01)
    with open(f, "r+b") as fh:
        fh.write(b"b")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert f.stat().st_mtime_ns == st.st_mtime_ns and f.stat().st_size == st.st_size
    assert file_identity(f) == f"5000:{hashlib.sha256(b'b' + b'a' * 4999).hexdigest()[:16]}"


def test_threads_share_one_model_safely(tiny_model):
    p = LocalProvider(tiny_model)
    want = p.embed_query("tokyo flight")
    got, errors = [], []

    def work():
        try:
            for _ in range(20):
                got.append(p.embed_query("tokyo flight"))
        except Exception as exc:  # pragma: no cover - the assertion below shows it
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(got) == 80
    assert all(np.allclose(v, want, atol=1e-6) for v in got)
    p.close()


def test_not_a_model_is_a_one_line_error(tmp_path):
    bad = write(tmp_path / "notes.gguf", "this is not a model\n")
    p = LocalProvider(bad)
    with pytest.raises(ProviderError) as exc:
        p.embed_query("x")
    msg = str(exc.value)
    assert msg.startswith("local: cannot load notes.gguf: ") and msg.endswith("check that local.modelPath is a GGUF embedding model")
    assert "\n" not in msg
    with pytest.raises(ProviderError):  # remembered, not retried on every call
        p.embed_passages(["x"])


def test_missing_model_file(make_engine, tmp_path):
    eng = make_engine({"provider": "local", "local.modelPath": str(tmp_path / "nope.gguf")})
    p = plan(eng.cfg)
    assert p.usable() == []
    assert p.candidates[0].reason == f"local: model file not found: {tmp_path / 'nope.gguf'} (fix local.modelPath)"


def test_broken_model_degrades_search_to_keywords(workspace, make_engine, tmp_path):
    write(workspace / "memory" / "a.md", "tokyo flight booked\n")
    bad = write(tmp_path / "broken.gguf", "GGUF but not really")
    eng = make_engine({"provider": "local", "local.modelPath": str(bad)})
    events = list(eng.index())
    from clawmem.engine import events as ev

    switched = [e for e in events if isinstance(e, ev.ProviderSwitched)]
    assert switched and switched[0].to_provider is None and switched[0].reason.startswith("local: cannot load broken.gguf")
    res = eng.search("tokyo")
    assert res["mode"] == "keyword" and res["results"][0]["path"] == "memory/a.md"
    assert res["reason"].startswith("local: cannot load broken.gguf")
    st = eng.status()
    assert st["provider"]["reason"].startswith("searches are keyword-only until vectors exist: local: cannot load broken.gguf")


def test_full_rebuild_keeps_the_local_models_vectors(workspace, make_engine, tiny_model):
    """A rebuild (index --force, F9, a chunking change) prunes the vectors of models no longer
    configured; the local model's own must survive it (they were matched by the model path)."""
    for i in range(6):
        write(workspace / "memory" / f"2026-01-0{i + 1}.md", f"cat and fish number {i}\n\nthe editor theme is dark {i}\n")
    eng = make_engine({"provider": "local", "local.modelPath": str(tiny_model)})
    list(eng.index())
    chunks = eng.status()["index"]["chunks"]
    for kw in ({"force": True}, {}):
        events = list(eng.index(**kw))
        assert not any("dropped vectors" in getattr(e, "message", "") for e in events)
        (model,) = eng.status()["vector"]["models"]
        assert (model["provider"], model["vectors"]) == ("local", chunks)
        assert eng.search("cat fish")["mode"] == "hybrid"
    # a chunking change rebuilds too (with --force: it would drop the vectors this index holds),
    # and still embeds into (and keeps) the same model's table
    eng2 = make_engine({"provider": "local", "local.modelPath": str(tiny_model), "chunking.tokens": 100, "chunking.overlap": 10})
    with pytest.raises(ConfigError, match="--force"):
        list(eng2.index())
    list(eng2.index(force=True))
    (model,) = eng2.status()["vector"]["models"]
    assert model["vectors"] == eng2.status()["index"]["chunks"]
    assert eng2.search("cat fish")["mode"] == "hybrid"


def test_vectors_of_a_replaced_model_go_after_the_grace_period(workspace, make_engine, tiny_model, tmp_path):
    import time

    from tinymodel import make

    from clawmem.engine.index.store import Store

    write(workspace / "MEMORY.md", "cat and fish\n")
    list(make_engine({"provider": "local", "local.modelPath": str(tiny_model)}).index())
    other = make(tmp_path / "other" / "tiny-bert.gguf", seed=7)  # the same name, another model
    eng = make_engine({"provider": "local", "local.modelPath": str(other)})
    list(eng.index())
    assert len(eng.status()["vector"]["models"]) == 2
    st = Store(eng.index_path, write=True)
    st.conn.execute("update models set last_used = ?", (time.time() - 40 * 86400,))
    st.close()
    events = list(eng.index())
    assert sum("dropped vectors of local/tiny-bert" in getattr(e, "message", "") for e in events) == 1
    (model,) = eng.status()["vector"]["models"]  # the configured one stays, however long unused
    assert model["vectors"] == 1
    assert eng.search("cat fish")["mode"] == "hybrid"
