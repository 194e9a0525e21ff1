"""The app's tabs, in the order the tab bar shows them, and what is built from that list: the
app's keys, F1's key table and the keymap checks. A tab is a Pane class (widgets/pane.py) plus
its entry in TABS; the app composes, binds, lists in the palette and in F1 whatever is here."""

from __future__ import annotations

from .keys import APP_KEYS_AFTER_TABS, APP_KEYS_BEFORE_TABS, PROMOTE_KEYS, Key, keys_of
from .widgets.config_pane import ConfigPane
from .widgets.file_pane import FilePane
from .widgets.history_pane import HistoryPane
from .widgets.pane import Pane
from .widgets.search_pane import SearchPane
from .widgets.sync_pane import SyncPane

TABS: list[type[Pane]] = [SearchPane, FilePane, SyncPane, ConfigPane, HistoryPane]

APP_KEYS = APP_KEYS_BEFORE_TABS + [tab.TAB_KEY for tab in TABS] + APP_KEYS_AFTER_TABS
# every scope of keys but the app's: each tab, then the Promote screen
PANES: dict[str, list[Key]] = {tab.TAB: tab.KEYS for tab in TABS} | {"promote": PROMOTE_KEYS}
ALL_KEYS = APP_KEYS + [k for scope in PANES.values() for k in scope]
KNOWN_IDS = frozenset(k.id for k in ALL_KEYS if k.bound)


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


def help_table(keymap: dict[str, str] | None = None) -> str:
    """The key table as Markdown (F1 and docs/app.md), with the user's keymap applied."""
    keymap = keymap or {}
    sections = [("Everywhere", APP_KEYS), *((scope.capitalize(), keys) for scope, keys in PANES.items())]
    out = []
    for title, keys in sections:
        out.append(f"**{title}**\n\n| Keys | What | Id |\n| --- | --- | --- |")
        for k in keys:
            out.append(f"| `{keymap.get(k.id, k.keys)}` | {k.help} | {f'`{k.id}`' if k.bound else '-'} |")
        out.append("")
    return "\n".join(out)
