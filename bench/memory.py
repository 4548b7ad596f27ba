"""Peak memory of a process tree, sampled in a thread (``bench/hostile.py``): the peak RSS of one
process and the peak summed PSS (RSS where PSS is unreadable) of it and all its descendants, so a
crawl's Chromium processes count with it."""

from __future__ import annotations

import threading

import psutil

MB = 1024 * 1024


class MemorySampler(threading.Thread):
    """Samples every ``interval`` seconds until ``stop`` is set or the process ends."""

    def __init__(self, pid: int, interval: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.proc = psutil.Process(pid)
        self.interval = interval
        self.peak_rss = 0
        self.peak_total = 0
        self.peak_procs = 0
        self.pss = True
        self.stop = threading.Event()

    def _mem(self, proc: psutil.Process) -> int:
        if self.pss:
            try:
                return proc.memory_full_info().pss
            except (psutil.AccessDenied, AttributeError):
                self.pss = False
        return proc.memory_info().rss

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                self.peak_rss = max(self.peak_rss, self.proc.memory_info().rss)
                procs = [self.proc] + self.proc.children(recursive=True)
            except psutil.NoSuchProcess:
                return
            total = 0
            for p in procs:
                try:
                    total += self._mem(p)
                except (psutil.NoSuchProcess, psutil.ZombieProcess):
                    pass
            self.peak_total = max(self.peak_total, total)
            self.peak_procs = max(self.peak_procs, len(procs))
            self.stop.wait(self.interval)
