"""Keys: binding ids (the keymap vocabulary), default keys, and the keys that belong to no tab.
Each tab declares its own keys on its Pane class; tabs.py gathers them all into one table.

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


APP_KEYS_BEFORE_TABS = [
    Key("app.quit", "ctrl+q", "quit", "Quit", "Quit (asks first if an edit is unsaved or a rebuild runs)", priority=True),
    Key("app.help", "f1", "help", "Help", "This help: every key and what it does"),
]
# then each tab's key (Pane.TAB_KEY, in tabs.py's order), then:
APP_KEYS_AFTER_TABS = [
    # not a priority key: a tab may take f10 for itself (docs/app.md's keymap example gives it to file.save)
    Key("promote.open", "f10", "promote", "Promote", "Promote screen: review what the agent keeps recalling, for MEMORY.md", show=False),
    Key("search.focus", "ctrl+f", "focus_search", "Find", "Go to the search box", show=False),
    Key("log.append", "ctrl+n", "append_today", "Note", "Append a timestamped entry to today's log"),
]

PROMOTE_KEYS = [
    Key("promote.accept", "a", "accept", "Accept", "Promote: write the selected passage to MEMORY.md now (undoable in History)"),
    Key("promote.edit", "e", "edit", "Edit", "Promote: edit the text, then ctrl+s accepts it"),
    Key("promote.reject", "x", "reject", "Reject", "Promote: never offer the selected passage again"),
    Key("promote.supersede", "s", "supersede", "Supersede",
        "Promote: write the selected fact and mark the promoted fact it contradicts superseded (kept, struck, dated)"),
    Key("promote.close", "escape", "close", "Back", "Promote: back to the tabs"),
]


def keys_of(k: Key, keymap: dict[str, str]) -> list[str]:
    return [part.strip().lower() for part in keymap.get(k.id, k.keys).split(",")]


def bindings(keys: list[Key]) -> list[Binding]:
    return [Binding(k.keys, k.action, k.description, show=k.show, priority=k.priority, id=k.id, tooltip=k.help)
            for k in keys if k.bound]


def tab_key(tab: str, keys: str, help: str) -> Key:
    """The key that shows `tab` from anywhere: a priority key, so a focused editor cannot take it."""
    return Key(f"tab.{tab}", keys, f"show_tab('{tab}')", tab.capitalize(), help, show=False, priority=True)
