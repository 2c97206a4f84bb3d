"""Headless Chromium driven over its DevTools pipe, for tests that type, choose and click.

``--remote-debugging-pipe`` makes Chromium read DevTools commands from its descriptor 3 and
write replies and events to 4, each JSON message ended by a NUL: no port, no websocket, no
package. :class:`Chromium` opens one page and evaluates JavaScript in it, or in a frame of it
(an isolated world: the frame's DOM even where the frame is sandboxed).
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import Any

# In one process, so the result frame is in the page's frame tree.
_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-site-isolation-trials",
    "--disable-features=IsolateOrigins,site-per-process",
    "--remote-debugging-pipe",
)


class Chromium:
    """One page at ``url``; ``evaluate`` runs an expression there (its promise awaited)."""

    def __init__(self, chromium: str, profile: Path, url: str, *flags: str) -> None:
        ours_r, theirs_w = os.pipe()
        theirs_r, ours_w = os.pipe()

        def descriptors() -> None:  # in the child: the pipe's ends as 3 and 4, inherited
            read, write = (fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (theirs_r, theirs_w))
            os.dup2(read, 3)
            os.dup2(write, 4)

        self._process = subprocess.Popen(
            [chromium, *_FLAGS, f"--user-data-dir={profile}", *flags, "about:blank"],
            preexec_fn=descriptors,
            close_fds=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(theirs_r)
        os.close(theirs_w)
        self._read, self._write, self._buffer, self._last = ours_r, ours_w, b"", 0
        try:
            target = self.call("Target.createTarget", url=url)["targetId"]
            attached = self.call("Target.attachToTarget", targetId=target, flatten=True)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        self._session: str = attached["sessionId"]

    def call(
        self, method: str, *, session: str | None = None, timeout: float = 60, **params: Any
    ) -> Any:
        """Send a DevTools command; its result (events in between are dropped)."""
        self._last += 1
        message: dict[str, Any] = {"id": self._last, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self._last:
                    if "error" in reply:
                        raise RuntimeError(f"{method}: {reply['error'].get('message')}")
                    return reply["result"]
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._read], [], [], left)[0]:
                raise TimeoutError(f"{method}: no answer in {timeout} s")
            chunk = os.read(self._read, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its DevTools pipe")
            self._buffer += chunk

    def evaluate(self, expression: str, *, frame: bool = False, timeout: float = 120) -> Any:
        """The value of ``expression`` in the page (or its first frame), retried while the
        page or frame is still loading (its context replaced)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self._evaluate(expression, frame, max(1.0, deadline - time.monotonic()))
            except (RuntimeError, LookupError) as exc:
                if time.monotonic() > deadline or "context" not in str(exc).lower():
                    raise
                time.sleep(0.2)

    def _evaluate(self, expression: str, frame: bool, timeout: float) -> Any:
        params: dict[str, Any] = {"awaitPromise": True, "returnByValue": True}
        if frame:
            tree = self.call("Page.getFrameTree", session=self._session)["frameTree"]
            if not tree.get("childFrames"):
                raise LookupError("no frame in the page's context yet")
            frame_id = tree["childFrames"][0]["frame"]["id"]
            world = self.call("Page.createIsolatedWorld", session=self._session, frameId=frame_id)
            params["contextId"] = world["executionContextId"]
        result = self.call(
            "Runtime.evaluate",
            session=self._session,
            timeout=timeout,
            expression=expression,
            **params,
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise RuntimeError(details.get("exception", {}).get("description", str(details)))
        return result["result"].get("value")

    def __enter__(self) -> Chromium:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._process.kill()
        self._process.wait()
        os.close(self._read)
        os.close(self._write)
