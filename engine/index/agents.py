"""Which agents `status --all-agents` and `index --all-agents` cover.

Every agent that has an index in clawmem's data dir, plus every `agents.list[].id` in
OpenClaw's openclaw.json, each with its own workspace: the entry's `workspace`, else
OpenClaw's rule for agents other than the default one (`<state dir>/workspace-<id>`),
else the workspace recorded in the index, else the usual configuration.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from ..config import openclaw_agent_entries, read_openclaw_json
from .store import read_identity


@dataclass
class AgentTarget:
    agent_id: str
    workspace: str | None  # None: resolved by the configuration as for `--agent ID`
    origin: str  # "openclaw", "index" or "default"


def _index_identity(path: Path) -> tuple[str | None, str | None]:
    """(agent id, workspace) an index records in its meta table, if it records them."""
    meta = read_identity(path)
    try:
        recorded = json.loads(meta.get("index") or "{}")
    except ValueError:
        recorded = {}
    recorded = recorded if isinstance(recorded, dict) else {}
    agent = meta.get("agentId") or recorded.get("agentId")
    ws = meta.get("workspace") or recorded.get("workspace")
    return (agent if isinstance(agent, str) else None), (ws if isinstance(ws, str) else None)


def indexed_agents() -> list[AgentTarget]:
    """Agents with an index file in the data dir (the meta's agent id, else the file name)."""
    out: list[AgentTarget] = []
    for f in sorted((paths.data_dir() / "index").glob("*.sqlite")):
        agent, ws = _index_identity(f)
        # index files are named <agent>-<workspace key>.sqlite (older ones <agent>.sqlite)
        out.append(AgentTarget(agent or re.sub(r"-[0-9a-f]{12}$", "", f.stem), ws, "index"))
    return out


def openclaw_agents() -> list[AgentTarget]:
    data, _, _ = read_openclaw_json()
    entries = openclaw_agent_entries(data)
    default = next((e for e in entries if e.get("default") is True), entries[0] if entries else None)
    out = []
    for e in entries:
        ws = e.get("workspace") if isinstance(e.get("workspace"), str) and e["workspace"].strip() else None
        if ws is None and e is not default:
            ws = str(paths.openclaw_state_dir() / f"workspace-{e['id']}")
        out.append(AgentTarget(e["id"].strip(), ws, "openclaw"))
    return out


def all_agents(default_agent: str = "main") -> list[AgentTarget]:
    """OpenClaw's agents first (in its order), then the other indexed ones; the default agent when there are none."""
    # one entry per agent and workspace (an agent id may have indexes for two workspaces)
    found: list[AgentTarget] = []
    for t in openclaw_agents() + indexed_agents():
        same = [k for k in found if k.agent_id == t.agent_id]
        if any(k.workspace == t.workspace or t.workspace is None for k in same):
            continue
        unplaced = next((k for k in same if k.workspace is None), None)
        if unplaced is not None:
            unplaced.workspace = t.workspace
        else:
            found.append(t)
    return found or [AgentTarget(default_agent, None, "default")]
