"""A one-line progress display on stderr for long runs."""
from __future__ import annotations

import sys
import threading
import time


class Progress:
    """Call with a message to show ``[s4cert 12.3s] message`` on one stderr line.

    Silent when disabled or when stderr is not a terminal.  While a stage runs, a
    background thread redraws the line every ``tick`` seconds so the clock keeps moving;
    :meth:`done` stops it and clears the line."""

    def __init__(self, enabled: bool = True, stream=None, tick: float = 0.5):
        self.stream = stream or sys.stderr
        self.enabled = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.t0 = time.perf_counter()
        self.tick = tick
        self._width = 0
        self._message = ""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __call__(self, message: str) -> None:
        if not self.enabled:
            return
        with self._lock:
            self._message = message
            self._draw()
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="s4cert-progress", daemon=True)
            self._thread.start()

    def _draw(self) -> None:
        """Redraw the line (the caller holds the lock)."""
        line = f"[s4cert {time.perf_counter() - self.t0:6.1f}s] {self._message}"
        pad = max(0, self._width - len(line))
        self.stream.write("\r" + line + " " * pad)
        self.stream.flush()
        self._width = len(line)

    def _run(self) -> None:
        while not self._stop.wait(self.tick):
            with self._lock:
                if self._width:
                    self._draw()

    def done(self) -> None:
        """Stop the clock and clear the line."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
        with self._lock:
            if self.enabled and self._width:
                self.stream.write("\r" + " " * self._width + "\r")
                self.stream.flush()
                self._width = 0
