"""Embed LongMemEval histories into the bench cache, one at a time (resumable):
    python bench/study31/embed.py 2ebe6c90 32260d93 ...   (from the repository root)"""
import os, sys, time
sys.path.insert(0, "bench")
import eval as E
for var in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
    os.environ.setdefault(var, str(E.CACHE / var.lower()))
E.THREADS = 1
for ws in sys.argv[1:]:
    t0 = time.time()
    E.ensure_indexed("longmemeval_s30", [ws], True)
    print(ws, "done", round(time.time() - t0), "s", flush=True)
