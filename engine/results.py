"""What the engine's operations return, by name. Each is the JSON the fronts print (a dict, so
`res["results"]` keeps working) with `as_json()` for the printing and the few questions the
fronts ask of it answered here, once."""

from __future__ import annotations


class Result(dict):
    def as_json(self) -> dict:
        """The JSON the CLI and the MCP server print, exactly."""
        return dict(self)


class SearchResults(Result):
    """memory_search: `results` (cited hits), `mode` (hybrid or keyword) and why, `stale`, …"""

    @property
    def hits(self) -> list[dict]:
        return self["results"]

    @property
    def keyword_only(self) -> bool:
        return self["mode"] == "keyword"


class Status(Result):
    """`clawmem status`: the index, its freshness, the provider and vectors, the config."""

    @property
    def vectors_serving(self) -> bool:
        """Whether searches use vectors now (a provider is active and nothing keeps it from
        serving); else they are keyword-only, and provider.reason says why."""
        return vectors_serving(self["provider"])


def vectors_serving(provider: dict) -> bool:
    """Status.vectors_serving from status()["provider"] as plain JSON (a status that travelled
    in a message)."""
    return bool(provider.get("active")) and not provider.get("reason")


class FileText(Result):
    """memory_get: {path, text}."""


class WriteReceipt(Result):
    """An agent's write (memory_append, memory_remember): where it went, its lines, whether it
    is indexed yet; or {error} when nothing was written."""


class Restored(Result):
    """A restore from the journal: {path, restored (the version asked for), version (the new
    one), undo (the version that undoes it, if any)}."""
