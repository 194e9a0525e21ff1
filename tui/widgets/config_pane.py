"""The Config tab: every setting's effective value and where it came from (default, OpenClaw,
our file, environment, flag), secrets masked; editing validates before it saves (through the
engine's config code, keeping the file's comments) and applies without a restart."""

from __future__ import annotations

import json
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Input, Static

from clawmem.engine import Config, vectors_serving

from .. import keys
from ..keys import Key
from ..messages import ContextLoaded, ReloadConfig, SaveSetting
from ..words import plural
from .dialogs import EditValueScreen
from .file_editor import run_external_editor
from .pane import Pane


def show_value(value: Any) -> str:
    if isinstance(value, str):
        return value if value else '""'
    if value is None:
        return "(unset)"
    return json.dumps(value, ensure_ascii=False)


def meter(used: int, cap: int, cells: int = 10) -> str:
    """A bar of `cells` characters filled as far as used/cap."""
    full = min(cells, round(cells * used / cap)) if cap > 0 else cells
    return "█" * full + "░" * (cells - full)


def context_lines(ctx: dict) -> list[str]:
    """The Config tab's session-start section: each file against its cap, the total, what is cut."""
    caps_from = "OpenClaw's defaults" if ctx["capsFrom"] == "OpenClaw defaults" else ctx["capsFrom"]
    lines = [f"Session start ({ctx['session']}): what an agent loads (clawmem context) · caps: "
             f"{ctx['maxChars']:,} chars a file, {ctx['totalMaxChars']:,} in all, from {caps_from}"]
    width = max(len(f["path"]) for f in ctx["files"])
    for f in ctx["files"]:
        head = f"  {f['path']:<{width}}  {f['role']:<16}"
        if not f["exists"]:
            lines.append(f"{head} {f.get('error') or 'not there yet'}")
            continue
        size = f"{f['chars']:>7,} chars {meter(f['chars'], ctx['maxChars'])}"
        if f["truncated"]:
            size += f" cut: {f['cutChars']:,} chars ({plural(f['cutLines'], 'line')}), {f['reason']}"
        lines.append(f"{head} {size}")
    total = ctx["includedChars"]
    cut = [f for f in ctx["files"] if f.get("truncated")]
    lines.append(f"  {'total':<{width}}  {'':<16} {total:>7,} chars {meter(total, ctx['totalMaxChars'])} of "
                 f"{ctx['totalMaxChars']:,}" + (f" · {plural(len(cut), 'file')} cut" if cut else " · nothing cut"))
    return lines


def clip(text: str, width: int) -> str:
    """`text` in at most `width` cells, cut with an ellipsis rather than mid-word unseen."""
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def context_summary(ctx: dict) -> str:
    """The session-start section in one line (the section collapsed)."""
    cut = [f for f in ctx["files"] if f.get("truncated")]
    return (f"Session start: {ctx['includedChars']:,} of {ctx['totalMaxChars']:,} chars, "
            f"{plural(sum(1 for f in ctx['files'] if f['exists']), 'file')}, "
            + (f"{plural(len(cut), 'file')} cut" if cut else "nothing cut"))


def short_source(source: str) -> str:
    """'file (/long/path)' → 'file': the paths are in the header line."""
    return source.split(" (")[0] if source.startswith(("file", "openclaw")) else source


CONTEXT_KEY = Key("config.context", "f6", "toggle_context", "Session start",
                  "Show or fold the session-start section (what an agent loads; folded on short terminals)")


class ConfigPane(Pane, Vertical):
    TAB = "config"
    # f5 is TextArea's select-word: shadowed on purpose so the tab key works everywhere
    TAB_KEY = keys.tab_key("config", "f5", "Config tab")
    ABOUT = "shows every setting and where it came from"
    KEYS = [
        Key("config.edit", "enter", "edit_value", "Edit", "Edit the selected setting (validated before it is saved)", bound=False),
        Key("config.filter", "slash", "focus_filter", "Filter", "Filter the settings by name (Enter goes back to the list)"),
        Key("config.external-editor", "ctrl+o", "edit_file", "$EDITOR", "Edit the config file in $EDITOR, then reload it"),
        CONTEXT_KEY,
    ]
    PALETTE = [
        ("Edit the config file in $EDITOR", "Config: then reload it", "edit_file"),
        ("Show or fold what an agent loads at session start", "Config: the session-start section", "toggle_context"),
    ]
    BINDINGS = keys.bindings(KEYS)
    HELP = "Enter edits the highlighted setting; the value is checked before anything is saved."

    def tab_shown(self) -> None:
        self.query_one("#config-table").focus()

    def compose(self) -> ComposeResult:
        yield Static("", id="config-head", markup=False)
        yield Input(placeholder="/ filters the settings (e.g. query, ui.)", id="config-filter", compact=True)
        table: DataTable = DataTable(id="config-table", cursor_type="row", zebra_stripes=False)
        yield table
        yield Static("", id="config-doc", markup=False)
        yield Static("", id="context-view", markup=False)

    TALL = 30  # rows from which the session-start section starts unfolded

    def on_mount(self) -> None:
        self.query_one("#config-filter", Input).cursor_blink = self.host.settings.blinkingCursor
        self.context_open = self.app.size.height >= self.TALL
        self._session: tuple[dict | None, str | None] = (None, None)
        self._width = 0
        self.call_after_refresh(self.reload)  # a hidden tab's ~150 rows wait for the first frame

    def rows(self) -> list[tuple[str, str, str]]:
        """(setting, shown value, where it came from) for every engine key, then the app's own."""
        cfg = self.host.engine.cfg
        out = [(key, self.host.shorten(show_value(value)), short_source(source)) for key, value, source in cfg.effective()]
        file_ui = cfg.ui or {}
        for name in self.host.settings.names():
            out.append((f"ui.{name}", show_value(getattr(self.host.settings, name)), "file" if name in file_ui else "default"))
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
        wanted = self.query_one("#config-filter", Input).value.strip().lower()
        rows = [row for row in self.rows() if wanted in row[0].lower()]
        # the three columns fit the table's width: From (short) and Setting whole where they
        # can be, the value gets the rest and ends in … when longer
        inside = table.scrollable_content_region.width or self.app.size.width - 2 - 2  # border, scrollbar
        room = max(30, inside - 3 * 2)  # minus the cells' padding
        source_w = min(18, max([len("From")] + [len(r[2]) for r in rows]))
        key_w = min(room * 2 // 5, max([len("Setting")] + [len(r[0]) for r in rows]))
        value_w = max(8, room - source_w - key_w)
        table.add_column("Setting", width=key_w)
        table.add_column("Value", width=value_w)
        table.add_column("From", width=source_w)
        for key, value, source in rows:
            table.add_row(clip(key, key_w), clip(value, value_w), clip(source, source_w), key=key)
        if row and table.row_count:
            table.move_cursor(row=min(row, table.row_count - 1))
        self._render_head()

    def _render_head(self, status: dict | None = None) -> None:
        cfg = self.host.engine.cfg
        file_line = f"Config file: {self.host.shorten(str(cfg.file))}" + ("" if cfg.file and cfg.file.exists() else " (not created yet; defaults in use)")
        lines = [file_line]
        if cfg.openclaw_file:
            lines.append(f"OpenClaw:    {self.host.shorten(str(cfg.openclaw_file))} (read as defaults under ours)")
        for w in cfg.warnings:
            lines.append(f"Warning:     {w}")
        for note in cfg.not_honoured():  # read but not acted on: say what happens instead
            lines.append(f"Not honoured: {note}")
        st = status or self.host.last_status
        if st:
            pv, vec = st["provider"], st["vector"]
            active = f"{pv['active']} / {pv['model']}" if vectors_serving(pv) else f"keyword-only ({pv.get('reason')})"
            lines.append(f"Provider:    {active} · vectors: {vec.get('backend')} {vec.get('version') or ''}".rstrip()
                         + (f" ({vec['reason']})" if vec.get("reason") else ""))
        self.query_one("#config-head", Static).update("\n".join(lines))

    def on_config(self) -> None:
        self.reload()

    def on_status(self, status: dict) -> None:
        self._render_head(status)
        self.load_context()  # the files may have changed: the index saw them

    @work(thread=True, exclusive=True, group="context", exit_on_error=False)
    def load_context(self) -> None:
        try:
            self.post_message(ContextLoaded(self.host.engine.context(today=self.host.clock().date())))
        except Exception as exc:  # an unreadable OpenClaw config, a workspace gone…: said, never fatal
            self.post_message(ContextLoaded(None, str(exc) or type(exc).__name__))

    @on(ContextLoaded)
    def _context_loaded(self, msg: ContextLoaded) -> None:
        msg.stop()
        self._session = (msg.context, msg.error)
        self._render_context()

    def _render_context(self) -> None:
        ctx, error = self._session
        key = keys.keys_of(CONTEXT_KEY, self.host.settings.keymap)[0]
        key = key.upper() if key[:1] == "f" and key[1:].isdigit() else key
        if ctx is None:
            text = f"Session start: cannot tell ({error})" if error else ""
        elif self.context_open:
            text = "\n".join(context_lines(ctx))
        else:
            text = f"▶ {context_summary(ctx)} · {key} unfolds"
        self.query_one("#context-view", Static).update(text)

    def action_toggle_context(self) -> None:
        self.context_open = not self.context_open
        self._render_context()

    def on_click(self, event) -> None:
        if event.widget is not None and event.widget.id == "context-view":
            self.action_toggle_context()

    def on_resize(self) -> None:
        if self.size.width != self._width:  # the columns follow the width
            self._width = self.size.width
            self.reload()

    @on(DataTable.RowHighlighted, "#config-table")
    def _row(self, event: DataTable.RowHighlighted) -> None:
        key = str(event.row_key.value)
        self.query_one("#config-doc", Static).update(f"{key}: {self._doc(key)}  (Enter to edit)")

    def _doc(self, key: str) -> str:
        if key.startswith("ui."):
            return self.host.settings.doc(key[3:])
        spec = Config.keys()[key]
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
        cfg = self.host.engine.cfg
        if key.startswith("ui."):
            current = self.host.settings.as_text(getattr(self.host.settings, key[3:]))
            secret = False
        else:
            secret = Config.keys()[key].secret
            current = self.host.settings.as_text(cfg[key]) if not secret else ""
        self.app.push_screen(
            EditValueScreen(key, current, self._doc(key), lambda text, answer: self.post_message(SaveSetting(key, text, answer)),
                            secret=secret),
            lambda saved: self.reload() if saved else None,
        )

    def action_edit_file(self) -> None:
        cfg = self.host.engine.cfg
        if cfg.file is None:
            return
        if not cfg.file.exists():
            self.app.notify(f"{self.host.shorten(str(cfg.file))} does not exist yet: set a value with Enter first.", severity="warning")
            return
        run_external_editor(self.app, str(cfg.file), lambda: self.post_message(ReloadConfig()), lambda reason: None)
