"""A page as a person sees it: Debian's headless Chromium, driven over the Chrome DevTools Protocol through
``--remote-debugging-pipe`` (commands on the browser's file descriptor 3, replies and events on 4, each a
JSON message ended by NUL), with the standard library alone.

    with Browser() as browser:             # one Chromium, for a test module (it takes a second or two to start)
        shown = browser.open(path)         # loaded: the load event fired
        assert shown.evaluate("document.images[0].naturalWidth") > 0
        assert not shown.problems()        # console errors, exceptions, refused loads
        shown.screenshot(tmp_path / "page.png")

No Chromium (``chromium`` or ``chromium-browser`` on the PATH) is a failure that says how to install it,
never a skip: `.ci/run` installs it where it is absent.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

NAMES = ("chromium", "chromium-browser")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run",
         "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--mute-audio", "--hide-scrollbars")
TIMEOUT = 30.0  # seconds for one command or a page's load
# Started first: puts the pipe's ends where the protocol wants them (copies first, so that neither end is
# overwritten by the other's move), then becomes Chromium. Without a shell: dash takes no fd above 9.
ONTO_3_AND_4 = """import os, sys
ends = [os.dup(int(fd)) for fd in sys.argv[1:3]]
for fd, onto in zip(ends, (3, 4)):
    os.dup2(fd, onto)
    os.set_inheritable(onto, True)
os.execv(sys.argv[3], sys.argv[3:])
"""


class BrowserError(Exception):
    """The browser could not be started, or did not answer as the protocol says."""


def executable() -> str:
    """Chromium's path on the PATH; a BrowserError that says how to install it where there is none."""
    for name in NAMES:
        if found := shutil.which(name):
            return found
    raise BrowserError("no chromium or chromium-browser on the PATH: the page tests render pages in it. Install "
                       "Debian's (`apt-get install chromium`, as .ci/run does) or put one on the PATH")


@dataclass
class Shown:
    """One page, loaded in a tab of its own: what its console said, what it tried to fetch, and the tab to ask."""

    browser: Browser
    session: str
    url: str
    console: list[str] = field(default_factory=list)  # "level: text" of console calls and log entries
    exceptions: list[str] = field(default_factory=list)  # uncaught exceptions of its scripts
    requests: list[str] = field(default_factory=list)  # every URL it asked for, itself included

    def evaluate(self, expression: str):
        """The value of a JavaScript ``expression`` in the page (JSON-like values come back as Python's)."""
        reply = self.browser.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                       "awaitPromise": True}, self.session)
        if "exceptionDetails" in reply:
            raise BrowserError(f"{expression!r} raised in the page: {describe(reply['exceptionDetails'])}")
        return reply["result"].get("value")

    def text(self) -> str:
        """The page's text as it is laid out (``innerText``)."""
        return self.evaluate("document.body.innerText")

    def problems(self) -> list[str]:
        """The console's errors and warnings, the exceptions, and every fetch that was not of the page itself
        or a ``data:`` URI: what a page that needs nothing and is broken nowhere never has."""
        self.browser.drain()
        said = [line for line in self.console if line.split(":", 1)[0] in ("error", "warning")]
        fetched = [f"fetched {url}" for url in self.requests if url != self.url and not url.startswith("data:")]
        return said + self.exceptions + fetched

    def screenshot(self, path: Path) -> Path:
        """The whole page (beyond the window too) as a PNG at ``path``."""
        size = self.browser.send("Page.getLayoutMetrics", {}, self.session)["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": max(size["width"], 1), "height": max(size["height"], 1), "scale": 1}
        reply = self.browser.send("Page.captureScreenshot", {"format": "png", "clip": clip,
                                                             "captureBeyondViewport": True}, self.session)
        path = Path(path)
        path.write_bytes(base64.b64decode(reply["data"]))
        return path


class Browser:
    """One headless Chromium, owned from start to end (a context manager); :meth:`open` loads pages in it."""

    def __init__(self, width: int = 1200, height: int = 900):
        self.width, self.height = width, height
        self.pages: dict[str, Shown] = {}
        self.pending = bytearray()
        self.replies: dict[int, dict] = {}
        self.loaded: set[str] = set()
        self.last_id = 0

    def __enter__(self) -> Browser:
        chromium = executable()
        self.profile = tempfile.TemporaryDirectory(prefix="grade-browser-")
        self.log = open(Path(self.profile.name) / "stderr.txt", "w+b")
        to_browser, self.commands = os.pipe()
        self.events, from_browser = os.pipe()
        argv = [sys.executable, "-I", "-S", "-c", ONTO_3_AND_4, str(to_browser), str(from_browser), chromium, *FLAGS,
                f"--user-data-dir={self.profile.name}/profile", f"--window-size={self.width},{self.height}",
                "about:blank"]
        try:
            self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                                            pass_fds=(to_browser, from_browser), start_new_session=True)
        except BaseException:
            self.close_fds()
            raise
        finally:
            os.close(to_browser)
            os.close(from_browser)
        try:
            self.send("Target.setDiscoverTargets", {"discover": False})
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc) -> None:
        try:
            if self.process.poll() is None:
                try:
                    self.send("Browser.close", {}, timeout=5.0)
                except BrowserError:
                    pass
                try:
                    self.process.wait(timeout=5.0)
                except subprocess.TimeoutExpired:
                    os.killpg(self.process.pid, 9)
                    self.process.wait()
        finally:
            self.close_fds()
            self.log.close()
            self.profile.cleanup()

    def close_fds(self) -> None:
        for fd in (self.commands, self.events):
            try:
                os.close(fd)
            except OSError:
                pass

    def open(self, path: Path, timeout: float = TIMEOUT) -> Shown:
        """The file at ``path``, loaded in a new tab; its console and requests recorded from the start."""
        url = Path(path).resolve().as_uri()
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        shown = self.pages[session] = Shown(self, session, url)
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable", {}, session)
        self.send("Emulation.setDeviceMetricsOverride", {"width": self.width, "height": self.height,
                                                         "deviceScaleFactor": 1, "mobile": False}, session)
        reply = self.send("Page.navigate", {"url": url}, session)
        if reply.get("errorText"):
            raise BrowserError(f"{url} did not load: {reply['errorText']}")
        deadline = time.monotonic() + timeout
        while session not in self.loaded:
            self.receive(deadline, f"the load of {url}")
        return shown

    # -- the protocol --------------------------------------------------------------------------------

    def send(self, method: str, params: dict, session: str | None = None, timeout: float = TIMEOUT) -> dict:
        """Send one command (to a tab's ``session``, else to the browser) and wait for its reply's result."""
        self.last_id += 1
        ident = self.last_id
        message = {"id": ident, "method": method, "params": params} | ({"sessionId": session} if session else {})
        data = json.dumps(message).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self.commands, data):]
        except OSError as exc:
            raise BrowserError(f"the browser is gone ({exc}){self.said()}") from None
        deadline = time.monotonic() + timeout
        while ident not in self.replies:
            self.receive(deadline, method)
        reply = self.replies.pop(ident)
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error'].get('message')} {reply['error'].get('data', '')}".rstrip())
        return reply.get("result", {})

    def drain(self) -> None:
        """Take in what the browser has already said (events that came after the last reply)."""
        while select.select([self.events], [], [], 0.05)[0]:
            self.receive(time.monotonic() + 1.0, "events")

    def receive(self, deadline: float, waiting_for: str) -> None:
        """Read at least one whole message (or until ``deadline``) and file each where it belongs."""
        while b"\0" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.events], [], [], left)[0]:
                raise BrowserError(f"no answer from the browser within {TIMEOUT:.0f} s, waiting for {waiting_for}"
                                   f"{self.said()}")
            chunk = os.read(self.events, 1 << 20)
            if not chunk:
                raise BrowserError(f"the browser closed the pipe, waiting for {waiting_for}{self.said()}")
            self.pending += chunk
        *whole, rest = bytes(self.pending).split(b"\0")
        self.pending = bytearray(rest)
        for raw in whole:
            self.filed(json.loads(raw))

    def filed(self, message: dict) -> None:
        if "id" in message:
            self.replies[message["id"]] = message
            return
        shown = self.pages.get(message.get("sessionId", ""))
        method, params = message.get("method"), message.get("params", {})
        if shown is None:
            return
        if method == "Page.loadEventFired":
            self.loaded.add(shown.session)
        elif method == "Runtime.consoleAPICalled":
            words = " ".join(str(arg.get("value", arg.get("description", ""))) for arg in params.get("args", []))
            shown.console.append(f"{level(params.get('type', 'log'))}: {words}")
        elif method == "Log.entryAdded":
            entry = params.get("entry", {})
            said = f"{entry.get('text', '')} {entry.get('url', '')}".rstrip()
            shown.console.append(f"{level(entry.get('level', 'info'))}: {said}")
        elif method == "Runtime.exceptionThrown":
            shown.exceptions.append(f"exception: {describe(params.get('exceptionDetails', {}))}")
        elif method == "Network.requestWillBeSent":
            shown.requests.append(params.get("request", {}).get("url", "")[:200])

    def said(self) -> str:
        """The end of what the browser wrote on stderr, for a failure's message."""
        self.log.flush()
        self.log.seek(0)
        tail = self.log.read().decode(errors="replace").strip().splitlines()[-15:]
        return ("; it said:\n" + "\n".join(tail)) if tail else ""


def level(kind: str) -> str:
    """A console call's type or a log entry's level, as one of error, warning, info."""
    return {"error": "error", "assert": "error", "warning": "warning", "warn": "warning"}.get(kind, "info")


def describe(details: dict) -> str:
    exception = details.get("exception", {})
    return exception.get("description") or details.get("text", "an exception")
