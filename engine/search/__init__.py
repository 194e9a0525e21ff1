"""Search, in pipeline order: candidates (keyword, vectors) → fusion → evidence → snippets.

Order: candidates → fuse → decay → sort → MMR → minScore → maxResults. Every score is on
one 0..1 scale; what the threshold hides is counted and reported, never silently dropped.
"""

from __future__ import annotations

import time
TYPE_CHECKING = False  # typing's constant without importing typing: a search never needs it (~3 ms)

if TYPE_CHECKING:  # numpy loads lazily: a keyword-only `clawmem search` starts faster without it
    import numpy as np

from ..index.store import Store
from ..text import STOPWORDS, query_terms

from .options import (
    SNIPPET_CHARS, SearchRequest, Options, Candidate,
)
from .candidates import (
    fts_query, OR_POSTINGS, doc_freqs, selective_terms, keyword_candidates, ranked_matches,
    strict_can_match, date_filtered_ids, load_rows, EXACT_MAX_CHUNKS, exact_tokens, exact_hits,
    TITLES, named_terms, ROLES, speakers, vocabulary_forms, held_forms, unwritten_share, vocabulary_size, BROAD_VOCABULARY, short_words, held_share,
    unheard, names_only_as_words,
)
from .vectors import (
    VectorSide, vector_standing, vector_candidates, SPLIT_ROWS, two_cores, Product, matvec,
)
from .fusion import (
    fuse, chunk_date, apply_decay, pin_exact_hits, merge_overlapping,
)
from .evidence import (
    term_weights, absent_forms, PASSAGE_CHARS, passage_coverage, QueryWords, EXACT_CONFIDENCE,
    confidence, select, STRONG_HIT, ABSENT_SHARE, WEAK_HIT, abstain_reason,
    present_coverage, query_evidence, verdict, public_absent, EMPTYING,
)
from .snippets import (
    line_tokens, normalized_tokens, LineFocus, line_focus, line_scores, match_line,
    MATCHED_SHARE, cited_lines, snippet_window, term_spans, snippet_match, line_span, render,
)

# the pipeline's parts, importable from here as they were from the single module
__all__ = [
    "SNIPPET_CHARS", "SearchRequest", "Options", "Candidate", "fts_query", "OR_POSTINGS", "doc_freqs",
    "selective_terms", "keyword_candidates", "ranked_matches", "strict_can_match",
    "date_filtered_ids", "load_rows", "EXACT_MAX_CHUNKS", "exact_tokens", "exact_hits",
    "TITLES", "named_terms", "VectorSide", "vector_standing", "vector_candidates", "SPLIT_ROWS",
    "two_cores", "Product", "matvec", "fuse", "chunk_date", "apply_decay", "pin_exact_hits",
    "merge_overlapping", "term_weights", "absent_forms", "PASSAGE_CHARS", "passage_coverage",
    "QueryWords", "EXACT_CONFIDENCE", "confidence", "select", "ROLES", "speakers", "STRONG_HIT",
    "ABSENT_SHARE", "WEAK_HIT", "abstain_reason", "present_coverage", "query_evidence", "verdict", "public_absent", "EMPTYING",
    "line_tokens", "normalized_tokens", "LineFocus", "line_focus", "line_scores", "match_line",
    "MATCHED_SHARE", "cited_lines", "snippet_window", "term_spans", "snippet_match",
    "line_span", "render", "run",
]


def run(store: Store, query: str, opts: Options, vector: VectorSide | None, query_vector: np.ndarray | None) -> dict:
    """The ranked result set (without mode/provider bookkeeping, which the facade adds)."""
    t0 = time.perf_counter()
    has_vec = vector is not None and query_vector is not None
    product = None
    if has_vec and not (opts.after or opts.before) and vector.matrix is not None and two_cores(len(vector.matrix[0])):
        # the helper starts on the product while this thread asks FTS5 (both release the GIL)
        product = Product(vector.matrix[1], query_vector)
    if opts.keyword_side or not has_vec:
        kw, info = keyword_candidates(store, query, opts)
    else:
        kw, info = [], {"strict": 0, "relaxed": 0, "terms": query_terms(query)}
    mode = ("hybrid" if opts.keyword_side else "vector") if has_vec else "keyword"
    # what needs only the query is read now, while the helper may still be busy with the product:
    # the weights of the query's content words (stop words say nothing about whether a passage
    # answers it), rare identifiers, the words that place a result's citation
    content = [t for t in info["terms"] if t not in STOPWORDS]
    # a word counts as often as the index holds it in any form ("cookie" is as common as "cookies")
    found = info.get("forms", {})
    counted = {**info.get("df", {})}
    for t, fs in found.items():
        counted[t] = max([counted.get(t, 0)] + [counted.get(f, 0) for f in fs])
    # and a word the index holds as written is held in its other forms too ("likes" for "like"):
    # a passage holding any form holds the word, and the word is as common as all its forms
    # together (passage evidence only: FTS5 was asked for the word as written)
    also = held_forms(store, [t for t in dict.fromkeys(content or info["terms"]) if t not in found])
    for t, (_, df) in also.items():
        counted[t] = df
    weights, n_docs = term_weights(store, content or info["terms"], counted)
    aliases = {f: t for t, fs in found.items() for f in fs}
    aliases.update({f: t for t, (fs, _) in also.items() for f in fs})
    exact = exact_hits(store, query, opts)
    focus = line_focus(store, query, info, opts.context_lines)
    vec: list[Candidate] = []
    if has_vec:
        filtered = date_filtered_ids(store, opts) if (opts.after or opts.before) else None
        vec = vector_candidates(store, vector, query_vector, opts, filtered, product)
    by_id: dict[int, Candidate] = {}
    for c in vec:
        by_id[c.id] = c
    for c in kw:
        if c.id in by_id:
            b = by_id[c.id]
            b.kw_rank, b.kw_bm25, b.kw_strict = c.kw_rank, c.kw_bm25, c.kw_strict
        else:
            by_id[c.id] = c
    for cid in exact:
        by_id.setdefault(cid, Candidate(cid))
    rows = load_rows(store, list(by_id))
    cands = []
    for c in by_id.values():
        row = rows.get(c.id)
        if row is None or row[1] not in opts.sources:
            continue
        c.row = row
        cands.append(c)
    # sqlite-vec KNN cannot filter by source: re-rank the vector side over what survived
    if vec:
        ranked = sorted((c for c in cands if c.vec_rank is not None), key=lambda c: c.vec_rank)
        for i, c in enumerate(ranked, start=1):
            c.vec_rank = i if i <= opts.candidates else None
            if c.vec_rank is None:
                c.vec_cos = c.vec_score = None
        cands = [c for c in cands if c.vec_rank is not None or c.kw_rank is not None or c.id in exact]
        if opts.fusion == "relative":
            vector_standing(store, vector, query_vector, cands)
    if "forms" in info:  # the keyword pass already looked every missing word up in its other forms
        forms, near = {}, info.get("nearNames", {})
    else:
        # as the keyword pass does: {name: its near spellings here}, the same shape in every mode
        names: set[str] = set()
        found_forms = vocabulary_forms(store, [t for t, w in weights.items() if w >= 1.0], query, names) if n_docs else {}
        forms = {t: fs[0] for t, fs in found_forms.items()}
        near = {t: found_forms[t] for t in names}
    unwritten = unwritten_share(store, weights) if n_docs else 0.0
    # counted only when a word is missing, the one case they decide (evidence._absence)
    missing = any(w >= 1.0 for w in weights.values())
    size = vocabulary_size(store) if missing else BROAD_VOCABULARY
    # where no passage holds a word of the query: does it read as another language? (evidence)
    short = short_words(store, query) if not cands and n_docs else (0, 0)
    # where a word of it is missing here: is it in this memory's language? (evidence.in_memory_language)
    held = held_share(store, query) if n_docs and missing else None
    # another language of this memory's script: few of its words held here, and most of its
    # short words, the commonest of any language, two or more, neither held nor stop words (an
    # English question said in words the memory never uses still uses "his", "did"): its words
    # match here by chance ("die", "hat"), and the vectors alone order it (evidence.select)
    if cands and unwritten < 0.5 and held is not None and held <= 0.5:
        held_short, unheld_short = short_words(store, query, stop_words_held=True)
        vectors_lead = unheld_short >= 2 and unheld_short > held_short
    else:
        vectors_lead = False
    # who speaks in the query, held here only in near spellings that speak in none of this
    # memory's transcripts
    silent = [t for t in speakers(query) if t in near and unheard(store, near[t])]
    # a name standing alone in a question, held here only as words (Bar: bar; Melanie:
    # "millennium"), is no one here; a short form that is a name here (Barbara) holds it
    worded = names_only_as_words(store, query, {t for t, w in weights.items() if w < 1.0}, near) \
        if n_docs and not speakers(query) else []
    shown, hidden_info, evidence = select(cands, query, weights, n_docs, exact, opts, mode, forms=forms, aliases=aliases, near=near,
                                          unwritten=unwritten, vocabulary=size, short_words=short, held=held, unheard=silent,
                                          as_words=worded, vectors_lead=vectors_lead)
    results = [render(c, focus, opts) for c in shown]
    return {
        "results": results,
        "mode": mode,
        "hidden": hidden_info,
        "absent": public_absent(evidence),
        "evidence": evidence,
        "keyword": info,
        "ms": round((time.perf_counter() - t0) * 1000, 2),
    }
