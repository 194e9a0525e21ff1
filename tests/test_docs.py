"""README.md is what a newcomer needs to start; docs/ holds the rest. These tests keep both
true: the README short with its two commands first, no section of the long README lost in
the move, the configuration reference equal to the config's own key table, and every
`clawmem …` command and config key the pages show one the program accepts."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from clawmem.engine.config import KEYS, OPENCLAW_ACCEPTED, OPENCLAW_INSTEAD, reference_markdown
from clawmem.tui.cli.parser import COMMANDS, build_parser

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS]

# Every section heading README.md had before the reference moved to docs/ (2026-11-28). Each
# must still stand as a heading in README or a docs page: a move may reword nothing away.
# ("Contents" was README's table of contents; README's "Read more" table replaces it.)
HEADINGS_BEFORE_THE_MOVE = (
    "Quick start", "The command line", "How search works", "Configuration",
    "Embeddings: local models and remote providers", "Keeping the index fresh",
    "Run it as a systemd user service", "Freshness in `clawmem status`", "Session transcripts",
    "The terminal app", "Using it over SSH", "The agent tools", "Use it from an agent",
    "Fleet: many agents, one shared index", "Consolidation",
    "What clawmem promises about your data", "Security", "What the memory-file writers refuse",
    "What the servers check", "Benchmarks", "Retrieval quality: the benchmark that picks the defaults",
    "Speed", "Troubleshooting", "Layout of the code",
)


def headings(path: Path) -> list[str]:
    out, in_code = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and re.match(r"#{1,6} ", line):
            out.append(line.lstrip("#").strip())
    return out


def test_readme_is_short_and_starts_with_the_two_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    assert "python3 -m venv .venv" in blocks[0] and ".venv/bin/clawmem" in blocks[0]
    assert blocks[1].strip() == ".venv/bin/python -m pytest"
    # the first screen: both commands within the first 25 lines
    assert text.index(".venv/bin/python -m pytest") < len("\n".join(text.splitlines()[:25]))


@pytest.mark.parametrize("heading", HEADINGS_BEFORE_THE_MOVE)
def test_no_section_was_lost_in_the_move(heading):
    every = [h for page in PAGES for h in headings(page)]
    # a heading may gain a parenthesis ("Speed (2-core machine, …)"), not lose its words
    assert any(h == heading or h.startswith(heading + " (") for h in every), heading


def test_every_docs_page_is_linked_from_the_readme():
    text = README.read_text(encoding="utf-8")
    for page in DOCS:
        assert f"](docs/{page.name})" in text, page.name


def test_links_between_pages_point_at_pages_and_headings_that_exist():
    def slug(h: str) -> str:
        return re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")

    anchors = {page.resolve(): {slug(h) for h in headings(page)} for page in PAGES}
    for page in PAGES:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue  # a URL
            name, _, anchor = target.partition("#")
            dest = (page.parent / name).resolve() if name else page.resolve()
            assert dest.exists(), f"{page.name}: link to {target}: no such file"
            if anchor and dest in anchors:
                assert anchor in anchors[dest], f"{page.name}: link to {target}: no such heading"


def test_configuration_reference_is_the_key_table():
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert reference_markdown() in page, (
        "docs/configuration.md's key table differs from engine/config.py's KEYS; paste the output of\n"
        "  python -c 'from clawmem.engine.config import reference_markdown as r; print(r(), end=\"\")'"
    )


def _commands_shown() -> list[tuple[str, str]]:
    """(page, command line) for every `clawmem …` the pages show, in code spans and sh blocks."""
    out = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        spans = re.findall(r"`(clawmem [^`]+)`", text)
        for block in re.findall(r"```sh\n(.*?)```", text, re.S):
            spans += [ln.split("#")[0].strip() for ln in block.splitlines() if ln.strip().startswith("clawmem ")]
        out += [(page.name, s) for s in spans]
    return out


def _options(parser) -> set[str]:
    """Every option string of a parser and of its subcommands' parsers, recursively."""
    found = set()
    for action in parser._actions:
        found.update(action.option_strings)
        for sub in (getattr(action, "choices", None) or {}).values() if hasattr(action, "_name_parser_map") else ():
            found |= _options(sub)
    return found


def test_every_command_the_pages_show_is_one_clawmem_accepts():
    parser = build_parser()
    subparsers = next(a for a in parser._actions if hasattr(a, "_name_parser_map"))
    global_opts = {o for a in parser._actions for o in a.option_strings}
    names = {n for n, _w, _h in COMMANDS}
    shown = _commands_shown()
    assert len(shown) > 40  # the pages do show commands: the test looks at something
    wrong = []
    for page, line in shown:
        try:
            words = shlex.split(line.replace("…", "").replace("|", " "))
        except ValueError:
            words = line.split()
        words = [w for w in words[1:] if not w.startswith("~") and w != "\\"]
        # the subcommand: the first word that is not a global option or its value
        command = None
        for i, w in enumerate(words):
            if w in names:
                command = w
                break
            if not w.startswith("-") and not (i and words[i - 1] in ("--workspace", "--config", "--agent")):
                break
        if command is None:
            if words and not words[0].startswith("-") and not words[0].endswith(":"):  # "clawmem mcp: listening…" is output
                wrong.append(f"{page}: `{line}`: no command {words[0]!r}")
            continue
        known = global_opts | _options(subparsers.choices[command])
        for w in words:
            flag = re.match(r"(--?[A-Za-z][\w-]*)", w.strip("[]()"))
            if flag and w.strip("[]()").startswith("-") and flag.group(1) not in known:
                wrong.append(f"{page}: `{line}`: {command} has no option {flag.group(1)}")
    assert not wrong, "\n".join(wrong)


def test_every_config_key_the_pages_name_is_a_key():
    """Dotted keys written as `query.maxResults` in the pages are keys of KEYS (or [ui]/[fleet]
    tables the pages describe), so a renamed key cannot linger in the docs."""
    prefixes = {k.split(".")[0] for k in KEYS if "." in k}
    # names that are not clawmem's keys: OpenClaw's keys clawmem reads but does not honour, and
    # other programs' names the pages cite (OpenClaw's `mcp.servers`, its `sessions.json`)
    foreign = {*OPENCLAW_INSTEAD, *OPENCLAW_ACCEPTED, "mcp.servers", "sessions.json"}
    wrong = []
    for page in PAGES:
        for key in re.findall(r"`([a-z][A-Za-z]*(?:\.[a-z][A-Za-z]*)+)`", page.read_text(encoding="utf-8")):
            if key in foreign or any(key.startswith(f + ".") for f in foreign):
                continue
            if key.split(".")[0] in prefixes and key not in KEYS and not any(k.startswith(key + ".") for k in KEYS):
                wrong.append(f"{page.name}: `{key}`")
    assert not wrong, "\n".join(sorted(set(wrong)))
