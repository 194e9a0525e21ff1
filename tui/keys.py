"""Every key of the app in one table: binding ids (the keymap vocabulary) and default keys.

Ids are stable: users remap them in `[ui].keymap` (`"file.save" = "ctrl+s,f10"`). The keys
avoid what a focused TextArea or Input owns (f5/f6/f7 select, ctrl+a/e/k/u/w/d/x/c/v/y/z),
combos that need the kitty protocol (ctrl+enter, shift+enter, ctrl+digit) and tmux's
ctrl+b, so they work over plain SSH.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding


@dataclass(frozen=True)
class Key:
    id: str
    keys: str
    action: str
    description: str
    help: str
    show: bool = True
    priority: bool = False
    bound: bool = True  # False: a widget's own key (Enter), listed for help but not remappable


APP_KEYS = [
    Key("app.quit", "ctrl+q", "quit", "Quit", "Quit (asks first if an edit is unsaved or a rebuild runs)", priority=True),
    Key("app.help", "f1", "help", "Help", "This help: every key and what it does"),
    Key("tab.search", "f2", "show_tab('search')", "Search", "Search tab", show=False, priority=True),
    Key("tab.file", "f3", "show_tab('file')", "File", "File tab", show=False, priority=True),
    Key("tab.sync", "f4", "show_tab('sync')", "Sync", "Sync tab", show=False, priority=True),
    # f5 is TextArea's select-word: shadowed on purpose so the tab key works everywhere
    Key("tab.config", "f5", "show_tab('config')", "Config", "Config tab", show=False, priority=True),
    Key("tab.history", "f8", "show_tab('history')", "History", "History tab: what changed in the memory files", show=False, priority=True),
    # not a priority key: a tab may take f10 for itself (the README's keymap example gives it to file.save)
    Key("promote.open", "f10", "promote", "Promote", "Promote screen: review what the agent keeps recalling, for MEMORY.md", show=False),
    Key("search.focus", "ctrl+f", "focus_search", "Find", "Go to the search box", show=False),
    Key("log.append", "ctrl+n", "append_today", "Note", "Append a timestamped entry to today's log"),
]

SEARCH_KEYS = [
    Key("search.open", "enter", "open_result", "Open", "Open the selected result in the File tab", show=False, bound=False),
    Key("search.hidden", "f6", "toggle_hidden", "Hidden", "Show or hide the results below the score threshold"),
    Key("search.explain", "f7", "toggle_explain", "Why", "Explain the selected result's score"),
    Key("search.copy", "ctrl+y", "copy_citation", "Copy", "Copy the selected result's citation (OSC 52)"),
    Key("search.fleet", "ctrl+t", "toggle_fleet", "Fleet", "Search the fleet (every agent this one may read) or this agent's memory",
        show=False),
]

FILE_KEYS = [
    Key("file.save", "ctrl+s", "save", "Save", "Save the file (atomic) and re-index it"),
    Key("file.view", "ctrl+l", "toggle_view", "View", "Switch between the editor and the Markdown view"),
    Key("file.external-editor", "ctrl+o", "external_editor", "$EDITOR", "Edit the file in $EDITOR"),
    Key("file.tree", "ctrl+t", "focus_tree", "Files", "Go to the file tree", show=False),
    # ctrl+f finds in the file here; elsewhere it still goes to the search box
    Key("file.find", "ctrl+f", "find", "Find", "Find in the file (Enter: next match; Esc: back to the text)"),
    # f8 is the History tab; F12 is free in the File tab and reaches it over plain SSH
    Key("file.find-next", "f12", "find_next", "Next", "Find the next match of the last search", show=False),
    Key("file.goto", "ctrl+g", "goto_line", "Line", "Go to a line number", show=False),
    Key("file.top", "ctrl+home", "edge('top')", "Top", "Go to the start of the file", show=False),
    Key("file.bottom", "ctrl+end", "edge('bottom')", "End", "Go to the end of the file", show=False),
]

SYNC_KEYS = [
    Key("index.run", "ctrl+r", "reindex", "Re-index", "Bring the index up to date now"),
    Key("index.rebuild", "f9", "rebuild", "Rebuild", "Rebuild the whole index (into a new file, swapped in when done)"),
]

CONFIG_KEYS = [
    Key("config.edit", "enter", "edit_value", "Edit", "Edit the selected setting (validated before it is saved)", bound=False),
    Key("config.filter", "slash", "focus_filter", "Filter", "Filter the settings by name (Enter goes back to the list)"),
    Key("config.external-editor", "ctrl+o", "edit_file", "$EDITOR", "Edit the config file in $EDITOR, then reload it"),
]

HISTORY_KEYS = [
    Key("history.restore", "r", "restore_file", "Restore", "Restore the file to its version before the selected change (itself undoable)"),
    Key("history.hunk", "u", "undo_hunk", "Undo hunk", "Undo only the marked hunk, keeping everything else the file has now"),
    Key("history.next-hunk", "right_square_bracket", "next_hunk", "Next hunk", "Mark the next hunk of the diff", show=False),
    Key("history.prev-hunk", "left_square_bracket", "prev_hunk", "Prev hunk", "Mark the previous hunk of the diff", show=False),
    Key("history.since", "s", "cycle_since", "Since", "Show changes since today, yesterday, 7 days, 30 days, or all"),
]

PROMOTE_KEYS = [
    Key("promote.accept", "a", "accept", "Accept", "Promote: write the selected passage to MEMORY.md now (undoable in History)"),
    Key("promote.edit", "e", "edit", "Edit", "Promote: edit the text, then ctrl+s accepts it"),
    Key("promote.reject", "x", "reject", "Reject", "Promote: never offer the selected passage again"),
    Key("promote.close", "escape", "close", "Back", "Promote: back to the tabs"),
]

ALL_KEYS = APP_KEYS + SEARCH_KEYS + FILE_KEYS + SYNC_KEYS + CONFIG_KEYS + HISTORY_KEYS + PROMOTE_KEYS
KNOWN_IDS = frozenset(k.id for k in ALL_KEYS if k.bound)
PANES = {"search": SEARCH_KEYS, "file": FILE_KEYS, "sync": SYNC_KEYS, "config": CONFIG_KEYS, "history": HISTORY_KEYS,
         "promote": PROMOTE_KEYS}


def keys_of(k: Key, keymap: dict[str, str]) -> list[str]:
    return [part.strip().lower() for part in keymap.get(k.id, k.keys).split(",")]


def keymap_problem(keymap: dict[str, str]) -> str | None:
    """Why this keymap cannot be used, in one line, or None.

    Two actions of one scope (everywhere, or one tab) may not share a key, and a tab's key may
    not be one of the keys that work everywhere first (quit, the tab keys): one of the two
    would never run. A tab may reuse a key of a lesser app-wide action (ctrl+f finds in the
    File tab and goes to the search box elsewhere)."""
    for k in ALL_KEYS:
        if k.bound and any(not part for part in keys_of(k, keymap)):
            return f'{k.id} = "{keymap.get(k.id, k.keys)}": an empty key; give keys such as "ctrl+s" or "f10,ctrl+s"'
    app_owner: dict[str, Key] = {}
    for scope in [APP_KEYS, *PANES.values()]:
        owner: dict[str, Key] = {}
        for k in scope:
            if not k.bound:
                continue
            for key in keys_of(k, keymap):
                other = owner.get(key)
                if other is None and scope is not APP_KEYS and key in app_owner and app_owner[key].priority:
                    other = app_owner[key]
                if other is not None and other is not k:
                    moved, kept = (k, other) if k.id in keymap else (other, k)  # blame the one the user changed
                    return (f'{moved.id} = "{key}" collides with {kept.id} ({kept.description}); '
                            f"pick another key for {moved.id} (F1 lists them)")
                owner[key] = k
        if scope is APP_KEYS:
            app_owner = owner
    return None


def key_label(keymap: dict[str, str], key_id: str) -> str:
    """The first key bound to `key_id`, as a person reads it: F2, ctrl+f."""
    k = next(k for k in ALL_KEYS if k.id == key_id)
    first = keys_of(k, keymap)[0]
    return first.upper() if first[:1] == "f" and first[1:].isdigit() else first


def bindings(keys: list[Key]) -> list[Binding]:
    return [Binding(k.keys, k.action, k.description, show=k.show, priority=k.priority, id=k.id, tooltip=k.help)
            for k in keys if k.bound]


def help_table(keymap: dict[str, str] | None = None) -> str:
    """The key table as Markdown (F1 and the README), with the user's keymap applied."""
    keymap = keymap or {}
    sections = [("Everywhere", APP_KEYS), ("Search", SEARCH_KEYS), ("File", FILE_KEYS), ("Sync", SYNC_KEYS), ("Config", CONFIG_KEYS), ("History", HISTORY_KEYS), ("Promote", PROMOTE_KEYS)]
    out = []
    for title, keys in sections:
        out.append(f"**{title}**\n\n| Keys | What | Id |\n| --- | --- | --- |")
        for k in keys:
            out.append(f"| `{keymap.get(k.id, k.keys)}` | {k.help} | {f'`{k.id}`' if k.bound else '-'} |")
        out.append("")
    return "\n".join(out)
