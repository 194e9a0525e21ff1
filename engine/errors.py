"""The errors the engine's operations raise for the fronts to show as one line (no traceback)."""


class IndexUnavailable(RuntimeError):
    """The index cannot be read (corrupt, locked too long); the message says what to do."""


class AccessDenied(ValueError):
    """memory_get refused a path; the message says why."""


class SearchDisabled(RuntimeError):
    """Memory search is turned off (`enabled = false`, e.g. OpenClaw's memorySearch.enabled)."""


class JournalUnavailable(RuntimeError):
    """The journal of file versions cannot be opened or brought up to date; the message says why."""
