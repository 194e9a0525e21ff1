"""Pure ranking functions: score mapping, fusion, temporal decay, MMR."""

from __future__ import annotations

import math
TYPE_CHECKING = False  # typing's constant without importing typing: a search never needs it (~3 ms)
if TYPE_CHECKING:
    from typing import Sequence


def bm25_to_score(rank: float) -> float:
    """OpenClaw's textScore: FTS5 bm25() is negative, more negative is better."""
    if not math.isfinite(rank):
        return 0.001
    if rank < 0:
        return -rank / (1 - rank)
    return 1 / (1 + rank)


def normalize_weights(vector: float, text: float) -> tuple[float, float]:
    vector = min(max(vector, 0.0), 1.0)
    text = min(max(text, 0.0), 1.0)
    total = vector + text
    if total <= 0:
        return 0.7, 0.3
    return vector / total, text / total


def calibrate_cosine(cos: float, mean: float, std: float) -> float:
    """Map a cosine to 0..1 by how far it stands above what is unrelated to this query.

    Models differ wildly in their cosine range (multilingual-e5 puts unrelated text near 0.8,
    OpenAI's models near 0.1), so a raw cosine means nothing across models. `mean` and `std`
    are the query's similarities to a random sample of the index: a hit one standard
    deviation above them scores 0, and the score rises towards 1 as the hit stands out.
    """
    z = (cos - mean) / max(std, 1e-4)
    return 1.0 - math.exp(-max(0.0, z - 1.0) / 3.0)


def rrf_score(ranks: Sequence[int | None], k: int = 60) -> float:
    """Reciprocal rank fusion normalised to 0..1 (1 = first in every list)."""
    best = len(ranks) / (k + 1)
    return sum(1.0 / (k + r) for r in ranks if r is not None) / best


def relative_shares(text: float | None, text_top: float, z: float | None, z_top: float) -> tuple[float, float]:
    """Relative fusion: each list's evidence as a share of its own best, 0..1 (the fused score
    is their mean).

    `text` is a BM25 magnitude (0: no query word), `z` how many standard deviations a cosine
    stands above the query's background. Anchored at no evidence rather than at the list's
    worst, a flat list (every candidate nearly as good as its best, as when the words of a
    long dialogue are spread everywhere or the vectors see nothing particular) gives every
    candidate about the same share and leaves the order to the other list, while a list whose
    best stands out keeps it ahead: each side weighs in by how sure it is of this query.
    """
    t = min(1.0, max(0.0, text or 0.0) / text_top) if text_top > 0 else 0.0
    v = min(1.0, max(0.0, z or 0.0) / z_top) if z_top > 0 else 0.0
    return t, v


def decay_factor(age_days: float, half_life_days: float) -> float:
    """exp(-ln2/halfLife * age); future dates (negative age) are not boosted."""
    return math.exp(-math.log(2) / max(half_life_days, 1e-9) * max(0.0, age_days))


def jaccard(a: frozenset, b: frozenset) -> float:
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def mmr_score(relevance: float, max_sim: float, lam: float) -> float:
    return lam * relevance - (1 - lam) * max_sim


def mmr_order(scores: Sequence[float], tokens: Sequence[frozenset], lam: float = 0.7) -> list[tuple[int, float]]:
    """Greedy maximal marginal relevance over all items: [(index, max similarity to earlier picks)].

    Scores are min-max normalised first; ties go to the higher original score, then to the
    earlier item. Every item is returned, reordered.
    """
    n = len(scores)
    lam = min(max(lam, 0.0), 1.0)
    if n <= 1:
        return [(i, 0.0) for i in range(n)]
    if lam == 1.0:
        return [(i, 0.0) for i in sorted(range(n), key=lambda i: -scores[i])]
    lo, hi = min(scores), max(scores)
    rel = [1.0] * n if hi == lo else [(s - lo) / (hi - lo) for s in scores]
    remaining = list(range(n))
    chosen: list[tuple[int, float]] = []
    max_sim = [0.0] * n
    while remaining:
        best = None
        best_key = None
        for i in remaining:
            key = (mmr_score(rel[i], max_sim[i], lam), scores[i], -i)
            if best_key is None or key > best_key:
                best, best_key = i, key
        assert best is not None
        chosen.append((best, max_sim[best]))
        remaining.remove(best)
        for i in remaining:
            s = jaccard(tokens[i], tokens[best])
            if s > max_sim[i]:
                max_sim[i] = s
    return chosen


# ----------------------------------------------------------------------------- confidence
#
# A fused score says how a hit ranks against the other hits of this query, not whether any of
# them answers it: the first of 24 unrelated chunks still ranks first. The confidence below is
# built from evidence that does not depend on the other hits: how much of the query a chunk
# holds (terms weighted by how rare they are in the index) and how far its cosine stands above
# the best an unrelated chunk of an index this size reaches.


def idf(df: int, n_docs: int) -> float:
    """BM25's inverse document frequency; a term the index lacks weighs the most."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def doc_share(weight: float, n_docs: int) -> float:
    """The share of the index's chunks holding a term of this scaled weight (idf(df) / idf(0),
    what search.term_weights gives): the inverse of that scaling, 0 for weight 1."""
    r = math.expm1(weight * idf(0, n_docs))
    return min(1.0, max(0.0, (n_docs + 0.5 - 0.5 * r) / (1.0 + r) / n_docs)) if n_docs else 0.0


def term_coverage(weights: dict[str, float], present: set[str], enough: float = 3.0, least: float = 0.0) -> float:
    """The share of the query's term weight a chunk holds, 0..1. `weights` are idf scaled to
    0..1 (1: a term no chunk has). A long question is covered once a chunk holds `enough`
    weight (about three rare terms): no passage repeats a whole conversation. A query of
    common words only is covered no further than the weight it holds out of `least`."""
    need = max(min(sum(weights.values()), enough), least)
    if need <= 0:
        return 0.0
    return min(1.0, sum(weights.get(t, 0.0) for t in present) / need)


def keyword_confidence(coverage: float) -> float:
    """Term coverage to 0..1 confidence: a third of the query's weight reaches the default
    threshold (0.35), all of it is 1, 0.15 or less is 0."""
    return min(1.0, max(0.0, (coverage - 0.15) / 0.85)) ** 0.7


def expected_max_z(n: int) -> float:
    """How many standard deviations the best of n unrelated items stands above their mean
    (the expected maximum of n normal draws)."""
    return math.sqrt(2.0 * math.log(max(n, 2)))


def vector_confidence(cos: float, mean: float, std: float, n: int) -> float:
    """Cosine to 0..1 confidence: standing above the query's background (`mean`, `std` over a
    random sample of the index) by more than the best of `n` unrelated chunks would."""
    z = (cos - mean) / max(std, 1e-4)
    return 1.0 - math.exp(-max(0.0, z - expected_max_z(n)) / 1.5)


def combine_confidence(keyword: float, vector: float) -> float:
    """Either side alone can vouch for a hit; both agreeing is stronger than either."""
    return 1.0 - (1.0 - keyword) * (1.0 - vector)


# A hit's band, from its own score: `high` holds most of the query (or names its rare identifier,
# or stands far above the vectors' background), `medium` a fair part of it, `low` a little: a
# weak hit is shown as weak rather than hidden, so an agent can weigh it.
BANDS = (("high", 0.6), ("medium", 0.3), ("low", 0.0))


def band(score: float) -> str:
    return next(name for name, floor in BANDS if score >= floor)


def band_floor(name: str) -> float:
    return dict(BANDS)[name]

