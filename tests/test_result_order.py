"""A list reads in the order of the score it shows (issue 47: a `1.000 high` hit ranked 8th,
hidden, behind hits scoring less), and what a search says (its verdict, each hit's score and
band) never depends on how many results were asked for (issue 42: maxResults 1 and 6 gave
different verdicts): properties over random queries on a real index."""

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from helpers import write

NOTES = {
    "MEMORY.md": "# Team\n\n- 李伟 owns the 数据管道 (data pipeline) and its nightly ledger export.\n"
                 "- Marta Okafor reviews the ledger every Friday.\n",
    "memory/2026-03-02.md": "# 2026-03-02\n\n- The data pipeline failed at 02:00: disk full on the ledger host.\n"
                            "- 李伟 moved the export to a bigger volume.\n",
    "memory/2026-03-05.md": "# 2026-03-05\n\n- Lunch with Marta: she wants the ledger report in euros.\n"
                            "- The roof repair quote came in at 2,400 euros.\n",
    "memory/2026-03-09.md": "# 2026-03-09\n\n- Pipeline review: the nightly export now runs at 03:00.\n"
                            "- Booked the cabin by the lake for the long weekend.\n",
}
WORDS = ["李伟", "数据管道", "数据", "ledger", "pipeline", "data", "export", "nightly", "marta", "Marta", "okafor",
         "euros", "roof", "repair", "cabin", "lake", "weekend", "friday", "report", "disk", "volume", "host",
         "lunch", "quote", "review", "zeppelin", "sealant", "2026", "02:00", "what", "did", "say", "about", "the"]


@pytest.fixture
def engine(workspace, make_engine):
    for path, text in NOTES.items():
        write(workspace / path, text)
    for i in range(40):  # a memory big enough for word rarity, and for the missing-word verdicts, to mean something
        write(workspace / "memory" / "misc" / f"note-{i:03d}.md",
              f"- Errand {i}: ledger {'export' if i % 3 else 'review'} checked, data copied, {'pipeline' if i % 4 else 'lake'} notes filed.\n")
    eng = make_engine()
    list(eng.index())
    return eng


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=5), shown=st.integers(1, 9))
def test_results_follow_their_score_and_do_not_depend_on_max_results(engine, words, shown):
    query = " ".join(words)
    every = engine.search(query, max_results=10, show_hidden=True, stale_check=False)
    scores = [r["score"] for r in every["results"]]
    assert scores == sorted(scores, reverse=True), (query, scores)
    few = engine.search(query, max_results=shown, show_hidden=True, stale_check=False)
    assert [(r["path"], r["startLine"], r["score"], r["band"]) for r in few["results"]] == \
        [(r["path"], r["startLine"], r["score"], r["band"]) for r in every["results"][:shown]], query
    assert few["absent"] == every["absent"], query

