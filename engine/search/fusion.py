"""Fusion: keyword and vector lists joined on one 0..1 scale, date decay, pinned exact hits,
overlapping chunks merged."""

from __future__ import annotations

import datetime as dt

from . import ranking
from ..files.workspace import is_evergreen
from .options import Candidate, Options


def fuse(cands: list[Candidate], opts: Options, mode: str, vectors_lead: bool = False) -> None:
    """The order within a band: each candidate's fused score relative to the best (c.rank).
    The fusion only orders; the reported score stays the hit's own evidence (confidence).
    `vectors_lead`: the query's words match here only by chance (another language than the
    memory's): a hybrid list is ordered as a vector-only one."""
    fused = {}
    lead = vectors_lead and mode == "hybrid"
    if lead:
        mode = "vector"
    keyword_side = mode == "hybrid"  # in vector mode each method reads the vectors alone
    if mode == "keyword":
        for c in cands:
            if opts.fusion != "weighted":  # by rank, as the keyword list has it
                f = ranking.rrf_score([c.kw_rank], opts.rrf_k) if c.kw_rank else 0.0
            else:
                f = ranking.bm25_to_score(c.kw_bm25) if c.kw_bm25 is not None else 0.0
                if not c.kw_strict:
                    f *= 0.5  # relaxed (OR) hits rank below strict ones
            fused[c.id] = f
            c.parts["fusion"] = {"method": "keyword-only", "scale": "bm25" if opts.fusion == "weighted" else "rank"}
    elif opts.fusion == "weighted":
        wv, wt = ranking.normalize_weights(opts.vector_weight, opts.text_weight)
        for c in cands:
            t = ranking.bm25_to_score(c.kw_bm25) if keyword_side and c.kw_bm25 is not None else 0.0
            v = c.vec_score or 0.0
            fused[c.id] = wv * v + wt * t
            c.parts["fusion"] = {"method": "weighted", "vectorWeight": round(wv, 4), "textWeight": round(wt, 4), "textScore": round(t, 4)}
    elif opts.fusion == "relative":
        text = [-c.kw_bm25 for c in cands if keyword_side and c.kw_bm25 is not None]
        text_top = max(text, default=0.0)
        # outside the keyword pool: no query word when the pool holds every match, else at most its last one's
        text_floor = min(text, default=0.0) if len(text) >= opts.candidates else 0.0
        z_top = max((c.vec_z for c in cands if c.vec_z is not None), default=0.0)
        for c in cands:
            t, v = ranking.relative_shares(-c.kw_bm25 if keyword_side and c.kw_bm25 is not None else text_floor, text_top, c.vec_z, z_top)
            fused[c.id] = (t + v) / 2
            c.parts["fusion"] = {"method": "relative", "textShare": round(t, 4), "vectorShare": round(v, 4)}
    else:
        for c in cands:
            ranks = [c.vec_rank, c.kw_rank] if keyword_side else [c.vec_rank]
            fused[c.id] = ranking.rrf_score(ranks, opts.rrf_k)
            c.parts["fusion"] = {"method": "rrf", "k": opts.rrf_k, "vectorRank": c.vec_rank, "keywordRank": c.kw_rank}
    best = max(fused.values(), default=0.0)
    for c in cands:
        c.rank = fused[c.id] / best if best > 0 else 0.0
        c.parts["fusion"]["relative"] = round(c.rank, 4)
        if lead:
            c.parts["fusion"]["method"] += ", vectors alone (another language)"


def chunk_date(row: tuple) -> tuple[dt.datetime | None, str]:
    """(timestamp used for decay, what it is). None: evergreen, never decays."""
    path, source, _, _, _, ts, _, day, mtime_ns = row
    if source == "sessions":
        return (dt.datetime.fromtimestamp(ts) if ts else None), "message time"
    if day:
        return dt.datetime.fromisoformat(day), "date in file name"
    if is_evergreen(path):
        return None, "evergreen"
    if mtime_ns:
        return dt.datetime.fromtimestamp(mtime_ns / 1e9), "file mtime"
    return None, "no date"


def apply_decay(cands: list[Candidate], opts: Options) -> None:
    now = opts.now or dt.datetime.now()
    for c in cands:
        when, kind = chunk_date(c.row)
        if when is None:
            c.parts["decay"] = {"factor": 1.0, "basis": kind}
            continue
        age = (now - when).total_seconds() / 86400
        f = ranking.decay_factor(age, opts.half_life)
        c.score *= f
        c.rank *= f
        c.parts["decay"] = {"factor": round(f, 5), "date": when.date().isoformat(), "ageDays": round(max(age, 0), 2), "basis": kind}


def pin_exact_hits(cands: list[Candidate], hits: dict[int, dict]) -> None:
    """Lift the chunks naming a rare identifier to the first place of the others, so they come
    back in the top results whatever the vectors say (their score, from confidence, is high:
    naming a rare identifier is evidence enough)."""
    if not hits:
        return
    others = [c for c in cands if c.id not in hits]
    rank_floor = max([c.rank for c in others], default=0.0) + 1e-6
    for c in cands:
        if c.id in hits and c.rank < rank_floor:
            c.parts["exact"] = {**hits[c.id], "rankBefore": round(c.rank, 4)}
            c.rank = rank_floor


def merge_overlapping(cands: list[Candidate], max_chars: int = 3200) -> list[Candidate]:
    """Fold a hit into a better one from the same file whose lines overlap it.

    Chunks overlap by design (80 tokens), so neighbouring chunks of one passage often both
    match; showing them as two results wastes a slot on a near-duplicate. The better hit (by
    rank) is the host: it keeps its score and grows to cover its neighbours (its citation spans
    them), up to `max_chars` (two chunks' worth), so a citation stays something a person reads.
    The neighbours join in order of the query's words they hold (the weight of those one
    passage of them holds, confidence's termWeight), not of rank: when only one more fits, the
    one holding more of the question is more of the answer (a user's line beside the reply
    that repeats it), while the rank of two overlapping chunks mostly says how the vectors see
    the text they share. A neighbour that does not fit stays a hit of its own, in its place
    (the host of its own neighbours).
    """
    hosts: list[Candidate] = []
    guests: dict[int, list[Candidate]] = {}  # id(host) -> the candidates overlapping it, in rank order
    reach: dict[int, tuple[int, int]] = {}  # id(host) -> the lines it and its guests span
    for c in cands:
        path, source, start, end = c.row[:4]
        host = None
        if source != "sessions":
            host = next((k for k in hosts if k.row[0] == path and k.row[1] == source
                         and start <= reach[id(k)][1] and reach[id(k)][0] <= end), None)
        if host is None:
            hosts.append(c)
            guests[id(c)], reach[id(c)] = [], (start, end)
        else:
            guests[id(host)].append(c)
            reach[id(host)] = (min(start, reach[id(host)][0]), max(end, reach[id(host)][1]))
    merged: set[int] = set()
    for host in hosts:
        pending = sorted(guests[id(host)], key=_words_held)  # stable: equal evidence keeps rank order
        while True:
            g = next((g for g in pending if g.row[2] <= host.row[3] and host.row[2] <= g.row[3] and _fold(host, g, max_chars)), None)
            if g is None:
                break
            pending.remove(g)
            merged.add(id(g))
    # the neighbours that did not fit fold into each other the same way (one slot, as before)
    rest = [c for c in cands if id(c) not in merged and id(c) not in guests]
    if rest:
        kept = {id(c) for c in merge_overlapping(rest, max_chars)}
        merged.update(id(c) for c in rest if id(c) not in kept)
    return [c for c in cands if id(c) not in merged]


def _words_held(c: Candidate) -> float:
    """Sort key: the weight of the query's words one passage of `c` holds, most first."""
    return -c.parts["confidence"]["termWeight"]


def _fold(host: Candidate, c: Candidate, max_chars: int) -> bool:
    """Grow `host` over the overlapping `c` when the two fit in `max_chars`; whether it did."""
    start, end = c.row[2], c.row[3]
    h_path, h_source, h_start, h_end, h_text = host.row[:5]
    h_lines = h_text.split("\n")
    c_lines = c.row[4].split("\n")
    if start < h_start:  # c extends the host upwards
        lines = c_lines[: h_start - start] + h_lines
    else:
        lines = h_lines
    if end > h_end:  # and/or downwards
        lines = lines + c_lines[len(c_lines) - (end - h_end) :]
    if sum(len(x) + 1 for x in lines) > max_chars:
        return False
    host.row = (h_path, h_source, min(start, h_start), max(end, h_end), "\n".join(lines), *host.row[5:])
    host.parts.setdefault("merged", []).append({"startLine": start, "endLine": end, "score": round(c.score, 4),
                                                "keywordRank": c.kw_rank, "vectorRank": c.vec_rank})
    return True
