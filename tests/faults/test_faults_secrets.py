"""An API key, from the config, the environment or echoed back in a provider's error message,
never appears in `status`, `status --json`, `status --deep`, the log file, an error line or the
app's screens (issue 9, fault suite)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from faultkit import run
from helpers import write

sys.path.insert(0, str(Path(__file__).parents[1] / "tui"))  # tuikit: the app's own test helpers

CONFIG_KEY = "sk-cfgSECRET-0123456789abcdef"
ENV_KEY = "sk-envSECRET-fedcba9876543210"
HEADER_KEY = "hdrSECRET-55aa55aa55aa"
SECRETS = (CONFIG_KEY, ENV_KEY, HEADER_KEY, "cfgSECRET", "envSECRET", "hdrSECRET")


def leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def notes(ws: Path) -> None:
    for i in range(5):
        write(ws / "memory" / f"2026-02-0{i + 1}.md", f"- the ferry timetable changed, day {i}\n")


def everything_said(ws: Path, cfg: Path, tmp_path: Path, env: dict) -> str:
    """All a user can see from the command line, and the log file."""
    out = []
    for args in (("index",), ("status",), ("status", "--json"), ("status", "--deep"), ("status", "--deep", "--json"),
                 ("search", "ferry"), ("search", "ferry", "--json"), ("watch", "--once")):
        res = run("--workspace", str(ws), "--config", str(cfg), *args, env=env, timeout=120)
        assert "Traceback" not in res.stderr, res.stderr
        out += [res.stdout, res.stderr]
    st = json.loads(run("--workspace", str(ws), "--config", str(cfg), "status", "--json", env=env).stdout)
    log = Path(st["log"])
    assert log.exists()
    out.append(log.read_text())
    return "\n".join(out)


def test_keys_never_shown_on_the_command_line_or_in_the_log(workspace, tmp_path, embed_server):
    notes(workspace)
    # the server rejects both keys and, like OpenAI, echoes the key it got in its error message
    cfg = write(tmp_path / "clawmem.toml", (
        f'provider = "openai"\n[remote]\nbaseUrl = "{embed_server.url}/v1"\napiKey = "{CONFIG_KEY}"\n'
        f'timeoutSeconds = 2.0\n[remote.headers]\nX-Api-Key = "{HEADER_KEY}"\n[sync]\nonSearch = false\n'))
    said = everything_said(workspace, cfg, tmp_path, {"OPENAI_API_KEY": ENV_KEY})  # set, but the config's key wins
    assert embed_server.embedding_requests(), "the provider was never asked"
    assert "401" in said  # the failure itself is shown
    assert leaks(said) == []


def test_keys_from_the_environment_under_auto(workspace, tmp_path, embed_server):
    notes(workspace)
    embed_server.always = 400  # not retried: the test stays fast
    embed_server.echo_key = True  # the error text repeats the key
    cfg = write(tmp_path / "clawmem.toml", f'[remote]\nbaseUrl = "{embed_server.url}/v1"\ntimeoutSeconds = 2.0\n[sync]\nonSearch = false\n')
    said = everything_said(workspace, cfg, tmp_path, {"OPENAI_API_KEY": ENV_KEY})
    assert "400 bad request" in said
    assert leaks(said) == []


async def test_keys_never_shown_in_the_app(workspace, tmp_path, embed_server):
    from clawmem.engine import Engine, load_config
    from clawmem.tui.app import ClawmemApp
    from tuikit import settle, ui_settings

    notes(workspace)
    cfg_file = write(tmp_path / "clawmem.toml", (
        f'provider = "openai"\n[remote]\nbaseUrl = "{embed_server.url}/v1"\napiKey = "{CONFIG_KEY}"\ntimeoutSeconds = 2.0\n'
        f'[remote.headers]\nX-Api-Key = "{HEADER_KEY}"\n'))
    load_args = {"config_path": str(cfg_file), "workspace": str(workspace)}
    engine = Engine(load_config(**load_args), persistent=True)
    app = ClawmemApp(engine, settings=ui_settings(watch=True), load_args=load_args)
    screens = []
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot, rounds=4)
        for key in ("f4", "f5", "f2"):  # Sync (the indexing log, provider errors), Config, Search
            await pilot.press(key)
            await settle(pilot)
            screens.append(app.export_screenshot())
        await pilot.press("f2")
        await pilot.press(*"ferry")
        await settle(pilot)
        screens.append(app.export_screenshot())
    engine.close()
    assert embed_server.embedding_requests(), "the app never asked the provider"
    text = "\n".join(screens)
    assert "401" in text  # the failure is on screen, the key is not
    assert leaks(text) == []


# ----------------------------------------------------------------------------- credentials in a base URL

URL_USER, URL_PASSWORD, URL_QUERY_KEY = "urlUSER", "urlPASSWORD-77aa", "urlQUERYKEY-99bb"


def url_leaks(text: str) -> list[str]:
    return [s for s in (URL_USER, URL_PASSWORD, URL_QUERY_KEY) if s in text]


def index_bytes(ws: Path, cfg: Path) -> str:
    """Everything the index's files hold (its meta, its models table), as text."""
    st = json.loads(run("--workspace", str(ws), "--config", str(cfg), "status", "--json").stdout)
    index = Path(st["index"]["path"])
    return "\n".join(p.read_bytes().decode("latin-1") for p in index.parent.glob(index.name + "*") if p.is_file())


def url_config(tmp_path: Path, base_url: str, api_key: str) -> Path:
    return write(tmp_path / "clawmem.toml", (
        f'provider = "openai"\nfallback = []\n[remote]\nbaseUrl = "{base_url}"\napiKey = "{api_key}"\ntimeoutSeconds = 2.0\n'
        f'[sync]\nonSearch = false\n'))


def test_credentials_in_a_base_url_never_shown(workspace, tmp_path, embed_server):
    """`user:pass@` and `?key=` in remote.baseUrl: not in any message, the log or the index."""
    notes(workspace)
    host = embed_server.url.removeprefix("http://")
    # a server that answers: the index is built and its meta records the endpoint
    cfg = url_config(tmp_path, f"http://{URL_USER}:{URL_PASSWORD}@{host}/v1?key={URL_QUERY_KEY}", embed_server.api_key)
    said = everything_said(workspace, cfg, tmp_path, {})
    assert embed_server.embedding_requests(), "the provider was never asked"
    said += run("--workspace", str(workspace), "--config", str(cfg), "status", "--deep").stdout
    assert url_leaks(said) == [] and url_leaks(index_bytes(workspace, cfg)) == []
    # a server that is gone: the errors quote the address
    port = embed_server.url.rsplit(":", 1)[1]
    embed_server.close()
    gone = url_config(tmp_path, f"http://{URL_USER}:{URL_PASSWORD}@127.0.0.1:{port}/v1?key={URL_QUERY_KEY}", embed_server.api_key)
    write(workspace / "memory" / "2026-02-09.md", "- a new note about the ferry\n")
    said = everything_said(workspace, gone, tmp_path, {})
    assert "cannot reach" in said or "127.0.0.1" in said  # the failure is shown, the credentials are not
    assert url_leaks(said) == []


# ----------------------------------------------------------------------------- transcript redaction

TRANSCRIPT_SECRETS = {
    "AWS Access Key": "AKIAIOSFODNN7QWERTY12",
    "Stripe": "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "Hugging Face": "hf_" + "Qx7Lm2Np9Rs4Tv6Wy8Zb1Cd3Fg5Hj0Kk",
    "GitLab": "glpat-" + "x8Yz2Ab4Cd6Ef8Gh0Ij2",
    "JWT": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VyNDIiLCJyb2xlIjoiYWRtaW4ifQ.s9Vx3kQ7pL2mN8rT4wY6zB1cD5fG0hJ",
    "database password": "Pa55w0rd-db-7731",
}


def test_transcripts_are_redacted_with_the_maintained_patterns_and_the_configured_key(workspace, tmp_path, monkeypatch, embed_server):
    state = tmp_path / "openclaw"
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(state))
    s = TRANSCRIPT_SECRETS
    said_in_chat = (f"aws {s['AWS Access Key']} stripe {s['Stripe']} hf {s['Hugging Face']} gitlab {s['GitLab']} "
                    f"jwt {s['JWT']} db postgres://app:{s['database password']}@db.internal:5432/prod "
                    f"and my openai key is {CONFIG_KEY} for the harbour project")
    write(state / "agents" / "main" / "sessions" / "chat.jsonl",
          json.dumps({"type": "message", "message": {"role": "user", "content": said_in_chat}}) + "\n")
    embed_server.api_key = CONFIG_KEY
    cfg = write(tmp_path / "clawmem.toml", (
        f'provider = "openai"\nsources = ["memory", "sessions"]\n[remote]\nbaseUrl = "{embed_server.url}/v1"\n'
        f'apiKey = "{CONFIG_KEY}"\ntimeoutSeconds = 5.0\n[sync]\nonSearch = false\n'))
    base = ("--workspace", str(workspace), "--config", str(cfg))
    assert run(*base, "index").returncode == 0
    hit = json.loads(run(*base, "search", "harbour project", "--json").stdout)["results"]
    assert hit and hit[0]["path"] == "sessions/chat.jsonl"
    shown = run(*base, "get", "sessions/chat.jsonl").stdout + json.dumps(hit)
    stored = index_bytes(workspace, cfg)
    sent = json.dumps([r.get("body") for r in embed_server.requests])  # what the provider was sent
    for kind, secret in [*s.items(), ("configured key", CONFIG_KEY)]:
        for where, text in (("shown", shown), ("index", stored), ("embeddings requests", sent)):
            assert secret not in text, f"{kind} in the {where}"
    assert "harbour project" in shown  # the rest of the message is kept
    masks = re.findall(r"\[([^\]…]+?)(?: …([^\]]*))?\]", shown)
    assert len(masks) >= 7, shown
    assert all(len(tail) <= 4 for _, tail in masks)  # the kind, and at most the last 4 characters
