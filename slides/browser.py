"""Open a deck in headless Chromium and report what happened: every request, every error.

It drives the browser through the Chrome DevTools Protocol over a pipe
(``--remote-debugging-pipe``: JSON messages ending in a NUL byte on file descriptors 3
and 4), so it needs no Python package and no browser download, only a ``chromium``
(Debian: ``apt-get install chromium``) or ``google-chrome`` on the PATH.

    python -m slides.browser slides/build/12-ecosystem.html shot.png
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
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

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--no-default-browser-check",
         "--disable-extensions", "--mute-audio", "--hide-scrollbars", "--remote-debugging-pipe"]
CANDIDATES = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]


def find_chromium() -> str | None:
    return next((path for path in map(shutil.which, CANDIDATES) if path), None)


@dataclass
class PageReport:
    url: str
    requests: list[str] = field(default_factory=list)  # every URL the page asked for
    failed: list[str] = field(default_factory=list)  # "url: reason"
    errors: list[str] = field(default_factory=list)  # uncaught exceptions and console errors
    facts: dict = field(default_factory=dict)  # what the page said about itself (see open_deck)
    screenshot: bytes = b""


class Chromium:
    """One headless browser; ``open()`` loads a page in a fresh tab and reports on it."""

    def __init__(self, executable: str | None = None, width: int = 1280, height: int = 720):
        self.executable = executable or find_chromium()
        if self.executable is None:
            raise FileNotFoundError("no Chromium found (Debian: apt-get install chromium)")
        self.width, self.height = width, height
        self._next_id, self._buffer, self._events = 0, b"", []

    def __enter__(self) -> Chromium:
        self.profile = tempfile.mkdtemp(prefix="slides-chromium-")
        to_browser, self._write = os.pipe()
        self._read, from_browser = os.pipe()
        # Move the browser's ends above 10, so that placing them on 3 and 4 cannot clobber them.
        ends = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_browser, from_browser)]
        for fd in (to_browser, from_browser):
            os.close(fd)

        def place_pipe_ends():  # runs in the child, just before exec
            os.dup2(ends[0], 3)
            os.dup2(ends[1], 4)

        args = [self.executable, *FLAGS, f"--user-data-dir={self.profile}",
                f"--window-size={self.width},{self.height}", "about:blank"]
        self.process = subprocess.Popen(args, pass_fds=(3, 4), preexec_fn=place_pipe_ends,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in ends:
            os.close(fd)
        return self

    def __exit__(self, *exc) -> None:
        with contextlib.suppress(Exception):  # closing anyway
            self.call("Browser.close", timeout=5)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._read, self._write):
            os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)

    # -- the protocol --------------------------------------------------------------------------------
    def call(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 30):
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})
            self._events.append(reply)

    def _receive(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._read], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._read, 1 << 20)
            if not chunk:
                raise ConnectionError("Chromium closed the pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def _drain(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                self._events.append(self._receive(deadline))
            except TimeoutError:
                return

    # -- a page ---------------------------------------------------------------------------------------
    def open(self, url: str, ready: str, facts: str, timeout: float = 20) -> PageReport:
        """Load ``url``; wait until the JS expression ``ready`` is true; evaluate ``facts`` (JSON)."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Network", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=session)
        self.call("Emulation.setDeviceMetricsOverride", {"width": self.width, "height": self.height,
                                                         "deviceScaleFactor": 1, "mobile": False}, session)
        self._events.clear()
        self.call("Page.navigate", {"url": url}, session)
        deadline = time.monotonic() + timeout
        while not self._evaluate(session, f"Boolean({ready})"):
            if time.monotonic() > deadline:
                break
            self._drain(0.1)
        self._drain(0.5)  # late requests (fonts, images) and errors
        report = PageReport(url, facts=self._evaluate(session, f"JSON.stringify({facts})", as_json=True) or {})
        report.screenshot = base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"}, session)["data"])
        self._collect(report, session)
        self.call("Target.closeTarget", {"targetId": target})
        return report

    def _evaluate(self, session: str, expression: str, as_json: bool = False):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session)
        value = result.get("result", {}).get("value")
        return json.loads(value) if as_json and isinstance(value, str) else value

    def _collect(self, report: PageReport, session: str) -> None:
        urls = {}
        for event in (e for e in self._events if e.get("sessionId") == session):
            method, params = event.get("method"), event.get("params", {})
            if method == "Network.requestWillBeSent":
                urls[params["requestId"]] = params["request"]["url"]
                report.requests.append(params["request"]["url"])
            elif method == "Network.loadingFailed":
                report.failed.append(f"{urls.get(params['requestId'], '?')}: {params.get('errorText')}")
            elif method == "Network.responseReceived" and params["response"].get("status", 200) >= 400:
                report.failed.append(f"{params['response']['url']}: HTTP {params['response']['status']}")
            elif method == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                report.errors.append(details.get("exception", {}).get("description") or details.get("text"))
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                report.errors.append(f"{params['entry'].get('url', '')}: {params['entry']['text']}")


DECK_READY = "window.Reveal && Reveal.isReady && Reveal.isReady()"
# Visits every slide, vertical ones too (then goes back to the first), and measures it: a
# slide whose content is taller than the deck's 1280x720 frame overflows (the deck would
# have to shrink it to fit); an element whose content is wider than its box, or that reaches
# past the slide's right edge, cuts text off; text or code under 18 px is unreadable on a
# projector; a raw client or JVM log line (librdkafka's ``%3|...|FAIL|``, log4j's ``WARN``) is
# noise; a plot narrower than 80% of the slide is too small to read at the back of a room.
# A client's or the JVM's own log line, as it would reach a slide (librdkafka, the JVM, log4j).
RAW_LOG = (r"^%\d\|\d+(\.\d+)?\|[A-Z0-9_]+\||^WARNING: |NativeCodeLoader|incubator modules|log4j|SLF4J"
           r"|^\d\d/\d\d/\d\d \d\d:\d\d:\d\d (INFO|WARN|ERROR) ")
_WALK = """(() => { const overflow = [], wide = [], small = [], logs = [], plots = [],
    room = Reveal.getConfig().height;
    const LOG = new RegExp(""" + json.dumps(RAW_LOG) + """);
    let visited = 0;
    Reveal.getHorizontalSlides().forEach((column, h) => {
      const count = Math.max(1, column.querySelectorAll(':scope > section').length);
      for (let v = 0; v < count; v++) {
        Reveal.slide(h, v); visited++;
        const slide = Reveal.getCurrentSlide(), where = h + "/" + v + " " + (slide.dataset.heading || "");
        if (slide.scrollHeight > room + 1) overflow.push(where + " (" + slide.scrollHeight + " px)");
        const edge = slide.getBoundingClientRect().right, cut = [];
        [slide, ...slide.querySelectorAll('*')].forEach(e => {
          const name = e.tagName.toLowerCase() + (typeof e.className === "string" && e.className
                                                   ? "." + e.className.split(" ")[0] : "");
          if (e.scrollWidth > e.clientWidth + 1)
            cut.push(name + " holds " + e.scrollWidth + " px in " + e.clientWidth + " px");
          else if (e.getClientRects().length && e.getBoundingClientRect().right > edge + 1)
            cut.push(name + " ends " + Math.round(e.getBoundingClientRect().right - edge) + " px past the slide");
        });
        slide.querySelectorAll('pre').forEach(e => {  // lines too long are wrapped by the deck, with a mark
          const style = getComputedStyle(e), text = e.textContent.replace(/\\n$/, "").split("\\n").length;
          const drawn = Math.round((e.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom))
                                   / parseFloat(style.lineHeight));
          if (drawn > text) cut.push("pre draws " + drawn + " lines for " + text + ": wrapped without a mark");
        });
        if (cut.length) wide.push(where + ": " + cut.slice(0, 3).join(", "));
        slide.querySelectorAll('pre, p, li, td, th').forEach(e => {
          const px = parseFloat(getComputedStyle(e).fontSize);
          if (px < 17.5 && e.textContent.trim()) small.push(where + " " + e.tagName + " " + px + "px");
        });
        slide.querySelectorAll('pre.output, .output-html').forEach(e => e.textContent.split("\\n")
          .filter(line => LOG.test(line.trim())).forEach(line => logs.push(where + ": " + line.slice(0, 100))));
        slide.querySelectorAll('img.output-image').forEach(img => {
          const share = img.getBoundingClientRect().width / slide.getBoundingClientRect().width;
          if (share < 0.8) plots.push(where + ": " + Math.round(100 * share) + "% of the width");
        });
      } });
    Reveal.slide(0, 0); return {overflow, wide, small: small.slice(0, 10), logs, plots, visited}; })()"""
# Reveal's arrows, the slide number and the link back to the index must not cover each other
# (the arrows' own boxes touch, which is reveal.js's design and covers nothing).
_CORNERS = """(() => { const boxes = Array.from(document.querySelectorAll(
      '.reveal .controls button.enabled, .reveal .slide-number, a.back'))
    .filter(e => e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden')
    .map(e => [e.className || e.tagName, e.getBoundingClientRect(), e.tagName === 'BUTTON']);
    const hit = [];
    boxes.forEach(([a, r, arrow], i) => boxes.slice(i + 1).forEach(([b, s, other]) => {
      if (!(arrow && other) && r.left < s.right && s.left < r.right && r.top < s.bottom && s.top < r.bottom)
        hit.push(a + " / " + b);
    }));
    return hit; })()"""
DECK_FACTS = """{
  ready: Reveal.isReady(),
  walk: """ + _WALK + """,
  overlaps: """ + _CORNERS + """,
  slides: Reveal.getTotalSlides(),
  notes: document.querySelectorAll('.slides aside.notes').length,
  sections_without_notes: Reveal.getHorizontalSlides()
            .filter(c => !c.querySelector('aside.notes'))
            .map(c => (c.querySelector('[data-heading]') || c).dataset.heading || "untitled"),
  images: Array.from(document.images).map(i => ({src: i.src.slice(0, 80), ok: i.complete && i.naturalWidth > 0})),
  remote: Array.from(document.querySelectorAll('[src],link[href]'))
            .map(e => e.getAttribute('src') || e.getAttribute('href'))
            .filter(u => /^(https?:)?\\/\\//.test(u)),
}"""


def open_deck(browser: Chromium, path: Path) -> PageReport:
    return browser.open(path.resolve().as_uri(), DECK_READY, DECK_FACTS)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    with Chromium() as browser:
        report = open_deck(browser, Path(argv[0]))
    if len(argv) > 1:
        Path(argv[1]).write_bytes(report.screenshot)
    print(json.dumps({"facts": report.facts, "requests": len(report.requests), "failed": report.failed,
                      "errors": report.errors}, indent=2))
    return 0 if not (report.failed or report.errors) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
