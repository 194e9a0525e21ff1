"""`clawmem archive SESSION.jsonl`: memory/YYYY-MM-DD-slug.md as OpenClaw's session-memory hook
writes it (seed 003 §3.2), never overwriting, indexed at once."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from clawmem.engine.agent.archive import slugify
from helpers import run_cli, write


def message(role: str, text: str, ts: str | None = None) -> dict:
    entry = {"type": "message", "message": {"role": role, "content": [{"type": "text", "text": text}]}}
    if ts:
        entry["timestamp"] = ts
    return entry


def transcript(path: Path, *messages: dict, session_id: str | None = "sess-42") -> Path:
    lines = [{"type": "session", "version": 3, "id": session_id, "timestamp": "2026-03-04T08:00:00Z"}] if session_id else []
    return write(path, "".join(json.dumps(e) + "\n" for e in [*lines, *messages]))


def archive(ws: Path, *args: str):
    return run_cli("--workspace", str(ws), "archive", *args, "--json")


@pytest.mark.parametrize("text, slug", [
    ("Can you help me plan the vendor pitch for Friday?", "help-plan-vendor-pitch"),
    ("Café au lait: naïve RÉSUMÉ tips", "cafe-au-lait-naive"),
    ("Let's fix the deploy script", "fix-deploy-script"),
    ("What is it?", "what-is-it"),  # only filler words: they are used rather than nothing
    ("帮我整理一下上周的会议纪要", ""),  # no ASCII words: the caller falls back to HHMM
    ("部署 k8s 集群", "k8s"),
    ("", ""),
])
def test_slug_rules(text, slug):
    assert slugify(text) == slug


def test_archive_writes_the_summary_and_search_finds_it_at_once(workspace, tmp_path):
    write(workspace / "MEMORY.md", "# Memory\n")
    session = transcript(
        tmp_path / "sess.jsonl",
        message("user", "/new", "2026-03-04T09:00:00Z"),
        message("user", "Let's plan the quokka migration budget", "2026-03-04T09:01:00Z"),
        {"type": "message", "message": {"role": "toolResult", "content": "tool noise"}},
        message("assistant", "Budget draft saved; token OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwxyz", "2026-03-04T09:05:30Z"),
    )
    proc = archive(workspace, str(session))
    assert proc.returncode == 0, proc.stderr
    made = json.loads(proc.stdout)
    assert made["path"] == "memory/2026-03-04-plan-quokka-migration-budget.md"
    assert made["date"] == "2026-03-04" and made["messages"] == 2 and made["indexed"] is True
    text = (workspace / made["path"]).read_text(encoding="utf-8")
    assert text.startswith("# Session: 2026-03-04 09:05:30 UTC\n")
    assert f"- **Session file**: {session}" in text and "- **Session ID**: sess-42" in text
    assert "User: Let's plan the quokka migration budget\nAssistant: Budget draft saved" in text
    assert "sk-abcdefghijklmnopqrstuvwxyz" not in text and "/new" not in text and "tool noise" not in text
    assert oct((workspace / made["path"]).stat().st_mode & 0o777) == "0o600"
    # no `clawmem index` in between: the archive command indexed it
    res = json.loads(run_cli("--workspace", str(workspace), "search", "quokka", "--json").stdout)
    assert [r["path"] for r in res["results"]] == [made["path"]] and res["stale"] is False


def test_cjk_only_first_message_falls_back_to_the_time(workspace, tmp_path):
    session = transcript(tmp_path / "s.jsonl", message("user", "帮我整理一下上周的会议纪要", "2026-03-04T21:07:00Z"),
                         message("assistant", "好的", "2026-03-04T21:08:00Z"))
    made = json.loads(archive(workspace, str(session)).stdout)
    assert made["path"] == "memory/2026-03-04-2108.md"  # HHMM of the last message
    assert "User: 帮我整理一下上周的会议纪要" in (workspace / made["path"]).read_text(encoding="utf-8")


def test_no_timestamps_means_today_and_now(workspace, tmp_path):
    session = transcript(tmp_path / "s.jsonl", message("user", "otter facts"), session_id=None)
    before = dt.datetime.now()
    made = json.loads(archive(workspace, str(session)).stdout)
    assert made["path"] == f"memory/{before.date().isoformat()}-otter-facts.md"
    assert "- **Session ID**: unknown" in (workspace / made["path"]).read_text(encoding="utf-8")


def test_an_existing_file_is_never_overwritten(workspace, tmp_path):
    session = transcript(tmp_path / "s.jsonl", message("user", "vendor pitch", "2026-03-04T10:00:00Z"))
    mine = write(workspace / "memory" / "2026-03-04-vendor-pitch.md", "my own notes, keep them\n")
    paths = [json.loads(archive(workspace, str(session)).stdout)["path"] for _ in range(2)]
    assert paths == ["memory/2026-03-04-vendor-pitch-2.md", "memory/2026-03-04-vendor-pitch-3.md"]
    assert mine.read_text(encoding="utf-8") == "my own notes, keep them\n"
    assert not list((workspace / "memory").glob(".*.tmp"))  # no temporary files left behind


def test_slug_option(workspace, tmp_path):
    session = transcript(tmp_path / "s.jsonl", message("user", "whatever", "2026-03-04T10:00:00Z"))
    made = json.loads(archive(workspace, str(session), "--slug", "Q3 Planning!").stdout)
    assert made["path"] == "memory/2026-03-04-q3-planning.md"
    made = json.loads(archive(workspace, str(session), "--slug", "the plan").stdout)
    assert made["path"] == "memory/2026-03-04-the-plan.md"  # the user's own words are kept
    proc = archive(workspace, str(session), "--slug", "计划")
    assert proc.returncode == 2 and "--slug" in json.loads(proc.stdout)["error"]


def test_bad_input_is_one_line(workspace, tmp_path):
    cases = {
        "missing": (tmp_path / "nope.jsonl", "no such file"),
        "folder": (tmp_path, "is a folder"),
        "not jsonl": (write(tmp_path / "notes.jsonl", "just some text\nnot json at all\n"), "not a JSONL session transcript"),
        "no messages": (transcript(tmp_path / "empty.jsonl", {"type": "custom", "data": 1}), "no user or assistant messages"),
    }
    for name, (path, why) in cases.items():
        proc = archive(workspace, str(path))
        assert proc.returncode == 2, name
        err = json.loads(proc.stdout)
        assert why in err["error"] and err["exitCode"] == 2, name
        assert proc.stderr.strip() == err["error"] and "Traceback" not in proc.stderr
    assert list((workspace / "memory").iterdir()) == []
