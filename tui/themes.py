"""Themes from TOML files: the built-ins in `clawmem.themes` and the user's `<config dir>/themes/`.

A theme file mirrors `textual.theme.Theme` (name, dark, primary… and a `[variables]`
table). Every file is validated; a broken one is reported (path and reason) and skipped,
never fatal. A user file with a built-in's name replaces it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from textual.color import Color, ColorParseError
from textual.theme import Theme

COLOR_FIELDS = ("primary", "secondary", "warning", "error", "success", "accent", "foreground", "background", "surface", "panel", "boost")
OTHER_FIELDS = {"name": str, "dark": bool, "luminosity_spread": float, "text_alpha": float, "variables": dict}


@dataclass(frozen=True)
class ThemeProblem:
    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


class ThemeFileError(ValueError):
    pass


def user_themes_dir() -> Path:
    from clawmem.engine import Config

    return Config.user_dir() / "themes"


def parse_theme(text: str) -> Theme:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ThemeFileError(f"not valid TOML ({exc})") from None
    unknown = sorted(set(data) - set(COLOR_FIELDS) - set(OTHER_FIELDS))
    if unknown:
        raise ThemeFileError(f"unknown key {unknown[0]!r} (known: {', '.join(('name', 'dark') + COLOR_FIELDS)}, variables)")
    if not isinstance(data.get("name"), str) or not data["name"].strip():
        raise ThemeFileError("name: required, a string")
    if "primary" not in data:
        raise ThemeFileError("primary: required, a colour such as \"#5FAFD7\"")
    for key, kind in OTHER_FIELDS.items():
        if key in data and not isinstance(data[key], kind) and not (kind is float and isinstance(data[key], int)):
            raise ThemeFileError(f"{key}: expected {kind.__name__}, got {data[key]!r}")
    for key in COLOR_FIELDS:
        if key in data:
            try:
                Color.parse(data[key])
            except (ColorParseError, TypeError):
                raise ThemeFileError(f"{key}: not a colour: {data[key]!r}") from None
    for key, value in data.get("variables", {}).items():
        if not isinstance(value, str):
            raise ThemeFileError(f"variables.{key}: expected a string, got {value!r}")
    return Theme(**data)


def _theme_files() -> list[tuple[str, str]]:
    """(shown path, text) of the built-in theme files, from the installed package."""
    out = []
    for entry in sorted(resources.files("clawmem.themes").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            out.append((f"(built-in) {entry.name}", entry.read_text(encoding="utf-8")))
    return out


def load_themes(user_dir: Path | None = None) -> tuple[list[Theme], list[ThemeProblem]]:
    """Every valid theme (built-ins first, user files override by name) and the problems found."""
    sources = _theme_files()
    problems: list[ThemeProblem] = []
    folder = user_dir if user_dir is not None else user_themes_dir()
    if folder.is_dir():
        for p in sorted(folder.glob("*.toml")):
            try:
                sources.append((str(p), p.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError) as exc:
                problems.append(ThemeProblem(str(p), f"cannot read ({exc})"))
    themes: dict[str, Theme] = {}
    for where, text in sources:
        try:
            theme = parse_theme(text)
        except (ThemeFileError, TypeError, ValueError) as exc:
            problems.append(ThemeProblem(where, str(exc)))
            continue
        themes[theme.name] = theme
    return list(themes.values()), problems
