"""The crawl's progress: a live bar on a terminal, log lines otherwise (``crawl.progress``).

The bar is tqdm's (done/total pages, pages/s, time left, errors so far). While it is shown the
log lines of the root logger's handler on the terminal (Scrapy's, with its level and format) are
printed above it through ``tqdm.write``, so the two do not tear each other apart. When standard
error is no terminal (a file, a pipe, CI), a line ``done/total pages done, pages/s, ETA, errors``
is logged every ``crawl.progress_interval`` seconds.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time
from typing import IO, Any, Optional

logger = logging.getLogger("scrapy_websim.crawler.extension")


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class _AboveTheBar:
    """A stream that writes through ``tqdm.write``: what is written appears above the bar."""

    def __init__(self, stream: Any, tqdm: Any) -> None:
        self.stream, self.tqdm = stream, tqdm

    def write(self, text: str) -> None:
        self.tqdm.write(text, file=self.stream, end="")

    def flush(self) -> None:
        self.stream.flush()


class Progress:
    """Fed ``update(done, total, errors)`` as records come in; ``close(...)`` at the end."""

    def __init__(self, mode: str = "auto", interval: float = 30.0, stream: Optional[IO[str]] = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if mode == "auto":
            mode = "bar" if _is_terminal(self.stream) else "log"
        self.mode = mode if mode in ("bar", "log") else "off"
        self.interval = interval
        self._bar: Any = None
        self._redirect = contextlib.ExitStack()
        self._started = time.monotonic()
        self._last_log = self._started

    def _open_bar(self, total: int) -> Any:
        from tqdm import tqdm  # noqa: PLC0415

        self._bar = tqdm(total=total or None, desc="websim", unit=" pages", file=self.stream, dynamic_ncols=True,
                         mininterval=0.5, smoothing=0.1, leave=True,
                         bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} pages "
                                    "[{elapsed}<{remaining}, {rate_noinv_fmt}{postfix}]")
        self._bar.set_postfix_str("errors 0", refresh=False)
        # the root logger's handlers that write to this terminal (Scrapy's) write through tqdm: the
        # bar is cleared, the line printed, the bar drawn again; their level, filters and format stay
        for handler in logging.getLogger().handlers:
            if isinstance(handler, logging.StreamHandler) and handler.stream in (self.stream, sys.stderr):
                original = handler.setStream(_AboveTheBar(handler.stream, tqdm))
                self._redirect.callback(handler.setStream, original)
        return self._bar

    def update(self, done: int, total: int, errors: int) -> None:
        total = max(total, done)
        if self.mode == "bar":
            bar = self._bar if self._bar is not None else self._open_bar(total)
            if total and bar.total != total:
                bar.total = total
            bar.set_postfix_str(f"errors {errors}", refresh=False)
            bar.update(done - bar.n)
        elif self.mode == "log" and self.interval:
            now = time.monotonic()
            if now - self._last_log >= self.interval:
                self._last_log = now
                self.log_line(done, total, errors, now)

    def log_line(self, done: int, total: int, errors: int, now: Optional[float] = None) -> None:
        elapsed = (now or time.monotonic()) - self._started
        rate = done / elapsed if elapsed > 0 else 0.0
        if rate > 0 and total > done:
            left = (total - done) / rate
            eta = f"{int(left // 3600)}h{int(left % 3600 // 60):02d}m{int(left % 60):02d}s"
        else:
            eta = "-"
        logger.info("websim: %d/%d pages done, %.2f pages/s, ETA %s, %d errors", done, total, rate, eta, errors)

    def close(self, done: int, total: int, errors: int) -> None:
        """The last state: the bar's (then closed), or one last log line."""
        if self._bar is not None:
            self.update(done, total, errors)
            self._bar.close()
            self._bar = None
        elif self.mode == "log" and self.interval:
            self.log_line(done, max(total, done), errors)
        self._redirect.close()
