"""UI settings ([ui] table) and theme files: validation with one-line errors naming the key."""

from __future__ import annotations

import pytest

from clawmem.engine.config import ConfigError
from clawmem.tui import settings, themes
from clawmem.tui import tabs as keys


def test_defaults_and_valid_table():
    s = settings.from_table({"theme": "clawmem-light", "watch": False, "keymap": {"file.save": "ctrl+s,f10"}, "animation": "basic"})
    assert (s.theme, s.watch, s.animation) == ("clawmem-light", False, "basic")
    assert s.keymap == {"file.save": "ctrl+s,f10"}
    assert settings.from_table({}) == settings.UISettings()


@pytest.mark.parametrize(
    "table, expected",
    [
        ({"watch": "yes"}, "cfg.toml: ui.watch: expected true or false, got 'yes'"),
        ({"animation": "fast"}, "cfg.toml: ui.animation: expected one of none, basic, full, got 'fast'"),
        ({"keymap": {"file.sav": "f10"}}, "cfg.toml: ui.keymap: unknown binding id 'file.sav'; did you mean 'file.save'? (F1 lists them)"),
        ({"keymap": "f10"}, 'cfg.toml: ui.keymap: expected a table of binding id = "keys"'),
        ({"searchDelayMs": -1}, "cfg.toml: ui.searchDelayMs: expected an integer >= 0, got -1"),
        ({"colour": "red"}, "cfg.toml: ui.colour: unknown setting (known: theme, keymap, watch, animation, blinkingCursor, searchDelayMs, logLines)"),
    ],
)
def test_bad_settings_are_one_line_naming_the_key(table, expected):
    with pytest.raises(ConfigError) as err:
        settings.from_table(table, "cfg.toml")
    assert str(err.value) == expected


def test_parse_text_round_trips_what_the_config_tab_shows():
    for name, value in (("watch", False), ("keymap", {"app.help": "f1,ctrl+question_mark"}), ("theme", "clawmem-dark"), ("logLines", 500)):
        assert settings.parse_text(name, settings.as_text(value)) == value


def test_every_binding_id_is_unique_and_documented():
    ids = [k.id for k in keys.ALL_KEYS]
    assert len(ids) == len(set(ids))
    table = keys.help_table({"file.save": "f10"})
    assert "| `f10` | Save the file" in table
    for k in keys.ALL_KEYS:
        assert (f"`{k.id}`" in table) == k.bound


def test_builtin_themes_load_from_the_package():
    loaded, problems = themes.load_themes()
    assert problems == []
    names = {t.name for t in loaded}
    assert {"clawmem-dark", "clawmem-light", "clawmem-contrast"} <= names
    assert any(not t.dark for t in loaded)


def test_broken_user_theme_is_reported_and_skipped(tmp_path):
    (tmp_path / "good.toml").write_text('name = "mine"\nprimary = "#112233"\ndark = true\n')
    (tmp_path / "bad-colour.toml").write_text('name = "bad"\nprimary = "not-a-colour"\n')
    (tmp_path / "bad-key.toml").write_text('name = "x"\nprimary = "#000000"\nprimery = "#111111"\n')
    (tmp_path / "bad-toml.toml").write_text('name = "x\n')
    (tmp_path / "override.toml").write_text('name = "clawmem-dark"\nprimary = "#FF0000"\n')
    loaded, problems = themes.load_themes(tmp_path)
    by_name = {t.name: t for t in loaded}
    assert by_name["mine"].primary == "#112233"
    assert by_name["clawmem-dark"].primary == "#FF0000"  # a user file replaces the built-in
    reasons = {p.path.rsplit("/", 1)[-1]: p.reason for p in problems}
    assert reasons["bad-colour.toml"] == "primary: not a colour: 'not-a-colour'"
    assert reasons["bad-key.toml"].startswith("unknown key 'primery'")
    assert reasons["bad-toml.toml"].startswith("not valid TOML")
    assert "bad" not in by_name


async def test_app_reports_broken_theme_files_and_still_starts(ws, make_app, home_dirs):
    folder = home_dirs / ".config" / "clawmem" / "themes"
    folder.mkdir(parents=True)
    (folder / "broken.toml").write_text('name = "broken"\n')
    (folder / "paper.toml").write_text('name = "paper"\nprimary = "#2C4251"\nbackground = "#F5F1E9"\ndark = false\n')
    app = make_app(ws, theme="paper")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.theme == "paper"
        assert [str(p) for p in app.theme_problems] == [f"{folder / 'broken.toml'}: primary: required, a colour such as \"#5FAFD7\""]
        log = "\n".join(app.sync_pane.query_one("#sync-log").lines)
        assert "theme skipped:" in log and "broken.toml" in log


async def test_unknown_theme_setting_falls_back_to_the_default(ws, make_app):
    app = make_app(ws, theme="nope")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.theme == "clawmem-dark"
        assert any("no theme named 'nope'" in str(p) for p in app.theme_problems)


@pytest.mark.parametrize("blink", [False, True])
async def test_blinking_cursor_setting_reaches_every_input_and_editor(ws, make_app, blink):
    """ui.blinkingCursor holds for each text field the app starts with, the File tab's find bar too."""
    app = make_app(ws, blinkingCursor=blink)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        fields = {w.id: w.cursor_blink for w in app.query("Input, TextArea")}
        assert "file-bar" in fields and "editor" in fields and "search-input" in fields
        assert fields == dict.fromkeys(fields, blink)


@pytest.mark.parametrize("blink", [False, True])
async def test_blinking_cursor_setting_reaches_the_promote_edit_dialog(ws, make_app, blink):
    """ui.blinkingCursor holds in the editor F10 then e opens (it blinked whatever the setting,
    and a snapshot of it caught the cursor on or off by chance)."""
    from textual.widgets import TextArea
    from tuikit import seed_recalls, settle

    seed_recalls(ws)
    app = make_app(ws, blinkingCursor=blink)
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        await pilot.press("f10")
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert type(app.screen).__name__ == "EditScreen"
        assert app.screen.query_one(TextArea).cursor_blink is blink


def test_bad_ui_setting_stops_the_app_with_one_line_and_exit_2(ws, home_dirs):
    from helpers import run_cli

    config = home_dirs / ".config" / "clawmem" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[ui]\nanimation = "fast"\n')
    proc = run_cli("--workspace", str(ws))
    assert proc.returncode == 2
    assert proc.stderr == f"clawmem: {config}: ui.animation: expected one of none, basic, full, got 'fast'\n"


def test_an_unknown_theme_stops_the_app_with_one_line(ws, home_dirs, capsys):
    """`[ui] theme = "nope"` stops before the app starts: exit 2, one line naming the file and
    the key, with the themes that exist (README: a bad value stops the app)."""
    from clawmem.tui.cli import main

    config = home_dirs / ".config" / "clawmem" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[ui]\ntheme = "nope"\n')
    assert main(["--config", str(config), "--workspace", str(ws)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert err.startswith(f"clawmem: {config}: ui.theme: no theme named 'nope'") and "clawmem-dark" in err


def wcag_contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two colours (#RRGGBB or anything Textual parses)."""
    from textual.color import Color

    def luminance(text: str) -> float:
        c = Color.parse(text)

        def channel(v: int) -> float:
            v = v / 255
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

        return 0.2126 * channel(c.r) + 0.7152 * channel(c.g) + 0.0722 * channel(c.b)

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_panel_titles_have_aa_contrast_in_every_theme_file():
    """Panel titles are drawn in $foreground (app.tcss) on the panel's background: the screen's
    ($background) or a dialog's ($surface). Computed from each built-in theme file as Textual
    turns it into CSS variables: at least 4.5:1 (WCAG AA for text) everywhere."""
    found, problems = themes.load_themes(user_dir=None)
    assert not problems and {t.name for t in found} >= {"clawmem-dark", "clawmem-light", "clawmem-contrast"}
    from pathlib import Path

    import clawmem.tui

    assert "Widget { border-title-color: $foreground;" in Path(clawmem.tui.__file__).with_name("app.tcss").read_text()
    for theme in found:
        variables = theme.to_color_system().generate()
        for behind in ("background", "surface"):
            ratio = wcag_contrast(variables["foreground"], variables[behind])
            assert ratio >= 4.5, f"{theme.name}: titles on ${behind}: {ratio:.2f}:1"


@pytest.mark.parametrize("theme", ["clawmem-dark", "clawmem-light", "clawmem-contrast"])
async def test_panel_titles_on_screen_are_readable(ws, make_app, theme):
    """The titles as drawn ("Results", "Preview"): once the borders' grey on grey (1.3:1)."""
    from tuikit import contrast, screen_segments, settle

    app = make_app(ws, theme=theme)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        titles = [s for s in screen_segments(app) if s.text.strip() in ("Results", "Preview")]
    assert len(titles) == 2 and all(contrast(s.style) >= 4.5 for s in titles), [(s.text, contrast(s.style)) for s in titles]


async def test_a_reload_naming_an_unknown_theme_is_refused_like_any_bad_setting(ws, home_dirs, make_app):
    """The start-up refuses a theme nothing provides; a configuration reloaded while the app
    runs (F5, ctrl+p → reload) is checked by the same rule and not applied, with the one line
    saying why, and the app goes on with its theme (it raised InvalidThemeError)."""
    config = home_dirs / ".config" / "clawmem" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[ui]\ntheme = "clawmem-light"\n')
    app = make_app(ws, config_path=str(config), theme="clawmem-light")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        config.write_text('[ui]\ntheme = "nope"\n')
        app.reload_config_from_disk()
        await pilot.pause()
        assert app.theme == "clawmem-light" and app.is_running
        notes = [n.message for n in app._notifications]
        assert any(m.startswith(f"Not applied: {config}: ui.theme: no theme named 'nope'") for m in notes), notes
