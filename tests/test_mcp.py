"""`clawmem mcp` as a real process, driven by the MCP SDK's own client over stdio and over
streamable HTTP, against a real workspace: tools, resources, prompt, the error shapes, and
the HTTP bearer token."""

import datetime as dt
import json
import os
import socket
import subprocess
import sys
import time

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters

from helpers import run_cli, wait_for, write

TODAY = dt.date.today()
YESTERDAY = TODAY - dt.timedelta(days=1)

OPENCLAW_SEARCH_SCHEMA = {"type": "object", "required": ["query"],
                          "properties": {"query": {"type": "string"}, "maxResults": {"type": "number"}, "minScore": {"type": "number"},
                                         "corpus": {"type": "string", "enum": ["memory", "fleet"],
                                                    "description": "memory (default): this agent's files; fleet: the shared memory of every agent it may read"},
                                         "agents": {"type": "array", "items": {"type": "string"},
                                                    "description": "with corpus fleet: search only these agents (default: every agent it may read)"}}}
OPENCLAW_GET_SCHEMA = {"type": "object", "required": ["path"],
                       "properties": {"path": {"type": "string"}, "from": {"type": "number"}, "lines": {"type": "number"}}}


@pytest.fixture
def notes(workspace):
    write(workspace / "MEMORY.md", "# Memory\n\n## Notes\n- The user's cat is called Miso.\n")
    write(workspace / "memory" / f"{YESTERDAY}.md", f"# {YESTERDAY}\n\n## 17:00\nChose Postgres for billing.\n")
    write(workspace / "memory" / f"{TODAY}.md", f"# {TODAY}\n\n## 08:00\nStand-up about the heron migration.\n")
    return workspace


def stdio(workspace, *extra: str) -> Client:
    params = StdioServerParameters(command=sys.executable, args=["-m", "clawmem.tui", "--workspace", str(workspace), *extra, "mcp"],
                                   env=dict(os.environ))
    return Client(params, cache=None, read_timeout_seconds=60)


async def call(client: Client, name: str, args: dict) -> dict:
    res = await client.call_tool(name, args)
    payload = json.loads(res.content[0].text)
    assert res.is_error == bool(payload.get("error")), res  # a refusal or failure is flagged, an answer is not
    assert res.content[0].text == json.dumps(payload, indent=2, ensure_ascii=False)  # pretty-printed, 2 spaces
    assert res.structured_content == payload
    return payload


async def search_when_indexed(client: Client, query: str, *, whole: bool = False, private: bool = False) -> dict:
    """The server's first sync builds the index; until then memory_search says there is none,
    and while it runs the index may not hold the file yet (a partial, stale answer). `whole`:
    wait until the first sync is done (the reply not stale), not only for a first hit;
    `private`: the polling searches are not recorded as recalls."""
    end = time.monotonic() + 30
    while True:
        got = await call(client, "memory_search", {"query": query, **({"private": True} if private else {})})
        ready = not got.get("disabled") and got["results"] and (not whole or got.get("stale") is False)
        if ready or time.monotonic() > end:
            return got
        await anyio.sleep(0.2)


async def exercise(client: Client, workspace) -> None:
    """Everything an agent does, on any transport."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert sorted(tools) == ["memory_append", "memory_get", "memory_promote", "memory_remember", "memory_search"]
    assert tools["memory_search"].input_schema == OPENCLAW_SEARCH_SCHEMA
    assert tools["memory_get"].input_schema == OPENCLAW_GET_SCHEMA
    assert tools["memory_search"].description.startswith("Mandatory recall step")

    got = await search_when_indexed(client, "heron migration")
    top = got["results"][0]
    assert top["path"] == f"memory/{TODAY}.md" and top["citation"].startswith(f"Source: memory/{TODAY}.md#L")
    assert top["snippet"].endswith("\n\n" + top["citation"]) and got["mode"] == "keyword"

    got = await call(client, "memory_get", {"path": "MEMORY.md", "from": "4", "lines": 1})
    assert got == {"path": "MEMORY.md", "text": "- The user's cat is called Miso."}

    wrote = await call(client, "memory_append", {"text": "Booked the kingfisher workshop.", "heading": "plans"})
    assert wrote["path"] == f"memory/{TODAY}.md" and wrote["citation"] == f"Source: memory/{TODAY}.md#L{wrote['startLine']}-L{wrote['endLine']}"
    assert "Booked the kingfisher workshop." in (workspace / "memory" / f"{TODAY}.md").read_text()
    assert (await call(client, "memory_search", {"query": "kingfisher"}))["results"][0]["path"] == f"memory/{TODAY}.md"

    wrote = await call(client, "memory_remember", {"text": "Allergic to hazelnuts.", "section": "Health"})
    assert wrote["path"] == "MEMORY.md" and (workspace / "MEMORY.md").read_text().endswith("## Health\n- Allergic to hazelnuts.\n")
    assert (await call(client, "memory_search", {"query": "hazelnuts"}))["results"][0]["path"] == "MEMORY.md"

    uris = sorted(str(r.uri) for r in (await client.list_resources()).resources)
    assert uris == ["memory://MEMORY.md", "memory://context", "memory://promote", "memory://team", "memory://today", "memory://yesterday"]

    async def read(uri):
        return (await client.read_resource(uri)).contents[0].text

    assert "Allergic to hazelnuts." in await read("memory://MEMORY.md")
    assert "kingfisher" in await read("memory://today")
    assert "Chose Postgres" in await read("memory://yesterday")
    ctx = await read("memory://context")
    assert ctx.startswith("# Memory context") and "## MEMORY.md" in ctx and "Chose Postgres" in ctx
    with pytest.raises(Exception) as no_fleet:  # no fleet configured: an error naming why, not a crash
        await read("memory://team")
    assert "fleet" in str(no_fleet.value) and "not defined" not in str(no_fleet.value)

    prompts = (await client.list_prompts()).prompts
    assert [p.name for p in prompts] == ["memory-recall"]
    msg = (await client.get_prompt("memory-recall")).messages[0].content.text
    assert msg.startswith("## Memory Recall\n") and "memory_search" in msg and "Source: <path#line>" in msg


def test_stdio_end_to_end(notes):
    async def main():
        async with stdio(notes) as client:
            await exercise(client, notes)
            bad = await call(client, "memory_get", {"path": "../../etc/passwd"})
            assert bad["text"] == "" and bad["disabled"] is True and "outside the workspace" in bad["error"]
            # the server keeps the index fresh (watcher, or the sync a stale search asks for)
            write(notes / "memory" / "2026-01-05.md", "# 2026-01-05\n\nSaw a pelican at the harbour.\n")
            end = time.monotonic() + 20
            while not (await call(client, "memory_search", {"query": "pelican"}))["results"]:
                assert time.monotonic() < end, "the watcher never indexed the new file"
                await anyio.sleep(0.2)

    anyio.run(main)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_server(notes):
    port = free_port()
    env = {**os.environ, "CLAWMEM_MCP_TOKEN": "s3cret-token-9fQ2xLm7"}
    proc = subprocess.Popen([sys.executable, "-m", "clawmem.tui", "--workspace", str(notes), "mcp", "--http", f"127.0.0.1:{port}"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def up():
        if proc.poll() is not None:
            raise AssertionError(f"server exited: {proc.stderr.read()}")
        try:
            return httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=1).status_code
        except httpx.TransportError:
            return None

    wait_for(up, 30, "the HTTP server")
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    out, err = proc.communicate(timeout=30)
    assert out == ""  # nothing but protocol, and HTTP has none on stdout


def test_http_end_to_end_with_a_bearer_token(http_server, notes):
    assert httpx.post(http_server, json={}, timeout=5).status_code == 401
    assert httpx.post(http_server, json={}, headers={"Authorization": "Bearer wrong"}, timeout=5).status_code == 401

    async def main():
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        async with httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret-token-9fQ2xLm7"}, timeout=60) as http:
            async with Client(streamable_http_client(http_server, http_client=http), cache=None) as client:
                await exercise(client, notes)

    anyio.run(main)


def test_http_refusals(workspace):
    r = run_cli("--workspace", str(workspace), "mcp", "--http", "0.0.0.0:8765", timeout=60)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().count("\n") == 0 and "needs a bearer token" in r.stderr and "CLAWMEM_MCP_TOKEN" in r.stderr
    r = run_cli("--workspace", str(workspace), "mcp", "--http", "8765", "--host", "192.168.1.20", timeout=60)
    assert r.returncode == 2 and "--http on 192.168.1.20 needs a bearer token" in r.stderr
    r = run_cli("--workspace", str(workspace), "mcp", "--http", "localhost:port", timeout=60)
    assert r.returncode == 2 and "expected HOST:PORT" in r.stderr
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        r = run_cli("--workspace", str(workspace), "mcp", "--http", f"127.0.0.1:{port}", timeout=60)
    assert r.returncode == 2 and r.stderr == f"clawmem: --http 127.0.0.1:{port}: cannot listen there (Address already in use); pick another port or address\n"


def test_write_tools_absent_when_writes_are_off(notes, tmp_path):
    config = write(tmp_path / "clawmem.toml", "[mcp]\nwrite = false\n")

    async def main():
        async with stdio(notes, "--config", str(config)) as client:
            assert sorted(t.name for t in (await client.list_tools()).tools) == ["memory_get", "memory_search"]

    anyio.run(main)


# ----------------------------------------------------------------------------- error shapes


def assert_unavailable(got: dict) -> None:
    assert got["results"] == [] and got["disabled"] is True and got["unavailable"] is True
    assert got["error"] and got["warning"] and got["action"]


def test_missing_and_corrupt_index(notes, tmp_path):
    # an index that cannot be created (its folder is a file): every search says so
    blocker = write(tmp_path / "not-a-folder", "x")
    config = write(tmp_path / "missing.toml", f'[store]\npath = "{blocker}/main.sqlite"\n')

    async def missing():
        async with stdio(notes, "--config", str(config)) as client:
            got = await call(client, "memory_search", {"query": "heron"})
            assert_unavailable(got)
            assert "no index yet" in got["error"]

    anyio.run(missing)

    from clawmem.engine import load_config

    index = load_config(None, workspace=str(notes)).store_path()  # the file the server uses

    async def corrupt():
        async with stdio(notes) as client:
            assert (await search_when_indexed(client, "heron"))["results"]
            for suffix in ("-wal", "-shm"):
                index.with_name(index.name + suffix).unlink(missing_ok=True)
            garbage = index.with_name("garbage")
            garbage.write_bytes(b"\x00garbage, not SQLite" * 512)
            os.replace(garbage, index)
            got = await call(client, "memory_search", {"query": "heron"})
            assert_unavailable(got)
            assert str(index) in got["error"]

    anyio.run(corrupt)


def test_provider_down(notes, tmp_path):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = write(tmp_path / "down.toml", f'provider = "openai"\nfallback = []\n[remote]\nbaseUrl = "http://127.0.0.1:{port}/v1"\napiKey = "sk-test"\n')

    async def main():
        async with stdio(notes, "--config", str(config)) as client:
            got = await search_when_indexed(client, "heron")
            end = time.monotonic() + 30
            while "no vectors" in got.get("warning", "") and time.monotonic() < end:  # the first sync still tries openai
                await anyio.sleep(0.2)
                got = await call(client, "memory_search", {"query": "heron"})
            # SPEC §4: keyword results still come, and the payload says why vectors did not
            assert got["mode"] == "keyword" and got["results"][0]["path"] == f"memory/{TODAY}.md"
            assert "openai" in got["warning"] and str(port) in got["warning"], got["warning"]
            assert got["action"] == "Check embedding provider configuration and retry memory_search."

    anyio.run(main)


# ----------------------------------------------------------------------------- consolidation


def test_promotion_over_mcp_and_private_searches(notes, make_engine):
    """An agent's searches are recalls unless marked private; memory://promote lists the
    candidates and memory_promote writes the ones it names to MEMORY.md."""
    from clawmem.engine.consolidate import recall

    log = f"memory/{YESTERDAY}.md"

    async def main():
        async with stdio(notes) as client:
            # the whole index first, polled privately: a recall made while the first sync runs
            # scores against a partial index, and the candidate's score sits near the gate
            await search_when_indexed(client, "Postgres billing", whole=True, private=True)
            await call(client, "memory_search", {"query": "Postgres billing"})
            eng = make_engine()
            assert [r.path for r in recall.recalls(eng.cfg)] == [log]
            await call(client, "memory_search", {"query": "billing database choice", "private": True})
            assert len(recall.recalls(eng.cfg)) == 1
            for q in ("chose postgres", "billing", "postgres", "chose billing"):
                await call(client, "memory_search", {"query": q})
            preview = json.loads((await client.read_resource("memory://promote")).contents[0].text)
            [c] = preview["candidates"]
            assert c["path"] == log and c["recalls"] == 5 and c["unique_queries"] == 5 and preview["gates"]["minScore"] == 0.75
            bad = await call(client, "memory_promote", {"keys": ["memory:nope:1:2"]})
            assert bad["error"].startswith("not a current candidate: memory:nope:1:2")
            done = await call(client, "memory_promote", {"keys": [c["key"]]})
            assert [p["key"] for p in done["promoted"]] == [c["key"]] and done["skipped"] == [] and done["indexed"] is True
            assert "Chose Postgres for billing." in (notes / "MEMORY.md").read_text()
            again = json.loads((await client.read_resource("memory://promote")).contents[0].text)
            assert again["candidates"] == []

    anyio.run(main)
