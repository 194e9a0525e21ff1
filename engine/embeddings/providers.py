"""The embedding providers one engine uses: the plan the config makes (embeddings.plan), each
provider built when first needed, and what failed, so that status and searches give the real
reason and a search as you type does not wait on a provider that just failed."""

from __future__ import annotations

import json
# _thread, not threading: the same lock/local/ident, without threading's import (~1 ms of every search)
import _thread
import time
TYPE_CHECKING = False  # typing's constant without importing typing: a search never needs it (~3 ms)

if TYPE_CHECKING:  # numpy loads lazily: a keyword-only `clawmem search` starts faster without it
    import numpy as np

    from ..index.store import Store  # the index's meta holds the failures; embeddings/ sits below index/

from ..config import Config
from . import Plan, Provider, ProviderError, plan as make_plan

FAILURES_KEY = "provider_failures"  # index meta: {provider: why it failed in the last index run}


class Providers:
    def __init__(self, cfg: Config):
        self.cfg = cfg
        self._plan: Plan | None = None
        self._lock = _thread.RLock()
        self.built: dict[str, Provider] = {}
        self.errors: dict[str, str] = {}  # provider -> why it could not be built or failed this run
        self._query_failures: dict[str, tuple[float, str]] = {}  # provider -> (when, why)
        self.query_retry_after = 30.0  # seconds before a provider whose query embedding failed is asked again

    def plan(self) -> Plan:
        if self._plan is None:
            self._plan = make_plan(self.cfg)
        return self._plan

    def get(self, name: str) -> Provider | None:
        """The provider `name` of the plan, built on first use; None when it cannot be used."""
        with self._lock:
            if name in self.built:
                return self.built[name]
            if name in self.errors:
                return None
            cand = next((c for c in self.plan().usable() if c.name == name), None)
            if cand is None:
                return None
            try:
                self.built[name] = cand.factory()
            except ProviderError as exc:
                self.errors[name] = str(exc)
                return None
            return self.built[name]

    def known_failures(self, store: Store) -> dict[str, str]:
        """Provider failures of this process, else those the last index run recorded."""
        recorded = store.get_meta_json(FAILURES_KEY)
        return {**(recorded if isinstance(recorded, dict) else {}), **self.errors}

    def record_failures(self, store: Store) -> None:
        """Keep this run's provider failures in the index, so that `status` and searches in other
        processes give the real reason ("openai: 500 …"), not a guess from vector counts."""
        if self.errors:
            store.set_meta(FAILURES_KEY, json.dumps(self.errors))
        else:
            store.delete_meta(FAILURES_KEY)

    def embed_query(self, prov: Provider, query: str, dims: int | None) -> np.ndarray:
        """A provider that just failed is not asked again for a while: a search as you type
        must not wait for the same retries on every key."""
        now = time.monotonic()
        failed = self._query_failures.get(prov.id)
        if failed and now - failed[0] < self.query_retry_after:
            raise ProviderError(failed[1])
        try:
            vec = prov.embed_query(query)
            if dims is not None and len(vec) != dims:
                raise ProviderError(f"{prov.id}: the query vector has {len(vec)} dimensions but the index has {dims}; run `clawmem index --force`")
        except ProviderError as exc:
            self._query_failures[prov.id] = (now, str(exc))
            raise
        self._query_failures.pop(prov.id, None)
        return vec

    def probe(self, name: str) -> dict:
        """Embed one word with `name` now: whether it answers, the vector size and the time."""
        import numpy as np

        prov = self.get(name)
        if prov is None:
            return {"ok": False, "error": self.errors.get(name, "unavailable")}
        try:
            t0 = time.perf_counter()
            v = prov.embed_query("ping")
            out = {"ok": True, "dims": int(np.asarray(v).size), "ms": round((time.perf_counter() - t0) * 1000, 1)}
        except ProviderError as exc:
            out = {"ok": False, "error": str(exc)}
        build = prov.build_info()
        if build:  # which CPU features the llama.cpp build uses: the first thing to check after a crash
            out["build"] = build
        return out

    def close(self) -> None:
        """Close every built provider; they are built again on next use."""
        for p in list(self.built.values()):
            try:
                p.close()
            except Exception:
                pass
        self.built.clear()
