"""A real ``redis-server`` (Debian's ``redis-server`` package) on a free port of 127.0.0.1, for tests and benches.

Its own directory and config file; AOF on with ``appendfsync everysec`` (the persistence the
distributed mode relies on, see README "Many machines"), no RDB snapshots.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from typing import Optional

CONFIG = """\
bind 127.0.0.1
port {port}
protected-mode yes
daemonize no
dir {dir}
appendonly yes
appendfsync everysec
appenddirname aof
save ""
logfile {dir}/redis.log
"""


def redis_server_path() -> Optional[str]:
    return shutil.which("redis-server") or (
        "/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    def __init__(self, directory: str) -> None:
        self.dir = directory
        os.makedirs(directory, exist_ok=True)
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.conf = os.path.join(directory, "redis.conf")
        with open(self.conf, "w", encoding="utf-8") as fh:
            fh.write(CONFIG.format(port=self.port, dir=directory))
        self.proc: Optional[subprocess.Popen] = None

    def start(self) -> "RedisServer":
        binary = redis_server_path()
        if binary is None:
            raise RuntimeError("redis-server not found: apt-get install redis-server (scripts/setup.sh test does)")
        self.proc = subprocess.Popen([binary, self.conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64).startswith(b"+PONG"):
                        return self
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"redis-server did not start; see {self.dir}/redis.log")

    def stop(self, kill: bool = False) -> None:
        """SIGTERM (Redis fsyncs the AOF and exits) or SIGKILL (loses at most the last second)."""
        if self.proc is None:
            return
        if kill:
            self.proc.kill()
        else:
            self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def restart(self, kill: bool = False) -> None:
        self.stop(kill=kill)
        self.start()

    def __enter__(self) -> "RedisServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
