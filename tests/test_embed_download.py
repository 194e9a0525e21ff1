"""hf: model downloads served from 127.0.0.1: progress, resume, offline, and who may
download (SPEC §4)."""

import json
import socket
import time

import pytest

from clawmem.engine import events as ev
from clawmem.engine.embeddings import download as dl
from helpers import run_cli, write

URI = "hf:tester/tiny-GGUF/tiny-bert.gguf"


@pytest.fixture
def hub(embed_server, tiny_model, monkeypatch):
    embed_server.files["tester/tiny-GGUF/tiny-bert.gguf"] = tiny_model.read_bytes()
    monkeypatch.setenv("HF_ENDPOINT", embed_server.url)
    return embed_server


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def gets(server):
    return [r for r in server.requests if r["method"] == "GET"]


def test_cached_path_and_url(tmp_path, monkeypatch):
    assert dl.cached_path(URI, tmp_path) == tmp_path / "hf" / "tester" / "tiny-GGUF" / "tiny-bert.gguf"
    assert dl.cached_path("hf:o/r/sub/dir/m.gguf", tmp_path) == tmp_path / "hf" / "o" / "r" / "sub" / "dir" / "m.gguf"
    assert dl.url_for(URI) == "https://huggingface.co/tester/tiny-GGUF/resolve/main/tiny-bert.gguf"
    monkeypatch.setenv("HF_ENDPOINT", "http://mirror.local/")
    assert dl.url_for(URI) == "http://mirror.local/tester/tiny-GGUF/resolve/main/tiny-bert.gguf"
    with pytest.raises(dl.DownloadError) as exc:
        dl.cached_path("hf:only-two/parts")
    assert "hf:owner/repo/file.gguf" in str(exc.value)


def test_download_with_progress(hub, tmp_path, tiny_model):
    seen = []
    path = dl.download(URI, tmp_path, lambda done, total: seen.append((done, total)))
    assert path.read_bytes() == tiny_model.read_bytes()
    assert not path.with_name(path.name + ".part").exists()
    size = tiny_model.stat().st_size
    assert seen[0] == (0, size) and seen[-1] == (size, size)
    (req,) = gets(hub)
    assert req["path"] == "/tester/tiny-GGUF/resolve/main/tiny-bert.gguf"
    assert "range" not in req["headers"]
    # once is enough
    assert dl.download(URI, tmp_path) == path
    assert len(gets(hub)) == 1


def test_interrupted_download_resumes(hub, tmp_path, tiny_model):
    data = tiny_model.read_bytes()
    hub.cut_after = 100_000
    with pytest.raises(dl.DownloadError) as exc:
        dl.download(URI, tmp_path)
    assert str(exc.value).startswith(f"cannot download {URI}: ")
    part = dl.cached_path(URI, tmp_path).with_name("tiny-bert.gguf.part")
    assert part.stat().st_size == 100_000
    assert not dl.cached_path(URI, tmp_path).exists()  # never a half model in place
    path = dl.download(URI, tmp_path)
    assert path.read_bytes() == data
    assert gets(hub)[-1]["headers"]["range"] == "bytes=100000-"


def test_resume_from_a_partial_file_left_by_an_earlier_run(hub, tmp_path, tiny_model):
    data = tiny_model.read_bytes()
    part = dl.cached_path(URI, tmp_path).with_name("tiny-bert.gguf.part")
    part.parent.mkdir(parents=True)
    part.write_bytes(data[:12345])
    seen = []
    path = dl.download(URI, tmp_path, lambda d, t: seen.append(d))
    assert path.read_bytes() == data
    assert seen[0] == 12345
    assert gets(hub)[0]["headers"]["range"] == "bytes=12345-"


def test_offline_is_a_clear_message_not_a_hang(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    t0 = time.monotonic()
    with pytest.raises(dl.DownloadError) as exc:
        dl.download(URI, tmp_path)
    assert time.monotonic() - t0 < 5
    msg = str(exc.value)
    assert msg.startswith(f"cannot download {URI}: ")
    assert msg.endswith("; check the network or set local.modelPath to a local file")
    assert "\n" not in msg


def test_stalled_server_times_out(hub, tmp_path, monkeypatch):
    monkeypatch.setattr(dl, "READ_TIMEOUT", 0.3)
    hub.file_hang = True
    hub.hang_seconds = 3
    t0 = time.monotonic()
    with pytest.raises(dl.DownloadError) as exc:
        dl.download(URI, tmp_path)
    assert time.monotonic() - t0 < 2
    assert "timed out" in str(exc.value)


def test_missing_file_404(hub, tmp_path):
    with pytest.raises(dl.DownloadError) as exc:
        dl.download("hf:tester/tiny-GGUF/nope.gguf", tmp_path)
    assert str(exc.value) == (
        f"cannot download hf:tester/tiny-GGUF/nope.gguf: 404 not found at {hub.url}/tester/tiny-GGUF/resolve/main/nope.gguf; "
        "check the hf: URI in local.modelPath"
    )


# ----------------------------------------------------------------------------- who downloads


def test_index_with_explicit_local_downloads_then_embeds(hub, workspace, make_engine):
    write(workspace / "memory" / "a.md", "the cat likes fish\n")
    eng = make_engine({"provider": "local", "local.modelPath": URI})
    events = list(eng.index())
    downloads = [e for e in events if isinstance(e, ev.Download)]
    assert downloads and downloads[-1].done == downloads[-1].total
    assert downloads[-1].describe().startswith(f"downloading {URI}: 0.5 of 0.5 MB")
    assert [e for e in events if isinstance(e, ev.ChunksEmbedded)]
    res = eng.search("cat fish")
    assert (res["mode"], res["provider"], res["model"]) == ("hybrid", "local", "tiny-bert")
    # a second engine finds the model in the cache: no second download
    list(make_engine({"provider": "local", "local.modelPath": URI}).index())
    assert len(gets(hub)) == 1


def test_search_never_downloads(hub, workspace, make_engine):
    write(workspace / "memory" / "a.md", "the cat likes fish\n")
    list(make_engine({"provider": "none"}).index())
    eng = make_engine({"provider": "local", "local.modelPath": URI})
    res = eng.search("cat")
    assert gets(hub) == []
    assert res["mode"] == "keyword"
    assert res["results"][0]["path"] == "memory/a.md"
    assert res["reason"] == f"local: {URI} is not downloaded yet; run `clawmem index` to download it"
    assert eng.status()["provider"]["reason"].endswith(f"local: {URI} is not downloaded yet; run `clawmem index` to download it")
    assert gets(hub) == []


def test_cli_index_shows_download_progress(hub, workspace, tmp_path):
    write(workspace / "memory" / "a.md", "the cat likes fish\n")
    cfg = write(tmp_path / "c.toml", f'provider = "local"\n[local]\nmodelPath = "{URI}"\n')
    out = run_cli("--workspace", str(workspace), "--config", str(cfg), "index")
    assert out.returncode == 0, out.stderr
    assert f"downloading {URI}" in out.stderr
    res = run_cli("--workspace", str(workspace), "--config", str(cfg), "search", "cat", "--json")
    data = json.loads(res.stdout)
    assert (data["mode"], data["provider"], data["model"]) == ("hybrid", "local", "tiny-bert")


def test_cli_index_offline_says_why_and_keeps_keywords(workspace, tmp_path):
    write(workspace / "memory" / "a.md", "the cat likes fish\n")
    cfg = write(tmp_path / "c.toml", f'provider = "local"\n[local]\nmodelPath = "{URI}"\n')
    t0 = time.monotonic()
    out = run_cli("--workspace", str(workspace), "--config", str(cfg), "index", env={"HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}"})
    assert time.monotonic() - t0 < 30
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    line = next(l for l in out.stderr.splitlines() if "cannot download" in l)
    assert line.startswith("provider local -> keyword-only: local: cannot download hf:tester/tiny-GGUF/tiny-bert.gguf: ")
    assert line.endswith("check the network or set local.modelPath to a local file")
    res = json.loads(run_cli("--workspace", str(workspace), "--config", str(cfg), "search", "cat", "--json").stdout)
    assert res["mode"] == "keyword" and res["results"][0]["path"] == "memory/a.md"


def test_malformed_hf_uri_is_a_reason_not_a_crash(workspace, make_engine):
    write(workspace / "memory" / "a.md", "the cat likes fish\n")
    eng = make_engine({"provider": "local", "local.modelPath": "hf:just-a-name"})
    list(eng.index())
    res = eng.search("cat")
    assert res["mode"] == "keyword"
    assert res["reason"] == "local: local.modelPath: 'hf:just-a-name' is not an hf: URI of the form hf:owner/repo/file.gguf"
