"""The fleet: the shared chunks of many agents on many hosts in one PostgreSQL + pgvector
database, searched like the local index; and `fleet up` (server.py), a local PostgreSQL.

The Markdown files stay the truth and the local SQLite index the fast path for an agent's own
memory; the fleet tables are derived from the local indexes (push) and can be dropped and
pushed again at any time. Only files matching `[fleet] share` ever leave their host.

One module per concern, each importing only those before it: connection.py (settings,
`connect`, `FleetError`) < schema.py (tables and access rules) < push.py, admin.py, notes.py
< search.py (which finds team notes through notes.py); client.py re-exports the names tests
and benchmarks import. psycopg and pgvector load only in these modules, and these only when a
fleet command runs."""
