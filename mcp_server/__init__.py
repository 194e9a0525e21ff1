"""clawmem for agents: a Model Context Protocol server over the engine (no Textual here)."""
