"""A real browser for the web report's tests: Debian's headless chromium over the DevTools
protocol (CDP), with nothing but ``websockets`` (docs/dependencies.md says why not Playwright).

``Browser`` starts ``chromium --headless`` with its own profile, opens one page and speaks CDP
to it: navigate and wait for the load event, evaluate JavaScript, click and wait for the next
page, take PNG screenshots. Every console error, uncaught exception and browser log error
(a CSP violation, a failed load) is collected in ``errors``.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from websockets.sync.client import connect

CHROMIUM = ("chromium", "chromium-browser", "google-chrome")


def no_browser() -> bool:
    """Skip the browser tests: no chromium here and not in CI (where its absence fails)."""
    return chromium_path() is None and not os.environ.get("CI")


def chromium_path() -> str | None:
    for name in CHROMIUM:
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(RuntimeError):
    pass


class Browser:
    def __init__(self, *, width: int = 1366, height: int = 900, timeout: float = 30.0) -> None:
        exe = chromium_path()
        if exe is None:
            raise BrowserError("no chromium on PATH (apt-get install chromium)")
        self.timeout = timeout
        self.profile = Path(tempfile.mkdtemp(prefix="dq-chromium-"))
        args = [
            exe,
            "--headless=new",
            "--remote-debugging-port=0",
            f"--user-data-dir={self.profile}",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-gpu",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            f"--window-size={width},{height}",
            "about:blank",
        ]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")  # chromium refuses root with its sandbox
        self.proc = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        try:
            self._open(width, height, timeout)
        except BaseException:
            self.close()
            raise

    def _open(self, width: int, height: int, timeout: float) -> None:
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while not port_file.exists() or not port_file.read_text().strip():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise BrowserError("chromium did not start")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        ws_url = self._page_socket(port, deadline)
        # websockets wants its connection used as a context manager: entered here, left in close.
        self._connection = connect(ws_url, max_size=64 * 1024 * 1024, open_timeout=timeout)
        self.ws = self._connection.__enter__()
        self._id = 0
        self.events: list[dict[str, Any]] = []
        self.errors: list[str] = []
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )

    @staticmethod
    def _page_socket(port: int, deadline: float) -> str:
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as r:
                    targets = json.loads(r.read())
                for t in targets:
                    if t.get("type") == "page":
                        return str(t["webSocketDebuggerUrl"])
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise BrowserError("no page target in chromium")
            time.sleep(0.05)

    # -- protocol ---------------------------------------------------------------------------
    def _event(self, message: dict[str, Any]) -> None:
        self.events.append(message)
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            args = params.get("args", [])
            self.errors.append(
                "console: " + " ".join(str(a.get("value", a.get("description"))) for a in args)
            )
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.errors.append(
                "exception: "
                + str(details.get("exception", {}).get("description") or details.get("text"))
            )
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            self.errors.append(f"log: {entry.get('text')} {entry.get('url', '')}".strip())

    def _read(self, until: float) -> dict[str, Any]:
        left = until - time.monotonic()
        if left <= 0:
            raise BrowserError("timed out waiting for chromium")
        try:
            raw = self.ws.recv(timeout=left)
        except TimeoutError:
            raise BrowserError("timed out waiting for chromium") from None
        return dict(json.loads(raw))

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._id += 1
        mine = self._id
        self.ws.send(json.dumps({"id": mine, "method": method, "params": params or {}}))
        until = time.monotonic() + self.timeout
        while True:
            message = self._read(until)
            if message.get("id") == mine:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))
            if "method" in message:
                self._event(message)

    def wait_event(self, method: str, since: int) -> dict[str, Any]:
        """The first ``method`` event after index ``since`` of :attr:`events`."""
        until = time.monotonic() + self.timeout
        while True:
            for message in self.events[since:]:
                if message.get("method") == method:
                    return message
            since = len(self.events)
            self._event(self._read(until))

    # -- what a test does -------------------------------------------------------------------
    def goto(self, url: str) -> None:
        mark = len(self.events)
        self.call("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired", mark)

    def eval(self, expression: str) -> Any:
        result = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails'].get('text')}")
        return result.get("result", {}).get("value")

    def act_and_wait(self, expression: str) -> None:
        """Run ``expression`` (a click, a submit) and wait for the page it loads."""
        mark = len(self.events)
        self.eval(expression)
        self.wait_event("Page.loadEventFired", mark)

    def click(self, selector: str) -> None:
        self.act_and_wait(f"document.querySelector({json.dumps(selector)}).click()")

    def text(self, selector: str) -> str:
        return str(self.eval(f"document.querySelector({json.dumps(selector)})?.innerText ?? ''"))

    def texts(self, selector: str) -> list[str]:
        got = self.eval(
            f"Array.from(document.querySelectorAll({json.dumps(selector)}), e => e.innerText)"
        )
        return [str(x) for x in got or []]

    def url(self) -> str:
        return str(self.eval("location.href"))

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
        path.write_bytes(base64.b64decode(data["data"]))

    def cookies(self) -> list[dict[str, Any]]:
        return list(self.call("Network.getAllCookies").get("cookies", []))

    def close(self) -> None:
        connection = getattr(self, "_connection", None)
        if connection is not None:
            connection.__exit__(None, None, None)
            self._connection = None
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
