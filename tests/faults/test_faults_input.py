"""Fault suite, bad input: each is one line naming the file, key or value, with the right exit
code (2: usage or config), never a traceback; a bad tool call gets a proper error reply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from faultkit import one_line_error, run
from helpers import write
from mcpwire import exchange, request


def with_config(tmp_path: Path, data: bytes, *args: str):
    path = tmp_path / "clawmem.toml"
    path.write_bytes(data)
    return run(*args, env={"CLAWMEM_CONFIG": str(path)})


@pytest.mark.parametrize("name,data,words", [
    ("nul-in-workspace", b'workspace = "/tmp/a\\u0000b"\n', "workspace: holds a NUL character"),
    ("not-utf8", b'provider = "n\xff\xfe"\n', "not UTF-8 (byte 13)"),
    ("deep-array", b"x = " + b"[" * 2000 + b"]" * 2000 + b"\n", "nested too deeply"),
])
def test_a_bad_config_is_one_line_and_exit_2(tmp_path, name, data, words):
    for args in (("status",), ("search", "tea"), ("index",)):
        res = with_config(tmp_path, data, *args)
        assert res.returncode == 2, (name, args, res.returncode, res.stderr[-300:])
        line = one_line_error(res)
        assert words in line and "clawmem.toml" in line, line


def test_a_lone_surrogate_in_a_stdio_tool_call_gets_an_error_reply(workspace):
    """`"a\\ud800b"` in a tool call's arguments once got no reply at all: the agent waited forever."""
    bad = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_append","arguments":{"text":"a\\ud800b"}}}'
    fine = request(2, "tools/call", {"name": "memory_search", "arguments": {"query": "tea"}})
    replies = exchange(workspace, [bad, fine])
    assert {1, 2} <= replies.keys(), replies
    assert replies[1]["error"]["code"] == -32602
    assert "arguments.text holds a lone UTF-16 surrogate" in replies[1]["error"]["message"]
    assert "result" in replies[2]  # the server goes on serving
    assert not list((workspace / "memory").iterdir())  # nothing was written


def test_a_missing_workspace_is_an_error(tmp_path):
    for args in (("status",), ("index",), ("search", "tea"), ("context",)):
        res = run("--workspace", str(tmp_path / "nowhere"), *args)
        assert res.returncode == 2, (args, res.stdout, res.stderr)
        assert f"no workspace at {tmp_path / 'nowhere'}" in one_line_error(res)


def test_a_workspace_that_is_a_file_is_an_error(tmp_path):
    f = write(tmp_path / "MEMORY.md", "# not a folder\n")
    for args in (("status",), ("index",)):
        res = run("--workspace", str(f), *args)
        assert res.returncode == 2 and "is a file, not a workspace folder" in one_line_error(res)
    assert f.read_text() == "# not a folder\n"


def test_an_empty_workspace_is_fine_and_says_so(tmp_path):
    ws = tmp_path / "empty"
    ws.mkdir()
    res = run("--workspace", str(ws), "status")
    assert res.returncode == 0, res.stderr
    assert "empty: no MEMORY.md and no memory/*.md yet" in res.stdout
    assert json.loads(run("--workspace", str(ws), "status", "--json").stdout)["workspaceEmpty"] is True
