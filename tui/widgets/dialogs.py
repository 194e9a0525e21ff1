"""Modal questions: unsaved edits, a file changed or deleted on disk, unsaved text kept from
an earlier session, today's log entry, a config value, creating the workspace, help. Each answers by dismissing with a value; Escape cancels."""

from __future__ import annotations

from typing import Callable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from clawmem.engine import human


def diff_content(diff: list[str]) -> Content:
    """A unified diff coloured: + lines green, - lines red (the ---/+++ header is left out)."""
    lines = []
    for line in map(human.printable, diff[2:]):  # memory text: its codes shown, never sent to the terminal
        if line.startswith("+"):
            lines.append(Content.styled(line, "$text-success"))
        elif line.startswith("-"):
            lines.append(Content.styled(line, "$text-error"))
        elif line.startswith("@@"):
            lines.append(Content.styled(line, "$text-muted"))
        else:
            lines.append(Content(line))
    return Content("\n").join(lines) if lines else Content("(the texts are the same apart from line endings)")


class Dialog(ModalScreen):
    """A centred box with a title, a body and a row of buttons; letter keys pick buttons.
    Button labels are Content, so "[r]" shows as text (a plain str would be read as markup)."""

    DEFAULT_CSS = """
    Dialog { align: center middle; }
    Dialog > #box {
        width: 76; max-width: 95%; height: auto; max-height: 90%;
        border: thick $primary; background: $surface; padding: 0 1;
    }
    Dialog #title { text-style: bold; margin-bottom: 1; }
    Dialog #buttons { height: auto; margin-top: 1; align-horizontal: right; }
    Dialog Button { margin-left: 1; min-width: 10; }
    Dialog .error { color: $text-error; height: auto; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(None if event.button.name == "cancel" else event.button.name)


class UnsavedScreen(Dialog):
    """The open file has unsaved edits and the user asked to leave it."""

    BINDINGS = [("s", "choose('save')", "Save"), ("d", "choose('discard')", "Discard")]

    def __init__(self, path: str, doing: str) -> None:
        super().__init__()
        self.path, self.doing = path, doing

    def compose(self) -> ComposeResult:
        with Vertical(id="box"):
            yield Static(human.printable_line(f"Unsaved changes in {self.path}"), id="title", markup=False)
            yield Static(f"Save them before you {self.doing}?", markup=False)
            with Horizontal(id="buttons"):
                yield Button(Content("Save [s]"), name="save", variant="primary", id="save")
                yield Button(Content("Discard [d]"), name="discard", variant="error", id="discard")
                yield Button(Content("Cancel [esc]"), name="cancel", id="cancel")

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)


class RebuildRunningScreen(Dialog):
    """Quit asked while a rebuild runs: quitting stops it where it is (the next index resumes it)."""

    BINDINGS = [("q", "choose('quit')", "Quit")]

    def compose(self) -> ComposeResult:
        with Vertical(id="box"):
            yield Static("A rebuild of the index is running", id="title", markup=False)
            yield Static("Quit now and it stops where it is: searches keep using the old index, and the next "
                         "index (ctrl+r, or `clawmem index`) resumes the rebuild.", markup=False)
            with Horizontal(id="buttons"):
                yield Button("Quit [q]", name="quit", variant="error", id="quit")
                yield Button("Keep running [esc]", name="cancel", variant="primary", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)


class ConflictScreen(Dialog):
    """The file changed on disk since it was opened: show the difference, let the user choose."""

    BINDINGS = [("r", "choose('reload')", "Reload"), ("m", "choose('merge')", "Merge"), ("o", "choose('overwrite')", "Overwrite")]
    DEFAULT_CSS = """
    ConflictScreen #diff { height: auto; max-height: 14; border: round $panel; }
    """

    def __init__(self, path: str, diff: list[str]) -> None:
        super().__init__()
        self.path, self.diff = path, diff

    def compose(self) -> ComposeResult:
        with Vertical(id="box"):
            yield Static(human.printable_line(f"{self.path} changed on disk since you opened it"), id="title", markup=False)
            yield Static("Red lines are on disk only (the agent wrote them), green ones are yours only.", markup=False)
            with VerticalScroll(id="diff"):
                yield Static(diff_content(self.diff), id="diff-text")
            yield Static(
                "r Reload: take the disk version (ctrl+z brings yours back) · m Merge: both, line by line (where both "
                "changed the same lines, both versions are kept, marked) · o Overwrite: save yours, dropping the red lines",
                markup=False,
            )
            with Horizontal(id="buttons"):
                yield Button(Content("Reload [r]"), name="reload", id="reload")
                yield Button(Content("Merge [m]"), name="merge", variant="primary", id="merge")
                yield Button(Content("Overwrite [o]"), name="overwrite", variant="error", id="overwrite")
                yield Button(Content("Cancel [esc]"), name="cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#merge", Button).focus()
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """The diff gets the rows the rest of the box leaves (at most 14, at least 3), so the
        buttons stay on screen at 80×24: the box is at most 90% of the screen high."""
        box, diff = self.query_one("#box"), self.query_one("#diff")
        room = int(self.size.height * 0.9) - box.styles.border.spacing.height
        others = sum(w.outer_size.height + w.styles.margin.top + w.styles.margin.bottom for w in box.children if w is not diff)
        rows = max(3, min(14, room - others))
        if diff.styles.max_height is None or diff.styles.max_height.value != rows:
            diff.styles.max_height = rows

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)


class DeletedScreen(Dialog):
    """The open file was deleted on disk while it has unsaved edits."""

    BINDINGS = [("n", "choose('new')", "Save as new")]

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path

    def compose(self) -> ComposeResult:
        with Vertical(id="box"):
            yield Static(human.printable_line(f"{self.path} was deleted on disk"), id="title", markup=False)
            yield Static("Something else removed the file while you were editing it. Your text is still here.",
                         markup=False)
            with Horizontal(id="buttons"):
                yield Button(Content("Save as new [n]"), name="new", variant="primary", id="new")
                yield Button(Content("Cancel [esc]"), name="cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#new", Button).focus()

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)


class RecoveryScreen(Dialog):
    """Opening a file that has unsaved text kept from an earlier session (the app was killed)."""

    BINDINGS = [("r", "choose('restore')", "Restore"), ("d", "choose('discard')", "Discard")]
    DEFAULT_CSS = """
    RecoveryScreen #diff { height: auto; max-height: 14; border: round $panel; }
    """

    def __init__(self, path: str, when: str, sizes: str, diff: list[str]) -> None:
        super().__init__()
        self.path, self.when, self.sizes, self.diff = path, when, sizes, diff

    def compose(self) -> ComposeResult:
        with Vertical(id="box"):
            yield Static(human.printable_line(f"Unsaved text of {self.path} from {self.when}"), id="title", markup=False)
            yield Static(f"The app ended before it was saved. {self.sizes}. Green lines are only in the unsaved "
                         "text, red ones only on disk.", markup=False)
            with VerticalScroll(id="diff"):
                yield Static(diff_content(self.diff), id="diff-text")
            yield Static("Restore: put it in the editor, unsaved (saving then shows what changed on disk) · "
                         "Discard: delete it · Esc: decide next time", markup=False)
            with Horizontal(id="buttons"):
                yield Button(Content("Restore [r]"), name="restore", variant="primary", id="restore")
                yield Button(Content("Discard [d]"), name="discard", variant="error", id="discard")
                yield Button(Content("Later [esc]"), name="cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#restore", Button).focus()

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)


class AppendScreen(Dialog):
    """One line for today's log; Enter appends it with the time."""

    def __init__(self, target: str, time_label: str) -> None:
        super().__init__()
        self.target, self.time_label = target, time_label

    def compose(self) -> ComposeResult:
        with Vertical(id="box"):
            yield Static(human.printable_line(f"New entry in {self.target} at {self.time_label}"), id="title", markup=False)
            yield Input(placeholder="What should be remembered? (Enter adds it, Esc cancels)", id="entry")

    def on_mount(self) -> None:
        entry = self.query_one(Input)
        entry.cursor_blink = self.app.settings.blinkingCursor
        entry.focus()

    @on(Input.Submitted, "#entry")
    def _submit(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        self.dismiss(text or None)


class EditValueScreen(Dialog):
    """Edit one setting. `save(text, answer)` asks for it to be validated and written; `answer`
    is then called with an error line (shown here) or None (saved: the dialog closes)."""

    def __init__(self, key: str, current: str, doc: str, save: Callable[[str, Callable[[str | None], None]], None],
                 secret: bool = False) -> None:
        super().__init__()
        self.key, self.current, self.doc, self.save, self.secret = key, current, doc, save, secret
        self._asked = False  # a save is on its way: a second Enter does not ask again

    def compose(self) -> ComposeResult:
        with Vertical(id="box"):
            yield Static(f"Set {self.key}", id="title", markup=False)
            if self.doc:
                yield Static(self.doc, markup=False)
            yield Input(
                value="" if self.secret else self.current,
                password=self.secret,
                placeholder="hidden: type a new value" if self.secret else "a TOML value: 6, true, \"text\", [\"a\", \"b\"]",
                id="value",
            )
            yield Label("", id="error", classes="error", markup=False)
            yield Static("Enter saves (checked first), Esc cancels.", markup=False)

    def on_mount(self) -> None:
        value = self.query_one(Input)
        value.cursor_blink = self.app.settings.blinkingCursor
        value.focus()

    @on(Input.Submitted, "#value")
    def _submit(self, event: Input.Submitted) -> None:
        event.stop()
        if not self._asked:
            self._asked = True
            self.save(event.value, self._answered)

    def _answered(self, error: str | None) -> None:
        self._asked = False
        if error:
            self.query_one("#error", Label).update(error)
            return
        self.dismiss(True)


class CreateWorkspaceScreen(Dialog):
    """First run: the workspace folder does not exist; offer to create it."""

    BINDINGS = [("c", "choose('create')", "Create")]

    def __init__(self, shown_path: str) -> None:
        super().__init__()
        self.shown_path = shown_path

    def compose(self) -> ComposeResult:
        with Vertical(id="box"):
            yield Static("Welcome to clawmem", id="title", markup=False)
            yield Static(
                f"There is no memory workspace at {self.shown_path} yet. Create it with MEMORY.md and a memory/ "
                "folder for daily logs? (Another folder: quit and run clawmem --workspace PATH.)",
                markup=False,
            )
            with Horizontal(id="buttons"):
                yield Button(Content("Create [c]"), name="create", variant="primary", id="create")
                yield Button(Content("Not now [esc]"), name="cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#create", Button).focus()

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)


class HelpScreen(ModalScreen):
    """F1: what each tab does and every key, with the binding ids for `[ui].keymap`."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90%; height: 90%; border: thick $primary; background: $surface; padding: 0 1; }
    """
    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close")]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        from textual.widgets import Markdown  # markdown-it loads with the first help screen, not at start

        with VerticalScroll() as box:
            box.border_title = "Help"
            box.border_subtitle = "esc, F1 or q closes"  # on the frame: seen before any scrolling
            yield Markdown(self.text)

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).focus()
