"""The errors the engine's operations raise for the fronts to show as one line (no traceback).

Every error meant for a person derives from `ClawmemError`, so a front that only shows the
message catches that one class; the specific classes stay for fronts that act on the kind
(ChangedOnDisk opens the merge view, LockBusy waits). Each keeps its older base
(ValueError, RuntimeError) so code that caught those still does."""

import functools
import types

_GENERATOR = 0x20  # inspect.CO_GENERATOR, without importing inspect on every search


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


class StorageError(ClawmemError, OSError):
    """The system refused an operation on a file, folder or socket (permission denied, disk
    full, a file gone): its own error, raised again across the face as a ClawmemError of the
    same kind. errno, the message and the file names are kept, and so is the kind: a
    FileNotFoundError comes out as a subclass of both (StorageFileNotFoundError), so a front
    that catches ClawmemError, OSError or FileNotFoundError still does."""


_KINDS: dict[type, type] = {OSError: StorageError}


def as_storage_error(exc: OSError) -> StorageError:
    """`exc`, an OSError that is not a ClawmemError, as a StorageError of its own kind."""
    kind = type(exc)
    cls = _KINDS.get(kind)
    if cls is None:
        try:
            cls = type(f"Storage{kind.__name__}", (StorageError, kind), {"__module__": __name__})
        except TypeError:  # a kind whose layout cannot be combined: the plain StorageError
            cls = StorageError
        _KINDS[kind] = cls
        globals().setdefault(cls.__name__, cls)  # so it pickles by name
    try:
        if exc.errno is not None:
            return cls(exc.errno, exc.strerror, exc.filename, None, exc.filename2)
        return cls(*exc.args)
    except TypeError:  # a kind with a constructor of its own
        return StorageError(exc.errno, exc.strerror, exc.filename, None, exc.filename2)


def _restate(exc: OSError):
    """Raise `exc` across the face: itself when it is already a ClawmemError, else restated."""
    if isinstance(exc, ClawmemError):
        raise exc
    raise as_storage_error(exc) from exc


def _speaking_clawmem(func):
    """`func` raising the system's OSError as a StorageError (a generator function too)."""
    if func.__code__.co_flags & _GENERATOR:
        @functools.wraps(func)
        def generator(*args, **kwargs):
            try:
                return (yield from func(*args, **kwargs))
            except OSError as exc:
                _restate(exc)
        return generator

    @functools.wraps(func)
    def call(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except OSError as exc:
            _restate(exc)
    return call


def raises_clawmem_errors(cls):
    """Class decorator for the objects the fronts hold (the face): every public method and
    property raises only ClawmemError, the system's OSError as a StorageError of its kind. At
    the face, not at each `open`: the engine's own code keeps catching the plain kinds."""
    for name, attr in list(vars(cls).items()):
        if name.startswith("_"):
            continue
        if isinstance(attr, staticmethod):
            wrapped = staticmethod(_speaking_clawmem(attr.__func__))
        elif isinstance(attr, classmethod):
            wrapped = classmethod(_speaking_clawmem(attr.__func__))
        elif isinstance(attr, property):
            wrapped = property(*(f and _speaking_clawmem(f) for f in (attr.fget, attr.fset, attr.fdel)), attr.__doc__)
        elif isinstance(attr, functools.cached_property):
            wrapped = functools.cached_property(_speaking_clawmem(attr.func))
            wrapped.__set_name__(cls, name)
        elif isinstance(attr, types.FunctionType):
            wrapped = _speaking_clawmem(attr)
        else:
            continue
        setattr(cls, name, wrapped)
    return cls
