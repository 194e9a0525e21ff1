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
- `echo_key`: scripted errors repeat the credentials the request carried;
- `retry_after`: the Retry-After header (seconds) sent with a 429;
- `die_after`: after that many embeddings requests the server dies: it stops listening and
  drops every open connection without an answer (a crash mid-index).

It also serves files for the hf: download (`GET /{owner}/{repo}/resolve/main/{file}`) with
HTTP Range support, and can cut a download short after `cut_after` bytes.
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
        self.files: dict[str, bytes] = {}  # "owner/repo/file" -> bytes
        self.cut_after: int | None = None  # serve only this many bytes of a download, then drop
        self.file_status: int | None = None
        self.file_hang = False  # stall before answering a download
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
        self.httpd.shutdown()
        self.httpd.server_close()

    # ------------------------------------------------------------------ helpers for tests

    def embedding_requests(self) -> list[dict]:
        return [r for r in self.requests if r["method"] == "POST"]

    def inputs(self) -> list[str]:
        """Every text the server was asked to embed, in order."""
        out = []
        for r in self.embedding_requests():
            b = r["body"]
            if not isinstance(b, dict):
                continue
            if "input" in b:
                out += b["input"] if isinstance(b["input"], list) else [b["input"]]
            elif "requests" in b:
                out += [p["text"] for q in b["requests"] for p in q["content"]["parts"]]
            elif "content" in b:
                out += [p["text"] for p in b["content"]["parts"]]
        return out

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
        if action == "hang":
            time.sleep(self.hang_seconds)
            return self._send(h, 200, {"data": []})
        if isinstance(action, int) and action != 200:
            msg = {429: "Rate limit reached", 500: "internal error", 503: "overloaded", 401: "bad key", 400: "bad request"}.get(action, "error")
            if self.echo_key:  # some servers repeat the credentials they got: the client must not
                msg += f" (credentials given: {h.headers.get('Authorization', h.headers.get('x-goog-api-key', ''))})"
            extra = {"Retry-After": f"{self.retry_after:g}"} if action == 429 and self.retry_after is not None else None
            return self._send(h, action, {"error": {"message": msg, "type": "test"}}, extra)
        if action == "malformed":
            return self._send_raw(h, 200, b"<html>this is not json</html>", "text/html")
        if not self._authorized(h):
            given = h.headers.get("Authorization", h.headers.get("x-goog-api-key", ""))
            # like OpenAI, echo the key in the message: the client must not repeat it
            return self._send(h, 401, {"error": {"message": f"Incorrect API key provided: {given}", "type": "invalid_request_error"}})
        path = h.path.split("?")[0]
        if path.endswith("/embeddings") and isinstance(body, dict):
            texts = body.get("input") or []
            data = [{"object": "embedding", "index": i, "embedding": self.vector_for(t)} for i, t in enumerate(texts)]
            return self._send(h, 200, {"object": "list", "data": data, "model": body.get("model")})
        if path.endswith(":batchEmbedContents") and isinstance(body, dict):
            embs = [{"values": self.vector_for(" ".join(p["text"] for p in r["content"]["parts"]))} for r in body.get("requests", [])]
            return self._send(h, 200, {"embeddings": embs})
        if path.endswith(":embedContent") and isinstance(body, dict):
            text = " ".join(p["text"] for p in body["content"]["parts"])
            return self._send(h, 200, {"embedding": {"values": self.vector_for(text)}})
        return self._send(h, 404, {"error": {"message": f"no route {path}"}})

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
        m = re.fullmatch(r"/([^/]+)/([^/]+)/resolve/main/(.+)", h.path)
        key = f"{m.group(1)}/{m.group(2)}/{m.group(3)}" if m else None
        if self.file_hang:
            time.sleep(self.hang_seconds)
        if self.file_status:
            return self._send(h, self.file_status, {"error": "nope"})
        if key not in self.files:
            return self._send(h, 404, {"error": "Entry not found"})
        data = self.files[key]
        start = 0
        rng = h.headers.get("Range")
        status, extra = 200, {}
        if rng:
            rm = re.fullmatch(r"bytes=(\d+)-", rng.strip())
            start = int(rm.group(1)) if rm else 0
            if start >= len(data):
                return self._send_raw(h, 416, b"", "text/plain", {"Content-Range": f"bytes */{len(data)}"})
            status, extra = 206, {"Content-Range": f"bytes {start}-{len(data) - 1}/{len(data)}"}
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
