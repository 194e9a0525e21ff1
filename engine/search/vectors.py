"""Vector candidates: the query's similarity to every chunk (an in-memory matrix in long-lived
engines, sqlite-vec KNN in one-shot commands), and how far each stands above the background.

A one-shot search (`clawmem search`) never loads numpy (~0.1 s, most of what a hybrid search
with a warm resident model would cost): the query vector comes as an array('f'), sqlite-vec
takes its bytes (its KNN, and the cosines of keyword hits outside the vector list, computed as
the KNN computes them), and the reference sample's few hundred products are summed in plain
Python. Long-lived engines keep numpy matrices in memory (`VectorSide.matrix`, and
`reference` as a matrix)."""

from __future__ import annotations

import os
from operator import mul
TYPE_CHECKING = False  # typing's constant without importing typing: a search never needs it (~3 ms)
if TYPE_CHECKING:  # numpy loads lazily: a keyword-only `clawmem search` starts faster without it
    from typing import Any
    import numpy as np

from . import ranking
from ..index.store import Store
from .options import Candidate, Options


# ----------------------------------------------------------------------------- the search


class VectorSide:
    def __init__(self, provider: Any, model_id: int):
        self.provider = provider  # embeddings.Provider
        self.model_id = model_id
        # vectors of a random sample of the index (calibration): a numpy matrix in long-lived
        # engines, a list of float32 blobs in one-shot ones (Store.reference_rows)
        self.reference: np.ndarray | list[bytes] | None = None
        self.matrix: tuple[np.ndarray, np.ndarray] | None = None  # (ids, matrix) when searched in memory


def vector_standing(store: Store, side: VectorSide, qvec: np.ndarray, cands: list[Candidate]) -> None:
    """Every candidate's z (cosine above the query's background, in standard deviations), the
    keyword side's too: fused against a guessed "outside the vector pool" value, a lexical hit
    the vectors merely ranked 41st would lose to any chunk both lists hold."""
    ref = next((c.parts["vectorReference"] for c in cands if "vectorReference" in c.parts), None)
    if ref is None:
        return
    cos = {c.id: c.vec_cos for c in cands if c.vec_cos is not None}
    missing = [c.id for c in cands if c.vec_cos is None]
    if missing and side.matrix is not None:
        ids, mat = store.load_matrix(side.model_id, missing)
        cos.update(zip(ids.tolist(), matvec(mat, qvec).tolist()))
    elif missing:  # as the KNN list's were computed: identical chunks tie
        found = store.cosines(side.model_id, missing, qvec)
        if found is None:
            rows = store.vector_blobs(side.model_id, missing)
            found = zip((cid for cid, _ in rows), dots([blob for _, blob in rows], qvec))
        cos.update(found)
    for c in cands:
        if c.id in cos:
            c.vec_z = (cos[c.id] - ref["mean"]) / max(ref["std"], 1e-4)


def vector_candidates(store: Store, side: VectorSide, qvec: np.ndarray, opts: Options, filtered: list[int] | None,
                      product: Product | None = None) -> list[Candidate]:
    """The `opts.candidates` nearest chunks. `product`: the in-memory matrix's product with
    `qvec`, started earlier by the caller."""
    n = opts.candidates
    if filtered is not None:
        ids, mat = store.load_matrix(side.model_id, filtered)
        pairs = _top(ids, matvec(mat, qvec), n)
    elif side.matrix is not None:
        pairs = _top(side.matrix[0], product.result() if product else matvec(side.matrix[1], qvec), n)
    elif store.has_vec_table(side.model_id):
        pairs = store.knn(side.model_id, qvec, n * 2)  # over-fetch: other sources are filtered below
    else:
        ids, mat = store.load_matrix(side.model_id)
        pairs = _top(ids, matvec(mat, qvec), n)
    if isinstance(side.reference, list):
        mean, std = mean_std(dots(side.reference, qvec))
    elif side.reference is not None:
        ref = matvec(side.reference, qvec)
        mean, std = float(ref.mean()), float(ref.std())
    else:  # no sample yet: treat the candidates' own spread as the reference
        sims = [c for _, c in pairs] or [0.0]
        mean, std = median(sims), mean_std(sims)[1] or 1.0
    out = []
    for cid, cos in pairs:
        cand = Candidate(int(cid), vec_rank=len(out) + 1, vec_cos=float(cos), vec_score=ranking.calibrate_cosine(float(cos), mean, std))
        cand.parts["vectorReference"] = {"mean": round(mean, 4), "std": round(std, 4)}
        out.append(cand)
    return out


def dots(blobs: list[bytes], q) -> list[float]:
    """q · each float32 blob, in plain Python (double sums of the float32 values): for the
    few hundred vectors a one-shot search compares, cheaper than importing numpy."""
    from array import array

    qs = q.tolist()
    return [sum(map(mul, array("f", blob), qs)) for blob in blobs]


def mean_std(xs: list[float]) -> tuple[float, float]:
    """Mean and population standard deviation (numpy's mean() and std())."""
    mean = sum(xs) / len(xs)
    return mean, (sum((x - mean) ** 2 for x in xs) / len(xs)) ** 0.5


def median(xs: list[float]) -> float:
    s = sorted(xs)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


SPLIT_ROWS = 50_000  # above this, two threads share the product
_helper: Any = None


def _helper_thread() -> Any:
    global _helper
    if _helper is None:
        from concurrent.futures import ThreadPoolExecutor

        _helper = ThreadPoolExecutor(1, thread_name_prefix="clawmem-matvec")
    return _helper


def two_cores(rows: int) -> bool:
    """Whether a product over this many rows is worth a second thread."""
    return rows >= SPLIT_ROWS and (os.cpu_count() or 1) >= 2


class Product:
    """mat @ q in blocks, taken by whichever thread is free: the helper thread starts at once,
    the caller joins in when it asks for the result. A search starts it before its keyword
    pass, so a short query's product is shared by both cores while a long question's runs
    beside FTS5. The helper never waits on anything, so a busy helper only means the caller
    does more blocks itself."""

    BLOCK = 8192  # rows: ~1 ms of work at 384 dims, fine enough for the two threads to even out

    def __init__(self, mat: np.ndarray, q: np.ndarray):
        import numpy as np

        self.mat, self.q = mat, np.asarray(q, dtype=np.float32)
        self.out = np.empty(len(mat), dtype=np.float32)
        self.blocks = iter(range(0, len(mat), self.BLOCK))  # next() on it is atomic: each block is done once
        self.helper = _helper_thread().submit(self._work)

    def _work(self) -> None:
        import numpy as np

        for start in self.blocks:
            stop = start + self.BLOCK
            np.einsum("ij,j->i", self.mat[start:stop], self.q, out=self.out[start:stop])

    def result(self) -> np.ndarray:
        self._work()
        self.helper.result()
        return self.out


def matvec(mat: np.ndarray, q: np.ndarray) -> np.ndarray:
    """mat @ q without numpy's threaded BLAS, which spin-waits at its barriers and stalls
    whenever other work keeps the cores busy (8 ms for 10k x 384 instead of 0.3 ms on this
    2-core box: bench/bench_vector.py). einsum runs on the calling thread; a big matrix is
    shared with one helper thread, which simply waits its turn on a busy box."""
    import numpy as np

    q = np.asarray(q, dtype=np.float32)  # an array('f') from the local model, or numpy's
    if isinstance(mat, list):  # a one-shot engine's reference rows (the fleet search reads them)
        mat = np.frombuffer(b"".join(mat), dtype=np.float32).reshape(len(mat), -1)
    if two_cores(len(mat)):
        return Product(mat, q).result()
    return np.einsum("ij,j->i", mat, q)


def _top(ids: np.ndarray, sims: np.ndarray, n: int) -> list[tuple[int, float]]:
    """The n best (id, similarity) pairs, best first."""
    import numpy as np

    if len(ids) == 0:
        return []
    k = min(n, len(ids))
    idx = np.argpartition(sims, len(sims) - k)[-k:]
    idx = idx[np.argsort(-sims[idx])]
    return [(int(ids[i]), float(sims[i])) for i in idx]
