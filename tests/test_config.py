"""Configuration (SPEC §9): our TOML file, OpenClaw's openclaw.json as defaults, env and flags."""

import json

import pytest

from clawmem.engine import config
from clawmem.engine.config import ConfigError
from helpers import write


def test_defaults_without_any_file(tmp_path):
    cfg = config.load()
    assert cfg["query.maxResults"] == 6 and cfg["query.minScore"] == 0.35
    assert cfg["chunking.tokens"] == 400 and cfg["sync.watchDebounceMs"] == 1500
    assert cfg.sources["provider"] == "default"
    assert str(cfg.workspace).endswith(".openclaw/workspace")


def test_our_file_with_openclaw_names_and_ui_table(tmp_path):
    f = write(tmp_path / "c.toml", """
# my settings
workspace = "~/notes"
provider = "openai"
fallback = ["local"]
[remote]
baseUrl = "http://127.0.0.1:8080/v1"
apiKey = "sk-secret-value-123456"
[query.hybrid.temporalDecay]
enabled = true
[ui]
theme = "clawmem-light"
""")
    cfg = config.load(f)
    assert cfg["provider"] == "openai" and cfg["fallback"] == ["local"]
    assert cfg["query.hybrid.temporalDecay.enabled"] is True
    assert cfg.ui == {"theme": "clawmem-light"}
    assert cfg.sources["remote.baseUrl"].startswith("file")
    assert cfg.masked("remote.apiKey") == "sk-…56"
    assert "sk-secret" not in json.dumps([v for _, v, _ in cfg.effective()])


@pytest.mark.parametrize(
    "text, needle",
    [
        ("maxResult = 3", "unknown key 'maxResult'"),
        ("[query]\nmaxResults = 'six'", "query.maxResults: expected an integer from 1 to 200"),
        ("[query]\nminScore = 2", "query.minScore: expected a number from 0 to 1"),
        ("provider = 'cohere'", "provider: expected one of"),
        ("[query.hybrid]\nfusion = 'max'", "query.hybrid.fusion"),
        ("sources = ['memory', 'web']", "sources"),
        ("[chunking]\ntokens = 10", "chunking.tokens"),
        ("this is not toml", "not valid TOML"),
    ],
)
def test_bad_values_are_one_line_errors_naming_the_key(tmp_path, text, needle):
    f = write(tmp_path / "c.toml", text)
    with pytest.raises(ConfigError) as exc:
        config.load(f)
    msg = str(exc.value)
    assert needle in msg and "\n" not in msg and str(f) in msg


def test_unknown_key_suggests_the_right_one(tmp_path):
    f = write(tmp_path / "c.toml", "[query]\nmaxresults = 3\n")
    with pytest.raises(ConfigError, match="did you mean 'query.maxResults'"):
        config.load(f)


def test_missing_config_flag_file(tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        config.load(tmp_path / "nope.toml")


def test_precedence_openclaw_file_env_flag(tmp_path, monkeypatch):
    state = tmp_path / "oc"
    write(state / "openclaw.json", """{
  // JSON5: comments and trailing commas
  agents: {defaults: {workspace: "/oc/ws", memorySearch: {provider: "gemini", query: {maxResults: 9},
           store: {path: "/oc/index.sqlite"}, experimental: {sessionMemory: true}, sources: ["memory", "sessions"],
           someFutureKey: 1, remote: {batch: {enabled: true}}}}},
  memory: {search: {query: {minScore: 0.2}}, citations: "off"},
}""")
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(state))
    cfg = config.load()
    assert cfg["workspace"] == "/oc/ws" and cfg.sources["workspace"].startswith("openclaw")
    assert cfg["provider"] == "gemini" and cfg["query.maxResults"] == 9 and cfg["query.minScore"] == 0.2
    assert cfg["sources"] == ["memory", "sessions"] and cfg["citations"] == "off"
    assert cfg["store.path"] == ""  # never adopted
    ignored = " ".join(cfg.openclaw_ignored)
    assert "store.path" in ignored and "someFutureKey" in ignored
    assert cfg["remote.batch.enabled"] is True and "remote.batch" not in ignored  # honoured (openai's batch API)

    ours = write(tmp_path / "c.toml", "[query]\nmaxResults = 4\n")
    monkeypatch.setenv("CLAWMEM_CONFIG", str(ours))
    monkeypatch.setenv("CLAWMEM_WORKSPACE", "/env/ws")
    cfg = config.load()
    assert cfg["query.maxResults"] == 4 and cfg["workspace"] == "/env/ws" and cfg.sources["workspace"] == "env (CLAWMEM_WORKSPACE)"
    cfg = config.load(workspace="/flag/ws", overrides={"query.maxResults": 2})
    assert cfg["workspace"] == "/flag/ws" and cfg["query.maxResults"] == 2 and cfg.sources["query.maxResults"] == "flag"


def test_openclaw_sessions_need_the_experimental_flag(tmp_path, monkeypatch):
    write(tmp_path / "openclaw.json", '{memory: {search: {sources: ["memory", "sessions"]}}}')
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(tmp_path))
    assert config.load()["sources"] == ["memory"]


def test_broken_openclaw_file_is_a_warning_not_an_error(tmp_path, monkeypatch):
    write(tmp_path / "openclaw.json", "{ this is : not json5 ")
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(tmp_path))
    cfg = config.load()
    assert cfg.warnings and "openclaw.json" in cfg.warnings[0]


def test_openclaw_secret_refs(tmp_path, monkeypatch):
    write(tmp_path / "openclaw.json", '{memory: {search: {provider: "openai", remote: {apiKey: {source: "env", id: "MY_KEY"}}}}}')
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(tmp_path))
    cfg = config.load()
    assert cfg["remote.apiKey"] == "" and "MY_KEY" in cfg.warnings[0]
    monkeypatch.setenv("MY_KEY", "sk-from-env")
    assert config.load()["remote.apiKey"] == "sk-from-env"


def test_write_value_keeps_comments_and_validates(tmp_path):
    f = write(tmp_path / "c.toml", "# keep me\nprovider = \"none\"  # inline\n\n[ui]\ntheme = \"x\"\n")
    config.write_value(f, "query.maxResults", config.parse_text_value("query.maxResults", "8"))
    config.write_value(f, "query.hybrid.fusion", "weighted")
    text = f.read_text()
    assert "# keep me" in text and "# inline" in text and 'theme = "x"' in text
    cfg = config.load(f)
    assert cfg["query.maxResults"] == 8 and cfg["query.hybrid.fusion"] == "weighted"
    before = f.read_text()
    with pytest.raises(ValueError):
        config.write_value(f, "query.minScore", 7)
    assert f.read_text() == before


def test_parse_text_value():
    assert config.parse_text_value("extraPaths", "~/a, ~/b") == ["~/a", "~/b"]
    assert config.parse_text_value("fallback", "local") == ["local"]
    assert config.parse_text_value("sync.watch", "false") is False
    assert config.parse_text_value("workspace", "~/x y") == "~/x y"
    with pytest.raises(ValueError):
        config.parse_text_value("query.minScore", "lots")


@pytest.mark.parametrize("kind", ["config", "data", "cache", "state"])
@pytest.mark.parametrize("xdg", [None, "", "  ", "custom"])
def test_our_folders_are_where_platformdirs_puts_them(kind, xdg, tmp_path, monkeypatch):
    """engine.paths reads the XDG variables itself (platformdirs cost every search 5 ms of
    imports); it must name the same folders platformdirs does, set, unset, empty or blank."""
    import platformdirs

    from clawmem.engine import paths

    var = {"config": "XDG_CONFIG_HOME", "data": "XDG_DATA_HOME", "cache": "XDG_CACHE_HOME", "state": "XDG_STATE_HOME"}[kind]
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    if xdg is None:
        monkeypatch.delenv(var, raising=False)
    else:
        monkeypatch.setenv(var, str(tmp_path / xdg) if xdg == "custom" else xdg)
    ours = getattr(paths, f"{kind}_dir")()
    assert ours == getattr(platformdirs, f"user_{kind}_path")("clawmem")
    assert ours.is_relative_to(tmp_path)
