"""The team's notebook: notes written by agents (never refused for what they say; possible
contradictions flagged both ways, by promotion's rule), replaced, proposed, undone, read in
`clawmem context`, and found by a fleet search (`team_hits`)."""

from __future__ import annotations

from .connection import FleetError, _one_line, connect, fleet_host, fleet_url
from .schema import _has_schema, tsquery_literal, tsvector_literal

TEAM_SECTION = "Notes"


def _team_conn(engine):
    conn = connect(fleet_url(engine.cfg))
    if not _has_schema(conn):
        conn.close()
        raise FleetError("the fleet database has no team notebook yet: the owner's `clawmem fleet grant` or push makes it")
    return conn


def _note(row) -> dict:
    nid, agent, host, section, text, at, replaces, undone, proposes, conflicts = row
    return {"id": nid, "agent": agent, "host": host, "section": section, "text": text,
            "writtenAt": at.isoformat(timespec="seconds"), "replaces": replaces,
            "undoneAt": undone.isoformat(timespec="seconds") if undone else None,
            "proposes": proposes, "conflicts": sorted(conflicts or [])}


NOTE_COLUMNS = "id, agent, host, section, text, written_at, replaces, undone_at, proposes, conflicts"
# a note shares this share of its words with a standing note, the smaller's, and is not the same
# fact: they may say two things of one subject (a contradiction restates its subject and
# changes a value). Words, not opening words: "the deploy window for production" and "… for
# staging" share two of five and are two facts. No list of words, no fit to a data set
CONFLICT_SHARE = 0.6


def _words(text: str) -> set[str]:
    from ..text import STOPWORDS, index_tokens

    return {t for t in index_tokens(text) if t not in STOPWORDS}


def _may_conflict(text: str, other: str) -> bool:
    from ..consolidate.promote import _fact_key

    a, b = _words(text), _words(other)
    if not a or not b or _fact_key(text) == _fact_key(other):
        return False
    return len(a & b) / min(len(a), len(b)) >= CONFLICT_SHARE


def _flag_both(notes: list[dict]) -> list[dict]:
    """Each note's possible conflicts both ways (a note names those it met when written), among
    the given notes."""
    ids = {n["id"] for n in notes}
    met: dict[int, set[int]] = {n["id"]: set(n["conflicts"]) & ids for n in notes}
    for n in notes:
        for other in met[n["id"]]:
            met[other].add(n["id"])
    return [{**n, "conflicts": sorted(met[n["id"]])} for n in notes]


def _live(notes: list[dict]) -> list[dict]:
    """The notes that stand: not undone, and not replaced by a note that stands."""
    by_id = {n["id"]: n for n in notes}
    standing = {n["id"] for n in notes if not n["undoneAt"]}
    for n in sorted(notes, key=lambda n: n["id"], reverse=True):  # newest first: a replacement of a replacement
        if n["id"] in standing and n["replaces"] in standing:
            standing.discard(n["replaces"])
    return [by_id[i] for i in sorted(standing)]


def _all_notes(conn) -> list[dict]:
    return [_note(r) for r in conn.execute(f"select {NOTE_COLUMNS} from clawmem_notes order by id")]


def team_notes(engine, *, every_version: bool = False, conflicts: bool = False) -> list[dict]:
    """The team's notebook, oldest first: the notes that stand, each with the standing notes it
    may contradict (`conflicts`: only those that have one; `every_version`: all of them,
    undone and replaced ones too, each saying so)."""
    conn = _team_conn(engine)
    try:
        notes = _all_notes(conn)
    except Exception as exc:
        raise FleetError(f"team notes: {_one_line(exc, fleet_url(engine.cfg))}") from None
    finally:
        conn.close()
    live = _flag_both(_live(notes))
    if conflicts:
        return [n for n in live if n["conflicts"]]
    if every_version:
        flagged = {n["id"]: n["conflicts"] for n in live}
        return [{**n, "standing": n["id"] in flagged, "conflicts": flagged.get(n["id"], [])} for n in notes]
    return live


def team_remember(engine, text: str, section: str | None = None, replaces: int | None = None) -> dict:
    """Write a note to the team's notebook, named with this agent and host, under a lock on
    the notebook (two writers at once are taken one after the other). Never refused for what it
    says: the same note again is not written twice; the standing notes of any section that
    share most of its words (the notebook searched with its words) are flagged with it as
    possible conflicts, for review (`fleet notes --conflicts`). `replaces` another note: this
    agent's own (or any, as the owner) is replaced; another agent's is proposed a replacement,
    and stands until its writer or the owner replaces it. Returns the note, or {error}."""
    from ..consolidate.promote import _fact_key

    text = " ".join((text or "").split())
    section = " ".join((section or TEAM_SECTION).split()) or TEAM_SECTION
    if not text:
        return {"error": "text required: the note to write"}
    agent, host = engine.cfg.agent_id, fleet_host(engine.cfg)
    url = fleet_url(engine.cfg)
    conn = _team_conn(engine)
    try:
        conn.execute("select pg_advisory_xact_lock(hashtext('clawmem_notes'))")
        notes = _all_notes(conn)
        by_id = {n["id"]: n for n in notes}
        if replaces is not None and replaces not in by_id:
            return {"error": f"replaces: no team note {replaces} (`clawmem fleet notes` lists them)"}
        standing = _live(notes)
        same = next((n for n in standing if n["section"] == section and _fact_key(n["text"]) == _fact_key(text)), None)
        if same is not None:
            return {**same, "note": f"already in the team notebook (note {same['id']} by {same['agent']}): not written again"}
        is_owner = conn.execute("select clawmem_own_agent() is null and clawmem_is_owner()").fetchone()[0]
        proposes = None
        if replaces is not None and by_id[replaces]["agent"] != agent and not is_owner:
            replaces, proposes = None, replaces
        # the notebook searched with the note's words (its stored tokens, clawmem's), any section
        query = tsquery_literal(sorted(_words(text)), "|")
        found = conn.execute("select id from clawmem_notes where tokens @@ %s::tsquery", (query,)).fetchall() if query else []
        found_ids = {r[0] for r in found}
        against = [n for n in standing if n["id"] in found_ids and n["id"] not in (replaces, proposes)
                   and _may_conflict(text, n["text"])]
        nid = conn.execute("select clawmem_note_add(%s, %s, %s, %s, %s, %s, %s, %s::tsvector)",
                           (agent, host, section, text, replaces, proposes, [n["id"] for n in against],
                            tsvector_literal(text))).fetchone()[0]
        row = conn.execute(f"select {NOTE_COLUMNS} from clawmem_notes where id = %s", (nid,)).fetchone()
        conn.commit()
    except FleetError:
        raise
    except Exception as exc:
        conn.rollback()
        raise FleetError(f"team note not written: {_one_line(exc, url)}") from None
    finally:
        conn.close()
    out = _note(row)
    said = []
    if proposes is not None:
        said.append(f"proposed as a replacement of note {proposes} by {by_id[proposes]['agent']}, which stands until "
                    f"its writer or the fleet's owner replaces it")
    if against:
        out["possibleConflicts"] = against
        said.append("it may contradict " + "; ".join(f"note {n['id']} by {n['agent']} ({n['section']}): {n['text']}" for n in against)
                    + ": both are flagged for review (`clawmem fleet notes --conflicts`)")
    if said:
        out["note"] = f"team note {out['id']} written by {agent}@{host} under {section}; " + "; ".join(said)
    return out


TEAM_CONTEXT_CAP = 4000  # characters of team notes in `clawmem context`: the newest first


def team_for_context(engine, cap: int) -> dict:
    """The standing team notes as Markdown bullets within `cap` characters, newest first (a
    cut drops the oldest, and says how many)."""
    notes = sorted(team_notes(engine), key=lambda n: n["id"], reverse=True)
    lines = []
    for n in notes:
        flag = f"; may conflict with note {', '.join(map(str, n['conflicts']))}" if n["conflicts"] else ""
        lines.append(f"- {n['text']} ({n['section']}, {n['agent']}, note {n['id']}{flag})")
    kept, used = [], 0
    for line in lines:
        if used + len(line) + 1 > cap:
            break
        kept.append(line)
        used += len(line) + 1
    return {"notes": len(notes), "included": len(kept), "includedChars": used, "chars": sum(len(x) + 1 for x in lines),
            "truncated": len(kept) < len(lines), "text": "\n".join(kept)}


def team_undo(engine, note_id: int) -> dict:
    """Undo one of this agent's own notes (it stays in the notebook's history, stamped undone;
    a note it replaced stands again)."""
    url = fleet_url(engine.cfg)
    conn = _team_conn(engine)
    try:
        done = conn.execute("select clawmem_note_undo(%s, %s)", (engine.cfg.agent_id, note_id)).fetchone()[0]
        row = conn.execute(f"select {NOTE_COLUMNS} from clawmem_notes where id = %s", (done,)).fetchone() if done else None
        conn.commit()
    except Exception as exc:
        conn.rollback()
        raise FleetError(f"team note not undone: {_one_line(exc, url)}") from None
    finally:
        conn.close()
    if row is None:
        raise FleetError(f"team note {note_id}: not one of agent {engine.cfg.agent_id}'s standing notes (an agent undoes only its own)")
    return _note(row)


# ----------------------------------------------------------------------------- as search hits


TEAM_HIT_SHARE = 0.5  # a team note is a hit when it holds this share of the query's weighted words


def team_hits(conn, weights: dict[str, float], opts, agents: list[str] | None = None) -> list[dict]:
    """The standing team notes that hold the query's words, as search hits (`source: "team"`):
    found by the full-text index of their tokens, scored by the share of the query's weighted
    words (the fleet's own word weights, as the memory hits) each holds."""
    total = sum(weights.values())
    if not total:
        return []
    found = conn.execute(f"select {NOTE_COLUMNS}, null from clawmem_notes where tokens @@ %s::tsquery",
                         (tsquery_literal(sorted(weights), "|"),)).fetchall()
    if not found:
        return []
    standing = {n["id"] for n in _live([_note((*r, None, [])) for r in conn.execute(
        "select id, agent, host, section, text, written_at, replaces, undone_at from clawmem_notes")])}
    hits = []
    for row in found:
        n = _note(row[:-1])
        if n["id"] not in standing or (agents is not None and n["agent"] not in agents):
            continue
        words = _words(n["text"])
        score = sum(w for t, w in weights.items() if t in words) / total
        if score < max(TEAM_HIT_SHARE, opts.min_score):
            continue
        hits.append({"path": f"team notes/{n['section']}", "ref": f"team:{n['id']}", "startLine": 1, "endLine": 1,
                     "score": round(score, 4), "snippet": n["text"], "source": "team", "agent": n["agent"], "host": n["host"],
                     "noteId": n["id"], "writtenAt": n["writtenAt"], "conflicts": n["conflicts"],
                     "citation": f"Source: team note {n['id']} by {n['agent']}"})
    return hits
