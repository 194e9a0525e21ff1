"""The Config tab: every setting's effective value and where it came from (default, OpenClaw,
our file, environment, flag), secrets masked; editing validates before it saves (through the
engine's config code, keeping the file's comments) and applies without a restart."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Input, Static

from clawmem.engine import config as config_mod

from .. import keys, settings as ui_settings
from .dialogs import EditValueScreen
from .file_pane import run_external_editor

if TYPE_CHECKING:
    from ..app import ClawmemApp


def show_value(value: Any) -> str:
    if isinstance(value, str):
        return value if value else '""'
    if value is None:
        return "(unset)"
    return json.dumps(value, ensure_ascii=False)


def short_source(source: str) -> str:
    """'file (/long/path)' → 'file': the paths are in the header line."""
    return source.split(" (")[0] if source.startswith(("file", "openclaw")) else source


class ConfigPane(Vertical):
    BINDINGS = keys.bindings(keys.CONFIG_KEYS)
    HELP = "Enter edits the highlighted setting; the value is checked before anything is saved."

    @property
    def cm(self) -> "ClawmemApp":
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Static("", id="config-head", markup=False)
        yield Input(placeholder="Filter settings (e.g. query, ui.)", id="config-filter")
        table: DataTable = DataTable(id="config-table", cursor_type="row", zebra_stripes=False)
        yield table
        yield Static("", id="config-doc", markup=False)

    def on_mount(self) -> None:
        self.query_one("#config-filter", Input).cursor_blink = self.cm.settings.blinkingCursor
        self.reload()

    def rows(self) -> list[tuple[str, str, str]]:
        """(setting, shown value, where it came from) for every engine key, then the app's own."""
        cfg = self.cm.engine.cfg
        out = [(key, show_value(value), short_source(source)) for key, value, source in cfg.effective()]
        file_ui = cfg.ui or {}
        for name in ui_settings.NAMES:
            out.append((f"ui.{name}", show_value(getattr(self.cm.settings, name)), "file" if name in file_ui else "default"))
        return out

    @on(Input.Changed, "#config-filter")
    def _filter(self) -> None:
        self.reload()

    @on(Input.Submitted, "#config-filter")
    def _filter_done(self) -> None:
        self.query_one(DataTable).focus()

    def action_focus_filter(self) -> None:
        self.query_one("#config-filter", Input).focus()

    def reload(self) -> None:
        table = self.query_one(DataTable)
        row = table.cursor_row
        table.clear(columns=True)  # columns too: their widths follow the rows shown
        table.add_columns("Setting", "Value", "From")
        wanted = self.query_one("#config-filter", Input).value.strip().lower()
        for key, value, source in self.rows():
            if wanted in key.lower():
                table.add_row(key, value, source, key=key)
        if row and table.row_count:
            table.move_cursor(row=min(row, table.row_count - 1))
        self._render_head()

    def _render_head(self, status: dict | None = None) -> None:
        cfg = self.cm.engine.cfg
        file_line = f"Config file: {self.cm.shorten(str(cfg.file))}" + ("" if cfg.file and cfg.file.exists() else " (not created yet; defaults in use)")
        lines = [file_line]
        if cfg.openclaw_file:
            lines.append(f"OpenClaw:    {self.cm.shorten(str(cfg.openclaw_file))} (read as defaults under ours)")
        for w in cfg.warnings:
            lines.append(f"Warning:     {w}")
        for note in config_mod.not_honoured(cfg):  # read but not acted on: say what happens instead
            lines.append(f"Not honoured: {note}")
        st = status or self.cm.last_status
        if st:
            pv, vec = st["provider"], st["vector"]
            active = f"{pv['active']} / {pv['model']}" if pv.get("active") and not pv.get("reason") else f"keyword-only ({pv.get('reason')})"
            lines.append(f"Provider:    {active} · vectors: {vec.get('backend')} {vec.get('version') or ''}".rstrip()
                         + (f" ({vec['reason']})" if vec.get("reason") else ""))
        self.query_one("#config-head", Static).update("\n".join(lines))

    def set_status(self, status: dict) -> None:
        self._render_head(status)

    @on(DataTable.RowHighlighted, "#config-table")
    def _row(self, event: DataTable.RowHighlighted) -> None:
        key = str(event.row_key.value)
        self.query_one("#config-doc", Static).update(f"{key}: {self._doc(key)}  (Enter to edit)")

    def _doc(self, key: str) -> str:
        if key.startswith("ui."):
            return ui_settings.DOCS.get(key[3:], "")
        spec = config_mod.KEYS[key]
        parts = [spec.doc] if spec.doc else []
        if spec.choices:
            parts.append("one of " + ", ".join(spec.choices))
        elif spec.expect:
            parts.append(spec.expect)
        elif spec.kind in ("strlist", "providers"):
            parts.append('a list, e.g. ["a", "b"]')
        else:
            parts.append({"bool": "true or false", "int": "an integer", "float": "a number", "str": "text"}.get(spec.kind, spec.kind))
        parts.append(f"default {show_value(spec.default)}")
        return "; ".join(parts)

    @on(DataTable.RowSelected, "#config-table")
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.edit(str(event.row_key.value))

    def action_edit_value(self) -> None:
        table = self.query_one(DataTable)
        if table.row_count:
            self.edit(str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value))

    def edit(self, key: str) -> None:
        cfg = self.cm.engine.cfg
        if key.startswith("ui."):
            current = ui_settings.as_text(getattr(self.cm.settings, key[3:]))
            secret = False
        else:
            secret = config_mod.KEYS[key].secret
            current = ui_settings.as_text(cfg[key]) if not secret else ""
        self.app.push_screen(
            EditValueScreen(key, current, self._doc(key), lambda text: self.cm.save_setting(key, text), secret=secret),
            lambda saved: self.reload() if saved else None,
        )

    def action_edit_file(self) -> None:
        cfg = self.cm.engine.cfg
        if cfg.file is None:
            return
        if not cfg.file.exists():
            self.app.notify(f"{self.cm.shorten(str(cfg.file))} does not exist yet: set a value with Enter first.", severity="warning")
            return
        run_external_editor(self.app, str(cfg.file), self.cm.reload_config_from_disk, lambda reason: None)
