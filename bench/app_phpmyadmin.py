"""Clusters and labels of a crawl of a real phpMyAdmin over a real MariaDB: table pages, forms, 404s, logins.

    python bench/app_phpmyadmin.py [--check] [-v] [--keep DIR]

Held aside: run once the design is settled, its first figures reported as they came.

Runs Debian's ``mariadb-server`` (``mariadbd`` with a data directory of its own in the temporary
directory, on a free port of 127.0.0.1 and a socket there) and Debian's ``phpmyadmin`` (5.2) with
PHP's built-in server, each phpMyAdmin instance a tree of links to ``/usr/share/phpmyadmin`` whose
``vendor_config.php`` points at the instance's own configuration, temporary and session
directories (as ``bench/app_logins.py`` does), all defaults but the authentication:

- the main instance (``auth_type = config``: signed in as the database user ``bench``, who sees the
  database ``bench``), on 127.0.0.1;
- a mirror of it on another port (the same configuration and sessions: the same pages);
- the same phpMyAdmin with its login form (``auth_type = cookie``) on 127.0.0.2, and with HTTP
  authentication (``auth_type = http``: a 401 asking for a password) on 127.0.0.3 (other hosts, so
  that the session cookie phpMyAdmin sets on one is not the others').

The database ``bench``, real data installed here: ``countries`` (ISO 3166-1, 249 rows),
``currencies`` (ISO 4217), ``languages`` (ISO 639-2), ``scripts`` (ISO 15924), from Debian's
``iso-codes``; ``uploads`` (one row per upload of a Debian changelog installed here: source,
version, distribution, urgency, uploader, date) and ``changes`` (one row per changelog item of
those uploads, its upload's id). Rows of one table differ by a few short values.

The truth (``{url: (group, label)}``, content label ``None``):

- each page of each table's browse view (``index.php?route=/sql&db=bench&table=T&pos=N``, 25 rows
  a page, phpMyAdmin's default: a page of data, its own group), for every table all pages but the
  last ones of the two longest (``languages``, ``changes``: their first ten);
- each table's structure, search form, SQL form (the query box holds ``SELECT * FROM `T` WHERE 1``),
  insert form (an empty row form with the table's columns), operations and export pages: a group
  each; the database's structure, SQL, search, query, export, import, operations, routines and
  events pages; the server's home page, its databases, SQL, import, export, collations, engines
  and plugins pages;
- the variants, each in its page's group: the mirror port; ``session_max_rows=25`` (the default
  page size made explicit); the parameters in another order; ``lang=en`` (the default language
  made explicit); a tracking parameter (``utm_source``); ``index.php?db=bench`` (the database's
  default page, its structure); ``/``, ``/index.php`` and ``index.php?route=/`` for the home page.
  phpMyAdmin writes a fresh token into every page and the query's time into a browse page ("Query
  took 0.0004 seconds"): ``--check`` compares the visible text without that time;
- special pages: phpMyAdmin's own 404 ("Error 404! The page /X was not found.", in its page frame:
  an unknown route), one group, ``E3``; PHP's built-in server's 404 (a file that is not there:
  ``/wp-login.php``, ``/setup/index.php``...), one group, ``E3``; the login form of the cookie
  instance, whatever page was asked for (status 200), one group, ``L1``; the HTTP authentication
  instance's 401 (its page "Wrong username/password. Access denied."), one group, ``L1``.

Left out as arguable: a table that does not exist (phpMyAdmin's page frame with the table's tabs and
nothing in it, status 200: thin, an error page or content?), a database that does not exist (a 302
to the home page), the server's status, variables and process list pages (counters that change
between two fetches), the designer (a client-side editor), a browse page past a table's last row,
a browse page without ``pos`` (phpMyAdmin shows the page the session last showed of that table:
the crawl's pages share a session cookie), a path without a file name under the document root
(PHP's server answers it with ``index.php``: the home page). phpMyAdmin's own row links (edit,
copy, delete, sort, next page) are forms posted by its script, not addresses; the browse pages are
reached by the GET addresses of its navigation tree. The URL list is shuffled; the crawl is
websim's shipped defaults. Last line (see ``bench/appbench.py``):

    set=phpmyadmin urls=N groups=G dup_share=D missing=M precision=P recall=R f1=F false_pairs=K
    missed_pairs=K lost=L rules=right/special (pct) content_as_junk=J
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import datetime as dt
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Dict, Iterator, List, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import appbench  # noqa: E402
import appdata  # noqa: E402
from app_roundup import visible_text  # noqa: E402

from scrapy_websim.testing import servers  # noqa: E402

NAME = "phpmyadmin"
APT = ("mariadb-server", "mariadb-client", "phpmyadmin", "php-cli", "php-mysql", "iso-codes")
PHPMYADMIN = "/usr/share/phpmyadmin"
ISO = "/usr/share/iso-codes/json"
#: source packages whose changelogs give the uploads
SOURCES = ("nginx", "git", "curl", "sqlite3", "openssl", "systemd", "apache2", "lighttpd", "python3.11", "php8.2",
           "redis", "chromium", "perl", "coreutils", "mariadb", "vim", "openssh", "util-linux")
UPLOADS = 300
#: phpMyAdmin's rows per browse page (``MaxRows``)
PAGE = 25
#: the pages crawled of the longest tables
MAX_PAGES = 10
PMA_CONFIG = """<?php
$cfg['blowfish_secret'] = '%(key)s';
$cfg['Servers'][1]['auth_type'] = '%(auth)s';
$cfg['Servers'][1]['host'] = '127.0.0.1';
$cfg['Servers'][1]['port'] = '%(mysql)d';
$cfg['Servers'][1]['user'] = '%(user)s';
$cfg['Servers'][1]['password'] = '%(password)s';
$cfg['TempDir'] = '%(dir)s/tmp';
$cfg['VersionCheck'] = false;
"""
PMA_ROUTER = """<?php
define('ROOT_PATH', '%(root)s/');
$path = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
if ($path === '/' || $path === '/index.php') {
    chdir('%(root)s');
    require '%(root)s/index.php';
    return true;
}
return false;  // a file, or the server's own 404
"""


def ensure_packages() -> None:
    if (os.path.isdir(PHPMYADMIN) and shutil.which("mariadbd") or os.path.exists("/usr/sbin/mariadbd")) \
            and shutil.which("mariadb-install-db") and shutil.which("php") and os.path.isdir(ISO):
        return
    print("installing " + " ".join(APT), flush=True)
    subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *APT], check=True,
                   stdout=subprocess.DEVNULL, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    for service in ("mariadb", "apache2"):
        subprocess.run(["service", service, "stop"], capture_output=True, check=False)


def write(path: str, text: str) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


# -- MariaDB -----------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def mariadb(tmp: str) -> Iterator[Tuple[int, str]]:
    """A MariaDB server of its own in ``tmp/db``; yields (port, socket)."""
    data, sock = os.path.join(tmp, "db"), os.path.join(tmp, "mysql.sock")
    os.makedirs(data)
    user = ["--user=root"] if os.getuid() == 0 else []
    subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={data}", *user, "--skip-test-db",
                    "--auth-root-authentication-method=socket"], check=True, capture_output=True)
    port = servers.free_port()
    argv = ["/usr/sbin/mariadbd", "--no-defaults", f"--datadir={data}", f"--socket={sock}", f"--port={port}",
            "--bind-address=127.0.0.1", "--skip-log-bin", "--innodb-buffer-pool-size=64M",
            f"--pid-file={os.path.join(tmp, 'mariadb.pid')}", *user]
    with open(os.path.join(tmp, "mariadb.log"), "ab") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        for _ in range(600):
            if proc.poll() is not None:
                raise RuntimeError(f"mariadbd exited with {proc.returncode}")
            if sql(sock, "SELECT 1", check=False).returncode == 0:
                break
            time.sleep(0.1)
        else:
            raise RuntimeError("mariadbd does not answer")
        yield port, sock
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def sql(sock: str, script: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(["mariadb", "--no-defaults", "-S", sock, "-uroot", "--default-character-set=utf8mb4"],
                          input=script, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        raise RuntimeError(f"mariadb failed: {proc.stderr[-2000:]}")
    return proc


def literal(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace("\\", "\\\\").replace("'", "''") + "'"


def insert(table: str, columns: List[str], rows: List[tuple]) -> str:
    values = ",\n".join("(" + ", ".join(literal(v) for v in row) + ")" for row in rows)
    return f"INSERT INTO `{table}` ({', '.join(columns)}) VALUES\n{values};\n"


def iso(name: str, key: str) -> List[dict]:
    with open(os.path.join(ISO, f"iso_{name}.json"), encoding="utf-8") as fh:
        return json.load(fh)[key]


def load_data(sock: str, password: str) -> Dict[str, int]:
    """The database ``bench`` and its user; ``{table: rows}``."""
    script = [f"""CREATE DATABASE bench CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY '{password}';
GRANT ALL ON bench.* TO 'bench'@'127.0.0.1';
USE bench;
CREATE TABLE countries (alpha_2 CHAR(2) PRIMARY KEY, alpha_3 CHAR(3) NOT NULL UNIQUE, `numeric` CHAR(3) NOT NULL,
  name VARCHAR(100) NOT NULL, official_name VARCHAR(150) NULL, common_name VARCHAR(100) NULL);
CREATE TABLE currencies (alpha_3 CHAR(3) PRIMARY KEY, `numeric` CHAR(3) NOT NULL, name VARCHAR(100) NOT NULL);
CREATE TABLE languages (alpha_3 VARCHAR(8) PRIMARY KEY, alpha_2 CHAR(2) NULL, bibliographic CHAR(3) NULL,
  name VARCHAR(150) NOT NULL, common_name VARCHAR(100) NULL);
CREATE TABLE scripts (alpha_4 CHAR(4) PRIMARY KEY, `numeric` CHAR(3) NOT NULL, name VARCHAR(150) NOT NULL);
CREATE TABLE uploads (id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, source VARCHAR(64) NOT NULL,
  version VARCHAR(64) NOT NULL, distribution VARCHAR(64) NOT NULL, urgency VARCHAR(16) NOT NULL,
  changed_by VARCHAR(128) NOT NULL, email VARCHAR(128) NOT NULL, uploaded_at DATETIME NOT NULL,
  KEY source (source));
CREATE TABLE changes (id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, upload_id INT UNSIGNED NOT NULL,
  item TEXT NOT NULL, KEY upload_id (upload_id), FOREIGN KEY (upload_id) REFERENCES uploads (id));
"""]
    counts = {}
    rows = [(c["alpha_2"], c["alpha_3"], c["numeric"], c["name"], c.get("official_name"), c.get("common_name"))
            for c in iso("3166-1", "3166-1")]
    script.append(insert("countries", ["alpha_2", "alpha_3", "`numeric`", "name", "official_name", "common_name"],
                         rows))
    counts["countries"] = len(rows)
    rows = [(c["alpha_3"], c["numeric"], c["name"]) for c in iso("4217", "4217")]
    script.append(insert("currencies", ["alpha_3", "`numeric`", "name"], rows))
    counts["currencies"] = len(rows)
    rows = [(c["alpha_3"], c.get("alpha_2"), c.get("bibliographic"), c["name"], c.get("common_name"))
            for c in iso("639-2", "639-2")]
    script.append(insert("languages", ["alpha_3", "alpha_2", "bibliographic", "name", "common_name"], rows))
    counts["languages"] = len(rows)
    rows = [(c["alpha_4"], c["numeric"], c["name"]) for c in iso("15924", "15924")]
    script.append(insert("scripts", ["alpha_4", "`numeric`", "name"], rows))
    counts["scripts"] = len(rows)
    chosen, _ = appdata.changelog_items(SOURCES, UPLOADS)
    chosen.sort(key=lambda u: u[0].date)
    uploads, changes = [], []
    for i, (entry, items) in enumerate(chosen, start=1):
        at = entry.date.astimezone(dt.timezone.utc)
        uploads.append((i, entry.source, entry.version, entry.dist, entry.urgency, entry.author, entry.email,
                        at.strftime("%Y-%m-%d %H:%M:%S")))
        changes.extend((i, item) for item in items)
    script.append(insert("uploads", ["id", "source", "version", "distribution", "urgency", "changed_by", "email",
                                     "uploaded_at"], uploads))
    script.append(insert("changes", ["upload_id", "item"], changes))
    counts["uploads"], counts["changes"] = len(uploads), len(changes)
    sql(sock, "".join(script))
    return counts


# -- phpMyAdmin --------------------------------------------------------------------------------------------------


def phpmyadmin(tmp: str, auth: str, mysql_port: int, password: str, address: str = "127.0.0.1",
               sessions: str = "", workers: int = 2):
    """phpMyAdmin from a tree of links to Debian's, its ``vendor_config.php`` the instance's own,
    served by ``php -S`` on a free port of ``address``."""
    root = os.path.join(tmp, "root")
    os.makedirs(os.path.join(root, "libraries"))
    os.makedirs(os.path.join(tmp, "tmp"))
    sessions = sessions or os.path.join(tmp, "sessions")
    os.makedirs(sessions, exist_ok=True)
    for path in glob.glob(os.path.join(PHPMYADMIN, "*")) + glob.glob(os.path.join(PHPMYADMIN, "libraries", "*")):
        rel = os.path.relpath(path, PHPMYADMIN)
        if rel not in ("libraries", os.path.join("libraries", "vendor_config.php")):
            os.symlink(path, os.path.join(root, rel))
    with open(os.path.join(PHPMYADMIN, "libraries", "vendor_config.php"), encoding="utf-8") as fh:
        vendor = fh.read()
    user, pw = ("bench", password) if auth == "config" else ("", "")
    config = write(os.path.join(tmp, "config.inc.php"), PMA_CONFIG % {
        "key": os.urandom(16).hex(), "auth": auth, "mysql": mysql_port, "user": user, "password": pw, "dir": tmp})
    vendor = vendor.replace("'/var/lib/phpmyadmin/tmp/'", repr(os.path.join(tmp, "tmp") + "/"))
    vendor = vendor.replace("'/etc/phpmyadmin/config.inc.php'", repr(config))
    write(os.path.join(root, "libraries", "vendor_config.php"), vendor)
    router = write(os.path.join(tmp, "router.php"), PMA_ROUTER % {"root": root})
    port = servers.free_port()
    argv = ["php", "-d", f"session.save_path={sessions}", "-S", f"{address}:{port}", "-t", root, router]
    return php_server(argv, address, port, os.path.join(tmp, "php.log"), workers)


@contextlib.contextmanager
def php_server(argv: List[str], address: str, port: int, log: str, workers: int) -> Iterator[str]:
    """``php -S`` on ``address:port`` in its own process group (its workers stop with it); yields
    its base URL once ``/`` answers."""
    base = f"http://{address}:{port}"
    with open(log, "ab") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                env=dict(os.environ, PHP_CLI_SERVER_WORKERS=str(workers)))
    try:
        for _ in range(300):
            if proc.poll() is not None:
                raise RuntimeError(f"php -S exited with {proc.returncode}")
            try:
                fetch(base + "/", timeout=10)
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError(f"php -S at {base} does not answer")
        yield base
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 15)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait(10)


def fetch(url: str, timeout: float = 10.0) -> servers.Fetched:
    """GET ``url`` (loopback only), following redirects; HTTP errors are returned, not raised."""
    if not (urllib.parse.urlsplit(url).hostname or "").startswith("127."):
        raise ValueError(f"the bench only fetches from 127.0.0.0/8, not {url}")
    req = urllib.request.Request(url, headers={"User-Agent": "websim-bench"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return servers.Fetched(url, resp.geturl(), resp.status, resp.headers.get("Content-Type", ""), resp.read())
    except urllib.error.HTTPError as err:
        with err:
            return servers.Fetched(url, err.geturl(), err.code, err.headers.get("Content-Type", ""), err.read())


# -- the truth ---------------------------------------------------------------------------------------------------


def truth_of(counts: Dict[str, int], base: str, mirror: str, login: str, httpauth: str) -> appbench.Truth:
    truth: appbench.Truth = {}

    add = appbench.truth_adder(truth, base + "/")

    q = urllib.parse.quote
    k = 0
    for t, (table, rows) in enumerate(counts.items()):
        pages = (rows + PAGE - 1) // PAGE
        for p in range(min(pages, MAX_PAGES)):
            pos = p * PAGE
            urls = [f"index.php?route=/sql&db=bench&table={table}&pos={pos}"]
            if p == 0:
                if t % 2 == 0:
                    urls.append(f"index.php?route=/sql&db=bench&table={table}&pos=0&session_max_rows={PAGE}")
                if t % 3 == 1:
                    urls.append(f"{mirror}/index.php?route=/sql&db=bench&table={table}&pos=0")
            variant = k % 9
            if variant == 2:
                urls.append(f"index.php?pos={pos}&table={table}&db=bench&route=/sql")
            elif variant == 4:
                urls.append(f"{mirror}/index.php?route=/sql&db=bench&table={table}&pos={pos}")
            elif variant == 6:
                urls.append(f"index.php?route=/sql&db=bench&table={table}&pos={pos}&lang=en")
            elif variant == 8:
                urls.append(f"index.php?route=/sql&db=bench&table={table}&pos={pos}&utm_source=wiki")
            k += 1
            add(f"browse:{table}:{pos}", None, *urls)
        for view in ("structure", "search", "sql", "change", "operations", "export"):
            urls = [f"index.php?route=/table/{view}&db=bench&table={table}"]
            if (t + len(view)) % 5 == 0:
                urls.append(f"{mirror}/index.php?route=/table/{view}&db=bench&table={table}")
            elif (t + len(view)) % 7 == 3:
                urls.append(f"index.php?route=/table/{view}&db=bench&table={table}&lang=en")
            add(f"table:{table}:{view}", None, *urls)
    add("database:structure", None, "index.php?route=/database/structure&db=bench", "index.php?db=bench",
        f"{mirror}/index.php?route=/database/structure&db=bench")
    for view in ("sql", "search", "multi-table-query", "export", "import", "operations", "routines", "events"):
        add(f"database:{view}", None, f"index.php?route=/database/{view}&db=bench",
            *([f"index.php?db=bench&route=/database/{view}"] if view in ("sql", "export") else []))
    add("server:home", None, "", "index.php", "index.php?route=/", f"{mirror}/", "index.php?route=/&lang=en")
    for view in ("databases", "sql", "import", "export", "collations", "engines", "plugins"):
        add(f"server:{view}", None, f"index.php?route=/server/{view}",
            *([f"{mirror}/index.php?route=/server/{view}"] if view in ("databases", "engines") else []))

    add("pma-404", "E3", "index.php?route=/nosuch", f"index.php?route=/table/{q('browse')}&db=bench&table=countries",
        "index.php?route=/admin", "index.php?route=/database/tables&db=bench", "index.php?route=/server/users",
        "index.php?route=/table/rows&db=bench&table=uploads", f"{mirror}/index.php?route=/login")
    add("php-404", "E3", "wp-login.php", "admin/login.php", "phpmyadmin/index.php", "setup/index.php", "xmlrpc.php",
        "db/index.php", "dump.sql", f"{mirror}/phpMyAdmin/index.php")
    add("login-form", "L1", f"{login}/", f"{login}/index.php",
        f"{login}/index.php?route=/sql&db=bench&table=countries&pos=0",
        f"{login}/index.php?route=/database/structure&db=bench", f"{login}/index.php?route=/server/databases",
        f"{login}/index.php?route=/table/structure&db=bench&table=uploads",
        f"{login}/index.php?route=/sql&db=bench&table=changes&pos=50", f"{login}/index.php?db=bench")
    add("http-auth", "L1", f"{httpauth}/", f"{httpauth}/index.php?route=/sql&db=bench&table=currencies&pos=0",
        f"{httpauth}/index.php?route=/database/structure&db=bench", f"{httpauth}/index.php?route=/server/engines",
        f"{httpauth}/index.php?db=bench")
    return truth


def check(truth: appbench.Truth) -> str:
    """``--check``: the statuses per label, then every group of content URLs whose visible text
    (phpMyAdmin's query time left out) is not the same, two groups that show the same text, and
    every content URL that is not a 200 HTML page."""
    odd = []
    texts: Dict[str, Dict[str, str]] = collections.defaultdict(dict)
    by_label: Dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for url, (group, label) in truth.items():
        got = fetch(url)
        by_label[label or "content"][got.status] += 1
        if label is None:
            if got.status != 200 or "html" not in got.content_type:
                odd.append(f"  {got.status} {got.content_type} {url} ({group})")
            text = re.sub(r"Query took [0-9.]+ seconds", "", visible_text(got.body))
            texts[group][url] = re.sub(r"127\.0\.0\.1:\d+ / 127\.0\.0\.1", "HOST / 127.0.0.1", text)
    seen: Dict[str, str] = {}
    for group, by_url in texts.items():
        if len(set(by_url.values())) > 1:
            odd.append(f"  group {group} shows {len(set(by_url.values()))} different texts: {', '.join(by_url)}")
        for text in set(by_url.values()):
            if seen.setdefault(text, group) != group:
                odd.append(f"  groups {seen[text]} and {group} show the same text")
    groups = len({g for g, _ in truth.values()})
    head = f"set={NAME} urls={len(truth)} groups={groups} " + " ".join(
        f"{label}:{dict(c)}" for label, c in sorted(by_label.items()))
    return "\n".join([head, *odd])


@contextlib.contextmanager
def build(args: argparse.Namespace, tmp: str) -> Iterator[appbench.Truth]:
    ensure_packages()
    os.makedirs(tmp)
    password = os.urandom(8).hex()
    with mariadb(tmp) as (mysql_port, sock):
        counts = load_data(sock, password)
        shared = os.path.join(tmp, "sessions")
        with phpmyadmin(os.path.join(tmp, "pma"), "config", mysql_port, password, sessions=shared, workers=4) \
                as base, \
                phpmyadmin(os.path.join(tmp, "pma-mirror"), "config", mysql_port, password, sessions=shared) \
                as mirror, \
                phpmyadmin(os.path.join(tmp, "pma-login"), "cookie", mysql_port, password, "127.0.0.2") as login, \
                phpmyadmin(os.path.join(tmp, "pma-http"), "http", mysql_port, password, "127.0.0.3") as httpauth:
            yield truth_of(counts, base, mirror, login, httpauth)


if __name__ == "__main__":
    sys.exit(appbench.main(NAME, build, __doc__, None, check))
