"""What the engine's operations return, by name. Each is the JSON the fronts print (a dict, so
`res["results"]` keeps working) with `as_json()` for the printing and the few questions the
fronts ask of it answered here, once."""

from __future__ import annotations


class Record:
    """Plain read-only data, as a frozen dataclass with slots behaves: each subclass's fields are its
    annotations, in order, made its slots by `__slots__ = tuple(__annotations__)`; they are given
    by position or by name, `DEFAULTS` filling those not given (a callable there is called each
    time). Records compare and hash by their fields and print as `Name(field=value, …)`.
    Written out rather than @dataclass: importing dataclasses and making the ~20 frozen ones an
    index job uses cost ~20 ms of every `clawmem index`, a no-op one included."""

    __slots__ = ()
    DEFAULTS: dict = {}

    def __init__(self, *args, **kwargs):
        names = self.__slots__
        if not kwargs and len(args) == len(names):  # the common call: every field by position
            for name, value in zip(names, args):
                object.__setattr__(self, name, value)
            return
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__}() takes {len(names)} arguments but {len(args)} were given")
        for name, value in zip(names, args):
            object.__setattr__(self, name, value)
        for name in names[len(args):]:
            if name in kwargs:
                value = kwargs.pop(name)
            elif name in self.DEFAULTS:
                value = self.DEFAULTS[name]
                value = value() if callable(value) else value
            else:
                raise TypeError(f"{type(self).__name__}() missing argument: {name!r}")
            object.__setattr__(self, name, value)
        if kwargs:
            raise TypeError(f"{type(self).__name__}() got unexpected or repeated arguments: {', '.join(sorted(kwargs))}")

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return self._values() == other._values()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self.__slots__)})"

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete field {name!r}")

    def __reduce__(self):  # copy and pickle, past __setattr__
        return (type(self), self._values())


class Result(dict):
    def as_json(self) -> dict:
        """The JSON the CLI and the MCP server print, exactly."""
        return dict(self)


def _field(key: str, doc: str = "", optional: bool = False) -> property:
    """A read-only attribute for one key of the JSON (None when an optional key is absent)."""
    return property((lambda self: self.get(key)) if optional else (lambda self: self[key]), doc=doc or None)


class Hit(Result):
    """One cited hit of a search: the JSON the tools print (camelCase keys, read as `hit["path"]`)
    with its fields by name for code that reads them."""

    path: str = _field("path")
    start_line: int = _field("startLine")
    end_line: int = _field("endLine")
    score: float = _field("score")
    snippet: str = _field("snippet")
    source: str = _field("source", "memory, sessions or extra.")
    band: str | None = _field("band", "high, medium or low: how sure the search is that the hit holds the answer.", optional=True)
    agent: str | None = _field("agent", "The agent whose memory holds it (a fleet hit), else None.", optional=True)


class SearchResults(Result):
    """memory_search: `results` (cited hits), `mode` (hybrid or keyword) and why, `stale`, …"""

    @property
    def hits(self) -> list[Hit]:
        """The cited hits as `Hit`s (each `as_json()` is the hit's JSON as printed)."""
        return [h if isinstance(h, Hit) else Hit(h) for h in self["results"]]

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
