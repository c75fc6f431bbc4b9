"""A one-line progress display on stderr for long runs."""
from __future__ import annotations

import sys
import time


class Progress:
    """Call with a message to show ``[s4cert 12.3s] message`` on one stderr line.

    Silent when disabled or when stderr is not a terminal."""

    def __init__(self, enabled: bool = True, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.t0 = time.perf_counter()
        self._width = 0

    def __call__(self, message: str) -> None:
        if not self.enabled:
            return
        line = f"[s4cert {time.perf_counter() - self.t0:6.1f}s] {message}"
        pad = max(0, self._width - len(line))
        self.stream.write("\r" + line + " " * pad)
        self.stream.flush()
        self._width = len(line)

    def done(self) -> None:
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0
