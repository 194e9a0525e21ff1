"""The MCP tools are declared once (clawmem.mcp.server.TOOLS): the server registers exactly
those, and docs/agents.md's tool table is the one made from them."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from clawmem.mcp.server import TOOLS, build_server, tools_markdown

AGENTS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "agents.md"


def test_readme_tool_table_is_made_from_the_tool_table():
    """A tool added, renamed or given new arguments in TOOLS must reach docs/agents.md, and back."""
    assert tools_markdown() in AGENTS_PAGE.read_text(encoding="utf-8"), (
        "docs/agents.md's MCP tool table differs from clawmem.mcp.server.TOOLS; paste the output of\n"
        "  python -c 'from clawmem.mcp.server import tools_markdown; print(tools_markdown())'")


@pytest.mark.parametrize("write", [True, False])
def test_the_server_registers_the_table_s_tools(make_engine, write):
    engine = make_engine({"mcp.write": write})
    listed = anyio.run(build_server(engine).list_tools)
    expected = [t for t in TOOLS if write or not t.writes]
    assert [t.name for t in listed] == [t.name for t in expected]
    for got, spec in zip(listed, expected):
        assert got.description == spec.description and got.input_schema == spec.schema
        assert got.annotations.read_only_hint is (not spec.writes)
    assert {"memory_search", "memory_get"} <= {t.name for t in listed}
