"""Counts as people write them."""


def plural(n: int, word: str, many: str | None = None) -> str:
    """"1 file", "2 files"."""
    return f"{n} {word if n == 1 else many or word + 's'}"
