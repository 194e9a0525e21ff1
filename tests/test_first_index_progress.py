"""A first index with a local model shows its embedding phase as it starts (chunks, rate, ETA),
and while it runs the status says the index is being built, not "no index yet: run `clawmem
index`" nor "meaning search needs local.modelPath" (issue 33). Real engine, tiny real GGUF model."""

import json

from clawmem.engine import events as ev
from clawmem.engine.index.lock import WriterLock
from helpers import run_cli, write


def notes(ws, files=6, paragraphs=5):
    for i in range(files):
        write(ws / "memory" / f"2026-01-{i + 1:02d}.md",
              "\n\n".join(f"note {i}.{j} about the heron migration and the garden " * 30 for j in range(paragraphs)))


def test_embedding_progress_starts_with_the_phase_and_moves_within_a_batch(workspace, make_engine, tiny_model):
    notes(workspace)
    eng = make_engine({"provider": "local", "local.modelPath": str(tiny_model)})
    events = list(eng.index())
    kinds = [(type(e).__name__, getattr(e, "phase", None), getattr(e, "done", None)) for e in events]
    files_done = max(i for i, k in enumerate(kinds) if k[1] == "files")
    first_embed = next(i for i, k in enumerate(kinds) if k[1] == "embed")
    first_batch = next(i for i, k in enumerate(kinds) if k[0] == "ChunksEmbedded")
    assert files_done < first_embed < first_batch
    assert kinds[first_embed][2] == 0 and events[first_embed].total > 8
    # progress inside the first batch of 32: the local model reports every 4 passages
    inside = [e.done for e in events[first_embed + 1 : first_batch] if isinstance(e, ev.Progress)]
    assert inside and inside == sorted(inside) and 0 < inside[0] <= 4


def test_status_during_a_first_index_says_it_is_being_built(workspace, make_engine, tiny_model):
    """Before the index file exists, and while its chunks are embedded: the reason names the
    running job, and the app's mode line does not ask for a model that is configured."""
    from clawmem.tui.present import keyword_line

    notes(workspace, files=2)
    eng = make_engine({"provider": "local", "local.modelPath": str(tiny_model)})
    lock = WriterLock(eng.index_path, command="clawmem index")
    assert lock.try_acquire()
    st = eng.status()
    lock.release()
    reason = st["provider"]["reason"]
    assert "the first index is being built" in reason and "run `clawmem index`" not in reason
    assert "local.modelPath" not in keyword_line(reason)
    assert st["freshness"]["job"].startswith("indexing")

    other = make_engine({"provider": "local", "local.modelPath": str(tiny_model)})
    for e in eng.index():
        if isinstance(e, ev.Progress) and e.phase == "embed" and e.done == 0:
            mid = other.status()
            break
    else:
        raise AssertionError("no embedding phase")
    assert mid["index"]["files"] == 2
    assert mid["provider"]["reason"].endswith("the index job running now is embedding them")
    assert "local.modelPath" not in keyword_line(mid["provider"]["reason"])


def test_the_cli_shows_the_embedding_phase_right_after_the_files(workspace, tiny_model):
    notes(workspace, files=3)
    cfg = workspace.parent / "cfg.toml"
    cfg.write_text(f'provider = "local"\n[local]\nmodelPath = "{tiny_model}"\n')
    r = run_cli("--workspace", str(workspace), "--config", str(cfg), "index")
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    files_done = next(i for i, line in enumerate(lines) if "3/3 files" in line)
    assert "0/" in lines[files_done + 1] and "chunks embedded" in lines[files_done + 1], lines
    # and `index` ends with the counts and the mode, as status would say them
    assert "3 files" in lines[-1] and "hybrid search with local (tiny-bert)" in lines[-1], lines[-1]
    st = json.loads(run_cli("--workspace", str(workspace), "--config", str(cfg), "status", "--json").stdout)
    assert st["index"]["files"] == 3 and st["provider"]["active"] == "local"
