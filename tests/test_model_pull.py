"""`clawmem model pull` / `model list` and the hf: download against a loopback server laid out
as the model hub is (resolve/main redirects to a content-addressed CDN path, X-Linked-Etag
carries the sha256): progress, resume after a cut, a checksum mismatch (issue 13, item 5)."""

import hashlib
import json

import pytest

from clawmem.engine.embeddings import download as dl
from helpers import run_cli, write

URI = "hf:tester/tiny-GGUF/tiny-bert.gguf"


@pytest.fixture
def hub(embed_server, tiny_model, monkeypatch):
    embed_server.files["tester/tiny-GGUF/tiny-bert.gguf"] = tiny_model.read_bytes()
    embed_server.hub_layout = True
    monkeypatch.setenv("HF_ENDPOINT", embed_server.url)
    return embed_server


def gets(server):
    return [r for r in server.requests if r["method"] == "GET"]


def cached(tmp_path):
    return tmp_path / "cache" / "clawmem" / "models" / "hf" / "tester" / "tiny-GGUF" / "tiny-bert.gguf"


def test_pull_follows_the_hub_redirect_and_checks_the_sha256(hub, tiny_model, tmp_path):
    data = tiny_model.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    out = run_cli("model", "pull", URI)
    assert out.returncode == 0, out.stderr
    assert cached(tmp_path).read_bytes() == data
    assert out.stdout.strip() == f"downloaded: {URI} -> {cached(tmp_path)} ({len(data) / 1e6:.1f} MB)"
    assert f"downloading {URI}: " in out.stderr and f"downloaded {URI}" in out.stderr
    resolve, cdn = gets(hub)
    assert resolve["path"] == "/tester/tiny-GGUF/resolve/main/tiny-bert.gguf"
    assert cdn["path"].startswith(f"/cdn-lfs/{sha}")
    again = run_cli("model", "pull", URI, "--json")
    assert json.loads(again.stdout) == {"uri": URI, "path": str(cached(tmp_path)), "bytes": len(data), "downloaded": False}
    assert len(gets(hub)) == 2  # nothing fetched the second time


def test_interrupted_pull_resumes_at_the_cdn(hub, tiny_model, tmp_path):
    data = tiny_model.read_bytes()
    hub.cut_after = 100_000
    out = run_cli("model", "pull", URI)
    assert out.returncode == 3
    assert out.stderr.strip().endswith("run the command again to resume")
    listed = json.loads(run_cli("model", "list", "--json").stdout)["models"]
    assert listed == [{"uri": URI, "path": str(cached(tmp_path)) + ".part", "bytes": 100_000, "complete": False}]
    assert "unfinished: `clawmem model pull` resumes it" in run_cli("model", "list").stdout
    out = run_cli("model", "pull", URI)
    assert out.returncode == 0, out.stderr
    assert cached(tmp_path).read_bytes() == data  # the sha256 of the joined file matched too
    last = gets(hub)[-1]
    assert last["path"].startswith("/cdn-lfs/") and last["headers"]["range"] == "bytes=100000-"


def test_checksum_mismatch_removes_the_bad_bytes(hub, tiny_model, tmp_path):
    hub.corrupt = True
    out = run_cli("model", "pull", URI)
    assert out.returncode == 3
    sha = hashlib.sha256(tiny_model.read_bytes()).hexdigest()
    line = out.stderr.strip().splitlines()[-1]
    assert line.startswith(f"clawmem: cannot download {URI}: checksum mismatch (got sha256 ")
    assert f"the hub says {sha[:12]}…); the partial file was removed, run the command again" in line
    assert not cached(tmp_path).exists()
    assert not cached(tmp_path).with_name("tiny-bert.gguf.part").exists()
    hub.corrupt = False
    assert run_cli("model", "pull", URI).returncode == 0
    assert cached(tmp_path).read_bytes() == tiny_model.read_bytes()


def test_engine_download_checks_the_hub_sha256_too(hub, tmp_path):
    hub.corrupt = True
    with pytest.raises(dl.DownloadError, match="checksum mismatch"):
        dl.download(URI, tmp_path)
    assert not dl.cached_path(URI, tmp_path).exists()


def test_pull_defaults_to_the_configured_model_and_list_marks_it(hub, tmp_path):
    cfg = write(tmp_path / "c.toml", f'[local]\nmodelPath = "{URI}"\n')
    assert run_cli("--config", str(cfg), "model", "list").stdout.startswith(f"No models in {tmp_path / 'cache' / 'clawmem' / 'models'}")
    out = run_cli("--config", str(cfg), "model", "pull")
    assert out.returncode == 0, out.stderr
    lines = run_cli("--config", str(cfg), "model", "list").stdout.splitlines()
    assert lines[0].startswith(f"{URI}  0.5 MB  (configured)")


def test_pull_of_a_local_path_is_a_usage_error(tmp_path):
    out = run_cli("model", "pull", str(tmp_path / "m.gguf"))
    assert out.returncode == 2
    assert "is a local file, not an hf:owner/repo/file.gguf URI" in out.stderr
    assert run_cli("model").returncode == 2
