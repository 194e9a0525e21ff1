"""What the fronts show people, made from the engine's data: status text, search results and
the explanation of a score, for the `clawmem` command and the app alike. The engine returns
dicts; the words are chosen here.

Imports nothing heavy at the top: `clawmem search` loads this on every question.
"""

from __future__ import annotations

from .words import plural


def clip_words(text: str, limit: int = 200) -> str:
    """`text` cut to about `limit` characters between words, ending in "…": a reason that
    quotes the query's words must not repeat a 5,000-character query whole."""
    if len(text) <= limit:
        return text
    import re

    text = re.sub(r"[^\s,]{41,}", lambda m: m.group(0)[:39] + "…", text)  # one endless word
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit // 2 else limit].rstrip(" ,") + " …"


def hidden_reason(hidden: dict) -> str:
    """Why nothing is shown (SearchResults.hidden.reason), short enough for one line or two."""
    return clip_words(hidden.get("reason") or "")


def fallback_text(fallback: dict) -> str:
    return f"fallback from {fallback['from']}: {fallback['reason']}"


def fleet_agents(res: dict) -> str:
    return ", ".join(res["agents"]) or "no agent readable"


def vector_lines(vec: dict, label: str, count) -> list[str]:
    """The vector store's line, then one per model under it, aligned after `label`."""
    pad = " " * len(label)
    return [f"{label}{vector_backend(vec)}"] + [f"{pad}{m['provider']}/{m['model']}: {count(m['vectors'])}, {m['dims']} dims"
                                                for m in vec.get("models", [])]


def vector_backend(vec: dict) -> str:
    """"sqlite-vec v0.1.6", and why vectors are off when they are; `vec` is status()["vector"]."""
    backend = f"{vec.get('backend')} {vec.get('version') or ''}".strip()
    return backend + (f" ({vec['reason']})" if vec.get("reason") else "")


def files_done(rebuild: dict) -> str:
    """" (120 files done)" of an unfinished rebuild, when it counted them."""
    return f" ({rebuild['files']} files done)" if rebuild.get("files") is not None else ""


# ---------------------------------------------------------------------------- status


def format_status(st: dict, verbose: bool = False) -> str:
    """`clawmem status` as text: one labelled line per part of the status. File names are shown
    as one line each, their controls visible (a name may hold a newline or an escape)."""
    from clawmem.engine import human

    name = human.printable_line
    fr = st["freshness"]
    pv = st["provider"]
    vec = st["vector"]
    lines = [f"Repaired:  {line}" for line in st.get("repair") or []]
    lines += [
        f"Workspace: {name(str(st['workspace']))}  (agent {st['agentId']})"
        + ("\n           empty: no MEMORY.md and no memory/*.md yet (fine: the first write creates them)" if st.get("workspaceEmpty") else ""),
        f"Index:     {st['index']['path']}",
        f"           {st['index']['files']} files, {st['index']['chunks']} chunks, schema {st['index']['schemaVersion']}",
    ]
    if st["index"].get("error"):
        lines.append(f"           error: {st['index']['error']}")
    rebuild = st["index"].get("rebuild")
    if rebuild and not rebuild["running"]:
        lines.append(f"Rebuild:   {rebuild_leftover_line(rebuild)}")
    fresh = "clean" if not fr["dirty"] else f"{fr['filesBehind']} files behind"
    if st["index"].get("settings"):
        lines.append(f"           {st['index']['settings']}")
    lines.append(f"Fresh:     {fresh} ({fr['filesIndexed']} indexed / {fr['filesOnDisk']} on disk), last sync {fr['lastSync'] or 'never'}")
    if fr.get("behind"):
        lines.append("           behind: " + ", ".join(map(name, fr["behind"][:5])) + (" …" if len(fr["behind"]) > 5 else ""))
    for item in st.get("fileNotes") or []:
        lines.append(f"{'Skipped:' if item['skipped'] else 'Note:':11}{name(item['path'])}: {name(item['reason'])}")
    for line in st.get("refusedExtraPaths") or []:
        lines.append(f"Refused:   {name(line)}")
    for item in st.get("leftovers") or []:
        lines.append(f"Leftover:  {name(item['path'])}: {item['what']} (`clawmem status --fix` cleans it)")
    lines.append(f"Watcher:   {fr['watcher']}" + (f"; {fr['job']}" if fr.get("job") else ""))
    if st.get("enabled") is False:
        lines.append("Search:    disabled (enabled = false): search and the agent tools answer that memory search is off")
    active = f"{pv['active']} ({pv['model']})" if pv["active"] else "none: keyword-only"
    lines.append(f"Provider:  {active}  [configured: {pv['configured']}]")
    if pv.get("reason"):
        lines.append(f"           {pv['reason']}")
    if pv.get("fallback"):
        lines.append(f"           {fallback_text(pv['fallback'])}")
    for c in pv.get("candidates") or []:
        if c["name"] != "local" and c.get("keySource"):
            lines.append(f"           {c['name']} key from {c['keySource']}")
    if pv.get("lastError"):
        lines.append(f"           {pv['lastError']}")
    if pv.get("batch"):
        lines.append(f"Batch:     on; the last index fell back: {pv['batch']['lastError']}" if pv["batch"]["lastError"] else "Batch:     on (remote.batch.enabled)")
    if pv.get("probe"):
        pr = pv["probe"]
        lines.append(f"           probe: {'ok, ' + str(pr['dims']) + ' dims, ' + str(pr['ms']) + ' ms' if pr['ok'] else 'failed: ' + pr['error']}")
        if pr.get("build"):
            lines.append(f"           llama.cpp build: {pr['build']}")
    lines += vector_lines(vec, "Vectors:   ", lambda n: f"{n} vectors")
    lines.append(f"FTS:       {'ready' if st['fts']['available'] else 'unavailable: ' + st['fts'].get('reason', '')}")
    if verbose:
        lines.append(f"Sources:   {', '.join(st['sources'])}")
        by = st["index"].get("bySource") or {}
        for item in st["scan"]["sources"]:
            got = by.get(item["source"], {"files": 0, "chunks": 0})
            lines.append(f"           {item['source']} · {got['files']}/{item['totalFiles']} files · {got['chunks']} chunks")
        lines.append(f"Extra:     {', '.join(st['extraPaths']) or 'none'}")
    cfg = st["config"]
    lines.append(f"Config:    {cfg['file']}{'' if cfg['fileExists'] else ' (not created; defaults in use)'}")
    if cfg.get("openclaw"):
        lines.append(f"OpenClaw:  {cfg['openclaw']} (read as defaults)")
    for w in cfg.get("warnings") or []:
        lines.append(f"           warning: {w}")
    for k in cfg.get("notHonoured") or []:
        lines.append(f"           not honoured: {k}")
    if "cache" in st:
        c = st["cache"]
        lines.append(f"Cache:     {c.get('entries', '?')} / {c.get('maxEntries', '?')} embeddings ({c.get('path', c.get('error'))})")
    fl = st.get("fleet")
    if fl:
        if fl.get("error"):
            lines.append(f"Fleet:     unreadable push state: {fl['error']}")
        else:
            behind = f"{fl['behind']} chunks behind" if fl["behind"] else ""
            if fl.get("lastError"):  # never "up to date" beside a failure: the fleet may not have what we have
                state = f"the last push failed: {fl['lastError']}" + (f" ({behind})" if behind else "")
                state += "; clawmem fleet push tries again"
            elif fl.get("missingOnServer"):
                state = (f"{fl['missingOnServer']} pushed chunks are no longer in the fleet (deleted there); "
                         "clawmem fleet push sends them again")
            else:
                state = behind or ("up to date" if not fl.get("checked") else f"up to date as of the last push ({fl['checked']})")
            lines.append(f"Fleet:     {state}")
            lines.append(f"           {fl['url']} as {fl['host']}, publish {'on' if fl['publish'] else 'off'}, last push {fl['lastPush'] or 'never'}")
    lines.append(f"Log:       {st['log']}")
    for issue in st.get("issues") or []:
        lines.append(f"Issue:     {issue}")
    if st.get("indexError"):
        lines.append(f"Index error: {st['indexError']}")
    return "\n".join(lines)


def rebuild_leftover_line(rebuild: dict) -> str:
    return f"a rebuild was left unfinished at {rebuild['path']}{files_done(rebuild)}; the next `clawmem index` resumes it"


def ago(iso: str | None, now: float | None = None) -> str:
    """A last-sync time as people say it ("just now", "5 min ago", "2026-02-10 14:05")."""
    import datetime as dt
    import time

    if not iso:
        return "never"
    try:
        when = dt.datetime.fromisoformat(iso)
    except ValueError:
        return iso
    secs = (now if now is not None else time.time()) - when.timestamp()
    if secs < 60:
        return "just now"
    if secs < 3600:
        return f"{int(secs // 60)} min ago"
    if secs < 86400:
        return f"{int(secs // 3600)} h ago"
    return when.strftime("%Y-%m-%d %H:%M")


def status_lines(st: dict, shorten, running: str | None = None) -> list[str]:
    """The Sync tab's status block; `shorten` writes paths as people read them (~)."""
    from clawmem.engine import vectors_serving

    fr, pv, vec, idx = st["freshness"], st["provider"], st["vector"], st["index"]
    fresh = "up to date" if not fr["dirty"] else f"{plural(fr['filesBehind'], 'file')} behind"
    # while a job runs, its progress (live, from its events) stands in for the counts, which
    # are only read again when it ends: reading them during the job would slow it and the app
    counts = running or f"{plural(idx['files'], 'file')}, {plural(idx['chunks'], 'chunk')}"
    lines = [
        f"Index     {counts} · {shorten(idx['path'])}",
        f"Fresh     {fresh} ({fr['filesIndexed']} indexed / {fr['filesOnDisk']} on disk) · last sync {ago(fr['lastSync'])}",
    ]
    if idx.get("error"):
        lines.append(f"          error: {idx['error']}")
    rebuild = idx.get("rebuild")
    if rebuild and not rebuild["running"]:
        lines.append(f"Rebuild   left unfinished{files_done(rebuild)} · the next index (ctrl+r) resumes it · {shorten(rebuild['path'])}")
    if vectors_serving(pv):
        provider = f"{pv['active']} / {pv['model']} (configured: {pv['configured']})"
    else:
        provider = f"keyword-only (configured: {pv['configured']}): {pv.get('reason') or 'no provider'}"
    lines.append(f"Provider  {provider}")
    if pv.get("fallback"):
        lines.append(f"Fallback  from {pv['fallback']['from']}: {pv['fallback']['reason']}")
    lines += vector_lines(vec, "Vectors   ", lambda n: plural(n, "vector"))
    return lines


# ---------------------------------------------------------------------------- search results


def mode_comment(res: dict) -> str:
    """The first line of `clawmem search`'s text: how the search was made."""
    if res.get("corpus") == "fleet" and not res.get("agents"):
        return res.get("reason") or "nothing searched: no readable agent of the fleet"
    if res["mode"] == "keyword":
        why = res.get("reason") or ""
        return f"keyword-only{': ' + why if why else ''}"
    s = f"{res['mode']} ({res['provider']}/{res['model']})"
    if res.get("fallback"):
        s += f"; {fallback_text(res['fallback'])}"
    return s


def format_results(res: dict, explain: bool = False, query: str = "", color: bool = False) -> str:
    """The text output: each hit's score, band and citation, then its snippet with the line it
    matched on marked `›` and the query's words in bold (on a terminal)."""
    from clawmem.engine import human

    terms = [t for t in human.query_terms(query) if len(t) > 1 or not t.isascii()] if query else []
    lines = [human.printable(f"# {mode_comment(res)}")]
    if res.get("corpus") == "fleet":
        lines.append(human.printable(f"# fleet: {fleet_agents(res)}"))
        lines += [human.printable(f"# {note}") for note in res["notes"]]
    if res.get("dateRange"):
        d = res["dateRange"]
        span = f"{d['after'] or '…'} to {d['before'] or '…'} (before)"
        if d.get("applied") is False:
            lines.append(f"# date filter '{d['from']}' ({span}) dropped: {d.get('reason')}")
        else:
            lines.append(f"# dated entries from {span}, from '{d['from']}'")
    if res.get("indexSettings"):
        lines.append(f"# {res['indexSettings']}")
    if res.get("stale"):
        lines.append("# the index is behind the files (run `clawmem index` or `clawmem watch`)")
    if res.get("absent") and res["results"]:
        lines.append(human.printable(f"# probably not in this memory: {clip_words(res['absent']['reason'])}; the hits below are what it holds nearest"))
    if not res["results"]:
        lines.append("No matches.")
    for r in res["results"]:
        band = f" {r['band']}" if r.get("band") else ""
        where = f"{r['agent']}@{r['host']} " if "agent" in r else ""
        lines.append(human.printable_line(f"{r['score']:.3f}{band} {where}{r['path']}:{r['startLine']}-{r['endLine']}" + (f"  [{r['source']}]" if r["source"] != "memory" else "")))
        match = human.snippet_match(r, terms)
        for i, sl in enumerate(r["snippet"].splitlines() or [""]):
            sl = human.printable(sl)  # escaped before our own bold codes go in
            if color:
                for a, b in reversed(human.term_spans(sl, terms)):
                    sl = f"{sl[:a]}\x1b[1m{sl[a:b]}\x1b[0m{sl[b:]}"
            lines.append(("  › " if i == match else "    ") + sl)
        if explain and r.get("explain"):
            lines += [human.printable(f"    · {part}: {text}") for part, text in explain_parts(r["explain"])]
        lines.append("")
    h = res["hidden"]
    if h.get("reason"):
        held = f" {h['count']} weak hit(s) held back (best {h['bestScore']:.3f}); --show-hidden to see them" if h["count"] else ""
        lines.append(human.printable(f"Nothing shown: {hidden_reason(h)}.{held}"))
    elif h["count"]:
        lines.append(f"{h['count']} more below the score threshold (best {h['bestScore']:.3f}); --show-hidden to see them")
    return "\n".join(lines).rstrip()


KEYWORD_HINT = "meaning search needs local.modelPath or an API key such as OPENAI_API_KEY (F5)"


def keyword_line(why: str) -> str:
    """One line: why the search is keyword-only, and how to change that (once, not twice)."""
    if "local.modelPath" in why or "API key" in why:
        return f"Keyword-only: {why} (F5)"
    if why.startswith("searches are keyword-only until vectors exist"):  # a provider is set: no hint to set one
        return f"Keyword-only: {why}"
    return f"Keyword-only: {why}; {KEYWORD_HINT}"


def mode_line(res: dict | None, status: dict | None) -> tuple[str, bool]:
    """(the mode line, keyword-only?) from the last result set, or from status before any search."""
    from clawmem.engine import vectors_serving

    if res is not None:
        if res["mode"] == "keyword":
            why = res.get("reason") or "keyword-only"
            line = keyword_line(why)
            keyword = True
        else:
            line = f"{res['mode'].capitalize()}: {res['provider']} / {res['model']}"
            keyword = False
        if res.get("corpus") == "fleet":
            line = f"Fleet ({fleet_agents(res)}) · {line}"
            line += "".join(f" · {note}" for note in res["notes"])
        if res.get("fallback"):
            line += f" · {fallback_text(res['fallback'])}"
        d = res.get("dateRange")
        if d:
            span = f"{d.get('after') or '…'} to {d.get('before') or '…'}"
            line += f" · dates {span} ('{d.get('from')}')" if d.get("applied", True) else f" · date filter '{d.get('from')}' dropped: nothing matched"
        if res.get("stale"):
            line += " · index behind the files, syncing"
        return line, keyword
    if status is None:
        return "Loading…", False
    pv = status["provider"]
    if vectors_serving(pv):
        return f"Hybrid: {pv['active']} / {pv['model']}", False
    return keyword_line(pv.get("reason") or "no provider"), True


def explanation(r: dict) -> str:
    """The explain view: how the selected result's score was made, one part a line."""
    out = [f"Why {r['path']}:{r['startLine']}-{r['endLine']} scored {r['score']:.3f}", ""]
    out += [f"{part:<8} {text}" for part, text in explain_parts(r.get("explain") or {})]
    if len(out) == 2:
        out.append("no explanation was returned for this result")
    return "\n".join(out)


def explain_parts(x: dict) -> list[tuple[str, str]]:
    """A result's `explain` as (part, plain text) pairs, for the CLI and the app alike."""
    out: list[tuple[str, str]] = []
    if "keyword" in x:
        k = x["keyword"]
        out.append(("keyword", f"rank {k['rank']} · bm25 {k['bm25']} · {k['match']} · score {k['score']}"))
    if "vector" in x:
        v = x["vector"]
        out.append(("vector", f"rank {v['rank']} · cosine {v['cosine']} → {v['calibrated']}"))
    if "exact" in x:
        e = x["exact"]
        out.append(("exact", f"names the rare identifier {e['token']!r} (in {e['chunks']} chunk(s)); lifted to the top of its band"))
    f = x.get("fusion") or {}
    where = f" → {f['relative']} of the best" if "relative" in f else ""
    if f.get("method") == "weighted":
        out.append(("order", f"weighted {f['vectorWeight']} vector / {f['textWeight']} text{where}"))
    elif f.get("method") == "relative":
        out.append(("order", f"relative: {f['textShare']} of the best keyword hit's BM25, {f['vectorShare']} of the best vector standing{where}"))
    elif f.get("method") == "rrf":
        out.append(("order", f"rrf k={f['k']} (vector #{f.get('vectorRank') or '-'}, keyword #{f.get('keywordRank') or '-'}){where}"))
    elif f:
        out.append(("order", f"keyword-only, {'by rank' if f.get('scale') == 'rank' else 'the BM25 score alone'}{where}"))
    if "confidence" in x:
        c = x["confidence"]
        terms = ", ".join(c.get("terms") or []) or "none"
        text = (f"own evidence {c['own']}: one passage holds {c['termCoverage']:.0%} of the query's term weight "
                f"({c['termWeight']} of {c['queryWeight']}; terms: {terms}) → keyword {c['keyword']}; "
                f"own similarity → vector {c['vector']}; combined 1-(1-k)(1-v)")
        if c.get("exact"):
            from clawmem.engine import human

            text += f"; names the rare identifier {c['exact']!r} → at least {human.EXACT_CONFIDENCE}"
        if c.get("notHigh"):
            text += f"; not high: {c['notHigh']}"
        out.append(("score", text))
    if "decay" in x:
        d = x["decay"]
        when = f"{d['date']}, {d['basis']}" if d.get("date") else d["basis"]
        out.append(("decay", f"×{d['factor']} ({when})"))
    if "mmr" in x:
        m = x["mmr"]
        out.append(("mmr", f"step {m['step']} (max similarity {m['maxSimilarity']}, λ {m['lambda']})"))
    if "speaker" in x:
        names = ", ".join(x["speaker"]["names"])
        out.append(("speaker", f"names {names}, who speaks in the query: before the hits naming no speaker" if names
                    else "names no one who speaks in the query: after the hits that do (this memory names whom each note is about)"))
    if "merged" in x:
        spans = ", ".join(f"{m['startLine']}-{m['endLine']}" for m in x["merged"])
        out.append(("merged", f"overlapping hits of this file folded in: lines {spans}"))
    if "chunk" in x:
        out.append(("chunk", f"lines {x['chunk']['startLine']}-{x['chunk']['endLine']}"))
    return out
