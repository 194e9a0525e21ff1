"""A small embeddings server of our own for the tests, on 127.0.0.1 (stdlib http.server).

It speaks the OpenAI (`POST …/embeddings`), Voyage (the same path with `input_type`) and
Gemini (`POST …/models/M:embedContent`, `…:batchEmbedContents`) APIs with deterministic
vectors: a hashed bag of words, so texts that share words are similar. Every request is
recorded (method, path, headers, JSON body, start and end time, how many were in flight).

Misbehaviour on demand:
- `script`: a list of actions used one per request before the normal answer resumes:
  an HTTP status (429, 500, 401, 400…), "hang" (sleep `hang_seconds`), "malformed"
  (not JSON), or "ok";
- `always`: the same, for every request from now on (None = behave);
- markers inside an input text: `WRONGDIM` gets a vector of the wrong size, `NANVEC` one
  with NaN, `ZEROVEC` all zeros;
- `delay`: seconds every embeddings request takes (to observe concurrency);
- `gate`: a threading.Event embeddings requests wait for (60 s at most) until the test sets
  it: a job that stays busy exactly as long as the test needs, however loaded the machine;
- `echo_key`: scripted errors repeat the credentials the request carried;
- `retry_after`: the Retry-After header (seconds) sent with a 429;
- `die_after`: after that many embeddings requests the server dies: it stops listening and
  drops every open connection without an answer (a crash mid-index).

Mistral (`error_style = "mistral"`: its error bodies, `{"message": …}` and validation
`{"message": {"detail": [...]}}`) and Ollama's native `POST /api/embed` (`ollama_models`:
the models it has pulled; others get its 404 `{"error": "model … not found"}`). Gemini
requests with `outputDimensionality` get vectors of that size, as the real API gives.

It also serves files for the hf: download (`GET /{owner}/{repo}/resolve/main/{file}`) with
OpenAI's batch API (and Voyage's: lines `{custom_id, body: {input}}`, `request_params`):
`POST …/files` (multipart, purpose batch), `POST …/batches`,
`GET …/batches/{id}` (validating, then in_progress, then completed after `batch_polls`
polls, with a results file), `GET …/files/{id}/content`, `POST …/batches/{id}/cancel`;
`batch_fail` = "failed" / "expired" ends every job that way, "bad_line" puts an error line in
the results file. Gemini's batch API too, under `/v1beta`: `POST /upload/v1beta/files?uploadType=multipart`
(multipart/related: the file's JSON metadata, then JSONL `{key, request}` lines), `POST
…/models/M:asyncBatchEmbedContent` (an Operation named `batches/N`), `GET …/batches/N` (the
Operation, its metadata the batch: BATCH_STATE_PENDING, RUNNING, then SUCCEEDED with
`output.responsesFile`; `gemini_flat` answers OpenClaw's flat `{name, state, outputConfig}`
instead), `GET …/files/F:download` (lines `{key, response: {embedding: {values}}}`, not unit
length), `POST …/batches/N:cancel`; `gemini_batch_404` answers the create with Google's 404, and
a missing or wrong `x-goog-api-key` gets Google's 403 / 400 error bodies.

HTTP Range support, and can cut a download short after `cut_after` bytes. With
`hub_layout = True` it answers as the Hugging Face hub does for an LFS file: `resolve/main`
redirects (302) to a content-addressed CDN path, with `X-Repo-Commit`, `X-Linked-Size` and
`X-Linked-Etag` (the file's sha256); the CDN path serves the bytes with `ETag`, `Accept-Ranges`
and Range support. `corrupt = True` flips one byte of what the CDN serves.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from clawmem.engine.search.background import BACKGROUND

WORD = re.compile(r"[a-z0-9_]+")


def bag_vector(text: str, dims: int) -> list[float]:
    """Hashed bag of words, L2-normalised; a text without words gets a fixed vector."""
    v = [0.0] * dims
    words = WORD.findall(text.lower())
    for w in words:
        h = hashlib.sha256(w.encode()).digest()
        i = int.from_bytes(h[:4], "little") % dims
        v[i] += 1.0 if h[4] & 1 else -1.0
    if not any(v):
        v[0] = 1.0
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


class EmbedServer:
    def __init__(self, dims: int = 32, api_key: str = "sk-test-key-123456"):
        self.dims = dims
        self.api_key = api_key
        self.requests: list[dict] = []
        self.script: list[Any] = []
        self.always: Any = None
        self.hang_seconds = 3.0
        self.delay = 0.0
        self.gate: threading.Event | None = None
        self.files: dict[str, bytes] = {}  # "owner/repo/file" -> bytes
        self.cut_after: int | None = None  # serve only this many bytes of a download, then drop
        self.file_status: int | None = None
        self.file_hang = False  # stall before answering a download
        self.hub_layout = False  # answer resolve/main as the hub does: a redirect to a CDN path
        self.corrupt = False  # the CDN serves one byte wrong
        self.error_style = "openai"  # or "mistral": the shape of error bodies
        self.ollama_models = {"nomic-embed-text", "all-minilm"}
        self.ollama_key: str | None = None
        self.stored_files: dict[str, bytes] = {}  # batch API: uploaded inputs and results
        self.batches: dict[str, dict] = {}
        self.batch_polls = 2  # status polls before a job completes
        self.batch_fail: str | None = None
        self.gemini_batch_404 = False  # asyncBatchEmbedContent answers 404 (no batch API for the model)
        self.gemini_flat = False  # batch status in OpenClaw's flat shape instead of an Operation
        self.in_flight = 0
        self.max_in_flight = 0
        self.retry_after: float | None = None
        self.die_after: int | None = None
        self.dead = False
        self.echo_key = False  # repeat the Authorization header in scripted error messages
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                server._handle_post(self)

            def do_GET(self):
                server._handle_get(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        if self.gate is not None:
            self.gate.set()  # no request left waiting
        self.httpd.shutdown()
        self.httpd.server_close()

    # ------------------------------------------------------------------ helpers for tests

    def embedding_requests(self) -> list[dict]:
        """The chunks' and queries' requests (a small index's one request for the background
        notes aside: background_requests)."""
        return [r for r in self.requests if r["method"] == "POST" and not is_background(r)]

    def inputs(self, background: bool = False) -> list[str]:
        """Every text the server was asked to embed, in order; the background notes a small
        memory calibrates against (engine/search/background.py) only when asked for."""
        return [t for r in self.requests if r["method"] == "POST" for t in request_texts(r) if background or t not in BACKGROUND]

    def background_requests(self) -> list[dict]:
        """The requests for the background notes' vectors, kept once per model by a small index."""
        return [r for r in self.requests if is_background(r)]

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.max_in_flight = 0

    # ------------------------------------------------------------------ embeddings

    def _next_action(self):
        with self._lock:
            if self.script:
                return self.script.pop(0)
            return self.always

    def vector_for(self, text: str) -> list[float]:
        if "WRONGDIM" in text:
            return bag_vector(text, self.dims + 3)
        if "NANVEC" in text:
            v = bag_vector(text, self.dims)
            v[1] = float("nan")
            return v
        if "ZEROVEC" in text:
            return [0.0] * self.dims
        return bag_vector(text, self.dims)

    def _handle_post(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length)
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw
        rec = {"method": "POST", "path": h.path, "headers": {k.lower(): v for k, v in h.headers.items()}, "body": body, "start": time.monotonic()}
        with self._lock:
            self.requests.append(rec)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            self._answer_post(h, body)
        finally:
            with self._lock:
                self.in_flight -= 1
            rec["end"] = time.monotonic()

    def _die(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _answer_post(self, h, body) -> None:
        with self._lock:
            if not self.dead and self.die_after is not None and len(self.embedding_requests()) > self.die_after:
                self.dead = True
                threading.Thread(target=self._die, daemon=True).start()
        if self.dead:
            h.close_connection = True  # hang up without a word
            return
        action = self._next_action()
        if self.delay:
            time.sleep(self.delay)
        if self.gate is not None:
            self.gate.wait(60)
        if action == "hang":
            time.sleep(self.hang_seconds)
            return self._send(h, 200, {"data": []})
        if isinstance(action, int) and action != 200:
            msg = {429: "Rate limit reached", 500: "internal error", 503: "overloaded", 401: "bad key", 400: "bad request"}.get(action, "error")
            if self.echo_key:  # some servers repeat the credentials they got: the client must not
                msg += f" (credentials given: {h.headers.get('Authorization', h.headers.get('x-goog-api-key', ''))})"
            extra = {"Retry-After": f"{self.retry_after:g}"} if action == 429 and self.retry_after is not None else None
            if h.path.startswith("/api/"):
                return self._send(h, action, {"error": msg}, extra)  # ollama
            if self.error_style == "mistral":
                return self._send(h, action, self._mistral_error(action), extra)
            return self._send(h, action, {"error": {"message": msg, "type": "test"}}, extra)
        if action == "malformed":
            return self._send_raw(h, 200, b"<html>this is not json</html>", "text/html")
        path = h.path.split("?")[0]
        if path == "/api/embed":
            return self._answer_ollama(h, body)
        if path.startswith("/upload/v1beta/") or path.endswith(":asyncBatchEmbedContent") or re.search(r"/v1beta/batches/[^/]+:cancel$", path):
            return self._answer_gemini_batch_post(h, path, body)
        if re.search(r"/files$|/batches(/[^/]+/cancel)?$", path):
            if not self._authorized(h):
                return self._send(h, 401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})
            return self._answer_batch_post(h, path, body)
        if not self._authorized(h):
            if self.error_style == "mistral":
                return self._send(h, 401, {"message": "Unauthorized", "request_id": "0123abcd"})
            given = h.headers.get("Authorization", h.headers.get("x-goog-api-key", ""))
            # like OpenAI, echo the key in the message: the client must not repeat it
            return self._send(h, 401, {"error": {"message": f"Incorrect API key provided: {given}", "type": "invalid_request_error"}})
        if path.endswith("/embeddings") and isinstance(body, dict):
            if self.error_style == "mistral" and not body.get("input"):
                return self._send(h, 422, self._mistral_error(422))
            texts = body.get("input") or []
            data = [{"object": "embedding", "index": i, "embedding": self.vector_for(t)} for i, t in enumerate(texts)]
            return self._send(h, 200, {"object": "list", "data": data, "model": body.get("model")})
        if path.endswith(":batchEmbedContents") and isinstance(body, dict):
            embs = [{"values": self._gemini_vector(" ".join(p["text"] for p in r["content"]["parts"]), r.get("outputDimensionality"))}
                    for r in body.get("requests", [])]
            return self._send(h, 200, {"embeddings": embs})
        if path.endswith(":embedContent") and isinstance(body, dict):
            text = " ".join(p["text"] for p in body["content"]["parts"])
            return self._send(h, 200, {"embedding": {"values": self._gemini_vector(text, body.get("outputDimensionality"))}})
        return self._send(h, 404, {"error": {"message": f"no route {path}"}})

    # ------------------------------------------------------------------ batch API (OpenAI's)

    def _answer_batch_post(self, h, path: str, body) -> None:
        if path.endswith("/files"):
            m = re.search(r"boundary=([^;]+)", h.headers.get("Content-Type", ""))
            if not m or not isinstance(body, bytes):
                return self._send(h, 400, {"error": {"message": "expected multipart/form-data"}})
            parts = body.split(b"--" + m.group(1).strip('"').encode())
            fields = {}
            for part in parts:
                head, _, content = part.partition(b"\r\n\r\n")
                name = re.search(rb'name="([^"]+)"', head)
                if name:
                    fields[name.group(1).decode()] = content.removesuffix(b"\r\n")
            if fields.get("purpose") != b"batch" or "file" not in fields:
                return self._send(h, 400, {"error": {"message": "purpose must be batch and a file is required"}})
            fid = f"file-{len(self.stored_files) + 1}"
            self.stored_files[fid] = fields["file"]
            return self._send(h, 200, {"id": fid, "object": "file", "purpose": "batch", "bytes": len(fields["file"])})
        m = re.search(r"/batches/([^/]+)/cancel$", path)
        if m:
            job = self.batches.get(m.group(1))
            if job is None:
                return self._send(h, 404, {"error": {"message": "No batch found"}})
            job["status"] = "cancelled"
            return self._send(h, 200, job)
        if not isinstance(body, dict) or body.get("input_file_id") not in self.stored_files or body.get("endpoint") != "/v1/embeddings":
            return self._send(h, 400, {"error": {"message": "input_file_id and endpoint /v1/embeddings required"}})
        lines = [json.loads(x) for x in self.stored_files[body["input_file_id"]].decode().splitlines() if x.strip()]
        params = body.get("request_params") or {}  # voyage: the model is given once for the whole job
        for line in lines:
            line["body"].setdefault("model", params.get("model"))
        bid = f"batch_{len(self.batches) + 1}"
        self.batches[bid] = {"id": bid, "object": "batch", "endpoint": "/v1/embeddings", "status": "validating",
                             "input_file_id": body["input_file_id"], "completion_window": body.get("completion_window"),
                             "metadata": body.get("metadata"), "request_params": body.get("request_params"), "output_file_id": None, "error_file_id": None, "errors": None,
                             "request_counts": {"total": len(lines), "completed": 0, "failed": 0}, "_polls": 0, "_lines": lines}
        return self._send(h, 200, self._public(self.batches[bid]))

    @staticmethod
    def _public(job: dict) -> dict:
        return {k: v for k, v in job.items() if not k.startswith("_")}

    def _answer_batch_get(self, h, path: str) -> None:
        if not self._authorized(h):
            return self._send(h, 401, {"error": {"message": "Incorrect API key provided"}})
        m = re.search(r"/files/([^/]+)/content$", path)
        if m:
            if m.group(1) not in self.stored_files:
                return self._send(h, 404, {"error": {"message": "No such File object"}})
            return self._send_raw(h, 200, self.stored_files[m.group(1)], "application/octet-stream")
        job = self.batches.get(path.rsplit("/", 1)[1])
        if job is None:
            return self._send(h, 404, {"error": {"message": "No batch found"}})
        if job["status"] in ("validating", "in_progress"):
            job["_polls"] += 1
            n = job["request_counts"]["total"]
            if self.batch_fail in ("failed", "expired"):
                job["status"] = self.batch_fail
                job["errors"] = {"object": "list", "data": [{"code": "invalid_request", "message": "the test server said no", "line": 1}]}
            elif job["_polls"] >= self.batch_polls:
                out = []
                for i, line in enumerate(job["_lines"]):
                    if self.batch_fail == "bad_line" and i == 0:
                        out.append({"id": f"req_{i}", "custom_id": line["custom_id"], "response": {"status_code": 400, "body": {
                            "error": {"message": "input too long", "type": "invalid_request_error"}}}, "error": None})
                        continue
                    vec = self.vector_for(line["body"]["input"])
                    out.append({"id": f"req_{i}", "custom_id": line["custom_id"], "error": None, "response": {
                        "status_code": 200, "request_id": f"r{i}", "body": {"object": "list", "model": line["body"]["model"],
                                                                             "data": [{"object": "embedding", "index": 0, "embedding": vec}]}}})
                out.reverse()  # results come in any order: custom_id says which is which
                fid = f"file-out-{job['id']}"
                self.stored_files[fid] = ("\n".join(json.dumps(o) for o in out) + "\n").encode()
                job.update(status="completed", output_file_id=fid, request_counts={"total": n, "completed": n, "failed": 0})
            else:
                job.update(status="in_progress", request_counts={"total": n, "completed": n // 2, "failed": 0})
        return self._send(h, 200, self._public(job))

    # ------------------------------------------------------------------ batch API (Gemini's)

    def _google_auth_error(self, h) -> tuple[int, dict] | None:
        """Google's answers to a missing or wrong API key, or None when the key is right."""
        given = h.headers.get("x-goog-api-key")
        if given == self.api_key:
            return None
        if not given:
            return 403, {"error": {"code": 403, "status": "PERMISSION_DENIED", "message": "Method doesn't allow unregistered callers "
                                   "(callers without established identity). Please use API Key or other form of API consumer identity to call this API."}}
        return 400, {"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": "API key not valid. Please pass a valid API key.",
                               "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
                                            "domain": "googleapis.com"}]}}

    @staticmethod
    def _google_error(code: int, status: str, message: str) -> dict:
        return {"error": {"code": code, "message": message, "status": status}}

    def _answer_gemini_batch_post(self, h, path: str, body) -> None:
        denied = self._google_auth_error(h)
        if denied:
            return self._send(h, *denied)
        if path.startswith("/upload/"):
            m = re.search(r"multipart/related;\s*boundary=([^;]+)", h.headers.get("Content-Type", ""))
            if "uploadType=multipart" not in h.path or not m or not isinstance(body, bytes):
                return self._send(h, 400, self._google_error(400, "INVALID_ARGUMENT", "expected uploadType=multipart with a multipart/related body"))
            parts = [p.partition(b"\r\n\r\n")[2].removesuffix(b"\r\n") for p in body.split(b"--" + m.group(1).encode())[1:-1]]
            try:
                meta = json.loads(parts[0])["file"]
                content = parts[1]
            except (ValueError, KeyError, IndexError, TypeError):
                return self._send(h, 400, self._google_error(400, "INVALID_ARGUMENT", "expected the file's metadata, then its content"))
            name = f"files/upload-{len(self.stored_files) + 1}"
            self.stored_files[name] = content
            return self._send(h, 200, {"file": {"name": name, "displayName": meta.get("displayName"), "mimeType": meta.get("mimeType"),
                                                "sizeBytes": str(len(content)), "sha256Hash": hashlib.sha256(content).hexdigest(),
                                                "uri": f"{self.url}/v1beta/{name}", "state": "ACTIVE", "source": "UPLOADED"}})
        m = re.search(r"/(batches/[^/]+):cancel$", path)
        if m:
            job = self.batches.get(m.group(1))
            if job is None:
                return self._send(h, 404, self._google_error(404, "NOT_FOUND", "Requested entity was not found."))
            job["state"] = "BATCH_STATE_CANCELLED"
            return self._send(h, 200, {})
        model = re.search(r"/models/([^/:]+):asyncBatchEmbedContent$", path).group(1)
        if self.gemini_batch_404:
            return self._send(h, 404, self._google_error(404, "NOT_FOUND", f"models/{model} is not found for API version v1beta, "
                                                         "or is not supported for asyncBatchEmbedContent. Call ListModels to see the list "
                                                         "of available models and their supported methods."))
        cfg = (body.get("batch") or {}).get("inputConfig") or {} if isinstance(body, dict) else {}
        file_name = cfg.get("file_name") or cfg.get("fileName")
        if file_name not in self.stored_files:
            return self._send(h, 400, self._google_error(400, "INVALID_ARGUMENT", "batch.inputConfig.file_name must name an uploaded file"))
        lines = [json.loads(x) for x in self.stored_files[file_name].decode().splitlines() if x.strip()]
        if not all(isinstance(x.get("key"), str) and (x.get("request") or {}).get("model") == f"models/{model}" for x in lines):
            return self._send(h, 400, self._google_error(400, "INVALID_ARGUMENT", f"every line needs a key and a request for models/{model}"))
        name = f"batches/{len(self.batches) + 1}"
        self.batches[name] = {"name": name, "model": f"models/{model}", "displayName": body["batch"].get("displayName"),
                              "inputConfig": cfg, "state": "BATCH_STATE_PENDING", "batchStats": {"requestCount": str(len(lines))},
                              "_polls": 0, "_lines": lines}
        return self._send(h, 200, self._gemini_operation(self.batches[name]))

    def _gemini_operation(self, job: dict) -> dict:
        meta = {"@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.EmbedContentBatch", **self._public(job)}
        if self.gemini_flat:  # the shape OpenClaw's own tests answer with
            flat = {"name": job["name"], "state": meta["state"].removeprefix("BATCH_STATE_")}
            if "output" in job:
                flat["outputConfig"] = {"file": job["output"]["responsesFile"]}
            if "_error" in job:
                flat["error"] = job["_error"]
            return flat
        op = {"name": job["name"], "metadata": meta}
        if job["state"] in ("BATCH_STATE_SUCCEEDED", "BATCH_STATE_FAILED", "BATCH_STATE_EXPIRED", "BATCH_STATE_CANCELLED"):
            op["done"] = True
            if "_error" in job:
                op["error"] = job["_error"]
            else:
                op["response"] = meta
        return op

    def _answer_gemini_batch_get(self, h, path: str) -> None:
        denied = self._google_auth_error(h)
        if denied:
            return self._send(h, *denied)
        m = re.fullmatch(r"/v1beta/(files/[^/:]+):download", path)
        if m:
            if m.group(1) not in self.stored_files:
                return self._send(h, 404, self._google_error(404, "NOT_FOUND", "Requested entity was not found."))
            return self._send_raw(h, 200, self.stored_files[m.group(1)], "application/octet-stream")
        job = self.batches.get(path.removeprefix("/v1beta/"))
        if job is None:
            return self._send(h, 404, self._google_error(404, "NOT_FOUND", "Requested entity was not found."))
        if job["state"] in ("BATCH_STATE_PENDING", "BATCH_STATE_RUNNING"):
            job["_polls"] += 1
            n = len(job["_lines"])
            if self.batch_fail in ("failed", "expired"):
                job["state"] = f"BATCH_STATE_{self.batch_fail.upper()}"
                job["_error"] = {"code": 3, "message": "the test server said no"}
            elif job["_polls"] >= self.batch_polls:
                out = []
                for i, line in enumerate(job["_lines"]):
                    if self.batch_fail == "bad_line" and i == 0:
                        out.append({"key": line["key"], "error": {"code": 400, "message": "input too long", "status": "INVALID_ARGUMENT"}})
                        continue
                    req = line["request"]
                    vec = self._gemini_vector(" ".join(p["text"] for p in req["content"]["parts"]), req.get("outputDimensionality"))
                    out.append({"key": line["key"], "response": {"embedding": {"values": [x * 2.5 for x in vec]}}})  # not unit length
                out.reverse()  # any order: the key says which is which
                fid = f"files/batch-out-{job['name'].split('/')[1]}"
                self.stored_files[fid] = ("\n".join(json.dumps(o) for o in out) + "\n").encode()
                job.update(state="BATCH_STATE_SUCCEEDED", output={"responsesFile": fid},
                           batchStats={"requestCount": str(n), "successfulRequestCount": str(n), "pendingRequestCount": "0"})
            else:
                job.update(state="BATCH_STATE_RUNNING", batchStats={"requestCount": str(n), "successfulRequestCount": str(n // 2),
                                                                    "pendingRequestCount": str(n - n // 2)})
        return self._send(h, 200, self._gemini_operation(job))

    def _gemini_vector(self, text: str, dims) -> list[float]:
        return bag_vector(text, dims) if isinstance(dims, int) and dims > 0 else self.vector_for(text)

    def _answer_ollama(self, h, body) -> None:
        """Ollama's /api/embed: no key needed unless `ollama_key` is set (a proxy in front)."""
        if self.ollama_key and h.headers.get("Authorization") != f"Bearer {self.ollama_key}":
            return self._send(h, 401, {"error": "unauthorized"})
        if not isinstance(body, dict) or "model" not in body:
            return self._send(h, 400, {"error": "model is required"})
        model = str(body["model"])
        if model.removesuffix(":latest") not in self.ollama_models:
            return self._send(h, 404, {"error": f'model "{model}" not found, try pulling it first'})
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else texts or []
        return self._send(h, 200, {"model": model, "embeddings": [self.vector_for(t) for t in texts],
                                   "total_duration": 1000, "load_duration": 10, "prompt_eval_count": len(texts)})

    def _mistral_error(self, status: int) -> dict:
        if status == 422:
            return {"object": "error", "message": {"detail": [{"type": "missing", "loc": ["body", "input"], "msg": "Field required"}]},
                    "type": "invalid_request_message_error", "param": None, "code": None}
        if status == 429:
            return {"message": "Requests rate limit exceeded"}
        return {"object": "error", "message": {400: "Too many tokens overall, split into more batches.", 500: "Internal server error",
                                                503: "Service unavailable"}.get(status, "error"),
                "type": "invalid_request_error", "param": None, "code": None}

    def _authorized(self, h) -> bool:
        if not self.api_key:
            return True
        return h.headers.get("Authorization") == f"Bearer {self.api_key}" or h.headers.get("x-goog-api-key") == self.api_key

    def _send(self, h, status: int, obj, extra: dict | None = None) -> None:
        self._send_raw(h, status, json.dumps(obj).encode(), "application/json", extra)

    def _send_raw(self, h, status: int, data: bytes, ctype: str, extra: dict | None = None) -> None:
        try:
            h.send_response(status)
            h.send_header("Content-Type", ctype)
            h.send_header("Content-Length", str(len(data)))
            for k, v in (extra or {}).items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)

    # ------------------------------------------------------------------ downloads

    def _handle_get(self, h: BaseHTTPRequestHandler) -> None:
        rec = {"method": "GET", "path": h.path, "headers": {k.lower(): v for k, v in h.headers.items()}, "body": None, "start": time.monotonic()}
        with self._lock:
            self.requests.append(rec)
        if re.match(r"/v1beta/(batches/[^/:?]+|files/[^/:?]+:download)(\?|$)", h.path):
            return self._answer_gemini_batch_get(h, h.path.split("?")[0])
        if re.search(r"/batches/[^/]+$|/files/[^/]+/content$", h.path):
            return self._answer_batch_get(h, h.path.split("?")[0])
        m = re.fullmatch(r"/([^/]+)/([^/]+)/resolve/main/(.+)", h.path)
        key = f"{m.group(1)}/{m.group(2)}/{m.group(3)}" if m else None
        if self.file_hang:
            time.sleep(self.hang_seconds)
        if self.file_status:
            return self._send(h, self.file_status, {"error": "nope"})
        cdn = re.fullmatch(r"/cdn-lfs/([0-9a-f]{64})(\?.*)?", h.path)
        by_sha = {hashlib.sha256(d).hexdigest(): d for d in self.files.values()}
        if cdn and cdn.group(1) in by_sha:
            data = by_sha[cdn.group(1)]
            if self.corrupt:
                data = data[:100] + bytes([data[100] ^ 0xFF]) + data[101:]
            return self._serve_bytes(h, data, {"ETag": f'"{cdn.group(1)}"', "Accept-Ranges": "bytes"})
        if key not in self.files:
            return self._send(h, 404, {"error": "Entry not found"})
        if self.hub_layout:
            data = self.files[key]
            sha = hashlib.sha256(data).hexdigest()
            return self._send_raw(h, 302, f"Found. Redirecting to /cdn-lfs/{sha}".encode(), "text/plain", {
                "Location": f"/cdn-lfs/{sha}?response-content-disposition=attachment",
                "X-Repo-Commit": "0123456789abcdef0123456789abcdef01234567",
                "X-Linked-Size": str(len(data)), "X-Linked-Etag": f'"{sha}"', "ETag": f'"{sha}"'})
        self._serve_bytes(h, self.files[key], {})

    def _serve_bytes(self, h, data: bytes, headers: dict) -> None:
        """The bytes of a file, honouring `Range: bytes=N-` (and `cut_after`)."""
        start = 0
        rng = h.headers.get("Range")
        status, extra = 200, {}
        if rng:
            rm = re.fullmatch(r"bytes=(\d+)-", rng.strip())
            start = int(rm.group(1)) if rm else 0
            if start >= len(data):
                return self._send_raw(h, 416, b"", "text/plain", {"Content-Range": f"bytes */{len(data)}"})
            status, extra = 206, {"Content-Range": f"bytes {start}-{len(data) - 1}/{len(data)}"}
        extra.update(headers)
        body = data[start:]
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/octet-stream")
            h.send_header("Content-Length", str(len(body)))
            for k, v in extra.items():
                h.send_header(k, v)
            h.end_headers()
            if self.cut_after is not None:
                # a dropped connection part-way through: send some bytes, then hang up
                h.wfile.write(body[: self.cut_after])
                h.wfile.flush()
                h.close_connection = True
                self.cut_after = None
                return
            h.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass


def request_texts(r: dict) -> list[str]:
    """The texts one embedding request asks for (OpenAI, Gemini, Ollama shapes)."""
    b = r["body"]
    if not isinstance(b, dict):
        return []
    if "input" in b:
        return b["input"] if isinstance(b["input"], list) else [b["input"]]
    if "requests" in b:
        return [p["text"] for q in b["requests"] for p in q["content"]["parts"]]
    if "content" in b:
        return [p["text"] for p in b["content"]["parts"]]
    if "prompt" in b:
        return [b["prompt"]]
    return []


def is_background(r: dict) -> bool:
    texts = request_texts(r)
    return bool(texts) and all(t in BACKGROUND for t in texts)
