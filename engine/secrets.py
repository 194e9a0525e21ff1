"""API keys where OpenClaw keeps them, and where each one came from (never its value).

OpenClaw's SecretInput is a plain string, `"${NAME}"` / `"$NAME"` (an environment variable),
or a SecretRef `{source: "env" | "file" | "exec", provider, id}` backed by
`secrets.providers` in openclaw.json. Environment variables are looked up as OpenClaw sees
them: the process environment, then the `env` block of openclaw.json (literal, never
overriding), then `<OpenClaw state dir>/.env`. `exec` references run a program of the
user's; clawmem does not run it and says so, naming the environment variable to use instead.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import ClawmemError

ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
FILE_MAX_BYTES = 1 << 20


class SecretError(ClawmemError):
    """A secret reference that cannot be resolved; one line naming the reference, never a value."""


@dataclass(frozen=True)
class Secret:
    value: str
    source: str  # where it came from, e.g. "env OPENAI_API_KEY" or "openclaw.json models.providers.openai.apiKey"


class Secrets:
    """Resolves secret inputs against one openclaw.json (its `env` block and `secrets.providers`)."""

    def __init__(self, openclaw: dict | None = None, state_dir: Path | None = None):
        data = openclaw if isinstance(openclaw, dict) else {}
        self.env_block = _env_block(data.get("env"))
        secrets = data.get("secrets") if isinstance(data.get("secrets"), dict) else {}
        self.providers = secrets.get("providers") if isinstance(secrets.get("providers"), dict) else {}
        self.defaults = secrets.get("defaults") if isinstance(secrets.get("defaults"), dict) else {}
        self.state_dir = state_dir
        self._dotenv: dict[str, str] | None = None

    def env(self, name: str) -> Secret | None:
        """An environment variable as OpenClaw sees it, or None when unset or empty."""
        if os.environ.get(name):
            return Secret(os.environ[name], f"env {name}")
        if self.env_block.get(name):
            return Secret(self.env_block[name], f"openclaw.json env.{name}")
        dotenv = self._read_dotenv()
        if dotenv.get(name):
            return Secret(dotenv[name], f"{self.state_dir / '.env'} {name}")
        return None

    def resolve(self, value, where: str) -> Secret | None:
        """The secret a SecretInput names (None for an empty string); SecretError if it cannot be had."""
        if isinstance(value, str):
            text = value.strip()
            if not text:
                return None
            m = ENV_REF.fullmatch(text)
            if not m:
                return Secret(text, where)
            name = m.group(1) or m.group(2)
            got = self.env(name)
            if got is None:
                raise SecretError(f"{where}: ${{{name}}} is not set in the environment, openclaw.json env or the OpenClaw .env; set {name}")
            return Secret(got.value, f"{where} -> {got.source}")
        if isinstance(value, dict):
            return self._resolve_ref(value, where)
        raise SecretError(f"{where}: expected a string or a SecretRef {{source, provider, id}}, got {type(value).__name__}")

    def _resolve_ref(self, ref: dict, where: str) -> Secret:
        source, ref_id = ref.get("source"), ref.get("id")
        if not isinstance(ref_id, str) or not ref_id:
            raise SecretError(f"{where}: SecretRef without an id")
        if source == "env":
            got = self.env(ref_id)
            if got is None:
                raise SecretError(f"{where}: SecretRef env:{ref_id} is not set in the environment, openclaw.json env or the OpenClaw .env; set {ref_id}")
            return Secret(got.value, f"{where} -> {got.source}")
        if source == "file":
            alias = ref.get("provider") or self.defaults.get("file") or "default"
            prov = self.providers.get(alias)
            if not isinstance(prov, dict) or prov.get("source") != "file" or not isinstance(prov.get("path"), str):
                raise SecretError(f"{where}: SecretRef file:{alias} has no file provider in openclaw.json secrets.providers")
            path = Path(os.path.expanduser(prov["path"]))
            try:
                raw = path.read_bytes()[:FILE_MAX_BYTES].decode("utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise SecretError(f"{where}: cannot read secrets file {path} ({getattr(exc, 'strerror', None) or type(exc).__name__})") from None
            if prov.get("mode") == "singleValue":
                value = raw.rstrip("\r\n")
            else:
                value = _json_pointer(raw, ref_id, path, where)
            if not value:
                raise SecretError(f"{where}: SecretRef file:{alias}:{ref_id} is empty in {path}")
            return Secret(value, f"{where} -> file {path}" + ("" if prov.get("mode") == "singleValue" else f" {ref_id}"))
        if source == "exec":
            raise SecretError(f"{where}: SecretRef exec:{ref.get('provider', '?')} runs a program, which clawmem does not do; "
                              "put the key in the provider's environment variable instead")
        raise SecretError(f"{where}: SecretRef source {source!r} is not one of env, file, exec")

    def _read_dotenv(self) -> dict[str, str]:
        if self._dotenv is None:
            self._dotenv = {}
            if self.state_dir is not None:
                try:
                    text = (self.state_dir / ".env").read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    text = ""
                self._dotenv = parse_dotenv(text)
        return self._dotenv


def parse_dotenv(text: str) -> dict[str, str]:
    """KEY=value lines (`export` allowed, quotes stripped, # comments skipped)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        key, value = key.strip(), value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            out[key] = value
    return out


def _env_block(block) -> dict[str, str]:
    """openclaw.json `env`: literal NAME: value pairs, also under `env.vars`."""
    if not isinstance(block, dict):
        return {}
    out = {k: v for k, v in block.items() if isinstance(v, str)}
    if isinstance(block.get("vars"), dict):
        out.update({k: v for k, v in block["vars"].items() if isinstance(v, str)})
    return out


def _json_pointer(raw: str, pointer: str, path: Path, where: str) -> str:
    try:
        node = json.loads(raw)
    except ValueError:
        raise SecretError(f"{where}: secrets file {path} is not JSON (mode json)") from None
    if not pointer.startswith("/"):
        raise SecretError(f"{where}: SecretRef id {pointer!r} is not a JSON pointer (/a/b)")
    for part in pointer[1:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise SecretError(f"{where}: {pointer} not found in secrets file {path}")
    if not isinstance(node, str):
        raise SecretError(f"{where}: {pointer} in secrets file {path} is not a string")
    return node
