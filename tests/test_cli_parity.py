"""CLI parity with `openclaw memory` (study §11, issue 10 item 4): search --query, status --index,
--verbose, --all-agents, JSON errors on stdout; and `clawmem flush-prompt` (study §12)."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from pathlib import Path

from helpers import run_cli, write


def cli(ws: Path, *args: str, **kw):
    return run_cli("--workspace", str(ws), *args, **kw)


def index_path(ws: Path, *extra: str) -> Path:
    return Path(json.loads(cli(ws, *extra, "status", "--json").stdout)["index"]["path"])


def assert_json_error(proc, code: int, needle: str) -> None:
    """A failure given --json: the one line on stderr, the same line as JSON on stdout."""
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    err = json.loads(proc.stdout)
    assert err["exitCode"] == code and needle in err["error"]
    assert proc.stderr.strip().splitlines()[-1] == err["error"]
    assert "Traceback" not in proc.stderr


# ------------------------------------------------------------------------------ search --query


def test_search_query_option_wins_over_the_positional_one(workspace):
    write(workspace / "memory" / "2026-01-01.md", "the heron nests by the river\n")
    write(workspace / "memory" / "2026-01-02.md", "the otter swims at dusk\n")
    assert cli(workspace, "index").returncode == 0
    got = json.loads(cli(workspace, "search", "--query", "heron", "--json").stdout)
    assert [r["path"] for r in got["results"]] == ["memory/2026-01-01.md"]
    got = json.loads(cli(workspace, "search", "otter", "--query", "heron", "--json").stdout)
    assert [r["path"] for r in got["results"]] == ["memory/2026-01-01.md"]
    assert "memory/2026-01-02.md" in cli(workspace, "search", "otter").stdout


def test_search_without_a_query_is_a_usage_error(workspace):
    proc = cli(workspace, "search")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == "clawmem: Missing search query. Provide a positional query or use --query <text>."
    assert_json_error(cli(workspace, "search", "--query", "  ", "--json"), 2, "Missing search query")


# ------------------------------------------------------------------------------ --json errors


def test_json_errors_go_to_stdout_too(workspace, tmp_path):
    write(workspace / "MEMORY.md", "x\n")
    # configuration error
    assert_json_error(cli(workspace, "--config", str(tmp_path / "nope.toml"), "status", "--json"), 2, "config file not found")
    # usage error caught by the parser
    assert_json_error(cli(workspace, "search", "x", "--max-results", "many", "--json"), 2, "--max-results")
    # usage error after parsing
    assert_json_error(cli(workspace, "search", "x", "--min-score", "7", "--json"), 2, "min-score")
    # access denied
    assert_json_error(cli(workspace, "get", "../secrets.md", "--json"), 2, "refused")
    # index unavailable: the index path cannot be opened (a folder is in its place)
    idx = index_path(workspace)
    idx.mkdir(parents=True)
    assert_json_error(cli(workspace, "search", "x", "--json"), 3, str(idx))
    # without --json, stdout stays empty
    proc = cli(workspace, "search", "x")
    assert proc.returncode == 3 and proc.stdout == "" and str(idx) in proc.stderr


# ------------------------------------------------------------------------------ status --index


def test_status_index_indexes_first(workspace):
    write(workspace / "MEMORY.md", "kestrel facts\n")
    write(workspace / "memory" / "2026-02-01.md", "more kestrel facts\n")
    proc = cli(workspace, "status", "--index", "--json")
    assert proc.returncode == 0, proc.stderr
    st = json.loads(proc.stdout)
    assert st["index"]["files"] == 2 and st["freshness"]["dirty"] is False and "indexError" not in st


def test_status_index_exits_non_zero_when_the_index_fails(workspace):
    write(workspace / "MEMORY.md", "kestrel facts\n")
    assert cli(workspace, "index").returncode == 0
    write(workspace / "memory" / "2026-02-01.md", "a new day\n")
    # the writer lock cannot be taken (its path is a folder): indexing fails, reading still works
    lock = Path(str(index_path(workspace)) + ".lock")
    lock.unlink()
    lock.mkdir()
    proc = cli(workspace, "status", "--index", "--json")
    assert proc.returncode == 3
    st = json.loads(proc.stdout)
    assert "Is a directory" in st["indexError"] and st["freshness"]["dirty"] is True
    assert "index failed (main)" in proc.stderr and "Traceback" not in proc.stderr
    text = cli(workspace, "status", "--index")
    assert text.returncode == 3 and "Index error:" in text.stdout


# ------------------------------------------------------------------------------ --verbose


def test_verbose_status_and_index(workspace, tmp_path):
    extra = write(tmp_path / "notes" / "extra.md", "extra notes\n")
    write(tmp_path / "config.toml", f'extraPaths = ["{extra.parent}"]\n')
    write(workspace / "MEMORY.md", "top\n")
    write(workspace / "memory" / "2026-02-01.md", "day\n")
    cfg = ("--config", str(tmp_path / "config.toml"))
    proc = cli(workspace, *cfg, "index", "--verbose")
    assert proc.returncode == 0, proc.stderr
    head = proc.stderr.splitlines()
    assert head[0] == "Memory index (main)"
    assert any(line.startswith("Provider:") and "keyword-only" in line for line in head[:8])
    assert f"Extra paths: {extra.parent}" in head[:8] and "Sources:     memory" in head[:8]
    write(workspace / "memory" / "2026-02-02.md", "another day\n")  # on disk, not yet indexed
    st = json.loads(cli(workspace, *cfg, "status", "--verbose", "--json").stdout)
    assert st["scan"] == {"totalFiles": 4, "sources": [{"source": "memory", "totalFiles": 4}]}
    assert st["extraPaths"] == [str(extra.parent)]
    text = cli(workspace, *cfg, "status", "--verbose").stdout
    assert "memory · 3/4 files · 3 chunks" in text and f"Extra:     {extra.parent}" in text
    assert "memory · 3/4" not in cli(workspace, *cfg, "status").stdout


# ------------------------------------------------------------------------------ --all-agents


def test_all_agents_covers_openclaw_agents_and_indexed_ones(tmp_path):
    home = Path(tmp_path / "home")
    ws = {name: tmp_path / f"ws-{name}" for name in ("main", "work", "solo")}
    for name, path in ws.items():
        write(path / "memory" / "2026-03-01.md", f"{name} agent notes\n")
    write(home / ".openclaw" / "openclaw.json", json.dumps({"agents": {"list": [
        {"id": "main", "default": True, "workspace": str(ws["main"])},
        {"id": "work", "workspace": str(ws["work"])},
        {"id": "side"},  # not the default, no workspace: OpenClaw's <state dir>/workspace-side
    ]}}))
    # an agent known only by its index (the configured workspace applies to it, as for --agent solo)
    env = {"CLAWMEM_WORKSPACE": str(ws["solo"])}
    assert run_cli("--agent", "solo", "index", env=env).returncode == 0

    proc = run_cli("index", "--all-agents", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    done = json.loads(proc.stdout)
    assert [d["agentId"] for d in done] == ["main", "work", "side", "solo"]
    assert [d["files"] for d in done] == [1, 1, 0, 0]  # solo was indexed already

    proc = run_cli("status", "--all-agents", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    sts = json.loads(proc.stdout)
    assert isinstance(sts, list)
    assert {s["agentId"]: s["workspace"] for s in sts} == {
        "main": str(ws["main"]), "work": str(ws["work"]),
        "side": str(home / ".openclaw" / "workspace-side"), "solo": str(ws["solo"])}
    assert all(s["index"]["files"] == (0 if s["agentId"] == "side" else 1) for s in sts)
    assert len({s["index"]["path"] for s in sts}) == 4
    text = run_cli("status", "--all-agents", env=env).stdout
    assert text.count("Workspace: ") == 4 and f"{ws['work']}  (agent work)" in text

    assert_json_error(run_cli("status", "--all-agents", "--agent", "main", "--json", env=env), 2, "--all-agents")


def test_all_agents_reads_agent_and_workspace_from_the_index_meta(workspace):
    write(workspace / "MEMORY.md", "meta agent notes\n")
    assert cli(workspace, "--agent", "tmp", "index").returncode == 0
    src = index_path(workspace, "--agent", "tmp")
    # an index file whose name says nothing: the agent and workspace come from its meta record
    named = src.with_name("renamed-0123abcd.sqlite")
    src.rename(named)
    with sqlite3.connect(named) as conn:
        conn.executemany("insert or replace into meta(key, value) values (?, ?)",
                         [("agentId", "archivist"), ("workspace", str(workspace))])
    conn.close()
    sts = json.loads(run_cli("status", "--all-agents", "--json").stdout)
    assert [(s["agentId"], s["workspace"]) for s in sts] == [("archivist", str(workspace))]


def test_all_agents_reports_a_bad_agent_and_carries_on(tmp_path):
    good = tmp_path / "good"
    write(good / "MEMORY.md", "fine\n")
    write(tmp_path / "home" / ".openclaw" / "openclaw.json",
          json.dumps({"agents": {"list": [{"id": "good", "workspace": str(good)}, {"id": "bad id"}]}}))
    proc = run_cli("index", "--all-agents", "--json")
    assert proc.returncode == 3
    done = json.loads(proc.stdout)
    assert done[0]["agentId"] == "good" and done[0]["files"] == 1
    assert done[1]["agentId"] == "bad id" and done[1]["error"].startswith("agent id: ") and "'bad id'" in done[1]["error"]
    assert "index failed (bad id)" in proc.stderr and "Traceback" not in proc.stderr


# ------------------------------------------------------------------------------ flush-prompt

READ_ONLY = ("MEMORY.md", "DREAMS.md", "SOUL.md", "TOOLS.md", "AGENTS.md")


def test_flush_prompt_default_has_the_date_and_the_safety_rules(workspace):
    today = dt.date.today().isoformat()  # tests run with TZ=UTC, as does the child process
    proc = cli(workspace, "flush-prompt", "--json")
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    assert plan["date"] == today and plan["targetFile"] == f"memory/{today}.md" and plan["source"] == "default"
    for text in (plan["prompt"], plan["systemPrompt"]):
        assert f"memory/{today}.md" in text and "YYYY-MM-DD" not in text and "NO_REPLY" in text
        assert all(name in text for name in READ_ONLY)
        assert "append" in text.lower() or "add to its end" in text
        assert "timestamped" in text
    assert plan["prompt"].splitlines()[-1].startswith("Current time: ") and today in plan["prompt"].splitlines()[-1]
    text = cli(workspace, "flush-prompt", "--date", "2026-02-10").stdout
    assert "## System prompt" in text and "## Prompt" in text and "memory/2026-02-10.md" in text and today not in text.split("Current time:")[0]
    assert_json_error(cli(workspace, "flush-prompt", "--date", "10/02/2026", "--json"), 2, "--date")


def test_flush_prompt_uses_openclaw_custom_prompts_and_appends_missing_hints(workspace, tmp_path):
    write(tmp_path / "home" / ".openclaw" / "openclaw.json", """{
      agents: {
        defaults: {compaction: {memoryFlush: {
          prompt: "Write durable notes to memory/YYYY-MM-DD.md.",
          systemPrompt: "Compaction is near. Reply NO_REPLY when done.",
        }}},
        list: [{id: "work", compaction: {memoryFlush: {prompt: "Work notes go to memory/YYYY-MM-DD.md. Current time: see clock"}}}],
      },
    }""")
    plan = json.loads(cli(workspace, "flush-prompt", "--date", "2026-02-10", "--json").stdout)
    assert plan["prompt"].startswith("Write durable notes to memory/2026-02-10.md.\n\n")
    assert "agents.defaults.compaction.memoryFlush.prompt" in plan["source"]
    # the custom prompt said none of the safety rules: all are appended, with the date filled in
    assert all(name in plan["prompt"] for name in READ_ONLY) and "NO_REPLY" in plan["prompt"]
    assert "memory/2026-02-10-HHMM.md" in plan["prompt"] and "YYYY-MM-DD" not in plan["prompt"]
    assert plan["prompt"].rstrip().splitlines()[-1].startswith("Current time:")
    # the custom system prompt already says NO_REPLY: no second silent-reply hint
    assert plan["systemPrompt"].startswith("Compaction is near. Reply NO_REPLY when done.\n\n")
    assert plan["systemPrompt"].count("NO_REPLY") == 1
    # an agent's own memoryFlush wins; a prompt that has its own time line gets no second one
    work = json.loads(cli(workspace, "--agent", "work", "flush-prompt", "--date", "2026-02-10", "--json").stdout)
    assert work["prompt"].startswith("Work notes go to memory/2026-02-10.md.") and work["prompt"].count("Current time:") == 1


def test_flush_plan_date_in_the_openclaw_user_timezone(tmp_path):
    from clawmem.engine.agent.prompts import flush_plan

    noon_utc = dt.datetime(2026, 2, 10, 12, 0, tzinfo=dt.timezone.utc)
    assert flush_plan(now=noon_utc).date == "2026-02-10"
    write(tmp_path / "home" / ".openclaw" / "openclaw.json", '{agents: {defaults: {userTimezone: "Pacific/Kiritimati"}}}')
    plan = flush_plan(now=noon_utc)  # UTC+14: already the next day there
    assert plan.date == "2026-02-11" and "memory/2026-02-11.md" in plan.prompt and "02:00" in plan.current_time
    write(tmp_path / "home" / ".openclaw" / "openclaw.json", '{agents: {defaults: {userTimezone: "Mars/Olympus"}}}')
    plan = flush_plan(now=noon_utc)
    assert plan.date == "2026-02-10" and "Mars/Olympus" in plan.warnings[0]


def test_all_agents_with_a_broken_config_file_is_one_usage_error(tmp_path):
    write(tmp_path / "home" / ".openclaw" / "openclaw.json", json.dumps({"agents": {"list": [{"id": "a"}, {"id": "b"}]}}))
    bad = write(tmp_path / "bad.toml", "query = [unclosed\n")
    assert_json_error(run_cli("--config", str(bad), "status", "--all-agents", "--json"), 2, "not valid TOML")


def test_all_agents_lists_each_workspace_of_one_agent(tmp_path):
    """An agent id indexed in two workspaces has two indexes; --all-agents covers both."""
    spaces = [tmp_path / "ws-a", tmp_path / "ws-b"]
    for i, ws in enumerate(spaces):
        write(ws / "memory" / "2026-03-01.md", f"notes of workspace {i}\n")
        assert run_cli("--workspace", str(ws), "--agent", "twin", "index").returncode == 0
    sts = json.loads(run_cli("status", "--all-agents", "--json").stdout)
    assert sorted((s["agentId"], s["workspace"], s["index"]["files"]) for s in sts) == [
        ("twin", str(spaces[0]), 1), ("twin", str(spaces[1]), 1)]


def test_the_parser_loads_the_arguments_of_the_command_argv_names():
    """Only the named command's module loads; a global option's value that happens to be a
    command's name ("--agent search") is not taken for the command."""
    from clawmem.tui.cli.parser import build_parser

    args = build_parser(["--agent", "search", "status", "--deep"]).parse_args(["--agent", "search", "status", "--deep"])
    assert (args.command, args.agent, args.deep) == ("status", "search", True)
    args = build_parser(["--workspace=/w", "search", "herons", "--explain"]).parse_args(["--workspace=/w", "search", "herons", "--explain"])
    assert (args.command, args.query, args.explain) == ("search", ["herons"], True)


def test_the_lean_parser_builds_only_the_named_command_and_parses_as_the_whole_one():
    """A search builds one subparser, not all fifteen (~5 ms a search); what it parses, and what
    it refuses, is what the whole parser does: an abbreviated global option whose value looks
    like a command ("--ag search status") falls back to the whole parser, and `--help` before
    the command still lists every command."""
    import contextlib
    import io

    import pytest
    from clawmem.tui.cli.base import UsageError
    from clawmem.tui.cli.parser import build_parser, parse_args

    argv = ["--workspace", "/w", "search", "herons", "--explain", "--max-results", "3"]
    sub = next(a for a in build_parser(argv, lean=True)._actions if a.dest == "command")
    assert list(sub.choices) == ["search"]
    assert vars(parse_args(argv)) == vars(build_parser(argv).parse_args(argv))
    ag = parse_args(["--ag", "search", "status"])  # with status's own arguments (it was a traceback)
    assert (ag.command, ag.agent, ag.all_agents, ag.deep) == ("status", "search", False, False)
    for bad in (["search", "--max-results", "x", "q"], ["nosuch"], ["search", "q", "--bogus"]):
        with pytest.raises(UsageError) as lean:
            parse_args(bad)
        with pytest.raises(UsageError) as whole:
            build_parser(bad).parse_args(bad)
        assert str(lean.value) == str(whole.value)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        parse_args(["--help", "search"])
    assert "promote" in out.getvalue() and "fleet" in out.getvalue()


def test_a_search_runs_without_the_cyclic_gc_and_every_caller_gets_it_back(monkeypatch):
    """`clawmem search` and `get` (over in milliseconds) run with the cyclic GC paused (~5% of a
    search's CPU was it rescanning the modules just loaded); a long command (index, watch, the
    app, the servers) runs with it, and the caller's GC state is back when main returns, even
    after a usage error."""
    import gc

    import clawmem.tui.cli as cli
    from clawmem.tui.cli.base import Command

    seen = {}

    def fake(name):
        return Command(name, None, lambda args: seen.setdefault(name, gc.isenabled()) and 0 or 0)

    monkeypatch.setattr(cli, "command", fake)
    assert gc.isenabled()
    for argv in (["search", "herons"], ["get", "MEMORY.md"], ["index"], ["watch"], ["search", "--max-results", "x", "q"]):
        cli.main(argv)
        assert gc.isenabled(), argv
    assert seen == {"search": False, "get": False, "index": True, "watch": True}


# ------------------------------------------------------------------------------ issue 36: CLI defects


def test_restore_takes_the_version_as_history_prints_it(workspace):
    write(workspace / "MEMORY.md", "# Memory\n\n- first\n")
    assert cli(workspace, "index").returncode == 0
    write(workspace / "MEMORY.md", "# Memory\n\n- first\n- second\n")
    history = cli(workspace, "history", "MEMORY.md")
    first = history.stdout.split("(was v")[1].split(")")[0]  # "v2 … (was v1)": the version before
    done = cli(workspace, "restore", "MEMORY.md", "--to", f"v{first}")
    assert done.returncode == 0, done.stderr
    assert (workspace / "MEMORY.md").read_text() == "# Memory\n\n- first\n"
    assert "undo: clawmem restore MEMORY.md --to v" in done.stdout  # the hint uses the same form
    bad = cli(workspace, "restore", "MEMORY.md", "--to", "vx")
    assert bad.returncode == 2 and "--to" in bad.stderr and "v42" in bad.stderr and "Traceback" not in bad.stderr


def test_get_of_a_missing_file_is_an_error(workspace):
    write(workspace / "MEMORY.md", "# Memory\n")
    got = cli(workspace, "get", "memory/2031-01-01.md")
    assert got.returncode == 3 and got.stdout == ""
    assert got.stderr.strip().count("\n") == 0 and "memory/2031-01-01.md: no such memory file" in got.stderr
    # --json is memory_get's payload, which SPEC fixes: a missing allowed file is {path, text: ""}
    assert json.loads(cli(workspace, "get", "memory/2031-01-01.md", "--json").stdout) == {"path": "memory/2031-01-01.md", "text": ""}
    write(workspace / "memory" / "empty.md", "")
    assert cli(workspace, "get", "memory/empty.md").returncode == 0  # empty, but there


def test_get_lines_count_from_one(workspace):
    write(workspace / "MEMORY.md", "one\ntwo\nthree\n")
    assert cli(workspace, "get", "MEMORY.md", "--from", "2", "--lines", "2").stdout == "two\nthree\n"
    zero = cli(workspace, "get", "MEMORY.md", "--from", "0", "--lines", "2")
    assert zero.returncode == 2 and "--from" in zero.stderr and "count from 1" in zero.stderr and zero.stdout == ""
    assert cli(workspace, "get", "MEMORY.md", "--lines", "0").returncode == 2


def test_a_bad_agent_names_the_option_as_typed(workspace):
    got = cli(workspace, "--agent", "bad/agent", "status")
    assert got.returncode == 2 and got.stderr.startswith("clawmem: --agent: ") and "agentId" not in got.stderr


def test_nothing_shown_does_not_repeat_a_long_query(workspace):
    write(workspace / "memory" / "2026-01-01.md", "the heron nests by the river\n")
    assert cli(workspace, "index").returncode == 0
    query = " ".join(f"Zorblat{i}" for i in range(600))  # about 5,000 characters of names
    out = cli(workspace, "search", query).stdout
    assert max(len(ln) for ln in out.splitlines()) < 300, out[:500]
    # with a word the memory holds, the hits come back with a verdict that names a few of the names
    out = cli(workspace, "search", "heron " + query).stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("# probably not in this memory"))
    assert len(line) < 300 and "'zorblat0'" in line and "more" in line, line


def test_model_list_shows_the_local_model_in_use(workspace, tmp_path):
    model = tmp_path / "my-model.gguf"
    model.write_bytes(b"GGUF" + b"\0" * 2_000_000)
    config = tmp_path / "clawmem.toml"
    config.write_text(f'provider = "local"\n[local]\nmodelPath = "{model}"\n')
    out = cli(workspace, "--config", str(config), "model", "list").stdout
    assert f"{model}  2.0 MB  (configured: local.modelPath" in out and "No models" not in out
    # --json lists the same model, not an empty list
    listed = json.loads(cli(workspace, "--config", str(config), "model", "list", "--json").stdout)
    assert listed["models"] == [{"uri": str(model), "path": str(model), "bytes": 2_000_004, "complete": True, "localFile": True}]
    assert listed["configured"] == str(model)


def test_version_prints_the_installed_version():
    from importlib.metadata import version

    got = run_cli("--version")
    assert got.returncode == 0 and got.stdout == f"clawmem {version('clawmem')}\n" and got.stderr == ""
    assert "--version" in run_cli("--help").stdout


def test_get_of_a_file_the_system_will_not_let_us_read_exits_3(tmp_path):
    """An allowed path whose read fails is a failed operation (3), not a usage error (2). Root
    reads every file, so as root the command runs without the capabilities that allow it
    (still root, so it reaches a virtual environment under a private 0700 clone folder)."""
    import os
    import shutil
    import subprocess
    import sys

    import pytest

    ws = tmp_path / "ws"
    secret = write(ws / "memory" / "2026-01-01.md", "# 2026-01-01\n\nnot for you\n")
    secret.chmod(0)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "CLAWMEM_"))}
    env.update(HOME=str(tmp_path / "home"), **{f"XDG_{k}_HOME": str(tmp_path / "home" / k) for k in ("CONFIG", "DATA", "CACHE", "STATE")})
    prefix: list[str] = []
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("root reads every file, and setpriv (util-linux) is missing to drop that capability")
        prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-dac_override,-dac_read_search", "--"]
    got = subprocess.run([*prefix, sys.executable, "-m", "clawmem.tui", "--workspace", str(ws), "get", "memory/2026-01-01.md"],
                         env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert got.returncode == 3, got.stderr
    assert got.stderr.strip() == "clawmem: memory/2026-01-01.md: cannot read it (Permission denied); check its permissions"


def test_model_pull_blames_the_uri_typed(workspace):
    got = cli(workspace, "model", "pull", "hf:foo")
    assert got.returncode == 2 and got.stderr.startswith("clawmem: model pull: 'hf:foo' is not an hf: URI")
    assert "local.modelPath" not in got.stderr


def test_status_never_says_up_to_date_beside_a_failed_push(workspace):
    from clawmem.engine import Engine, load_config
    from clawmem.tui.present import format_status

    eng = Engine(load_config(None, workspace=str(workspace), overrides={"provider": "none"}))
    try:
        st = eng.status()
    finally:
        eng.close()
    st["fleet"] = {"behind": 0, "lastError": "cannot reach the fleet database at 127.0.0.1:5999", "url": "postgresql://…",
                   "host": "h", "publish": True, "lastPush": None}
    line = next(ln for ln in format_status(st).splitlines() if ln.startswith("Fleet:"))
    assert "up to date" not in line and "the last push failed: cannot reach the fleet database" in line


def test_an_index_stopped_after_its_last_step_finished(workspace, make_engine):
    """`clawmem watch` stopped (Ctrl-C) as a sync ends: the job did all its work, so it says
    "finished", not "stopped before the end". The stop is asked only after every check the
    job makes during a whole run (counted on an identical workspace first)."""
    from clawmem.engine import events as ev

    def fill(ws):
        for n in range(3):
            write(ws / "memory" / f"2026-01-0{n + 1}.md", f"note {n} about the heron\n")

    fill(workspace)
    calls = []
    list(make_engine().index(should_stop=lambda: calls.append(1) and False))
    other = workspace.parent / "ws2"
    (other / "memory").mkdir(parents=True)
    fill(other)
    seen = []

    def late_stop() -> bool:
        seen.append(1)
        return len(seen) > len(calls)  # asked only once the job has made every check of a whole run

    finished = [e for e in make_engine(ws=other).index(should_stop=late_stop) if isinstance(e, ev.JobFinished)][-1]
    assert finished.ok and "finished" in finished.describe() and "before the end" not in finished.describe()


def test_an_engine_error_no_command_caught_is_one_line_with_its_exit_code(monkeypatch, capsys):
    """The CLI's last guard: a ClawmemError a command let through prints `clawmem: <message>`
    (no traceback), exit 2 for a value the engine does not take (BadValue), 3 for any other."""
    from clawmem.engine import BadValue, IndexFailed
    from clawmem.tui import cli

    for error, code in ((BadValue("since: expected a date like 2026-02-10, got 'soon'"), 2),
                        (IndexFailed("/x/main.sqlite: disk full; check free space"), 3)):
        class Raises:
            def run(self, args):
                raise error

        monkeypatch.setattr(cli, "command", lambda name: Raises())
        assert cli.main(["status"]) == code
        out = capsys.readouterr()
        assert out.err.strip() == f"clawmem: {error}" and "Traceback" not in out.err
