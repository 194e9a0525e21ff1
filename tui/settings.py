"""The app's own settings: the `[ui]` table of the config file (the engine ignores it).

Each setting is checked when the app starts and when it is edited in the Config tab;
a bad value is one line that names the key, like the engine's own config errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from clawmem.engine import ConfigError

DEFAULT_THEME = "clawmem-dark"
ANIMATION_LEVELS = ("none", "basic", "full")

DOCS = {
    "theme": "colour theme: a built-in, Textual's, or a file in <config dir>/themes/",
    "keymap": 'key overrides by binding id, e.g. { "file.save" = "ctrl+s,f10" } (F1 lists the ids)',
    "watch": "keep the index fresh while the app runs (file watcher)",
    "animation": "none, basic or full (none is kindest over slow SSH links)",
    "blinkingCursor": "blink the cursor in inputs and the editor",
    "searchDelayMs": "extra pause after a keystroke before searching, in ms (0: at once, one search at a time)",
    "logLines": "lines kept in the Sync tab's log",
}


@dataclass(frozen=True)
class UISettings:
    theme: str = DEFAULT_THEME
    keymap: dict[str, str] = field(default_factory=dict)
    watch: bool = True
    animation: str = "none"
    blinkingCursor: bool = True
    searchDelayMs: int = 0
    logLines: int = 2000

    def with_value(self, name: str, value: Any) -> "UISettings":
        return replace(self, **{name: check(name, value)})

    # What the Config tab lists and how it writes a value, read through the pane host: a pane
    # cannot import this module, which checks keymaps against the tab registry of the panes.
    @staticmethod
    def names() -> tuple[str, ...]:
        return NAMES

    @staticmethod
    def doc(name: str) -> str:
        return DOCS.get(name, "")

    @staticmethod
    def as_text(value: Any) -> str:
        return as_text(value)


NAMES = tuple(f.name for f in fields(UISettings))


def check(name: str, value: Any) -> Any:
    """Validate one setting; ValueError says what was expected (the caller adds the key)."""
    if name not in NAMES:
        raise ValueError(f"unknown setting{did_you_mean(name, NAMES)} (known: {', '.join(NAMES)})")
    if name in ("watch", "blinkingCursor"):
        if not isinstance(value, bool):
            raise ValueError(f"expected true or false, got {value!r}")
    elif name in ("searchDelayMs", "logLines"):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"expected an integer, got {value!r}")
        low = 0 if name == "searchDelayMs" else 100
        if value < low:
            raise ValueError(f"expected an integer >= {low}, got {value}")
    elif name == "animation":
        if value not in ANIMATION_LEVELS:
            raise ValueError(f"expected one of {', '.join(ANIMATION_LEVELS)}, got {value!r}")
    elif name == "theme":
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"expected a theme name, got {value!r}")
    elif name == "keymap":
        from .tabs import KNOWN_IDS, keymap_problem

        if not isinstance(value, dict):
            raise ValueError('expected a table of binding id = "keys"')
        for k, v in value.items():
            if k not in KNOWN_IDS:
                raise ValueError(f"unknown binding id {k!r}{did_you_mean(k, KNOWN_IDS)} (F1 lists them)")
            if not isinstance(v, str) or not v.strip():
                raise ValueError(f"{k}: expected keys such as \"ctrl+s\" or \"f10,ctrl+s\", got {v!r}")
        value = dict(value)
        problem = keymap_problem(value)
        if problem:
            raise ValueError(problem)
    return value


def did_you_mean(word: str, known) -> str:
    import difflib

    close = difflib.get_close_matches(word, sorted(known), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def from_table(table: dict, where: str = "config") -> UISettings:
    """Settings from the `[ui]` table; ConfigError names the file and the key."""
    s = UISettings()
    for name, value in table.items():
        try:
            s = s.with_value(name, value)
        except ValueError as exc:
            raise ConfigError(f"{where}: ui.{name}: {exc}") from None
    return s


def parse_text(name: str, text: str) -> Any:
    """What a user typed in the Config tab, as a value for `ui.<name>` (ValueError if bad)."""
    import tomllib

    text = text.strip()
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        value = text
    if name in ("theme", "animation") and not isinstance(value, str):
        value = text
    return check(name, value)


def as_text(value: Any) -> str:
    """A value written the way the Config tab's editor accepts it back (TOML)."""
    import tomlkit

    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        t = tomlkit.inline_table()
        t.update(value)
        return t.as_string()
    return tomlkit.item(value).as_string()
