"""The test and bench servers: an application's own server stops with everything it started."""

import os
import sys
import textwrap
import time

from scrapy_websim.testing.servers import app_server, fetch, free_port

#: a server that starts a worker of its own (as ``php -S`` forks workers and Jupyter starts kernels)
SERVER = textwrap.dedent("""\
    import subprocess, sys
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with open(sys.argv[2], "w") as fh:
        fh.write(str(worker.pid))
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), SimpleHTTPRequestHandler).serve_forever()
    """)


def running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has stopped
    except FileNotFoundError:
        return False


def test_app_server_serves_then_stops_the_workers_its_server_started(tmp_path):
    script = tmp_path / "serve.py"
    script.write_text(SERVER)
    port = free_port()
    argv = [sys.executable, str(script), str(port), str(tmp_path / "worker.pid")]
    with app_server(argv, port, str(tmp_path / "server.log"), cwd=str(tmp_path)) as base:
        assert base == f"http://127.0.0.1:{port}"
        assert fetch(base + "/serve.py").text == SERVER
        worker = int((tmp_path / "worker.pid").read_text())
        assert running(worker)
    deadline = time.monotonic() + 10
    while running(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running(worker)
    assert os.path.exists(tmp_path / "server.log")
