"""Line-based Markdown chunking.

Chunks hold about `tokens` tokens (4 characters per token, each CJK/Hangul character
counted as 4) with `overlap` tokens carried over. Unlike OpenClaw, no chunk exceeds its
budget: the carried overlap is capped at half the budget and trimmed to fit, and an
over-long line is cut into pieces that keep its line number.
"""

from __future__ import annotations


from ..files.fsutil import sha256_hex
from ..results import Record
from ..text import cjk_count, is_cjk

CHARS_PER_TOKEN = 4


class Chunk(Record):
    start_line: int  # 1-based, inclusive
    end_line: int
    text: str
    hash: str
    __slots__ = tuple(__annotations__)


def sha256(text: str) -> str:
    return sha256_hex(text.encode("utf-8", "surrogatepass"))


def weight(text: str) -> int:
    """Budget length: a CJK/Hangul character counts as 4 (about one token)."""
    if text.isascii():
        return len(text)
    return len(text) + 3 * cjk_count(text)


def _cut_line(line: str, max_chars: int) -> list[str]:
    """Pieces of a line over the budget (the caller knows it is over)."""
    pieces: list[str] = []
    start, acc = 0, 0
    for i, ch in enumerate(line):
        w = 4 if is_cjk(ch) else 1
        if acc + w > max_chars:
            pieces.append(line[start:i])
            start, acc = i, 0
        acc += w
    pieces.append(line[start:])
    return pieces


def budget(tokens: int, overlap: int) -> tuple[int, int]:
    max_chars = max(32, tokens * CHARS_PER_TOKEN)
    overlap_chars = min(max(0, overlap * CHARS_PER_TOKEN), max_chars // 2)
    return max_chars, overlap_chars


def chunk_lines(lines: list[str], tokens: int = 400, overlap: int = 80, first_line: int = 1) -> list[Chunk]:
    """Chunk a list of lines (without newlines); line numbers start at `first_line`."""
    max_chars, overlap_chars = budget(tokens, overlap)
    chunks: list[Chunk] = []
    buf: list[tuple[str, int, int]] = []  # (segment, line number, size = weight + 1 for the newline)
    total = 0

    def flush() -> None:
        text = "\n".join(seg for seg, _, _ in buf)
        chunks.append(Chunk(buf[0][1], buf[-1][1], text, sha256(text)))

    for offset, line in enumerate(lines):
        lineno = first_line + offset
        w = weight(line)
        for seg, w in [(line, w)] if w <= max_chars else [(s, weight(s)) for s in _cut_line(line, max_chars)]:
            size = w + 1
            if buf and total + size > max_chars:
                flush()
                # carry the tail as overlap: at least `overlap_chars` if it fits in half the budget
                kept: list[tuple[str, int, int]] = []
                acc = 0
                for entry in reversed(buf):
                    if acc >= overlap_chars or acc + entry[2] > max_chars // 2:
                        break
                    kept.insert(0, entry)
                    acc += entry[2]
                while kept and acc + size > max_chars:
                    acc -= kept.pop(0)[2]
                buf, total = kept, acc
            buf.append((seg, lineno, size))
            total += size
    if buf:
        flush()
    return chunks


def file_lines(text: str) -> list[str]:
    """The lines of a file as an editor numbers them: a final newline ends the last line, it
    does not start one more (else the last chunk of a 91-line file would cite line 92)."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def chunk_markdown(content: str, tokens: int = 400, overlap: int = 80) -> list[Chunk]:
    return chunk_lines(file_lines(content), tokens, overlap)
