"""The terminal app: Search, File, Sync, Config and History tabs over the engine facade.

The app depends on its panes, never the other way round: the panes read the app through the
PaneHost protocol (tui/host.py) and ask it for things by posting messages (tui/messages.py).
Anything that can take time (indexing, status, search, previews) runs in a thread worker that
posts messages; handlers on the UI thread update the widgets. Engine events reach the UI
through one bridge, `post_engine_event`, from the app's own index worker or from the watcher
(engine.sync).
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Callable

from textual import on, work
from textual.app import App, ComposeResult
from textual.app import InvalidThemeError
from textual.widgets import Footer, Static, TabbedContent, TabPane
from textual.worker import Worker, WorkerState, get_current_worker

from clawmem.engine import Config, ConfigError, Engine, events as ev, human, load_config, vectors_serving

from . import keys, settings as ui_settings
from .commands import ClawmemCommands
from .messages import (EngineEvent, FilesBehind, FilesListed, IndexProgress, IndexRequested, IndexWorkerDone, OpenFile,
                       PromoteCounted, ReloadConfig, SaveSetting, StatusLoaded, to_message)
from .settings import DEFAULT_THEME, UISettings
from .themes import load_themes
from .tabs import APP_KEYS, TABS, help_table, key_label
from .widgets.config_pane import ConfigPane
from .widgets.dialogs import AppendScreen, CreateWorkspaceScreen, HelpScreen, RebuildRunningScreen, UnsavedScreen
from .widgets.file_pane import FilePane
from .widgets.history_pane import HistoryPane
from .widgets.pane import Pane
from .widgets.promote_screen import PromoteScreen
from .widgets.search_pane import SearchPane
from .widgets.sync_pane import SyncPane

POLL_SECONDS = 5.0  # freshness check (stat only) when watching without engine.sync
STATUS_SECONDS = 10.0  # status refresh while watching
# settings whose change means the index must be brought up to date
INDEX_KEYS = ("workspace", "agentId", "extraPaths", "sources", "sessions.includeArchives", "chunking.tokens",
              "chunking.overlap", "provider", "model", "fallback", "local.modelPath", "store.path", "store.vector.enabled")


class ClawmemApp(App):
    CSS_PATH = Path(__file__).with_name("app.tcss")
    TITLE = "clawmem"
    BINDINGS = keys.bindings(APP_KEYS)
    COMMANDS = App.COMMANDS | {ClawmemCommands}

    def __init__(
        self,
        engine: Engine,
        *,
        settings: UISettings | None = None,
        clock: Callable[[], dt.datetime] | None = None,
        load_args: dict | None = None,
    ) -> None:
        super().__init__()
        Engine.name_this_process("app")  # what this process writes, the journal credits to the app
        self.engine = engine
        self.settings = settings or UISettings()
        self.clock = clock or dt.datetime.now
        self.load_args = load_args if load_args is not None else {}
        self.files: list[dict] = []
        self.last_status: dict | None = None
        self.syncer = None
        self._index_running = False
        self._index_again: tuple[str, bool, tuple | None] | None = None
        self._poll_timer = None
        self._status_timer = None
        self._started_up = False
        self.promote_count = 0  # candidates the Promote screen offers (shown in the header)
        self.startup_requested = False  # the start-up index, file list and status have been asked for
        themes, self.theme_problems = load_themes()
        for theme in themes:
            self.register_theme(theme)
        try:
            self.theme = self.settings.theme
        except InvalidThemeError:
            self.theme_problems.append(f"ui.theme: no theme named {self.settings.theme!r}; using {DEFAULT_THEME}")
            self.theme = DEFAULT_THEME
        self.animation_level = self.settings.animation  # type: ignore[assignment]

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Static("clawmem", id="topbar", markup=False)
        with TabbedContent(initial=TABS[0].TAB, id="tabs"):
            for tab in TABS:
                with TabPane(self.tab_label(tab.TAB), id=tab.TAB):
                    yield tab(id=f"{tab.TAB}-pane")
        yield Footer()

    def tab_label(self, tab: str) -> str:
        """"Search F2": the tab's name and its key as configured."""
        return f"{tab.capitalize()} {key_label(self.settings.keymap, f'tab.{tab}')}"

    def pane(self, tab: str) -> Pane:
        return self.query_one(f"#{tab}-pane", Pane)  # type: ignore[type-abstract]

    def panes(self) -> list[Pane]:
        """Every tab's pane, in TABS order: the app hands each of them its live state. None
        before the app has composed them or once it has begun to close (is_running false: it
        takes widgets down from the inside out, so a pane may outlive its own bar): engine
        events and the app's workers post from other threads at any time (a sync ending as the
        app closed raised NoMatches out of the app). Every handler that draws goes through here."""
        if not self.is_running:
            return []
        return [p for tab in TABS for p in self.query(f"#{tab.TAB}-pane").results(Pane)]  # type: ignore[type-abstract]

    @property
    def search_pane(self) -> SearchPane:
        return self.query_one(SearchPane)

    @property
    def file_pane(self) -> FilePane:
        return self.query_one(FilePane)

    @property
    def sync_pane(self) -> SyncPane:
        return self.query_one(SyncPane)

    @property
    def config_pane(self) -> ConfigPane:
        return self.query_one(ConfigPane)

    @property
    def history_pane(self) -> HistoryPane:
        return self.query_one(HistoryPane)

    def on_mount(self) -> None:
        if self.settings.keymap:
            self.set_keymap(self.settings.keymap)
        self._render_topbar()
        for problem in self.theme_problems:
            self.sync_pane.log_line(f"theme skipped: {problem}")
        if self.theme_problems:
            listed = "\n".join(str(p) for p in self.theme_problems)
            self.notify(f"Some themes were skipped:\n{listed}", title="Themes", severity="error", timeout=20)
        self.search_pane.focus_input()
        if not self.engine.workspace.is_dir():
            self.action_create_workspace()
            self.load_status()
        else:
            # after the first frame: the workers' Python would share the GIL with it (cold start)
            self.call_after_refresh(self._start)
        self._started_up = True

    def action_create_workspace(self) -> None:
        if self.engine.workspace.is_dir():
            self.notify(f"{self.shorten(str(self.engine.workspace))} exists already.")
            return
        self.push_screen(CreateWorkspaceScreen(self.shorten(str(self.engine.workspace))), self._create_workspace)

    def _create_workspace(self, choice: str | None) -> None:
        if choice != "create":
            self.notify("No workspace yet: ctrl+p, \"Create the workspace\" makes it later; clawmem --workspace PATH "
                        "opens another folder.", severity="warning", timeout=10)
            return
        try:
            self.engine.create_workspace()
        except OSError as exc:
            self.notify(f"Cannot create {self.engine.workspace}: {exc.strerror or exc}", severity="error", timeout=10)
            return
        self.notify(f"Created {self.shorten(str(self.engine.workspace))}: MEMORY.md and memory/")
        self._start()

    def _start(self) -> None:
        # with the watcher (engine.sync) running, it syncs at start itself
        if not (self.settings.watch and self.start_watch()):
            self.request_index("start")
        self.load_files()
        self.load_status()
        self.load_promote_count()
        self.startup_requested = True

    def shorten(self, path: str) -> str:
        """Paths as people read them: the home folder as ~."""
        home = str(Path.home())
        if path == home or path.startswith(home + os.sep):
            return "~" + path[len(home):]
        return path

    def _render_topbar(self) -> None:
        if not self.panes():  # starting or closing: nothing to draw on
            return
        cfg = self.engine.cfg
        mode = ""
        st = self.last_status
        if st:
            pv = st["provider"]
            mode = f" · {pv['active']}/{pv['model']}" if vectors_serving(pv) else " · keyword-only"
        running = self.sync_pane.progress  # on every tab, like k9s's header
        # the running job comes first: a narrow terminal cuts the line's end, never the job
        job = f" · {running}" if running else ""
        n = self.promote_count
        promote = f" · {n} to promote ({key_label(self.settings.keymap, 'promote.open')})" if n else ""
        self.query_one("#topbar", Static).update(f"clawmem{job} · {self.shorten(str(cfg.workspace))} · agent {cfg.agent_id}{mode}{promote}")

    def notify(self, message: str, *, title: str = "", markup: bool = True, **kw) -> None:
        """Every notification is text: a file name or an error holding terminal codes or
        brackets is shown as it is (engine.printable), never interpreted."""
        super().notify(human.printable(str(message)), title=human.printable(title), markup=False, **kw)

    # ------------------------------------------------------------------ the bridge: workers → messages

    def post_engine_event(self, event: ev.Event) -> None:
        """Thread-safe: every engine event reaches the UI through here."""
        self.post_message(to_message(event))

    def request_index(self, reason: str, force: bool = False, paths: tuple | None = None) -> None:
        """Bring the index up to date now, or right after the run in progress. `paths`: the
        files just written; only they are indexed (None: every source is listed)."""
        if force:
            paths = None
        if self.syncer is not None:
            self.syncer.request("rebuild" if force else reason, paths)
            return
        if self._index_running:
            prior = self._index_again
            if prior is not None:  # one run after this one covers both requests
                paths = None if prior[2] is None or paths is None else tuple(dict.fromkeys(prior[2] + paths))
            self._index_again = (reason, force or bool(prior and prior[1]), paths)
            return
        self._index_running = True
        self._index_worker(force, reason, paths)

    @work(thread=True, exclusive=True, group="index", exit_on_error=False, description="index")
    def _index_worker(self, force: bool, reason: str, paths: tuple | None = None) -> None:
        worker = get_current_worker()
        error = None
        try:
            for event in self.engine.index(force=force, reason=reason, should_stop=lambda: worker.is_cancelled,
                                           paths=list(paths) if paths is not None else None):
                self.post_engine_event(event)
        except Exception as exc:  # lock held too long, unreadable index…: shown, never fatal
            error = str(exc) or type(exc).__name__
        self.post_message(IndexWorkerDone(error))

    @work(thread=True, exclusive=True, group="status", exit_on_error=False)
    def load_status(self) -> None:
        status = self.engine.status()
        if not get_current_worker().is_cancelled:  # a newer status is on its way: never show an older one after it
            self.post_message(StatusLoaded(status))

    @work(thread=True, exclusive=True, group="promote-count", exit_on_error=False)
    def load_promote_count(self) -> None:
        try:
            found, _ = self.engine.promotion_candidates(now=self.clock().timestamp())
        except Exception:
            return  # an unreadable recall store: the Promote screen says why when opened
        if not get_current_worker().is_cancelled:
            self.post_message(PromoteCounted(sum(c.status == "ok" for c in found)))

    @work(thread=True, exclusive=True, group="files", exit_on_error=False)
    def load_files(self) -> None:
        files = self.engine.list_files()
        if not get_current_worker().is_cancelled:
            self.post_message(FilesListed(files))

    @work(thread=True, exclusive=True, group="freshness", exit_on_error=False)
    def _check_freshness(self) -> None:
        if self.engine.freshness()["dirty"]:
            self.post_message(FilesBehind("files changed on disk"))

    def start_watch(self) -> bool:
        """Keep the index fresh while the app runs; True when the engine's watcher runs."""
        if self._status_timer is None:  # freshness (files behind, watcher) stays current on screen
            self._status_timer = self.set_interval(STATUS_SECONDS, self.load_status)
        try:
            self.syncer = self.engine.watch(on_event=self.post_engine_event)
            self._watcher("running")
            return True
        except Exception as exc:
            self.syncer = None
            self.sync_pane.log_line(f"watcher could not start ({exc}); checking for changes every {POLL_SECONDS:.0f} s")
        if self._poll_timer is None:
            self._poll_timer = self.set_interval(POLL_SECONDS, self._check_freshness)
        self._watcher(f"polling (a stat check every {POLL_SECONDS:.0f} s)")
        return False

    def stop_watch(self) -> None:
        if self._status_timer is not None:
            self._status_timer.stop()
            self._status_timer = None
        if self.syncer is not None:
            try:
                self.syncer.stop()
            finally:
                self.syncer = None
        if self._poll_timer is not None:
            self._poll_timer.stop()
            self._poll_timer = None
        self._watcher("off")

    def _watcher(self, state: str) -> None:
        for pane in self.panes():
            pane.on_watcher(state)

    def on_unmount(self) -> None:
        if self.syncer is not None:
            try:
                self.syncer.stop()
            except Exception:
                pass

    # ------------------------------------------------------------------ message handlers

    @on(EngineEvent)
    def _engine_event(self, msg: EngineEvent) -> None:
        e = msg.event
        panes = self.panes()
        if not panes:  # starting or closing: nothing shows it (on_mount reads the status afresh)
            return
        for pane in panes:
            pane.on_engine_event(e)
        index = str(self.engine.index_path)
        if isinstance(e, ev.Warning) and e.path in (index, index + ".rebuild"):
            # about the index file itself (moved aside, adopted): say it where it is seen
            self.notify(f"{self.shorten(e.path)}: {e.message}", title="Index", severity="warning", timeout=20)
        if isinstance(e, (ev.JobStarted, ev.JobFinished)):
            self._render_topbar()
        if isinstance(e, ev.JobStarted) and not (self.last_status or {}).get("index", {}).get("files"):
            self.load_status()  # a first index: its messages say it is being built, not "no index yet"
        if isinstance(msg.event, ev.JobFinished):
            self.load_status()  # its counts, the last sync and the freshness are new in any case
            # the rest only when the job changed what they show (each was re-asked after every sync)
            if any(not p.startswith("sessions/") for p in e.changed):
                self.load_promote_count()  # a daily log may have changed under a candidate
            listed = {f["path"] for f in self.files}
            if e.files_removed or any(p not in listed for p in e.changed):
                self.load_files()  # a file came or went: the File tab's tree
            for pane in panes:
                pane.on_synced(e)

    @on(PromoteCounted)
    def _promote_counted(self, msg: PromoteCounted) -> None:
        self.promote_count = msg.count
        self._render_topbar()

    @on(IndexProgress)
    def _index_progress(self, msg: IndexProgress) -> None:
        for pane in self.panes():
            pane.on_progress(msg.progress)
        self._render_topbar()

    @on(IndexWorkerDone)
    def _index_done(self, msg: IndexWorkerDone) -> None:
        self._index_running = False
        if msg.error and self.panes():
            self.sync_pane.worker_failed(msg.error)
            self.notify(f"Index failed: {msg.error}", severity="error", timeout=10)
        if self._index_again is not None:
            reason, force, paths = self._index_again
            self._index_again = None
            self.request_index(reason, force, paths)

    @on(FilesBehind)
    def _files_behind(self, msg: FilesBehind) -> None:
        if not self._index_running:
            self.request_index(msg.reason)

    @on(IndexRequested)
    def _index_requested(self, msg: IndexRequested) -> None:
        self.request_index(msg.reason, msg.force, msg.paths)

    @on(SaveSetting)
    def _save_setting(self, msg: SaveSetting) -> None:
        msg.answer(self.save_setting(msg.key, msg.text))

    @on(ReloadConfig)
    def _reload_config(self) -> None:
        self.reload_config_from_disk()

    @on(StatusLoaded)
    def _status_loaded(self, msg: StatusLoaded) -> None:
        self.last_status = msg.status
        self._render_topbar()
        for pane in self.panes():
            pane.on_status(msg.status)

    @on(FilesListed)
    def _files_listed(self, msg: FilesListed) -> None:
        self.files = msg.files
        for pane in self.panes():
            pane.on_files(msg.files)

    @on(OpenFile)
    def _open_file(self, msg: OpenFile) -> None:
        self.open_file(msg.path, msg.start, msg.end, msg.terms)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:  # workers catch their own errors; this is the backstop
            error = event.worker.error
            self.sync_pane.log_line(f"error in {event.worker.name}: {error}")
            self.notify(f"{event.worker.name} failed: {error}", severity="error", timeout=10)

    # ------------------------------------------------------------------ actions

    def show_tab(self, tab: str) -> None:
        tabs = self.query_one("#tabs", TabbedContent)
        if tabs.active == tab:
            self.pane(tab).tab_shown()
        else:
            tabs.active = tab  # then _tab_activated

    @on(TabbedContent.TabActivated, "#tabs")
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        """However a tab was shown (its key, the palette, a click on its title, the tab bar's
        arrows), typing goes to what it works with first, unless focus is already inside it."""
        pane = self.pane(str(event.pane.id))
        if self.focused is None or pane not in self.focused.ancestors_with_self:
            pane.tab_shown()

    def action_show_tab(self, tab: str) -> None:
        self.show_tab(tab)

    def action_promote(self) -> None:
        if isinstance(self.screen, PromoteScreen):
            return
        if not self.engine.workspace.is_dir():
            self.notify(f"No workspace at {self.shorten(str(self.engine.workspace))} yet.", severity="error")
            return
        self.push_screen(PromoteScreen(), lambda _: self._promote_closed())

    def _promote_closed(self) -> None:
        self.load_promote_count()
        if self.history_pane.shown:
            self.history_pane.reload()  # the promotions just made

    def action_focus_search(self) -> None:
        self.show_tab("search")

    def action_pane(self, tab: str, action: str) -> None:
        """Run a tab's action from the palette (the tab is shown first)."""
        self.show_tab(tab)
        getattr(self.pane(tab), f"action_{action}")()

    def open_file(self, path: str, start: int | None = None, end: int | None = None, terms: tuple[str, ...] = ()) -> None:
        self.query_one("#tabs", TabbedContent).active = "file"
        self.file_pane.open(path, start, end, terms=terms)

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(help_text(self.settings.keymap)))

    async def action_quit(self) -> None:
        fp = self.file_pane
        if fp.dirty and fp.opened is not None:
            def answer(choice: str | None) -> None:
                if choice == "discard":
                    fp.discard_recovery()
                if choice == "discard" or (choice == "save" and fp.save()):
                    self._quit_unless_rebuilding()

            self.push_screen(UnsavedScreen(fp.opened.path, "quit"), answer)
            return
        self._quit_unless_rebuilding()

    def _quit_unless_rebuilding(self) -> None:
        """Quitting stops a running rebuild (the next index resumes it): ask first."""
        if self.sync_pane.running != "rebuild":
            self.exit()
            return
        self.push_screen(RebuildRunningScreen(), lambda choice: self.exit() if choice == "quit" else None)

    def action_append_today(self) -> None:
        ws = self.engine.workspace
        if not ws.is_dir():
            self.notify(f"No workspace at {self.shorten(str(ws))} yet.", severity="error")
            return
        now = self.clock()
        target = self.engine.daily_log_path(now.date())
        rel = f"memory/{target.name}"

        def append(text: str | None) -> None:
            if not text:
                return
            try:
                _, line = self.engine.log_entry(text, self.clock())
            except OSError as exc:
                self.notify(f"Not added: {rel}: {exc.strerror or exc}", severity="error", timeout=10)
                return
            self.notify(f"Added to {rel}")
            self.request_index(f"appended to {rel}")
            self.load_files()
            fp = self.file_pane
            if fp.opened and fp.dirty:
                if fp.opened.path == rel:
                    self.notify("Your unsaved edits of this log stay; saving will offer to merge them.", severity="warning")
                return
            last = line + text.strip("\n").count("\n") + 2  # the entry's last line, under its heading and a blank line
            self.open_file(rel, line, last)
            self.file_pane.cursor_to_line_end(last)  # ready to go on typing the entry

        self.push_screen(AppendScreen(rel, now.strftime("%H:%M")), append)

    # ------------------------------------------------------------------ settings

    def save_setting(self, key: str, text: str) -> str | None:
        """Validate, write to our TOML file (comments kept) and apply; the error line, or None."""
        cfg = self.engine.cfg
        try:
            if key.startswith("ui."):
                name = key[3:]
                value = ui_settings.parse_text(name, text)
                if name == "theme" and value not in self.available_themes:
                    raise ValueError(f"no theme named {value!r} (known: {', '.join(sorted(self.available_themes))})")
            else:
                value = Config.parse_text(key, text)
        except ValueError as exc:
            return f"{key}: {exc}"
        file = cfg.file
        if file is None:
            return f"{key}: no config file to write to"
        try:
            with self.engine.config_change(key, value):  # the file as a whole must still load, else it is put back
                new_cfg = load_config(**self.load_args)
                new_ui = ui_settings.from_table(new_cfg.ui, str(file))
        except (ConfigError, ValueError, OSError) as exc:
            return f"{key}: {exc}"
        if key.startswith("ui."):
            self.engine.cfg.ui = new_cfg.ui
            self.apply_settings(new_ui)
        else:
            self.apply_config(new_cfg, reindex=key in INDEX_KEYS)
            source = new_cfg.sources.get(key, "")
            if source.startswith(("env", "flag")):
                self.notify(f"Saved {key}, but {source} overrides the file while this runs.", severity="warning", timeout=10)
                return None
        self.notify(f"Saved {key}")
        return None

    def apply_settings(self, new: UISettings) -> None:
        old, self.settings = self.settings, new
        if new.theme != old.theme:
            self.theme = new.theme
        if new.keymap != old.keymap:
            self.set_keymap(new.keymap)
            tabs = self.query_one("#tabs", TabbedContent)
            for tab in TABS:
                tabs.get_tab(tab.TAB).label = self.tab_label(tab.TAB)
        if new.animation != old.animation:
            self.animation_level = new.animation  # type: ignore[assignment]
        if new.blinkingCursor != old.blinkingCursor:
            for widget in self.query("Input, TextArea"):
                widget.cursor_blink = new.blinkingCursor  # type: ignore[attr-defined]
        if new.watch != old.watch:
            if new.watch:
                self.start_watch()
            else:
                self.stop_watch()

    def apply_config(self, cfg, reindex: bool) -> None:
        self.engine.reload_config(cfg)
        self._render_topbar()
        self.load_status()
        self.load_files()
        if reindex:
            self.request_index("configuration changed")
        for pane in self.panes():
            pane.on_config()

    def reload_config_from_disk(self) -> None:
        try:
            cfg = load_config(**self.load_args)
            new_ui = ui_settings.from_table(cfg.ui, str(cfg.file))
            check_theme(new_ui.theme, str(cfg.file), self.available_themes)
        except ConfigError as exc:
            self.notify(f"Not applied: {exc}", severity="error", timeout=15)
            return
        self.apply_settings(new_ui)
        self.apply_config(cfg, reindex=True)
        self.notify("Configuration reloaded")

    def watch_theme(self, name: str) -> None:
        """A theme picked in the palette is remembered in [ui].theme."""
        if not self._started_up or name == self.settings.theme or self.engine.cfg.file is None:
            return
        try:
            self.engine.config_set("ui.theme", name)
            self.settings = self.settings.with_value("theme", name)
            for pane in self.panes():
                pane.on_config()
        except (ConfigError, ValueError, OSError) as exc:
            self.notify(f"Theme not remembered: {exc}", severity="warning")


def help_text(keymap: dict[str, str]) -> str:
    return (
        "# clawmem\n\n"
        "Esc, F1 or q closes this help; arrows and PgUp/PgDn scroll it.\n\n"
        "Long-term memory kept as plain Markdown. "
        + "; ".join(f"**{tab.TAB.capitalize()}** ({tab.TAB_KEY.keys.upper()}) {tab.ABOUT}" for tab in TABS)
        + ". **Promote** (F10) reviews the daily-log passages the agent keeps recalling before they go to MEMORY.md.\n\n"
        "Every action is also in the command palette (**ctrl+p**). Keys can be changed in the "
        "`[ui.keymap]` table of the config file with the ids below.\n\n"
        + help_table(keymap)
        + "\nEsc, F1 or q closes this help."
    )


def check_theme(name: str, where: str, known=None) -> None:
    """The one rule for ui.theme: a theme no file or built-in provides is a bad setting
    (ConfigError: one line naming the file, the key and the choices). At start-up it stops the
    app; a configuration reloaded while the app runs is then not applied. `known`: the themes
    the running app registered (a file added since is not one of them), else those on disk."""
    from textual.theme import BUILTIN_THEMES

    themes, problems = load_themes()
    ours = sorted(t.name for t in themes)
    if name in (known if known is not None else (*ours, *BUILTIN_THEMES)):
        return
    broken = next((p for p in problems if name in p.path), None)
    why = f" ({broken} was skipped)" if broken else ""
    raise ConfigError(f"{where}: ui.theme: no theme named {name!r}{why}; use one of {', '.join(ours)}, "
                      "or Textual's (ctrl+p → theme lists them)")


def main(args) -> int:
    """`clawmem` with no subcommand (tui/cli/); returns the exit code."""
    cfg = load_config(args.config, workspace=args.workspace, agent=args.agent)
    settings = ui_settings.from_table(cfg.ui, str(cfg.file))
    check_theme(settings.theme, str(cfg.file))
    engine = Engine(cfg, persistent=True)
    app = ClawmemApp(engine, settings=settings, load_args={"config_path": args.config, "workspace": args.workspace, "agent": args.agent})
    try:
        app.run()
    finally:
        engine.close()
    return app.return_code or 0
