"""Secrets kept out of memory by one policy: the families redaction missed (Azure connection
strings and SAS signatures, .netrc, curl -u / --user, Authorization: Basic, mysql -pSECRET,
docker login -p, Twilio auth tokens, an AWS secret key or a password said in prose), each on a
sample in its real format (tests/secret_samples.py); and the agents' write tools
(memory_append, memory_remember), which wrote what they were given verbatim into files that are
indexed, searched and pushed to the fleet, masking as transcripts are masked, on the same samples."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

import pytest
from faultkit import run

from helpers import write

sys.path.insert(0, str(Path(__file__).parents[1]))
from secret_samples import PROSE, SAMPLES  # noqa: E402

IDS = [family for family, _, _ in SAMPLES]


@pytest.mark.parametrize("family,text,secret", SAMPLES, ids=IDS)
def test_redaction_masks_each_family_in_its_real_format(family, text, secret):
    from clawmem.engine.redaction import redact

    out = redact(text)
    assert secret not in out, out
    assert out.count("[") > text.count("["), out  # masked where it was, with its kind
    # only the secret goes: the words around it stay
    words = [w for w in text.replace(secret, " ").split() if len(w) > 3 and w.isalpha()]
    assert all(w in out for w in words), out


@pytest.mark.parametrize("prose", PROSE)
def test_prose_about_secrets_is_left_as_written(prose):
    from clawmem.engine.redaction import redact

    assert redact(prose) == prose


def test_transcripts_and_archive_mask_every_family(workspace, tmp_path):
    """A session transcript holding every sample: not in the index, not in search, not in the
    memory file `archive` writes (which the default `share` pushes to the fleet)."""
    state = tmp_path / "openclaw"
    said = "\n".join(text for _, text, _ in SAMPLES) + "\nthe harbour project runbook"
    transcript = write(state / "agents" / "main" / "sessions" / "chat.jsonl",
                       json.dumps({"type": "message", "message": {"role": "user", "content": said}}) + "\n")
    cfg = write(tmp_path / "clawmem.toml", 'sources = ["memory", "sessions"]\n[sync]\nonSearch = false\n')
    env = {"OPENCLAW_STATE_DIR": str(state)}
    base = ("--workspace", str(workspace), "--config", str(cfg))
    assert run(*base, "index", env=env).returncode == 0
    shown = run(*base, "get", "sessions/chat.jsonl", env=env).stdout
    res = run(*base, "archive", str(transcript), "--slug", "harbour", env=env)
    assert res.returncode == 0, res.stderr
    archived = "".join(p.read_text() for p in (workspace / "memory").glob("*harbour*.md"))
    assert "harbour project" in shown and "harbour project" in archived
    for family, _, secret in SAMPLES:
        assert secret not in shown, f"{family} shown"
        assert secret not in archived, f"{family} archived"


@pytest.mark.parametrize("family,text,secret", SAMPLES, ids=IDS)
def test_memory_append_masks_what_transcripts_mask(workspace, make_engine, family, text, secret):
    """An AWS key (or any sample) written through memory_append never lands in the daily log,
    is not searchable, and the reply says what was masked."""
    eng = make_engine()
    got = eng.append(f"deploy notes for the harbour project: {text}", heading="creds AKIAQ3EGUTOEXAMPLE77")
    assert "error" not in got, got
    log = (workspace / got["path"]).read_text()
    assert secret not in log and "harbour project" in log
    assert "AKIAQ3EGUTOEXAMPLE77" not in log and "## " in log  # the heading is masked too
    assert got["redacted"] and "masked" in got["notice"]
    hits = eng.tools.search(secret[:24])["results"]
    assert not any(secret in h["snippet"] for h in hits)
    eng.close()


@pytest.mark.parametrize("family,text,secret", SAMPLES, ids=IDS)
def test_memory_remember_masks_what_transcripts_mask(workspace, make_engine, family, text, secret):
    eng = make_engine()
    got = eng.remember(f"harbour project: {text}", section="Ops")
    eng.close()
    assert "error" not in got, got
    assert secret not in (workspace / "MEMORY.md").read_text()
    assert got["redacted"]


def test_a_write_without_a_secret_is_written_exactly_and_says_nothing_of_masking(workspace, make_engine):
    eng = make_engine()
    text = "the pg password is rotated every 90 days; the AWS region is eu-west-1"
    got = eng.append(text, now=dt.datetime(2026, 11, 28, 9, 30))
    eng.close()
    assert text in (workspace / got["path"]).read_text()
    assert "redacted" not in got and "notice" not in got


@pytest.mark.slow
def test_a_key_an_agent_wrote_is_not_pushed_to_the_fleet(db, make_engine, workspace, uid):
    """Issue 47: an AWS key written through memory_append was found by another agent's
    `search --fleet` after a push; so was a team note. Neither holds it now."""
    import psycopg

    from clawmem.engine.fleet import client as fleet
    from secret_samples import AWS_SECRET

    key = "AKIAQ3EGUTOEXAMPLE77"
    name = f"w{uid}"
    granted = fleet.grant(db, name, [])
    eng = make_engine({"agentId": name, "fleet.url": granted["url"], "fleet.host": "host-w", "provider": "none"})
    got = eng.append(f"harbour deploy user: aws id {key}, the AWS secret key is {AWS_SECRET}")
    team = eng.remember(f"harbour deploy: aws id {key}", "Ops", scope="team")
    assert "error" not in got and "error" not in team, (got, team)
    fleet.push(eng)
    with psycopg.connect(db) as conn:
        stored = json.dumps(conn.execute("select text from clawmem_chunks").fetchall()
                            + conn.execute("select text from clawmem_notes").fetchall())
    eng.close()
    assert "harbour deploy" in stored
    assert key not in stored and AWS_SECRET not in stored
    assert got["redacted"] and team["redacted"]  # and each reply says so
