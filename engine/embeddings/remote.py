"""Remote providers over httpx: OpenAI (and any OpenAI-compatible server), Gemini, Voyage,
Mistral, and Ollama's native API.

Request shapes follow the providers' embedding APIs as OpenClaw uses them.
Passages are grouped into requests of at most ~8000 UTF-8 bytes, a few requests run at
once, and 429 / 5xx / connection errors are retried (4 attempts, 500 ms doubling, ±20 %
jitter, at most 8 s). Each request has a 60 s timeout; a timed-out request is not retried
(a server that hangs once tends to hang again, and four 60 s waits would stall a search).
An input over the provider's limit is split and its pieces' vectors averaged. A vector of
the wrong size, with NaN or all zeros is dropped for that input, never stored. Errors are
one line naming the provider; the API key never appears in a message or a fingerprint.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from typing import TYPE_CHECKING, Any, Callable

from ..provider_registry import PROVIDERS, provider_class
from ..redaction import CREDENTIAL_HEADER, mask_url, url_secrets
from .base import Provider, ProviderError, check_vector

if TYPE_CHECKING:  # loaded when a provider embeds: the plan reads these classes in every search
    import numpy as np

    from . import Candidate

BATCH_BYTES = 8000
CONCURRENCY = 4
TIMEOUT = 60.0

# input limits by model, as the providers document them, treated as UTF-8 bytes; never above one request's budget
INPUT_LIMIT = {
    "openai:text-embedding-3-small": 8192,
    "openai:text-embedding-3-large": 8192,
    "openai:text-embedding-ada-002": 8191,
    "gemini:text-embedding-004": 2048,
    "gemini:gemini-embedding-001": 2048,
    "gemini:gemini-embedding-2-preview": 8192,
    "voyage:voyage-3": 32000,
    "voyage:voyage-3-lite": 16000,
    "voyage:voyage-code-3": 32000,
}
# ollama: its default context (2048 tokens) would silently cut a longer input; stay well under it
DEFAULT_LIMIT = {"gemini": 2048, "ollama": 4000}
GEMINI_2 = "gemini-embedding-2-preview"
GEMINI_2_DIMS = (768, 1536, 3072)


class Retry:
    """How often and how long to retry. A plain class: dataclasses (and inspect) would cost every
    search that reads the provider classes milliseconds."""

    __slots__ = ("attempts", "base", "cap", "jitter")

    def __init__(self, attempts: int = 4, base: float = 0.5, cap: float = 8.0, jitter: float = 0.2):
        self.attempts = attempts
        self.base = base  # seconds, doubled after each failed attempt
        self.cap = cap
        self.jitter = jitter

    def wait(self, attempt: int, rand: float) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based); rand in [0, 1)."""
        delay = self.base * (2 ** (attempt - 1))
        return min(self.cap, delay * (1 + self.jitter * (2 * rand - 1)))


RETRY = Retry()  # the policy providers get unless told otherwise (tests shorten it)


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


def normalize_model(name: str, model: str) -> str:
    m = (model or "").strip()
    if not m:
        return provider_class(name).default_model
    for prefix in provider_class(name).model_prefixes:
        m = m.removeprefix(prefix)
    return m


def normalize_base(name: str, base_url: str) -> str:
    base = (base_url or "").strip().rstrip("/") or provider_class(name).default_base
    if name == "gemini":
        # an OpenAI-compatibility URL of Gemini's, or the bare host, means the native v1beta API
        base = re.sub(r"/openai(/.*)?$", "", base)
        if re.fullmatch(r"https?://generativelanguage\.googleapis\.com", base):
            base += "/v1beta"
    if name == "ollama":
        base = base.removesuffix("/v1")  # an OpenAI-compatibility URL of Ollama's means its native API
    return base


class RemoteProvider(Provider):
    """Shared transport: batching, concurrency, retries, errors. Subclasses build the requests
    (batch_request, query_request, parse_batch) and declare their class facts; the constructor
    below is the contract `candidate()` builds every remote provider with."""

    config_keys = "`model`, `remote.*`"

    @classmethod
    def candidate(cls, cfg, *, primary: bool, explicit: bool = True) -> "Candidate":
        """remote.* settings belong to the configured primary remote provider (or openai under auto);
        models.providers.<id> in openclaw.json fills in the key, base URL and headers."""
        from . import Candidate, find_key

        name = cls.name
        owns_remote = primary or (cfg["provider"] == "auto" and name == "openai")
        key, problems = find_key(cfg, name, owns_remote)
        model = cfg["model"] if (primary or cfg["provider"] == "auto") and cfg["model"] else cls.default_model
        if key is None and cls.needs_key:
            where = "set " + " or ".join((["remote.apiKey"] if owns_remote else []) + list(cls.env_vars))
            why = f"{name}: no API key ({'; '.join(problems) + '; ' if problems else ''}{where})"
            return Candidate(name, None, why, model)
        entry = cfg.openclaw_provider(cls.openclaw_id)
        base_url = (cfg["remote.baseUrl"] if owns_remote else "") or (entry.get("baseUrl") if isinstance(entry.get("baseUrl"), str) else "")
        headers: dict[str, str] = {}
        from ..secrets import SecretError

        for h, v in (entry.get("headers") or {}).items() if isinstance(entry.get("headers"), dict) else ():
            try:  # header values are SecretInputs too
                got = cfg.secrets().resolve(v, f"openclaw.json models.providers.{cls.openclaw_id}.headers.{h}")
            except SecretError as exc:
                return Candidate(name, None, f"{name}: {exc}", model)
            if got:
                headers[h] = got.value
        if owns_remote:
            headers.update(cfg["remote.headers"])
        dims = cfg["outputDimensionality"] if name == "gemini" and (primary or cfg["provider"] == "auto") else 0
        api_key = key.value if key else ""
        from ..redaction import remember

        remember(api_key, f"{name} API key")  # masked wherever it shows up: logs, indexed transcripts
        for h, v in headers.items():
            if CREDENTIAL_HEADER.search(h):
                remember(v, f"{h} header")

        use_batch = bool(cls.batch_client) and owns_remote and cfg["remote.batch.enabled"]

        def make() -> Provider:
            prov = cls(name, model=model, api_key=api_key, base_url=base_url, headers=headers, output_dimensionality=dims,
                       timeout=cfg["remote.timeoutSeconds"])
            if use_batch:
                from .batch import BatchSettings, client_class

                prov.batch = client_class(cls)(prov, BatchSettings.from_config(cfg), cfg.agent_id)
            return prov

        return Candidate(name, make, None, model, key_source=key.source if key else f"none ({name} needs no key)")

    def __init__(
        self,
        name: str,
        *,
        model: str,
        api_key: str,
        base_url: str = "",
        headers: dict[str, str] | None = None,
        output_dimensionality: int = 0,
        timeout: float | None = None,
        concurrency: int = CONCURRENCY,
        batch_bytes: int = BATCH_BYTES,
        retry: Retry | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rand: Callable[[], float] = random.random,
    ):
        import httpx

        self.id = name
        self.model = normalize_model(name, model)
        self.base_url = normalize_base(name, base_url)
        self.shown_url = mask_url(self.base_url)  # what messages, logs and the index's meta say
        self._key = api_key
        self.output_dimensionality = self._check_dimensionality(output_dimensionality or 0)
        self.headers = self._headers(api_key, headers or {})
        self._secrets = sorted({api_key, *url_secrets(self.base_url),
                                *(v for k, v in self.headers.items() if CREDENTIAL_HEADER.search(k))} - {""}, key=len, reverse=True)
        self.endpoint = self._endpoint()
        limit = INPUT_LIMIT.get(f"{name}:{self.model.lower()}", DEFAULT_LIMIT.get(name, 8000))
        self.max_input_bytes = min(limit, batch_bytes)
        self.batch_bytes = batch_bytes
        self.retry = retry or RETRY
        self.sleep = sleep
        self.rand = rand
        self.concurrency = max(1, concurrency)
        self.waits: list[float] = []  # every retry wait, for status and tests
        self._dims_lock = threading.Lock()
        timeout = timeout or TIMEOUT
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            limits=httpx.Limits(max_connections=self.concurrency + 1),
            follow_redirects=False,
        )

    # ------------------------------------------------------------------ identity

    def _headers(self, key: str, extra: dict[str, str]) -> dict[str, str]:
        base = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
        return _merge(base, extra)

    def _check_dimensionality(self, dims: int) -> int:
        return 0  # a Gemini setting; status lists it as not honoured for other providers

    def _endpoint(self) -> str:
        """Base URL (its credentials masked) plus the non-secret headers: what makes two servers'
        vectors differ. Stored in the index's meta, so never a credential."""
        pairs = sorted((k.lower(), v) for k, v in self.headers.items() if not CREDENTIAL_HEADER.search(k) and k.lower() != "content-type")
        return self.shown_url + (" " + json.dumps(pairs, separators=(",", ":")) if pairs else "")

    def __repr__(self) -> str:  # never the key
        return f"<{type(self).__name__} {self.id}/{self.model} at {self.shown_url}>"

    # ------------------------------------------------------------------ requests (subclasses)

    def batch_request(self, texts: list[str]) -> tuple[str, dict]:
        raise NotImplementedError

    def query_request(self, text: str) -> tuple[str, dict]:
        raise NotImplementedError

    def parse_batch(self, data: Any, n: int) -> list:
        raise NotImplementedError

    def parse_query(self, data: Any) -> list:
        return self.parse_batch(data, 1)[0]

    # ------------------------------------------------------------------ embedding

    def embed_query(self, text: str) -> np.ndarray:
        text = text.strip()
        pieces = split_by_bytes(text, self.max_input_bytes) if text else [text]
        if len(pieces) == 1:
            path, body = self.query_request(pieces[0])
            raw = [self.parse_query(self._post(path, body))]
        else:  # a query over the limit: embed its pieces as one batch and average them
            path, body = self.batch_request(pieces)
            raw = self.parse_batch(self._post(path, body), len(pieces))
        vecs = [self._check(v) for v in raw]
        v = _combine(vecs, [len(p.encode("utf-8")) for p in pieces], self.dims)
        if v is None:
            raise ProviderError(f"{self.id}: returned no usable vector for the query (wrong size, NaN or zeros)")
        return v

    def embed_passages(self, texts: list[str]) -> list[np.ndarray | None]:
        # split over-limit inputs; remember which pieces belong to which text
        pieces: list[str] = []
        owner: list[int] = []
        for i, t in enumerate(texts):
            for p in split_by_bytes(t, self.max_input_bytes):
                pieces.append(p)
                owner.append(i)
        groups = group_by_bytes(pieces, self.batch_bytes)
        results: list[list] = [[] for _ in groups]
        if len(groups) == 1 or self.concurrency == 1:
            for g, idx in enumerate(groups):
                results[g] = self._embed_group([pieces[i] for i in idx])
        else:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=min(self.concurrency, len(groups)), thread_name_prefix=f"clawmem-{self.id}") as pool:
                futures = [pool.submit(self._embed_group, [pieces[i] for i in idx]) for idx in groups]
                for g, fut in enumerate(futures):
                    results[g] = fut.result()  # the first ProviderError propagates
        piece_vecs: list = [None] * len(pieces)
        for idx, vecs in zip(groups, results):
            for i, v in zip(idx, vecs):
                piece_vecs[i] = v
        self._learn_dims(piece_vecs)
        by_text: list[list[int]] = [[] for _ in texts]
        for k, o in enumerate(owner):
            by_text[o].append(k)
        out: list[np.ndarray | None] = []
        for mine in by_text:
            vecs = [self._check(piece_vecs[k]) for k in mine]
            out.append(_combine(vecs, [len(pieces[k].encode("utf-8")) for k in mine], self.dims))
        return out

    def _embed_group(self, texts: list[str]) -> list:
        path, body = self.batch_request(texts)
        return self.parse_batch(self._post(path, body), len(texts))

    def _learn_dims(self, vecs: list) -> None:
        """The size most vectors of the first answer have is the model's size from then on."""
        if self.dims is not None:
            return
        sizes = [len(v) for v in vecs if isinstance(v, (list, tuple)) and v]
        if sizes:
            with self._dims_lock:
                if self.dims is None:
                    self.dims = max(set(sizes), key=sizes.count)

    def _check(self, raw) -> np.ndarray | None:
        if not isinstance(raw, (list, tuple)):
            return None
        try:
            return check_vector(raw, self.dims)
        except (TypeError, ValueError):
            return None

    # ------------------------------------------------------------------ transport

    def _post(self, path: str, body: dict) -> Any:
        import httpx

        url = self.base_url + path
        last = ""
        for attempt in range(1, self.retry.attempts + 1):
            try:
                return self._post_once(url, body)
            except _Retryable as exc:
                last = str(exc)
                if attempt == self.retry.attempts:
                    break
                wait = self.retry.wait(attempt, self.rand())
                if exc.retry_after is not None:
                    wait = min(self.retry.cap, max(wait, exc.retry_after))
                self.waits.append(wait)
                self.sleep(wait)
            except httpx.TimeoutException:
                raise ProviderError(f"{self.id}: no answer from {self.shown_url} within {self._client.timeout.read:g} s (timeout)") from None
        raise ProviderError(f"{self.id}: {last} (gave up after {self.retry.attempts} attempts)")

    def _post_once(self, url: str, body: dict) -> Any:
        import httpx

        try:
            resp = self._client.post(url, content=json.dumps(body).encode("utf-8"), headers=self.headers)
        except httpx.TimeoutException:
            raise
        except httpx.TransportError as exc:
            raise _Retryable(f"cannot reach {self.shown_url}: {self._scrub(_first_line(exc))}") from None
        status = resp.status_code
        if status == 429 or status >= 500:
            raise _Retryable(f"{status} {self._error_text(resp) or ('rate limited' if status == 429 else 'server error')}", _retry_after(resp))
        if status >= 400:
            raise ProviderError(self._http_error(resp))
        try:
            return resp.json()
        except ValueError:
            raise ProviderError(f"{self.id}: malformed response from {self.shown_url} (not JSON); is remote.baseUrl an embeddings API?") from None

    def _http_error(self, resp) -> str:
        status = resp.status_code
        env = " or ".join(provider_class(self.id).env_vars if self.id in PROVIDERS else ())
        if status == 401:
            return f"{self.id}: 401 invalid api key (check remote.apiKey or {env})"
        if status == 403:
            return f"{self.id}: 403 forbidden: {self._error_text(resp) or 'the key may lack access to this model'}"
        if status == 404:
            return f"{self.id}: 404 not found at {mask_url(str(resp.request.url.copy_with(query=None)))} (check remote.baseUrl and model {self.model!r})"
        return f"{self.id}: {status} {self._error_text(resp) or 'request rejected'}"

    def _error_text(self, resp) -> str:
        try:
            data = resp.json()
        except ValueError:
            text = resp.text
        else:
            err = data.get("error") if isinstance(data, dict) else None
            if isinstance(err, dict):
                text = str(err.get("message") or err.get("status") or "")
            elif isinstance(err, str):
                text = err
            elif isinstance(data, dict) and isinstance(data.get("detail"), str):
                text = data["detail"]  # voyage
            elif isinstance(data, dict) and "message" in data:
                text = _mistral_message(data["message"])
            else:
                text = ""
        return self._scrub(" ".join(text.split()))[:200]

    def _scrub(self, text: str) -> str:
        """`text` (a server's error, an exception) without any credential this provider sends."""
        for secret in self._secrets:
            if len(secret) >= 4:
                text = text.replace(secret, "***")
        return text

    def close(self) -> None:
        self._client.close()


class OpenAIProvider(RemoteProvider):
    name = "openai"
    env_vars = ("OPENAI_API_KEY",)
    openclaw_id = "openai"
    default_model = "text-embedding-3-small"
    default_base = "https://api.openai.com/v1"
    model_prefixes = ("openai/",)
    batch_client = "batch:OpenAIBatch"
    config_keys = "`model`, `remote.baseUrl`/`apiKey`/`headers` (any OpenAI-compatible server too)"
    request = "`POST {baseUrl}/embeddings` `{\"model\", \"input\": [...]}`, `Authorization: Bearer`"

    def batch_request(self, texts):
        return "/embeddings", {"model": self.model, "input": texts}

    def query_request(self, text):
        return "/embeddings", {"model": self.model, "input": [text]}

    def parse_batch(self, data, n):
        items = data.get("data") if isinstance(data, dict) else None
        if not isinstance(items, list) or len(items) != n:
            raise ProviderError(f"{self.id}: malformed response: expected {n} embeddings in data[], got {len(items) if isinstance(items, list) else 'none'}")
        if all(isinstance(it, dict) and isinstance(it.get("index"), int) for it in items):
            items = sorted(items, key=lambda it: it["index"])
        return [it.get("embedding") if isinstance(it, dict) else None for it in items]


class VoyageProvider(OpenAIProvider):
    name = "voyage"
    env_vars = ("VOYAGE_API_KEY",)
    openclaw_id = "voyage"
    default_model = "voyage-3-lite"
    default_base = "https://api.voyageai.com/v1"
    model_prefixes = ("voyage/",)
    batch_client = "batch:VoyageBatch"
    config_keys = RemoteProvider.config_keys
    request = "`POST {baseUrl}/embeddings` with `input_type` `document` / `query`"

    def batch_request(self, texts):
        return "/embeddings", {"model": self.model, "input": texts, "input_type": "document"}

    def query_request(self, text):
        return "/embeddings", {"model": self.model, "input": [text], "input_type": "query"}


class GeminiProvider(RemoteProvider):
    name = "gemini"
    env_vars = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    openclaw_id = "google"  # Gemini's models live under "google" in openclaw.json
    default_model = "gemini-embedding-001"
    default_base = "https://generativelanguage.googleapis.com/v1beta"
    model_prefixes = ("models/", "gemini/", "google/")
    batch_client = "batch:GeminiBatch"
    config_keys = ("the same, plus `outputDimensionality` (gemini-embedding-2-preview: 768, 1536 or 3072, default 3072; "
                   "other models: sent only when set)")
    request = "`POST …/v1beta/models/{model}:batchEmbedContents` (passages) and `:embedContent` (queries), `x-goog-api-key`"

    def _headers(self, key, extra):
        return _merge({"Content-Type": "application/json", "x-goog-api-key": key}, extra)

    def _check_dimensionality(self, dims: int) -> int:
        if self.model == GEMINI_2 and dims and dims not in GEMINI_2_DIMS:
            raise ProviderError(f"gemini: outputDimensionality {dims} is not one {GEMINI_2} offers (768, 1536 or 3072)")
        return dims

    def _dimensionality(self) -> dict:
        """gemini-embedding-2-preview always gets a size (3072 unless set); other models only when set."""
        dims = self.output_dimensionality or (3072 if self.model == GEMINI_2 else 0)
        return {"outputDimensionality": dims} if dims else {}

    def _endpoint(self) -> str:
        # a size asked for explicitly gives other vectors than the model's default size
        base = super()._endpoint()
        default = 3072 if self.model == GEMINI_2 else 0
        return base + (f" dims={self.output_dimensionality}" if self.output_dimensionality not in (0, default) else "")

    def batch_request(self, texts):
        reqs = [
            {"content": {"parts": [{"text": t}]}, "taskType": "RETRIEVAL_DOCUMENT", "model": f"models/{self.model}", **self._dimensionality()}
            for t in texts
        ]
        return f"/models/{self.model}:batchEmbedContents", {"requests": reqs}

    def query_request(self, text):
        return f"/models/{self.model}:embedContent", {"content": {"parts": [{"text": text}]}, "taskType": "RETRIEVAL_QUERY", **self._dimensionality()}

    def parse_batch(self, data, n):
        items = data.get("embeddings") if isinstance(data, dict) else None
        if not isinstance(items, list) or len(items) != n:
            raise ProviderError(f"{self.id}: malformed response: expected {n} embeddings, got {len(items) if isinstance(items, list) else 'none'}")
        return [it.get("values") if isinstance(it, dict) else None for it in items]

    def parse_query(self, data):
        emb = data.get("embedding") if isinstance(data, dict) else None
        if not isinstance(emb, dict):
            raise ProviderError(f"{self.id}: malformed response: no embedding.values")
        return emb.get("values")


class MistralProvider(OpenAIProvider):
    """Mistral's embeddings API has OpenAI's request and response shapes; only its errors differ."""

    name = "mistral"
    env_vars = ("MISTRAL_API_KEY",)
    openclaw_id = "mistral"
    default_model = "mistral-embed"
    default_base = "https://api.mistral.ai/v1"
    model_prefixes = ("mistral/",)
    batch_client = ""
    config_keys = RemoteProvider.config_keys
    request = "as openai, at `https://api.mistral.ai/v1`"


class OllamaProvider(RemoteProvider):
    """Ollama's native API: `POST /api/embed {model, input: [...]}` -> `{embeddings: [[...]]}`.
    A key is optional (a proxy in front of Ollama may want one)."""

    name = "ollama"
    env_vars = ("OLLAMA_API_KEY",)
    openclaw_id = "ollama"
    default_model = "nomic-embed-text"
    default_base = "http://127.0.0.1:11434"
    model_prefixes = ("ollama/",)
    needs_key = False
    openclaw_key_first = True
    auto = False  # only when named, as in OpenClaw
    config_keys = "`model`, `remote.baseUrl` (default `http://127.0.0.1:11434`; a trailing `/v1` is dropped), `remote.headers`"
    request = ("native `POST {baseUrl}/api/embed` `{\"model\", \"input\": [...]}`; inputs kept under 4000 bytes so Ollama "
               "never cuts one")

    def _headers(self, key, extra):
        base = {"Content-Type": "application/json"}
        if key:
            base["Authorization"] = f"Bearer {key}"
        return _merge(base, extra)

    def batch_request(self, texts):
        return "/api/embed", {"model": self.model, "input": texts}

    def query_request(self, text):
        return "/api/embed", {"model": self.model, "input": [text]}

    def parse_batch(self, data, n):
        items = data.get("embeddings") if isinstance(data, dict) else None
        if not isinstance(items, list) or len(items) != n:
            raise ProviderError(f"ollama: malformed response: expected {n} embeddings, got {len(items) if isinstance(items, list) else 'none'}")
        return items

    def _http_error(self, resp) -> str:
        text = self._error_text(resp)
        if resp.status_code == 404 and "not found" in text and "model" in text:
            return f"ollama: {text} (run `ollama pull {self.model}`, or set model)"
        if resp.status_code == 404:
            return f"ollama: 404 no /api/embed at {self.shown_url} (is remote.baseUrl an Ollama server, version 0.3 or later?)"
        if resp.status_code == 401:
            return "ollama: 401 unauthorized (check remote.apiKey, models.providers.ollama.apiKey or OLLAMA_API_KEY)"
        return super()._http_error(resp)


def make_remote(name: str, *, model: str, api_key: str, base_url: str = "", headers: dict | None = None, **kw) -> Provider:
    """The provider the registry names, built with its key and settings."""
    remote = [n for n in PROVIDERS if n != "local"]
    if name not in remote:
        raise ProviderError(f"{name}: unknown remote provider (use {', '.join(remote)})")
    return provider_class(name)(name, model=model, api_key=api_key, base_url=base_url, headers=headers, **kw)


# ---------------------------------------------------------------------------- helpers


def split_by_bytes(text: str, limit: int) -> list[str]:
    """Split text into pieces of at most `limit` UTF-8 bytes, never inside a character.

    Cuts prefer a newline, then a space, in the second half of a piece, so a provider's
    input limit splits a chunk instead of truncating it.
    """
    data = text.encode("utf-8")
    if len(data) <= limit:
        return [text]
    pieces: list[str] = []
    rest = text
    while rest:
        raw = rest.encode("utf-8")
        if len(raw) <= limit:
            pieces.append(rest)
            break
        cut = raw[:limit].decode("utf-8", "ignore")  # drops a partial trailing sequence
        for sep in ("\n", " "):
            pos = cut.rfind(sep)
            if pos >= len(cut) // 2:
                cut = cut[: pos + 1]
                break
        if not cut:
            cut = rest[0]
        pieces.append(cut)
        rest = rest[len(cut) :]
    return pieces


def group_by_bytes(texts: list[str], limit: int) -> list[list[int]]:
    """Indices of `texts` in consecutive groups of at most `limit` UTF-8 bytes (an oversized
    text gets a group of its own)."""
    groups: list[list[int]] = []
    cur: list[int] = []
    size = 0
    for i, t in enumerate(texts):
        n = len(t.encode("utf-8"))
        if cur and size + n > limit:
            groups.append(cur)
            cur, size = [], 0
        cur.append(i)
        size += n
    if cur:
        groups.append(cur)
    return groups


def _combine(vecs: list, weights: list[int], dims: int | None) -> np.ndarray | None:
    """One unit vector from the pieces of one input; None if any piece was unusable."""
    import numpy as np

    if not vecs or any(v is None for v in vecs):
        return None
    if len(vecs) == 1:
        return vecs[0]
    return check_vector(np.average(np.stack(vecs), axis=0, weights=[max(w, 1) for w in weights]), dims)


def _merge(base: dict[str, str], extra: dict[str, str]) -> dict[str, str]:
    """Header overrides replace defaults whatever their case."""
    out = dict(base)
    for k, v in extra.items():
        for existing in [e for e in out if e.lower() == k.lower()]:
            del out[existing]
        out[k] = v
    return out


def _mistral_message(message) -> str:
    """Mistral's `message`: a string, or a validation error {detail: [{loc, msg}, ...]}."""
    if isinstance(message, dict) and isinstance(message.get("detail"), list):
        parts = []
        for d in message["detail"]:
            if isinstance(d, dict):
                loc = ".".join(str(x) for x in d.get("loc") or [] if x != "body")
                parts.append(f"{loc}: {d.get('msg', '')}" if loc else str(d.get("msg", "")))
        return "; ".join(parts)
    return message if isinstance(message, str) else ""


def _retry_after(resp) -> float | None:
    try:
        return float(resp.headers.get("retry-after", ""))
    except ValueError:
        return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
