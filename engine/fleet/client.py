"""The fleet's old single module, now a face: the names tests and benchmarks import from
`clawmem.engine.fleet.client`, each re-exported from the module of its concern (the engine's
own code imports those modules directly). The code lives in:

- connection.py: the `[fleet]` settings, `connect` and its timeouts, `FleetError`
- schema.py: the tables, row-level security, the owner's functions, roles' rights, vector indexes
- push.py: `push`, the push state this host keeps, `fleet_status`
- admin.py: the owner's `grant`, `revoke`, `fleet_list`, `build_indexes`, `distribute`
- notes.py: the team's notebook
- search.py: `search`, the kept connection (`client`), `get_stored`

Nothing is defined here: a test that patches a name patches it where the code reads it, in
the module above that holds it."""

from __future__ import annotations

from .admin import CITUS_STATEMENTS, build_indexes, fleet_list, grant, revoke, role_name
from .connection import SEARCH_TIMEOUT_MS, FleetError, connect, is_shared, register_vector
from .notes import TEAM_CONTEXT_CAP, team_notes, team_remember
from .push import _local_chunks, push
from .schema import agent_index_name, ensure_schema, tsvector_literal, vector_index_name
from .search import NEAREST, QueryVector, client, get_stored, query_vector, search, search_with

__all__ = ["CITUS_STATEMENTS", "NEAREST", "SEARCH_TIMEOUT_MS", "TEAM_CONTEXT_CAP", "FleetError", "QueryVector",
           "_local_chunks", "agent_index_name", "build_indexes", "client", "connect", "ensure_schema", "fleet_list",
           "get_stored", "grant", "is_shared", "push", "query_vector", "register_vector", "revoke", "role_name",
           "search", "search_with", "team_notes", "team_remember", "tsvector_literal", "vector_index_name"]
