"""Real web servers on 127.0.0.1 for tests: nginx, Apache httpd, lighttpd and a Django project.

Each is a context manager that picks a free port, writes its own configuration, logs, pid and
temp files into a fresh temporary directory, starts the server in the foreground as a child
process, waits until the port accepts connections, yields the base URL (``http://127.0.0.1:PORT``)
and stops the server (SIGTERM, then SIGKILL) on exit. The system's configuration, logs and ports
are never touched. ``skip_unless(...)`` gives a pytest skip marker when a binary is missing.

    with nginx_server(locations='location /x/ { return 404; }', files={"a.html": "..."}) as base:
        fetch(base + "/a.html")
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Iterator, List, Mapping, Optional, Sequence

__all__ = [
    "Fetched",
    "apache_server",
    "app_server",
    "django_server",
    "fetch",
    "free_port",
    "have",
    "htpasswd_line",
    "lighttpd_server",
    "nginx_server",
    "stop_group",
]


def have(binary: str) -> bool:
    return shutil.which(binary) is not None or os.path.exists(binary)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, proc: subprocess.Popen, log: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}: {_tail(log)}")
        with contextlib.suppress(OSError):
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        time.sleep(0.05)
    raise RuntimeError(f"server did not listen on 127.0.0.1:{port} in {timeout}s: {_tail(log)}")


def _tail(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()[-2000:]
    except OSError:
        return ""


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def stop_group(proc: subprocess.Popen, grace: float = 10.0) -> None:
    """Stop a server started in a process group of its own (``start_new_session``): SIGTERM to
    the group, SIGKILL after ``grace`` seconds."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def _write_files(root: str, files: Mapping[str, str]) -> None:
    for rel, text in files.items():
        path = os.path.join(root, rel.lstrip("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def _readable_root(tmp: str, files: Optional[Mapping[str, str]]) -> str:
    """``tmp/www`` with ``files`` in it, everything readable by a server that dropped root."""
    os.chmod(tmp, 0o755)
    root = os.path.join(tmp, "www")
    os.makedirs(root)
    _write_files(root, files or {})
    for dirpath, _dirs, names in os.walk(tmp):
        os.chmod(dirpath, 0o755)
        for n in names:
            os.chmod(os.path.join(dirpath, n), 0o644)
    return root


@contextlib.contextmanager
def _server(argv: List[str], port: int, log: str, cwd: str, env=None) -> Iterator[str]:
    with open(log, "ab") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, env=env)
    try:
        _wait_port(port, proc, log)
        yield f"http://127.0.0.1:{port}"
    finally:
        _stop(proc)


@contextlib.contextmanager
def app_server(argv: Sequence[str], port: int, log: str, ready_path: str = "/", env: Optional[Mapping[str, str]] = None,
               cwd: Optional[str] = None, timeout: float = 60.0) -> Iterator[str]:
    """An application's own server (``argv``, told to listen on 127.0.0.1:``port``) as a child
    process in its own process group, its output in ``log``; yields its base URL once ``ready_path``
    answers (any HTTP status) and stops the whole group (the workers or kernels it started) on exit."""
    base = f"http://127.0.0.1:{port}"
    with open(log, "ab") as out:
        proc = subprocess.Popen(list(argv), stdout=out, stderr=subprocess.STDOUT, env=dict(env or os.environ),
                                cwd=cwd, start_new_session=True)
    try:
        _wait_port(port, proc, log, timeout)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                if fetch(base + ready_path, timeout=10).status < 500:
                    break
            time.sleep(0.2)
        yield base
    finally:
        stop_group(proc)


@contextlib.contextmanager
def php_server(port: int, docroot: str, router: str, log: str, ready_path: str = "/") -> Iterator[str]:
    """PHP's built-in server (``php -S``) on 127.0.0.1:``port`` with two workers, serving
    ``docroot`` through ``router``; yields its base URL once ``ready_path`` answers. The server runs
    in its own process group, so the workers it forks stop with it."""
    with app_server(["php", "-S", f"127.0.0.1:{port}", "-t", docroot, router], port, log, ready_path,
                    env=dict(os.environ, PHP_CLI_SERVER_WORKERS="2")) as base:
        yield base


@contextlib.contextmanager
def nginx_server(
    locations: str = "", files: Optional[Mapping[str, str]] = None, binary: str = "nginx",
    http: str = "", addresses: Sequence[str] = ("127.0.0.1",),
) -> Iterator[str]:
    """nginx serving ``files`` (relative path -> text) from its document root, plus the given
    ``location`` blocks (nginx syntax, inside the one ``server``) and ``http`` directives (inside
    ``http``, e.g. a ``log_format``). It listens on the same port of each of ``addresses`` (all
    loopback: 127.0.0.2 is another host to a crawler); the URL yielded is 127.0.0.1's, the first address."""
    assert addresses and addresses[0] == "127.0.0.1", addresses
    with tempfile.TemporaryDirectory(prefix="websim-nginx-") as tmp:
        os.chmod(tmp, 0o755)
        root = os.path.join(tmp, "www")
        os.makedirs(root)
        _write_files(root, files or {})
        port = free_port()
        user = "user root;" if os.geteuid() == 0 else ""
        conf = os.path.join(tmp, "nginx.conf")
        listen = " ".join(f"listen {address}:{port};" for address in addresses)
        with open(conf, "w") as f:
            f.write(textwrap.dedent(f"""\
                {user}
                worker_processes 1;
                daemon off;
                pid {tmp}/nginx.pid;
                error_log {tmp}/error.log warn;
                events {{ worker_connections 512; }}
                http {{
                    access_log off;
                    default_type application/octet-stream;
                    types {{ text/html html htm; text/plain txt; }}
                    client_body_temp_path {tmp}/body;
                    proxy_temp_path {tmp}/proxy;
                    fastcgi_temp_path {tmp}/fastcgi;
                    uwsgi_temp_path {tmp}/uwsgi;
                    scgi_temp_path {tmp}/scgi;
                    {http}
                    server {{
                        {listen}
                        server_name localhost;
                        root {root};
                """) + textwrap.indent(locations, "        ") + "\n    }\n}\n")
        log = os.path.join(tmp, "stdout.log")
        with _server([binary, "-p", tmp, "-e", f"{tmp}/error.log", "-c", conf], port, log, tmp) as base:
            yield base


_APACHE_MODULES = ("mpm_event", "authz_core", "authz_host", "dir", "mime", "unixd", "alias",
                   "rewrite", "headers")


@contextlib.contextmanager
def apache_server(
    config: str = "", files: Optional[Mapping[str, str]] = None, binary: str = "apache2",
    modules_dir: str = "/usr/lib/apache2/modules", modules: Sequence[str] = (),
) -> Iterator[str]:
    """Apache httpd (foreground) serving ``files`` from its document root plus extra ``config``
    (``{root}`` in it is the document root, ``{tmp}`` the server's directory); ``modules`` are
    loaded besides the usual ones (e.g. ``auth_basic``, ``proxy_http``, ``autoindex``)."""
    with tempfile.TemporaryDirectory(prefix="websim-apache-") as tmp:
        root = _readable_root(tmp, files)
        port = free_port()
        loads = "\n".join(
            f"LoadModule {m}_module {modules_dir}/mod_{m}.so" for m in (*_APACHE_MODULES, *modules)
            if os.path.exists(f"{modules_dir}/mod_{m}.so")
        )
        user = "User nobody\nGroup nogroup\n" if os.geteuid() == 0 else ""
        conf = os.path.join(tmp, "httpd.conf")
        with open(conf, "w") as f:
            f.write(f"""{loads}
ServerRoot {tmp}
{user}ServerName 127.0.0.1
Listen 127.0.0.1:{port}
PidFile {tmp}/httpd.pid
DefaultRuntimeDir {tmp}
ErrorLog {tmp}/error.log
LogLevel warn
TypesConfig /dev/null
AddType text/html .html
DocumentRoot {root}
<Directory {root}>
    Require all granted
    Options -Indexes
</Directory>
{config.replace("{root}", root).replace("{tmp}", tmp)}
""")
        log = os.path.join(tmp, "stdout.log")
        with _server([binary, "-f", conf, "-D", "FOREGROUND"], port, log, tmp) as base:
            yield base


def htpasswd_line(user: str, password: str) -> str:
    """An htpasswd line ({SHA} scheme) that nginx, Apache and lighttpd all accept."""
    import base64  # noqa: PLC0415
    import hashlib  # noqa: PLC0415

    return f"{user}:{{SHA}}{base64.b64encode(hashlib.sha1(password.encode()).digest()).decode()}\n"


@contextlib.contextmanager
def lighttpd_server(
    config: str = "", files: Optional[Mapping[str, str]] = None, binary: str = "lighttpd",
    modules: Sequence[str] = (),
) -> Iterator[str]:
    """lighttpd (foreground, ``-D``) serving ``files`` from its document root plus extra
    ``config`` (lighttpd syntax; ``{root}``/``{tmp}`` as for Apache). ``modules`` are loaded
    (e.g. ``mod_auth``, ``mod_authn_file``, ``mod_dirlisting``, ``mod_proxy``)."""
    with tempfile.TemporaryDirectory(prefix="websim-lighttpd-") as tmp:
        root = _readable_root(tmp, files)
        port = free_port()
        mods = ", ".join(f'"{m}"' for m in ("mod_indexfile", "mod_access", "mod_alias", *modules))
        conf = os.path.join(tmp, "lighttpd.conf")
        with open(conf, "w") as f:
            f.write(f"""server.modules = ( {mods} )
server.document-root = "{root}"
server.bind = "127.0.0.1"
server.port = {port}
server.errorlog = "{tmp}/error.log"
server.pid-file = "{tmp}/lighttpd.pid"
server.upload-dirs = ( "{tmp}" )
index-file.names = ( "index.html" )
mimetype.assign = ( ".html" => "text/html", ".txt" => "text/plain", ".css" => "text/css" )
{config.replace("{root}", root).replace("{tmp}", tmp)}
""")
        log = os.path.join(tmp, "stdout.log")
        with _server([binary, "-D", "-f", conf], port, log, tmp) as base:
            yield base


@contextlib.contextmanager
def django_server(debug: bool = False) -> Iterator[str]:
    """A minimal Django project (admin, auth, sessions; sqlite in the temp dir) run with
    ``manage.py runserver --noreload``. The admin login page is at ``/admin/login/``."""
    with tempfile.TemporaryDirectory(prefix="websim-django-") as tmp:
        _write_files(tmp, {
            "manage.py": textwrap.dedent("""\
                import os, sys
                os.environ.setdefault("DJANGO_SETTINGS_MODULE", "site_settings")
                from django.core.management import execute_from_command_line
                execute_from_command_line(sys.argv)
                """),
            "site_settings.py": textwrap.dedent(f"""\
                SECRET_KEY = "websim-test-only"
                DEBUG = {debug!r}
                ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
                ROOT_URLCONF = "site_urls"
                INSTALLED_APPS = ["django.contrib.admin", "django.contrib.auth",
                                  "django.contrib.contenttypes", "django.contrib.sessions",
                                  "django.contrib.messages", "django.contrib.staticfiles"]
                MIDDLEWARE = ["django.contrib.sessions.middleware.SessionMiddleware",
                              "django.middleware.common.CommonMiddleware",
                              "django.middleware.csrf.CsrfViewMiddleware",
                              "django.contrib.auth.middleware.AuthenticationMiddleware",
                              "django.contrib.messages.middleware.MessageMiddleware"]
                TEMPLATES = [{{"BACKEND": "django.template.backends.django.DjangoTemplates",
                              "APP_DIRS": True, "OPTIONS": {{"context_processors": [
                                  "django.template.context_processors.request",
                                  "django.contrib.auth.context_processors.auth",
                                  "django.contrib.messages.context_processors.messages"]}}}}]
                DATABASES = {{"default": {{"ENGINE": "django.db.backends.sqlite3",
                                          "NAME": {os.path.join(tmp, "db.sqlite3")!r}}}}}
                STATIC_URL = "/static/"
                USE_TZ = True
                """),
            "site_urls.py": textwrap.dedent("""\
                from django.contrib import admin
                from django.urls import path
                urlpatterns = [path("admin/", admin.site.urls)]
                """),
        })
        port = free_port()
        env = dict(os.environ, PYTHONPATH=tmp, PYTHONDONTWRITEBYTECODE="1")
        log = os.path.join(tmp, "stdout.log")
        argv = [sys.executable, os.path.join(tmp, "manage.py"), "runserver", "--noreload",
                "--skip-checks", f"127.0.0.1:{port}"]
        with _server(argv, port, log, tmp, env=env) as base:
            yield base


@dataclass
class Fetched:
    url: str
    final_url: str
    status: int
    content_type: str
    body: bytes
    redirects: List[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


def fetch(url: str, timeout: float = 10.0) -> Fetched:
    """GET ``url`` (127.0.0.1 only), following redirects; HTTP errors are returned, not raised."""
    host = urllib.parse.urlsplit(url).hostname
    if host not in ("127.0.0.1", "localhost"):
        raise ValueError(f"tests only fetch from 127.0.0.1, not {url}")
    req = urllib.request.Request(url, headers={"User-Agent": "websim-tests"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return Fetched(url, resp.geturl(), resp.status,
                           resp.headers.get("Content-Type", ""), resp.read())
    except urllib.error.HTTPError as err:
        with err:
            return Fetched(url, err.geturl(), err.code,
                           err.headers.get("Content-Type", ""), err.read())
