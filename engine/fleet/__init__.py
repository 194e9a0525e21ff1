"""The fleet: many agents' indexes in one PostgreSQL (client), and `fleet up` (server)."""
