"""`clawmem model pull|list|stop`: download local embedding models, list the cache, end the
resident model."""

from __future__ import annotations

import json

from .base import EXIT_OK, EXIT_USAGE, Command, CommandError, Parser, add_command, dump_json, open_engine
from .progress import ProgressLine, render_event


def model_arguments(s) -> None:
    msub = s.add_subparsers(dest="model_command", parser_class=Parser, metavar="{pull,list,stop}")
    m = add_command(msub, "pull", "download an hf: model into the cache, with progress (resumes a partial one)")
    m.add_argument("uri", nargs="?", help="hf:owner/repo/file.gguf (default: local.modelPath if it is an hf: URI, else the default model)")
    m.add_argument("--json", action="store_true")
    m = add_command(msub, "list", "the models in the cache (and unfinished downloads)")
    m.add_argument("--json", action="store_true")
    m = add_command(msub, "stop", "end the resident model (the next search starts it again; local.residentMinutes = 0 turns it off)")
    m.add_argument("--json", action="store_true")


def cmd_model(args) -> int:
    if args.model_command is None:
        raise CommandError("model: say `clawmem model pull [URI]`, `clawmem model list` or `clawmem model stop`", EXIT_USAGE)
    if args.model_command == "stop":
        return model_stop(args.json)
    eng = open_engine(args, need_workspace=False)
    cfg, models = eng.cfg, eng.models
    cache, default = models.cache_dir, models.default
    configured = cfg["local.modelPath"] or default
    if args.model_command == "pull":
        if args.uri:
            return model_pull(models, args.uri, args.json, named="model pull")
        from_config = configured.lower().startswith("hf:")
        return model_pull(models, configured if from_config else default, args.json,
                          named="local.modelPath" if from_config and cfg["local.modelPath"] else "the default model")
    cached = models.cached()
    local = cfg["local.modelPath"]
    mine = None
    if local and not local.lower().startswith("hf:"):  # a local file is no cache entry, but it is the model in use
        from pathlib import Path

        where = Path(local).expanduser()
        mine = {"uri": local, "path": str(where), "bytes": where.stat().st_size if where.is_file() else None,
                "complete": where.is_file(), "localFile": True}
    if args.json:  # the same models the text lists
        print(dump_json({"cacheDir": str(cache), "configured": configured, "models": ([mine] if mine else []) + cached}, indent=2))
        return EXIT_OK
    if mine:
        state = f"{mine['bytes'] / 1e6:.1f} MB" if mine["complete"] else "missing: set local.modelPath to a .gguf file"
        print(f"{local}  {state}  (configured: local.modelPath, a local file)")
    if not cached:
        if not (local and not local.lower().startswith("hf:")):
            print(f"No models in {cache}; `clawmem model pull` downloads {configured if configured.lower().startswith('hf:') else default}")
        else:
            print(f"cache: {cache} (empty)")
        return EXIT_OK
    for m in cached:
        notes = ([] if m["complete"] else ["unfinished: `clawmem model pull` resumes it"]) + (["configured"] if m["uri"] == configured else [])
        print(f"{m['uri']}  {m['bytes'] / 1e6:.1f} MB" + (f"  ({'; '.join(notes)})" if notes else ""))
    print(f"cache: {cache}")
    return EXIT_OK


def model_stop(as_json: bool) -> int:
    from clawmem.engine import Engine

    stopped = Engine.stop_resident_models()
    if as_json:
        print(json.dumps({"stopped": [{"pid": s["pid"], "model": s.get("model")} for s in stopped]}))
    elif stopped:
        for s in stopped:
            print(f"stopped the resident model {s.get('model') or ''} (pid {s['pid']})")
    else:
        print("no resident model was running")
    return EXIT_OK


def describe_resident(models: list[dict]) -> str:
    """One line per resident model for `clawmem status`."""
    if not models:
        return "Resident model: not running (the next hybrid search starts it)"
    return "\n".join(
        f"Resident model: {m.get('model')} up, pid {m['pid']}, {(m.get('rssBytes') or 0) / 1e6:.0f} MB, "
        f"idle {m.get('idleSeconds', 0):.0f} s of {m.get('idleLimit', 0):.0f} s; `clawmem model stop` ends it"
        for m in models)


def model_pull(models, uri: str, as_json: bool, named: str = "model pull") -> int:
    """`models`: the engine's model files; `named`: where the URI came from (the argument,
    local.modelPath), which errors name."""
    from clawmem.engine import DownloadError, events as ev

    if not uri.lower().startswith("hf:"):
        raise CommandError(f"model pull: {uri!r} is a local file, not an hf:owner/repo/file.gguf URI; nothing to download", EXIT_USAGE)
    try:
        had = models.cached_path(uri).is_file()
        out = ProgressLine(quiet=as_json)
        path = models.download(uri, lambda done, total: render_event(ev.Download(uri, done, total), out))
    except DownloadError as exc:
        message = str(exc)
        if message.startswith("local.modelPath: ") and named != "local.modelPath":  # the URI the user typed is to blame
            message = f"{named}: {message.removeprefix('local.modelPath: ')}"
            raise CommandError(message, EXIT_USAGE) from None
        raise CommandError(message) from None
    except OSError as exc:
        raise CommandError(f"cannot download {uri}: {exc.strerror or exc} ({exc.filename or models.cache_dir}); check permissions and free space") from None
    size = path.stat().st_size
    if as_json:
        print(json.dumps({"uri": uri, "path": str(path), "bytes": size, "downloaded": not had}))
    else:
        print(f"{'already downloaded' if had else 'downloaded'}: {uri} -> {path} ({size / 1e6:.1f} MB)")
    return EXIT_OK


MODEL = Command("model", model_arguments, cmd_model)
