"""Session-start context (`clawmem context`, engine/agent/context.py): MEMORY.md for main sessions,
today's and yesterday's logs, OpenClaw's caps, and truncation said out loud."""

import datetime as dt
import json

from clawmem.engine.agent.context import session_context
from helpers import run_cli, write

TODAY = dt.date(2026, 3, 4)


def logs(ws, today_text="# today\nheron\n", yesterday_text="# yesterday\negret\n"):
    write(ws / "memory" / f"{TODAY}.md", today_text)
    write(ws / "memory" / f"{TODAY - dt.timedelta(days=1)}.md", yesterday_text)


def test_main_session_loads_memory_and_two_logs(workspace, make_engine):
    write(workspace / "MEMORY.md", "# Memory\n- cat: Miso\n")
    logs(workspace)
    write(workspace / "memory" / "2026-03-01.md", "older, not loaded\n")
    ctx = session_context(make_engine(), today=TODAY)
    assert [f["path"] for f in ctx["files"]] == ["MEMORY.md", "memory/2026-03-04.md", "memory/2026-03-03.md"]
    assert all(f["exists"] and not f["truncated"] and f["includedChars"] == f["chars"] for f in ctx["files"])
    text = ctx["text"]
    assert text.index("cat: Miso") < text.index("heron") < text.index("egret") and "older" not in text
    assert "Truncated" not in text and ctx["maxChars"] == 20000 and ctx["totalMaxChars"] == 60000


def test_group_session_leaves_memory_md_out_and_missing_files_are_listed(workspace, make_engine):
    write(workspace / "memory.md", "private fact\n")
    write(workspace / "memory" / f"{TODAY}.md", "today only\n")
    ctx = session_context(make_engine(), session="group", today=TODAY)
    assert [f["path"] for f in ctx["files"]] == ["memory/2026-03-04.md", "memory/2026-03-03.md"]
    assert ctx["files"][1]["exists"] is False and "private fact" not in ctx["text"]
    main = session_context(make_engine(), today=TODAY)
    assert main["files"][0]["path"] == "memory.md" and "private fact" in main["text"]


def test_truncation_keeps_head_and_tail_and_says_how_much(workspace, make_engine):
    body = "".join(f"line {i:04d} of the long memory file\n" for i in range(1000))  # 34000 chars
    write(workspace / "MEMORY.md", body)
    logs(workspace)
    ctx = session_context(make_engine(), max_chars=1000, today=TODAY)
    f = ctx["files"][0]
    assert f["truncated"] is True and f["chars"] == len(body) and f["lines"] == 1000
    assert f["includedChars"] <= 1000 and f["cutChars"] == len(body) - f["includedChars"]
    kept = [ln for ln in ctx["text"].splitlines() if ln.startswith("line ")]
    assert kept[0] == "line 0000 of the long memory file" and kept[-1] == "line 0999 of the long memory file"
    assert f["cutLines"] == 1000 - len(kept)
    marker = f"[… {f['cutChars']} of {len(body)} chars ({f['cutLines']} of 1000 lines) cut here"
    assert marker in ctx["text"] and 'memory_get("MEMORY.md")' in ctx["text"]
    assert f"> Truncated: MEMORY.md: {f['cutChars']} chars ({f['cutLines']} lines) left out." in ctx["text"]


def test_total_cap_and_caps_from_openclaw_json(workspace, make_engine, tmp_path, monkeypatch):
    state = tmp_path / "openclaw"
    write(state / "openclaw.json", '{agents: {defaults: {bootstrapMaxChars: 500, bootstrapTotalMaxChars: 700}}}')
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(state))
    write(workspace / "MEMORY.md", ("m" * 39 + "\n") * 20)
    logs(workspace, today_text="t" * 300 + "\n", yesterday_text="y" * 50 + "\n")
    ctx = session_context(make_engine(), today=TODAY)
    assert (ctx["maxChars"], ctx["totalMaxChars"]) == (500, 700) and ctx["capsFrom"].endswith("openclaw.json")
    mem, today, yesterday = ctx["files"]
    assert mem["truncated"] and mem["includedChars"] <= 500
    assert today["truncated"] and mem["includedChars"] + today["includedChars"] <= 700
    assert "remaining total" in today["reason"]
    assert yesterday["truncated"] and yesterday["includedChars"] < yesterday["chars"]
    assert ctx["includedChars"] == sum(f["includedChars"] for f in ctx["files"]) <= 700


def test_cli_text_and_json(workspace):
    write(workspace / "MEMORY.md", "# Memory\n- likes tea\n")
    r = run_cli("--workspace", str(workspace), "context")
    assert r.returncode == 0 and r.stdout.startswith("# Memory context (main session,") and "- likes tea" in r.stdout
    r = run_cli("--workspace", str(workspace), "context", "--json", "--session", "group", "--max-chars", "5000")
    data = json.loads(r.stdout)
    assert data["session"] == "group" and data["maxChars"] == 5000 and "likes tea" not in data["text"]
    r = run_cli("--workspace", str(workspace), "context", "--max-chars", "0")
    assert r.returncode == 2 and r.stderr.strip() == "clawmem: max-chars: expected an integer >= 1, got 0"


def test_files_past_the_total_cap_are_named_not_dropped(workspace, make_engine, tmp_path, monkeypatch):
    write(tmp_path / "oc" / "openclaw.json", '{"agents": {"defaults": {"bootstrapTotalMaxChars": 50}}}')
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(tmp_path / "oc"))
    write(workspace / "MEMORY.md", "a" * 49 + "\n")  # exactly the total cap
    logs(workspace)
    ctx = session_context(make_engine(), today=TODAY)
    mem, today, _ = ctx["files"]
    assert not mem["truncated"] and today["includedChars"] == 0 and "total cap (50 chars)" in today["reason"]
    assert f"[omitted: {today['chars']} chars, 2 lines; the total cap of 50 chars is used up." in ctx["text"]
