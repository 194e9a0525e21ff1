"""An API key, from the config, the environment or echoed back in a provider's error message,
never appears in `status`, `status --json`, `status --deep`, the log file, an error line or the
app's screens (issue 9, fault suite)."""

from __future__ import annotations

import json
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
