"""OpenAI's, Voyage's and Gemini's batch APIs for big backfills (`remote.batch.enabled`).

The chunks a backfill still needs are uploaded as a JSONL file (`POST /files`, purpose
`batch`), submitted as jobs (`POST /batches`, endpoint `/v1/embeddings`, 24 h window) of at
most 50 000 requests, polled (`GET /batches/{id}`) every `pollIntervalMs`, and their results
file (`GET /files/{id}/content`) read back by `custom_id`. The indexer keeps the job ids in
the index's meta table as soon as a job exists, so an index run that stops (or
`wait = false`) picks the same jobs up next time instead of paying twice. Any failure (a job
failed, expired or was cancelled, a bad results file, the timeout) is reported and the same
chunks go through normal requests. Voyage's API is the same lifecycle with its own request
lines, a 12 h window and `request_params`. Gemini's has its own calls (a multipart/related
upload, `:asyncBatchEmbedContent`, `batches/<name>`, `files/<id>:download`) behind the same
three steps; a 404 on its create means the model or base URL has no batch API, and batching
is switched off for the rest of the process. Unlike OpenClaw, every Gemini batch call carries
the API key (`x-goog-api-key`).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from typing import Any, Callable, NamedTuple

from ..provider_registry import provider_classes
from .base import ProviderError
from ..errors import ClawmemError

MAX_REQUESTS = 50_000  # per job, OpenAI's limit
MIN_CHUNKS = 100  # fewer chunks than this are quicker through normal requests
DONE = "completed"
FAILED = ("failed", "expired", "cancelled", "canceled")


class BatchError(ClawmemError):
    """A batch job could not deliver; one line. The caller falls back to normal requests."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status  # the HTTP status that caused it, if any


class BatchUnavailable(BatchError):
    """The provider has no batch API for this model or base URL: stop trying for this process."""


class BatchSettings(NamedTuple):
    wait: bool = True
    concurrency: int = 2  # jobs submitted and polled at once
    poll_interval: float = 2.0  # seconds
    timeout: float = 3600.0  # seconds for all jobs of one run

    @classmethod
    def from_config(cls, cfg) -> "BatchSettings":
        return cls(wait=cfg["remote.batch.wait"], concurrency=max(1, cfg["remote.batch.concurrency"]),
                   poll_interval=cfg["remote.batch.pollIntervalMs"] / 1000, timeout=cfg["remote.batch.timeoutMinutes"] * 60)


class OpenAIBatch:
    """The job lifecycle over an OpenAI provider's client, base URL and headers."""

    def __init__(self, provider, settings: BatchSettings, agent_id: str = "main"):
        self.p = provider
        self.settings = settings
        self.agent_id = agent_id

    def line(self, i: int, text: str) -> dict:
        return {"custom_id": str(i), "method": "POST", "url": "/v1/embeddings", "body": {"model": self.p.model, "input": text}}

    def create_body(self, file_id: str) -> dict:
        return {"input_file_id": file_id, "endpoint": "/v1/embeddings", "completion_window": "24h",
                "metadata": {"source": "clawmem-memory", "agent": self.agent_id}}

    def submit(self, texts: list[str]) -> str:
        """Upload the requests and create the job; returns its id."""
        lines = [json.dumps(self.line(i, t)) for i, t in enumerate(texts)]
        name = f"memory-embeddings.{hashlib.sha256(str(time.time()).encode()).hexdigest()[:16]}.jsonl"
        headers = {k: v for k, v in self.p.headers.items() if k.lower() != "content-type"}  # multipart sets its own
        up = self._call("POST", "/files", headers=headers, data={"purpose": "batch"},
                        files={"file": (name, ("\n".join(lines) + "\n").encode("utf-8"), "application/jsonl")})
        file_id = up.get("id") if isinstance(up, dict) else None
        if not isinstance(file_id, str):
            raise BatchError("upload answered without a file id")
        job = self._call("POST", "/batches", json_body=self.create_body(file_id))
        if not isinstance(job, dict) or not isinstance(job.get("id"), str):
            raise BatchError("batch create answered without a job id")
        return job["id"]

    def status(self, job_id: str) -> dict:
        job = self._call("GET", f"/batches/{job_id}")
        if not isinstance(job, dict) or not isinstance(job.get("status"), str):
            raise BatchError(f"job {job_id}: status answer without a status")
        if job["status"] in FAILED:
            raise BatchError(f"job {job_id} {job['status']}{self._first_error(job)}")
        return job

    def results(self, job: dict, n: int) -> list[Any]:
        """Raw vectors by custom_id (0..n-1) from the job's results file."""
        out_id = job.get("output_file_id")
        if not isinstance(out_id, str):
            raise BatchError(f"job {job['id']} completed without a results file{self._first_error(job)}")
        text = self._call("GET", f"/files/{out_id}/content", raw=True)

        def read(item: dict) -> tuple[int, Any]:
            i = int(item["custom_id"])
            resp = item.get("response") or {}
            if item.get("error") or int(resp.get("status_code", 0)) >= 400:
                raise BatchError(f"job {job['id']}: request {i} failed: {_message(item.get('error') or resp.get('body'))}")
            return i, resp["body"]["data"][0]["embedding"]

        return vectors_by_line(text, n, read, f"job {job['id']}", "results file")

    def cancel(self, job_id: str) -> None:
        try:
            self._call("POST", f"/batches/{job_id}/cancel", json_body={})
        except (BatchError, ProviderError):
            pass  # best effort: the job expires on its own

    def _first_error(self, job: dict) -> str:
        errors = (job.get("errors") or {}).get("data") if isinstance(job.get("errors"), dict) else None
        if errors and isinstance(errors[0], dict):
            return f": {errors[0].get('message', '')}"
        if isinstance(job.get("error_file_id"), str):
            try:
                first = self._call("GET", f"/files/{job['error_file_id']}/content", raw=True).splitlines()[0]
                item = json.loads(first)
                return f": {_message(item.get('error') or (item.get('response') or {}).get('body'))}"
            except (BatchError, ProviderError, ValueError, IndexError, AttributeError):
                return ""
        return ""

    def _call(self, method: str, path: str, *, json_body=None, raw: bool = False, headers=None, base: str = "", **kw) -> Any:
        import httpx

        url = (base or self.p.base_url) + path
        try:
            if json_body is not None:
                resp = self.p._client.request(method, url, content=json.dumps(json_body).encode(), headers=self.p.headers)
            else:
                resp = self.p._client.request(method, url, headers=headers or self.p.headers, **kw)
        except httpx.HTTPError as exc:
            raise BatchError(f"{method} {path}: {self.p._scrub(str(exc) or type(exc).__name__)}") from None
        if resp.status_code >= 400:
            raise BatchError(f"{method} {path}: {resp.status_code} {self.p._error_text(resp) or 'rejected'}", resp.status_code)
        if raw:
            return resp.text
        try:
            return resp.json()
        except ValueError:
            raise BatchError(f"{method} {path}: answer is not JSON") from None


class VoyageBatch(OpenAIBatch):
    def line(self, i: int, text: str) -> dict:
        return {"custom_id": str(i), "body": {"input": text}}

    def create_body(self, file_id: str) -> dict:
        return {"input_file_id": file_id, "endpoint": "/v1/embeddings", "completion_window": "12h",
                "request_params": {"model": self.p.model, "input_type": "document"},
                "metadata": {"source": "clawmem-memory", "agent": self.agent_id}}


GEMINI_DONE = ("SUCCEEDED", "COMPLETED", "DONE")
GEMINI_FAILED = ("FAILED", "CANCELLED", "CANCELED", "EXPIRED")


class GeminiBatch(OpenAIBatch):
    """Gemini's file-based batch API. `status` answers in OpenAI's shape (status, request_counts,
    output_file_id), so the indexer drives every provider's jobs the same way."""

    def line(self, i: int, text: str) -> dict:
        return {"key": str(i), "request": {"content": {"parts": [{"text": text}]}, "taskType": "RETRIEVAL_DOCUMENT",
                                          "model": f"models/{self.p.model}", **self.p._dimensionality()}}

    def submit(self, texts: list[str]) -> str:
        display = f"memory-embeddings-{hashlib.sha256(str(time.time()).encode()).hexdigest()[:16]}"
        boundary = f"clawmem-{hashlib.sha256(display.encode()).hexdigest()[:32]}"
        meta = json.dumps({"file": {"displayName": display, "mimeType": "application/jsonl"}})
        jsonl = "\n".join(json.dumps(self.line(i, t)) for i, t in enumerate(texts))
        body = (f"--{boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{meta}\r\n"
                f"--{boundary}\r\nContent-Type: application/jsonl; charset=UTF-8\r\n\r\n{jsonl}\r\n--{boundary}--\r\n")
        headers = {k: v for k, v in self.p.headers.items() if k.lower() != "content-type"}
        headers.update({"Content-Type": f"multipart/related; boundary={boundary}", "X-Goog-Upload-Protocol": "multipart"})
        up = self._call("POST", "/files?uploadType=multipart", base=upload_base(self.p.base_url), headers=headers,
                        content=body.encode("utf-8"))
        file_name = _dig(up, "file", "name") or _dig(up, "name")
        if not isinstance(file_name, str):
            raise BatchError("upload answered without a file name")
        create = {"batch": {"displayName": f"memory-embeddings-{self.agent_id}", "inputConfig": {"file_name": file_name}}}
        try:
            op = self._call("POST", f"/models/{self.p.model}:asyncBatchEmbedContent", json_body=create)
        except BatchError as exc:
            if exc.status == 404:
                raise BatchUnavailable(f"asyncBatchEmbedContent not available for {self.p.model} at {self.p.shown_url}: {exc}", 404) from None
            raise
        name = _dig(op, "name") or _dig(op, "metadata", "name")
        if not isinstance(name, str):
            raise BatchError("batch create answered without a batch name")
        return name

    def status(self, job_id: str) -> dict:
        name = job_id if job_id.startswith("batches/") else f"batches/{job_id}"
        op = self._call("GET", f"/{name}")
        if not isinstance(op, dict):
            raise BatchError(f"{name}: status answer is not an object")
        # the API answers with an Operation whose metadata is the batch; older shapes are flat
        raw = op.get("state") or _dig(op, "metadata", "state") or ("DONE" if op.get("done") and not op.get("error") else "UNKNOWN")
        state = str(raw).upper().removeprefix("BATCH_STATE_").removeprefix("JOB_STATE_")
        error = op.get("error") or _dig(op, "metadata", "error")
        if state in GEMINI_FAILED or (op.get("done") and error):
            raise BatchError(f"{name} {state}: {_message(error) if error else 'no reason given'}")
        out = (_dig(op, "outputConfig", "file") or _dig(op, "outputConfig", "fileId") or _dig(op, "metadata", "output", "responsesFile")
               or _dig(op, "response", "output", "responsesFile") or _dig(op, "response", "responsesFile"))
        stats = _dig(op, "metadata", "batchStats") or op.get("batchStats") or {}
        try:
            completed = int(stats.get("successfulRequestCount") or 0)  # int64 comes as a string
        except (TypeError, ValueError, AttributeError):
            completed = 0
        return {"id": name, "status": "completed" if state in GEMINI_DONE else state.lower(),
                "request_counts": {"completed": completed}, "output_file_id": out}

    def results(self, job: dict, n: int) -> list[Any]:
        out = job.get("output_file_id")
        if not isinstance(out, str):
            raise BatchError(f"{job['id']} completed without a responses file")
        file = out if out.startswith("files/") else f"files/{out}"
        text = self._call("GET", f"/{file}:download", params={"alt": "media"}, raw=True)

        def read(item: dict) -> tuple[int, Any]:
            i = int(next(item[k] for k in ("key", "custom_id", "request_id") if item.get(k) is not None))
            resp = item.get("response") or {}
            error = item.get("error") or resp.get("error")
            if error:
                raise BatchError(f"{job['id']}: request {i} failed: {_message(error)}")
            return i, (item.get("embedding") or resp.get("embedding"))["values"]  # normalised by the provider's check

        return vectors_by_line(text, n, read, job["id"], "responses file")

    def cancel(self, job_id: str) -> None:
        name = job_id if job_id.startswith("batches/") else f"batches/{job_id}"
        try:
            self._call("POST", f"/{name}:cancel", json_body={})
        except (BatchError, ProviderError):
            pass  # best effort: the job expires on its own


def upload_base(base_url: str) -> str:
    """Gemini takes uploads under /upload: `…/v1beta` becomes `…/upload/v1beta`."""
    m = re.search(r"/(v\d+\w*)$", base_url)
    return base_url[: m.start()] + f"/upload/{m.group(1)}" if m else base_url + "/upload"


def client_class(provider_cls):
    """The batch-API client a provider class names (`batch_client = "batch:<Class>"`)."""
    import importlib

    module, _, attr = provider_cls.batch_client.partition(":")
    return getattr(importlib.import_module(f"clawmem.engine.embeddings.{module}"), attr)


CLIENTS = {cls.name: client_class(cls) for cls in provider_classes() if cls.batch_client}


def _dig(obj, *keys):
    for k in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(k)
    return obj


def vectors_by_line(text: str, n: int, read: Callable[[dict], tuple[int, Any]], label: str, file_name: str) -> list[Any]:
    """Vectors 0..n-1 from a JSONL results file, one request per line: `read` gives a line's
    (index, vector), or raises BatchError for a request that failed."""
    vecs: list[Any] = [None] * n
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            i, vec = read(json.loads(line))
            if not 0 <= i < n:
                raise IndexError(i)
            vecs[i] = vec
        except (ValueError, KeyError, IndexError, TypeError, StopIteration, AttributeError):
            raise BatchError(f"{label}: malformed line in the {file_name}") from None
    missing = sum(v is None for v in vecs)
    if missing:
        raise BatchError(f"{label}: {missing} of {n} results missing")
    return vecs


def _message(body) -> str:
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            return str(err.get("message") or err.get("code") or "error")
        return str(err)
    return str(body or "error")
