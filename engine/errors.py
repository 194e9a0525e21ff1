"""The errors the engine's operations raise for the fronts to show as one line (no traceback).

Every error meant for a person derives from `ClawmemError`, so a front that only shows the
message catches that one class; the specific classes stay for fronts that act on the kind
(ChangedOnDisk opens the merge view, LockBusy waits). Each keeps its older base
(ValueError, RuntimeError) so code that caught those still does."""


class ClawmemError(Exception):
    """An error whose message is one line for a person: what went wrong and what to do."""


class BadValue(ClawmemError, ValueError):
    """A value given to the engine (an option, a date, a line number, a setting) that it does not
    take; the message names it and what was expected."""


class IndexUnavailable(ClawmemError, RuntimeError):
    """The index cannot be read (corrupt, locked too long); the message says what to do."""


class AccessDenied(ClawmemError, ValueError):
    """memory_get refused a path; the message says why."""


class FileUnreadable(AccessDenied):
    """An allowed file the system would not let us read (permissions, an I/O error): the
    operation failed, the path asked for was fine (the CLI exits 3, not 2)."""


class SearchDisabled(ClawmemError, RuntimeError):
    """Memory search is turned off (`enabled = false`, e.g. OpenClaw's memorySearch.enabled)."""


class JournalUnavailable(ClawmemError, RuntimeError):
    """The journal of file versions cannot be opened or brought up to date; the message says why."""


class IndexFailed(ClawmemError):
    """An index job could not write the index (disk full, read-only file); what it had
    committed stays searchable. The message names the index file and what to check."""


class DownloadError(ClawmemError):
    """One line for the user: what could not be downloaded, why, and the way out. Defined here,
    not in embeddings/download.py, so the local provider catches it without loading that module
    (hashlib's OpenSSL binding) on every search of a local model file."""
