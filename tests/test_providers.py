"""Issue 13: an OpenClaw user needs no setup. Mistral, Ollama's native API and Gemini's
outputDimensionality against the loopback server with their real request, response and error
shapes; keys found where OpenClaw keeps them (and status naming the source, never the key);
every OpenClaw setting we read but do not honour listed; `enabled = false` honoured."""

import json

import numpy as np
import pytest

from clawmem.engine import Engine, load_config
from clawmem.engine.agent import tools
from clawmem.engine.embeddings import ProviderError, plan
from clawmem.engine.embeddings import remote
from clawmem.engine.embeddings.remote import make_remote
from helpers import run_cli, write


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch):
    monkeypatch.setattr(remote, "RETRY", remote.Retry(base=0.005))


# ----------------------------------------------------------------------------- mistral


def mistral(server, **kw):
    kw.setdefault("model", "mistral/mistral-embed")
    kw.setdefault("api_key", server.api_key)
    return make_remote("mistral", base_url=server.url + "/v1", **kw)


def test_mistral_request_shape(embed_server):
    p = mistral(embed_server)
    vecs = p.embed_passages(["alpha beta", "gamma"])
    p.embed_query("delta")
    batch, query = embed_server.requests
    assert batch["path"] == "/v1/embeddings"
    assert batch["body"] == {"model": "mistral-embed", "input": ["alpha beta", "gamma"]}
    assert query["body"] == {"model": "mistral-embed", "input": ["delta"]}
    assert batch["headers"]["authorization"] == f"Bearer {embed_server.api_key}"
    assert all(abs(np.linalg.norm(v) - 1) < 1e-5 for v in vecs)
    assert make_remote("mistral", model="", api_key="k").base_url == "https://api.mistral.ai/v1"


def test_mistral_error_bodies(embed_server):
    embed_server.error_style = "mistral"
    with pytest.raises(ProviderError) as exc:
        mistral(embed_server, api_key="wrong-key-123").embed_query("x")
    assert str(exc.value) == "mistral: 401 invalid api key (check remote.apiKey or MISTRAL_API_KEY)"
    embed_server.script = [400]
    with pytest.raises(ProviderError) as exc:
        mistral(embed_server).embed_passages(["x"])
    assert str(exc.value) == "mistral: 400 Too many tokens overall, split into more batches."
    embed_server.script = [422]
    with pytest.raises(ProviderError) as exc:
        mistral(embed_server).embed_passages(["x"])
    assert str(exc.value) == "mistral: 422 input: Field required"
    # its rate-limit body is retried like any 429, then the answer comes
    embed_server.reset()
    embed_server.script = [429, 503]
    assert mistral(embed_server).embed_query("x") is not None
    assert len(embed_server.requests) == 3


# ----------------------------------------------------------------------------- ollama


def ollama(server, **kw):
    kw.setdefault("model", "")
    kw.setdefault("api_key", "")
    return make_remote("ollama", base_url=kw.pop("base_url", server.url), **kw)


def test_ollama_native_embed_request(embed_server):
    p = ollama(embed_server, base_url=embed_server.url + "/v1/")  # an OpenAI-compatible URL means the native API
    vecs = p.embed_passages(["one two", "three"])
    p.embed_query("four")
    batch, query = embed_server.requests
    assert batch["path"] == "/api/embed"
    assert batch["body"] == {"model": "nomic-embed-text", "input": ["one two", "three"]}
    assert query["body"] == {"model": "nomic-embed-text", "input": ["four"]}
    assert "authorization" not in batch["headers"]  # no key configured: none sent
    assert [v.shape for v in vecs] == [(embed_server.dims,)] * 2
    assert make_remote("ollama", model="ollama/all-minilm", api_key="").base_url == "http://127.0.0.1:11434"
    assert make_remote("ollama", model="ollama/all-minilm", api_key="").model == "all-minilm"


def test_ollama_key_is_sent_when_given(embed_server):
    embed_server.ollama_key = "proxy-secret-1234"
    with pytest.raises(ProviderError) as exc:
        ollama(embed_server).embed_query("x")
    assert str(exc.value) == "ollama: 401 unauthorized (check remote.apiKey, models.providers.ollama.apiKey or OLLAMA_API_KEY)"
    assert ollama(embed_server, api_key="proxy-secret-1234").embed_query("x") is not None
    assert embed_server.requests[-1]["headers"]["authorization"] == "Bearer proxy-secret-1234"


def test_ollama_errors(embed_server):
    with pytest.raises(ProviderError) as exc:
        ollama(embed_server, model="mxbai-embed-large").embed_query("x")
    assert str(exc.value) == ('ollama: model "mxbai-embed-large" not found, try pulling it first '
                              "(run `ollama pull mxbai-embed-large`, or set model)")
    assert len(embed_server.requests) == 1  # not retried
    embed_server.script = [500, 503]
    assert ollama(embed_server).embed_passages(["x"])[0] is not None  # its {"error": …} 5xx bodies are retried
    embed_server.api_key = ""  # a server that is not Ollama answers 404 for /api/embed
    with pytest.raises(ProviderError) as exc:
        ollama(embed_server, base_url=embed_server.url + "/not-ollama").embed_query("x")
    assert "ollama: 404 no /api/embed at" in str(exc.value)


def test_ollama_inputs_stay_under_its_context(embed_server):
    p = ollama(embed_server, concurrency=1)  # one request at a time: the pieces arrive in order
    long = " ".join(f"w{i}" for i in range(2000))  # ~11 kB: Ollama would cut it at its context
    (v,) = p.embed_passages([long])
    sent = embed_server.inputs()
    assert len(sent) > 1 and all(len(s.encode()) <= 4000 for s in sent)
    assert "".join(sent) == long and v is not None


# ----------------------------------------------------------------------------- gemini outputDimensionality


def gemini(server, model, dims=0):
    return make_remote("gemini", model=model, api_key=server.api_key, base_url=server.url + "/v1beta", output_dimensionality=dims)


def test_gemini_output_dimensionality(embed_server):
    p = gemini(embed_server, "gemini-embedding-2-preview", 768)
    (v,) = p.embed_passages(["some text"])
    q = p.embed_query("query text")
    batch, query = embed_server.requests
    assert batch["body"]["requests"][0]["outputDimensionality"] == 768
    assert query["body"]["outputDimensionality"] == 768
    assert v.shape == (768,) and q.shape == (768,)
    # gemini-embedding-001 gets a size only when one is set
    gemini(embed_server, "gemini-embedding-001", 256).embed_query("x")
    assert embed_server.requests[-1]["body"]["outputDimensionality"] == 256
    gemini(embed_server, "gemini-embedding-001").embed_query("x")
    assert "outputDimensionality" not in embed_server.requests[-1]["body"]
    # a different size means different vectors: a different fingerprint, the default size the same one
    fp = {d: gemini(embed_server, "gemini-embedding-2-preview", d).fingerprint() for d in (0, 3072, 768, 1536)}
    assert fp[0] == fp[3072] and len({fp[0], fp[768], fp[1536]}) == 3


def test_gemini_2_rejects_other_sizes(embed_server):
    with pytest.raises(ProviderError) as exc:
        gemini(embed_server, "gemini-embedding-2-preview", 1000)
    assert str(exc.value) == "gemini: outputDimensionality 1000 is not one gemini-embedding-2-preview offers (768, 1536 or 3072)"


# ----------------------------------------------------------------------------- openclaw.json alone


NOTES = {"memory/2026-01-01.md": "the cat likes fish and milk\n", "MEMORY.md": "dark mode theme for the editor\n"}


@pytest.fixture
def openclaw(tmp_path, monkeypatch, workspace):
    """Write an openclaw.json (in its own state dir) whose workspace is the test workspace."""
    state = tmp_path / "openclaw-state"
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(state))
    for rel, text in NOTES.items():
        write(workspace / rel, text)

    def make(memory_search: dict, **top) -> Engine:
        data = {"agents": {"defaults": {"workspace": str(workspace), "memorySearch": memory_search}}, **top}
        write(state / "openclaw.json", json.dumps(data))
        return state

    return make


def open_engine() -> Engine:
    return Engine(load_config())  # no clawmem config, no flags: openclaw.json only


def base_for(server, name):
    return server.url + {"gemini": "/v1beta", "ollama": ""}.get(name, "/v1")


CASES = {
    # provider: (memorySearch extra, openclaw.json extra, environment, the key source status names)
    "openai": ({}, {}, {"OPENAI_API_KEY": "@KEY@"}, "env OPENAI_API_KEY"),
    "gemini": ({}, {"models": {"providers": {"google": {"apiKey": "${MY_GEMINI}"}}}}, {"MY_GEMINI": "@KEY@"},
               "openclaw.json models.providers.google.apiKey -> env MY_GEMINI"),
    "voyage": ({}, {"models": {"providers": {"voyage": {"apiKey": {"source": "file", "provider": "keys", "id": "/voyage/key"}}}},
                    "secrets": {"providers": {"keys": {"source": "file", "path": "@SECRETS@", "mode": "json"}}}}, {},
               "openclaw.json models.providers.voyage.apiKey -> file @SECRETS@ /voyage/key"),
    "mistral": ({}, {"env": {"MISTRAL_API_KEY": "@KEY@"}}, {}, "openclaw.json env.MISTRAL_API_KEY"),
    "ollama": ({"model": "ollama/all-minilm"}, {}, {}, "none (ollama needs no key)"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_openclaw_json_alone_gives_hybrid_search(name, embed_server, openclaw, tmp_path, monkeypatch):
    extra, top, env, key_source = CASES[name]
    secrets_file = write(tmp_path / "secrets.json", json.dumps({"voyage": {"key": embed_server.api_key}}))
    top = json.loads(json.dumps(top).replace("@KEY@", embed_server.api_key).replace("@SECRETS@", str(secrets_file)))
    pid = {"gemini": "google"}.get(name, name)
    providers = top.setdefault("models", {}).setdefault("providers", {})
    providers.setdefault(pid, {})["baseUrl"] = base_for(embed_server, name)
    for var, value in env.items():
        monkeypatch.setenv(var, value.replace("@KEY@", embed_server.api_key))
    openclaw({"provider": name, **extra}, **top)
    eng = open_engine()
    try:
        list(eng.index())
        res = eng.search("cat fish")
        assert (res["mode"], res["provider"]) == ("hybrid", name)
        assert res["results"][0]["path"] == "memory/2026-01-01.md"
        st = eng.status(deep=True)
        (cand,) = [c for c in st["provider"]["candidates"] if c["name"] == name]
        assert cand["keySource"] == key_source.replace("@SECRETS@", str(secrets_file))
        assert embed_server.api_key not in json.dumps(st)
    finally:
        eng.close()
    if name == "ollama":
        assert {r["path"] for r in embed_server.requests} == {"/api/embed"}
        assert embed_server.requests[0]["body"]["model"] == "all-minilm"


def test_auto_picks_mistral_by_its_key_and_never_ollama(openclaw, monkeypatch):
    openclaw({})
    assert [c.name for c in plan(load_config()).candidates] == ["local", "openai", "gemini", "voyage", "mistral"]
    assert plan(load_config()).usable() == []
    monkeypatch.setenv("MISTRAL_API_KEY", "m-key-123456")
    (c,) = plan(load_config()).usable()
    assert (c.name, c.model, c.key_source) == ("mistral", "mistral-embed", "env MISTRAL_API_KEY")


# ----------------------------------------------------------------------------- key order and references


def key_of(name="openai"):
    (c,) = [c for c in plan(load_config()).candidates if c.name == name]
    return c


def test_key_order_is_openclaws(openclaw, monkeypatch):
    state = openclaw({"provider": "openai"}, models={"providers": {"openai": {"apiKey": "from-models-providers"}}})
    assert key_of().key_source == "openclaw.json models.providers.openai.apiKey"
    write(state / ".env", "# OpenClaw's global .env\nexport OPENAI_API_KEY='from-dotenv'\n")
    assert key_of().key_source == f"{state / '.env'} OPENAI_API_KEY"
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    assert key_of().key_source == "env OPENAI_API_KEY"
    openclaw({"provider": "openai", "remote": {"apiKey": "$MY_KEY"}}, models={"providers": {"openai": {"apiKey": "x"}}})
    monkeypatch.setenv("MY_KEY", "from-my-key")
    assert key_of().key_source == "openclaw.json agents.defaults.memorySearch.remote.apiKey -> env MY_KEY"
    # ollama: models.providers before the environment
    openclaw({"provider": "ollama"}, models={"providers": {"ollama": {"apiKey": "ollama-models-key"}}})
    monkeypatch.setenv("OLLAMA_API_KEY", "ollama-env-key")
    assert key_of("ollama").key_source == "openclaw.json models.providers.ollama.apiKey"


def test_gemini_key_named_like_its_variable(openclaw, monkeypatch):
    openclaw({"provider": "gemini", "remote": {"apiKey": "GOOGLE_API_KEY"}})
    monkeypatch.setenv("GOOGLE_API_KEY", "g-key-123456")
    assert key_of("gemini").key_source == "remote.apiKey -> env GOOGLE_API_KEY"


def test_unresolvable_references_say_why(openclaw, tmp_path):
    openclaw({"provider": "openai"}, models={"providers": {"openai": {"apiKey": {"source": "exec", "provider": "vault", "id": "openai/key"}}}})
    c = key_of()
    assert c.factory is None
    assert c.reason == ("openai: no API key (openclaw.json models.providers.openai.apiKey: SecretRef exec:vault runs a program, "
                        "which clawmem does not do; put the key in the provider's environment variable instead; "
                        "set remote.apiKey or OPENAI_API_KEY)")
    openclaw({"provider": "openai", "remote": {"apiKey": "${NOT_SET_ANYWHERE}"}})
    cfg = load_config()
    assert any("${NOT_SET_ANYWHERE} is not set" in w for w in cfg.warnings)
    assert key_of().factory is None
    single = write(tmp_path / "key.txt", "sk-from-a-file\n")
    openclaw({"provider": "openai"}, models={"providers": {"openai": {"apiKey": {"source": "file", "provider": "one", "id": "value"}}}},
             secrets={"providers": {"one": {"source": "file", "path": str(single), "mode": "singleValue"}}})
    c = key_of()
    assert c.factory is not None and c.key_source == f"openclaw.json models.providers.openai.apiKey -> file {single}"


def test_status_deep_names_key_source_never_the_key(embed_server, openclaw, monkeypatch):
    openclaw({"provider": "openai", "remote": {"baseUrl": embed_server.url + "/v1"}})
    monkeypatch.setenv("OPENAI_API_KEY", embed_server.api_key)
    out = run_cli("status", "--deep")
    assert out.returncode == 0, out.stderr
    assert "openai key from env OPENAI_API_KEY" in out.stdout
    assert embed_server.api_key not in out.stdout + out.stderr


# ----------------------------------------------------------------------------- nothing silently ignored


def test_settings_not_honoured_are_listed_with_what_happens_instead(openclaw):
    openclaw({"provider": "gemini", "outputDimensionality": 768, "store": {"fts": {"tokenizer": "trigram"}, "driver": "sqlite"},
              "multimodal": {"enabled": True, "modalities": ["image"]}, "remote": {"batch": {"enabled": True}},
              "sync": {"onSessionStart": True}},
             memory={"backend": "qmd", "qmd": {"paths": [{"path": "~/notes"}]}})
    out = run_cli("status", "--deep", "--json")
    notes = json.loads(out.stdout)["config"]["notHonoured"]
    expect = {
        "memory.backend = 'qmd'": "the QMD sidecar is not used",
        "memory.qmd": "the QMD sidecar is not used",
        "agents.defaults.memorySearch.store.fts.tokenizer": "unicode61",
        "agents.defaults.memorySearch.store.driver": "always uses SQLite",
        "agents.defaults.memorySearch.multimodal.enabled": "text only",
        "agents.defaults.memorySearch.multimodal.modalities": "text only",
        "agents.defaults.memorySearch.sync.onSessionStart": "session-start",
    }
    for key, instead in expect.items():
        (line,) = [n for n in notes if n.startswith(key + ":")]
        assert instead in line
    assert not any("outputDimensionality" in n or n.startswith("remote.batch") for n in notes)  # gemini honours both
    assert load_config()["outputDimensionality"] == 768
    text = run_cli("status", "--deep").stdout
    assert "not honoured: agents.defaults.memorySearch.store.fts.tokenizer: " in text


def test_output_dimensionality_with_another_provider_is_listed(openclaw):
    openclaw({"provider": "openai", "outputDimensionality": 512})
    notes = json.loads(run_cli("status", "--deep", "--json").stdout)["config"]["notHonoured"]
    assert "outputDimensionality = 512: only Gemini takes a vector size; openai vectors keep the model's own size" in notes


def test_batch_with_a_provider_without_a_batch_api_is_listed(openclaw):
    openclaw({"provider": "mistral", "remote": {"batch": {"enabled": True}}})
    st = json.loads(run_cli("status", "--deep", "--json").stdout)
    notes = st["config"]["notHonoured"]
    assert "batch" not in st["provider"]  # no "Batch: on" line for a provider that runs no jobs
    assert "remote.batch.enabled: clawmem runs batch jobs for openai, voyage and gemini; mistral embeds with normal requests" in notes


def test_enabled_false_disables_search_in_the_agent_tool_shape(openclaw, workspace):
    state = openclaw({"provider": "none"})
    eng = open_engine()
    list(eng.index())
    assert tools.memory_search(eng, "cat")["results"]  # on: it finds the note
    eng.close()
    openclaw({"provider": "none", "enabled": False})
    eng = open_engine()
    res = tools.memory_search(eng, "cat")
    eng.close()
    why = f"memory search is disabled (enabled = false in openclaw.json ({state / 'openclaw.json'})); set it to true to search"
    assert res == {"results": [], "disabled": True, "unavailable": True, "error": why, "warning": tools.DISABLED_WARNING,
                   "action": tools.DISABLED_ACTION, "debug": {"warning": tools.DISABLED_WARNING, "action": tools.DISABLED_ACTION, "error": why}}
    out = run_cli("search", "cat", "--json")
    assert out.returncode == 3
    assert json.loads(out.stdout) == res
    assert out.stderr.strip() == f"clawmem: {why}"
    st = json.loads(run_cli("status", "--json").stdout)
    assert st["enabled"] is False
    # our own file turns it back on (ours is above OpenClaw's)
    ours = write(workspace.parent / "c.toml", "enabled = true\n")
    assert run_cli("--config", str(ours), "search", "cat", "--json").returncode == 0


def test_a_port_with_429_in_it_is_not_a_quota_error():
    # the provider-down test flaked when the loopback server's port held "429"
    assert not tools._is_quota("openai: cannot reach http://127.0.0.1:42983/v1: [Errno 111] Connection refused")
    assert tools._is_quota("openai: 429 Rate limit reached (gave up after 4 attempts)")
    assert tools._is_quota("mistral: 400 insufficient_quota")


def test_models_providers_headers_take_secret_refs(embed_server, openclaw, monkeypatch):
    openclaw({"provider": "openai"}, models={"providers": {"openai": {
        "baseUrl": embed_server.url + "/v1", "apiKey": embed_server.api_key, "headers": {"X-Team": "mem", "X-Org-Token": "${ORG_TOKEN}"}}}})
    (c,) = [c for c in plan(load_config()).candidates if c.name == "openai"]
    assert c.factory is None and c.reason.startswith("openai: openclaw.json models.providers.openai.headers.X-Org-Token: ${ORG_TOKEN} is not set")
    monkeypatch.setenv("ORG_TOKEN", "org-secret-42")
    (c,) = [c for c in plan(load_config()).candidates if c.name == "openai"]
    c.factory().embed_query("x")
    h = embed_server.requests[-1]["headers"]
    assert (h["x-team"], h["x-org-token"]) == ("mem", "org-secret-42")
