"""Redaction's pre-check: detect-secrets' patterns (~0.1 s to import) are loaded only for a text
that might hold one of their secrets, and the pre-check never turns one away."""

import logging
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from clawmem.engine.redaction import _detect_secrets_patterns, may_hold_token, redact


@pytest.mark.slow
@pytest.mark.parametrize("kind,rx", _detect_secrets_patterns(), ids=lambda v: getattr(v, "pattern", v)[:40])
def test_every_text_a_detect_secrets_pattern_matches_passes_the_pre_check(kind, rx):
    """Strings built from each pattern (hypothesis): whenever the pattern matches one, the
    pre-check says it may hold a token, so skipping the patterns hides no secret."""

    @settings(max_examples=150, suppress_health_check=list(HealthCheck), deadline=None)
    @given(st.from_regex(rx))
    def check(text):
        if rx.search(text):
            assert may_hold_token(text), (kind, text)

    check()


def test_lines_of_words_and_numbers_skip_the_patterns_and_secrets_do_not():
    for line in ("2026-11-26 19:40:00,123 4711 INFO clawmem: index: 3 files, 3 chunks; keyword-only (0.12 s)",
                 "sync finished: 20000 unchanged, 1 updated, 0 removed", "the herons came back in spring"):
        assert not may_hold_token(line), line
        assert redact(line) == line
    # a detect-secrets kind clawmem has no pattern of its own for: still masked
    assert "AKIAIOSFODNN7EXAMPLE" not in redact("aws id AKIAIOSFODNN7EXAMPLE in the log")
    assert "xoxb-1234-abcd" not in redact("token xoxb-1234-abcd")


def test_a_job_log_line_does_not_load_detect_secrets(tmp_path):
    """The index job logs its last line on every run (a cron job, an agent's hook): a line of
    counts needs no secret patterns; a line with a token loads them and is masked."""
    probe = (
        "import logging, sys\n"
        "from clawmem.engine.logs import setup\n"
        f"path = setup({str(tmp_path / 'x.log')!r})\n"
        "log = logging.getLogger('clawmem')\n"
        "log.info('index: 3 files, 3 chunks; keyword-only (0.12 s)')\n"
        "first = 'detect_secrets' in sys.modules\n"
        "log.warning('provider said: bad key AKIAIOSFODNN7EXAMPLE')\n"
        "print(first, 'detect_secrets' in sys.modules, 'AKIAIOSFODNN7EXAMPLE' in path.read_text())\n"
    )
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert res.stdout.strip() == "False True False", res.stdout + res.stderr
