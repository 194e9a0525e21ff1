"""Planted needles in a synthetic memory (bench/corpus.py): does each mode find them?

Three kinds, each a fact planted once in one daily log:
- exact: the query is the identifier or rare name as written (kx7q2vm9, ENOSPC_BK42, Halvorsen)
- paraphrase: the question says it in other words than the note
- name+paraphrase: a rare name as written, the rest in other words

    python bench/needles.py --no-vectors            # keyword-only
    python bench/needles.py --files 200             # keyword-only and the default (local e5)
    python bench/needles.py --base ../shared/eval/madial_en/archive   # planted in a real chat memory

Prints, per kind and mode, how many needles came first and how many in the top 5, and every
exact needle that keyword-only finds but the default does not (there should be none).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import generate  # noqa: E402

MODEL = Path(__file__).resolve().parent.parent.parent / "shared" / "models" / "multilingual-e5-small-q4_0.gguf"

# (kind, the planted line, the query)
NEEDLES = [
    ("exact", "- The staging deploy key id is kx7q2vm9, kept in the team vault.", "kx7q2vm9"),
    ("exact", "- Backup to the NAS failed with ENOSPC_BK42; cleared old snapshots.", "ENOSPC_BK42"),
    ("exact", "- Paid the plumber, receipt number 88314207.", "88314207"),
    ("exact", "- Dr. Halvorsen moved the knee check-up to next Thursday.", "Halvorsen"),
    ("exact", "- Okonkwo sent over the signed lease for the flat.", "Okonkwo"),
    ("exact", "- The wifi in the cabin is called LAKESIDE_5G.", "what is LAKESIDE_5G"),
    ("exact", "- Zsuzsanna recommended the sourdough starter from the market.", "what did Zsuzsanna recommend"),
    ("paraphrase", "- Mum's birthday dinner is booked at the little trattoria by the harbour.", "where are we eating for my mother's birthday"),
    ("paraphrase", "- The car failed its inspection because the rear brake pads are worn out.", "why didn't my vehicle pass the safety check"),
    ("paraphrase", "- Switched the electricity contract to a cheaper green tariff from March.", "did I change my power supplier"),
    ("paraphrase", "- My daughter starts swimming lessons on Saturday mornings at the leisure centre.", "when does my kid go to the pool for classes"),
    ("paraphrase", "- Lost my passport on the train; reported it at the embassy the next day.", "what happened to my travel document"),
    ("name+paraphrase", "- Ingeborg said the knee needs six weeks of physiotherapy before running again.", "how long did Ingeborg say my leg recovery takes"),
    ("name+paraphrase", "- Adebayo asked for the deposit to be returned by the end of the month.", "when does Adebayo want the money back"),
    ("name+paraphrase", "- Radomir is allergic to walnuts, so no nut cake at his party.", "what food should Radomir avoid"),
    ("name+paraphrase", "- Thibault will look after the cat while we are in Lisbon.", "who is Thibault minding while we travel"),
]


def plant(ws: Path, files: int, seed: int = 3, base: Path | None = None) -> dict[str, str]:
    """Write the corpus (or copy `base`) and the needles; {query: path of the daily log holding its needle}."""
    if base is not None:
        import shutil

        shutil.copytree(base, ws)
    else:
        generate(ws, files)
    logs = sorted((ws / "memory").glob("*.md"))
    rng = random.Random(seed)
    where = {}
    for _, text, query in NEEDLES:
        log = rng.choice(logs)
        lines = log.read_text(encoding="utf-8").split("\n")
        lines.insert(3, text)
        log.write_text("\n".join(lines), encoding="utf-8")
        where[query] = f"memory/{log.name}"
    return where


def rank(eng, query: str, path: str) -> int | None:
    res = eng.search(query, max_results=10, show_hidden=True, stale_check=False, date_filter=False)
    return next((i for i, r in enumerate(res["results"], 1) if r["path"] == path), None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--no-vectors", action="store_true")
    ap.add_argument("--dir", type=Path, help="keep the workspace and index here (reused: the embeddings are kept)")
    ap.add_argument("--base", type=Path, help="plant the needles in a copy of this workspace instead of the synthetic one")
    a = ap.parse_args()
    from clawmem.engine import Engine, load_config

    base = Path(a.dir or tempfile.mkdtemp(prefix="clawmem-needles-"))
    ws = base / "ws"
    if not ws.exists():
        where = plant(ws, a.files, base=a.base)
    else:  # the same draw: only the paths are wanted
        where = plant(Path(tempfile.mkdtemp()) / "ws", a.files, base=a.base)
    modes = {"keyword": {"provider": "none"}}
    if not a.no_vectors:
        modes["default"] = {"provider": "local", "local.modelPath": str(MODEL), "local.threads": 1}
    ranks: dict[str, dict[str, int | None]] = {}
    for mode, over in modes.items():
        cfg = load_config(None, workspace=str(ws), overrides={"store.path": str(base / f"{mode}.sqlite"), "sync.onSearch": False, **over})
        eng = Engine(cfg, persistent=True)
        eng.run_index(reason="bench")
        ranks[mode] = {q: rank(eng, q, where[q]) for _, _, q in NEEDLES}
        eng.close()
    print(f"{a.base or f'{a.files} synthetic daily logs'}, {len(NEEDLES)} needles           first   top 5")
    for kind in ("exact", "paraphrase", "name+paraphrase"):
        qs = [q for k, _, q in NEEDLES if k == kind]
        for mode in modes:
            r = [ranks[mode][q] for q in qs]
            print(f"  {kind:<16} {mode:<8} {sum(x == 1 for x in r):>3}/{len(qs)}   {sum(x is not None and x <= 5 for x in r):>3}/{len(qs)}")
    if "default" in ranks:
        lost = [q for k, _, q in NEEDLES if k == "exact" and ranks["keyword"][q] == 1 and ranks["default"][q] != 1]
        print("exact needles keyword-only puts first and the default does not: " + (", ".join(lost) or "none"))
    for mode in modes:
        print(f"  {mode}: " + ", ".join(f"{q!r} {ranks[mode][q] or '-'}" for _, _, q in NEEDLES))


if __name__ == "__main__":
    main()
