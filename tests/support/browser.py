"""Open a page in Debian's headless chromium and report what a person's browser would show.

Chromium is driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`: fd 3 is
what it reads, fd 4 what it writes, NUL-terminated JSON messages), so no websocket client and
no port is needed. It runs as root with --headless --no-sandbox --disable-gpu
--disable-background-networking --no-first-run, a fresh --user-data-dir, and every network
request other than file:// and data: blocked (a page that fetches anything fails loudly).

`open_page(path)` loads the file and returns a `PageVisit`: every console message at level
error or warning, uncaught exceptions, log entries (failed resource loads land there), the
bounding boxes of chosen elements, whether their images decoded, and a full-page PNG.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--no-first-run", "--no-default-browser-check", "--disable-extensions",
    "--disable-component-update", "--disable-sync", "--mute-audio", "--hide-scrollbars",
)  # fmt: skip


@dataclass
class PageVisit:
    """What loading the page produced."""

    console: list[tuple[str, str]] = field(default_factory=list)
    """(level, text) of console messages at error/warning level and of log entries."""
    exceptions: list[str] = field(default_factory=list)
    boxes: dict[str, dict[str, float]] = field(default_factory=dict)
    """Element id -> {x, y, width, height, natural_width} in CSS pixels."""
    screenshot: bytes = b""
    scale: float = 1.0

    @property
    def errors(self) -> list[str]:
        """Every error a person's console would show."""
        found = [f"{level}: {text}" for level, text in self.console if level == "error"]
        return found + [f"exception: {e}" for e in self.exceptions]


class _Pipe:
    def __init__(self, proc: subprocess.Popen[bytes], write_fd: int, read_fd: int) -> None:
        self.proc, self.write_fd, self.read_fd = proc, write_fd, read_fd
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None, session: str = "") -> Any:
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.write_fd, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method: str, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for i, event in enumerate(self.events):
                if event.get("method") == method:
                    return self.events.pop(i)
            self.events.append(self._read(deadline))
        raise TimeoutError(f"no {method} within {timeout} s")

    def _read(self, deadline: float | None = None) -> dict[str, Any]:
        deadline = deadline or time.monotonic() + 60
        while b"\0" not in self.buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("chromium said nothing")
            chunk = os.read(self.read_fd, 1 << 20)
            if not chunk:
                raise RuntimeError(f"chromium closed the pipe (exit {self.proc.poll()})")
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(raw)  # type: ignore[no-any-return]


def _high(fds: tuple[int, int]) -> tuple[int, int]:
    """The same pipe ends as descriptors >= 10 (the originals closed)."""
    out = tuple(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds)
    for fd in fds:
        os.close(fd)
    return out[0], out[1]


def open_page(path: Path, *, ids: tuple[str, ...] = (), width: int = 1280) -> PageVisit:
    """Load `path` (a local file) in headless chromium; the visit's messages and a screenshot."""
    visit = PageVisit()
    profile = Path(tempfile.mkdtemp(prefix="ba-chromium-"))
    to_chrome_r, to_chrome_w = _high(os.pipe())
    from_chrome_r, from_chrome_w = _high(os.pipe())
    # chromium reads fd 3 and writes fd 4: bash moves the pipe ends there (they are >= 10, so
    # no end is 3 or 4 already; dash takes single-digit descriptors only), then execs it.
    argv = [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-pipe",
            f"--window-size={width},900", "about:blank"]  # fmt: skip
    script = f'exec "$@" 3<&{to_chrome_r} 4>&{from_chrome_w} {to_chrome_r}<&- {from_chrome_w}>&-'
    proc = subprocess.Popen(
        ["/bin/bash", "-c", script, "bash", *argv],
        pass_fds=(to_chrome_r, from_chrome_w), stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    for fd in (to_chrome_r, from_chrome_w):
        os.close(fd)
    pipe = _Pipe(proc, to_chrome_w, from_chrome_r)
    try:
        targets = pipe.send("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        session = pipe.send("Target.attachToTarget", {"targetId": page["targetId"],
                                                       "flatten": True})["sessionId"]  # fmt: skip
        for domain in ("Runtime", "Log", "Page", "Network"):
            pipe.send(f"{domain}.enable", session=session)
        pipe.send("Network.setBlockedURLs", {"urls": ["http://*", "https://*", "ws://*"]},
                  session=session)  # fmt: skip
        pipe.send("Page.navigate", {"url": path.resolve().as_uri()}, session=session)
        pipe.wait_event("Page.loadEventFired")
        metrics = pipe.send("Page.getLayoutMetrics", session=session)
        height = int(metrics["cssContentSize"]["height"]) + 1
        pipe.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                  "deviceScaleFactor": 1, "mobile": False}, session=session)  # fmt: skip
        for ident in ids:
            expr = (
                f"(() => {{ const e = document.getElementById({json.dumps(ident)}); "
                "if (!e) return null; const r = e.getBoundingClientRect(); "
                "return JSON.stringify({x: r.x + scrollX, y: r.y + scrollY, width: r.width, "
                "height: r.height, natural_width: e.naturalWidth || 0, "
                "complete: !!e.complete}); })()"
            )
            value = pipe.send("Runtime.evaluate", {"expression": expr}, session=session)
            text = value["result"].get("value")
            if text:
                visit.boxes[ident] = json.loads(text)
        shot = pipe.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport":
                         True}, session=session)  # fmt: skip
        visit.screenshot = base64.b64decode(shot["data"])
        for event in pipe.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in (
                "error",
                "assert",
                "warning",
            ):
                text = " ".join(str(a.get("value", a.get("description", ""))) for a in
                                params.get("args", []))  # fmt: skip
                level = "warning" if params["type"] == "warning" else "error"
                visit.console.append((level, text))
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                visit.exceptions.append(str(details.get("text", details)))
            elif method == "Log.entryAdded":
                entry = params.get("entry", {})
                visit.console.append((entry.get("level", ""), str(entry.get("text", ""))))
        try:
            pipe.send("Browser.close")
        except RuntimeError:
            pass
    finally:
        for fd in (to_chrome_w, from_chrome_r):
            os.close(fd)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)
    return visit
