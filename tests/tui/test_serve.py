"""`clawmem serve` (issue 12 part 5): the real server process, a real headless Chromium
(Debian's package) loading the page, the app behind it answering a search for a planted
note; and the token that guards the URL off loopback, over plain HTTP."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from helpers import run_cli, write

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ANSI = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[PX^_][^\x1b]*\x1b\\|\x1b[()][A-Za-z0-9]|\x1b[=>78]")
# Set by the test page before its own script runs: keep every byte the app sends, so the test
# can read what the terminal shows (xterm.js draws on a canvas, not in the DOM).
CAPTURE = """
(() => {
  const Real = window.WebSocket;
  window.__received = [];
  window.WebSocket = function (url, protocols) {
    const ws = new Real(url, protocols);
    ws.addEventListener("message", (e) => {
      if (typeof e.data !== "string") window.__received.push(new TextDecoder().decode(e.data));
    });
    return ws;
  };
  window.WebSocket.prototype = Real.prototype;
  Object.assign(window.WebSocket, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
})();
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def served(tmp_path):
    """Start `clawmem ARGS --port FREE` (ARGS end with `serve` and its options); yields a
    function returning (process, the URL it printed)."""
    procs = []

    def start(*args: str):
        port = free_port()
        proc = subprocess.Popen([sys.executable, "-m", "clawmem.tui", *args, "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env={**os.environ, "CLAWMEM_PROVIDER": "none"})
        procs.append(proc)
        line = proc.stdout.readline()
        m = re.search(r"open (http://\S+)", line)
        assert m, line + (proc.stdout.read() if proc.poll() is not None else "")
        assert f":{port}/" in m.group(1)
        return proc, m.group(1)

    yield start
    for p in procs:
        p.terminate()
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=20) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, ""


class Browser:
    """Headless Chromium driven over the DevTools protocol (a websocket on loopback)."""

    def __init__(self, profile: Path):
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
             f"--user-data-dir={profile}", "--remote-debugging-port=0", "--window-size=1100,700", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for line in self.proc.stderr:
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            if m:
                self.endpoint = m.group(1)
                break
        else:
            raise AssertionError("chromium did not start its DevTools endpoint")
        self.ids = 0

    async def open(self):
        import aiohttp

        self.http = aiohttp.ClientSession()
        self.ws = await self.http.ws_connect(self.endpoint, max_msg_size=0)
        target = (await self.call("Target.createTarget", url="about:blank"))["targetId"]
        self.session = (await self.call("Target.attachToTarget", targetId=target, flatten=True))["sessionId"]

    async def call(self, method: str, session: bool = False, **params):
        self.ids += 1
        msg = {"id": self.ids, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        await self.ws.send_str(json.dumps(msg))
        while True:
            reply = json.loads((await self.ws.receive(timeout=60)).data)
            if reply.get("id") == self.ids:
                assert "error" not in reply, reply
                return reply["result"]

    async def page(self, method: str, **params):
        return await self.call(method, session=True, **params)

    async def evaluate(self, expr: str):
        return (await self.page("Runtime.evaluate", expression=expr, returnByValue=True))["result"].get("value")

    async def close(self):
        await self.ws.close()
        await self.http.close()
        self.proc.terminate()
        self.proc.wait(timeout=20)


async def until(check, limit: float = 60.0, what: str = "condition"):
    loop = asyncio.get_running_loop()
    end = loop.time() + limit
    while loop.time() < end:
        got = await check()
        if got:
            return got
        await asyncio.sleep(0.2)
    raise AssertionError(f"timed out after {limit:.0f}s waiting for {what}")


@pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (apt-get install chromium); .ci/run installs it")
async def test_the_page_connects_and_a_search_in_the_browser_shows_the_planted_note(ws, served, tmp_path):
    write(ws / "memory" / "2026-02-09.md", "# 2026-02-09\n\n## 08:00\nA quokka waved at the ferry.\n")
    assert run_cli("--workspace", str(ws), "index", "--quiet").returncode == 0
    _, url = served("--workspace", str(ws), "serve")
    browser = Browser(tmp_path / "chromium-profile")
    try:
        await browser.open()
        await browser.page("Network.enable")
        await browser.page("Network.setBlockedURLs", urls=["*fonts.googleapis.com*"])  # the page asks for a web font; no internet here
        await browser.page("Page.enable")
        await browser.page("Page.addScriptToEvaluateOnNewDocument", source=CAPTURE)
        await browser.page("Page.navigate", url=url)

        async def shown() -> str:
            return ANSI.sub("", "".join(await browser.evaluate("window.__received || []") or []))

        await until(lambda: _has(shown, "Search F2"), what="the app's first screen in the browser")
        await browser.page("Input.dispatchMouseEvent", type="mousePressed", x=300, y=80, button="left", clickCount=1)
        await browser.page("Input.dispatchMouseEvent", type="mouseReleased", x=300, y=80, button="left", clickCount=1)
        await browser.page("Input.insertText", text="quokka")
        text = await until(lambda: _has(shown, "2026-02-09.md"), what="the search result for the planted note")
        assert "memory/2026-02-09.md" in text
        shot = base64.b64decode((await browser.page("Page.captureScreenshot", format="png"))["data"])
        assert shot.startswith(b"\x89PNG") and len(shot) > 10_000
        keep = os.environ.get("CLAWMEM_SERVE_SCREENSHOT")
        if keep:  # look at it yourself: CLAWMEM_SERVE_SCREENSHOT=/tmp/serve.png
            Path(keep).write_bytes(shot)
    finally:
        await browser.close()


async def _has(shown, needle: str) -> str | None:
    text = await shown()
    return text if needle in text else None


def test_off_loopback_every_url_needs_the_token(ws, served):
    proc, url = served("--workspace", str(ws), "serve", "--host", "0.0.0.0")
    m = re.fullmatch(r"http://[^/]+:(\d+)/([A-Za-z0-9_-]{20,})/", url)
    assert m, url
    port, token = m.groups()
    base = f"http://127.0.0.1:{port}"
    assert get(f"{base}/")[0] == 404
    assert get(f"{base}/static/js/textual.js")[0] == 404
    wrong = token[:-1] + ("y" if token[-1] == "x" else "x")  # one character off (a token ending in x once made it the token)
    assert get(f"{base}/{wrong}/")[0] == 404
    status, page = get(f"{base}/{token}/")
    assert status == 200 and f"/{token}/ws" in page and f"/{token}/static/" in page
    assert get(f"{base}/{token}/static/js/textual.js")[0] == 200
    # and on loopback no token is needed
    _, plain = served("--workspace", str(ws), "serve")
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", plain)
    assert get(plain)[0] == 200


def test_a_taken_port_is_one_line(ws):
    with socket.create_server(("127.0.0.1", 0)) as s:
        port = s.getsockname()[1]
        out = run_cli("--workspace", str(ws), "serve", "--port", str(port), timeout=60)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "cannot listen there" in out.stderr and str(port) in out.stderr


EXTERNAL = re.compile(r"""(?:src|href)\s*=\s*["'](?:https?:)?//(?!127\.0\.0\.1|localhost|\[::1\])[^"']+""", re.I)


def test_the_page_needs_nothing_from_outside(ws, served):
    """No internet needed: the page links no font, style sheet or script from another host (the
    CDN font textual-serve asks for is swapped for the one it ships), and what it links is served."""
    _, url = served("--workspace", str(ws), "serve")
    status, page = get(url)
    assert status == 200 and "fonts.googleapis.com" not in page
    assert not EXTERNAL.findall(page), EXTERNAL.findall(page)
    assert "@font-face" in page and "RobotoMono-VariableFont_wght.ttf" in page
    refs = [a or b for a, b in re.findall(r"""(?:src|href)=["']([^"'#]+)["']|url\(["']?([^"')]+)""", page)]
    local = [r for r in refs if r.startswith(("/", "http://127.0.0.1"))]
    assert any(r.endswith("textual.js") for r in local) and any(r.endswith(".ttf") for r in local)
    root = re.match(r"http://[^/]+", url).group(0)
    for ref in local:
        with urllib.request.urlopen(ref if ref.startswith("http") else root + ref, timeout=20) as r:
            body = r.read()
            assert r.status == 200 and body, ref
            if ref.endswith(".js"):
                assert b"fonts.googleapis.com" not in body
