"""Clusters and labels of a crawl of two real data browsers, Datasette and sqlite-web, over this
machine's Debian package metadata.

    python bench/app_datasette.py --check            # set up, fetch every truth URL once: statuses per label
    python bench/app_datasette.py [-v] [--keep DIR]  # set up, crawl with the shipped defaults, score
    python bench/appbench.py DIR [--refeature]       # re-score a kept crawl with the current code

Installs Datasette 0.65.5 and sqlite-web 0.8.2 (PyPI) into a virtual environment of their own
(``$TMPDIR/websim-bench-venv``, not the project's) if missing. Builds a SQLite database,
``debian.db``, from ``/var/lib/dpkg/status`` (every installed package: its version, section,
priority, size, maintainer, summary and long description) and the newest entries of the
packages' ``/usr/share/doc/*/changelog.Debian.gz``, in five tables: ``packages`` (primary key the
name), ``maintainers`` (labelled by name), ``dependencies`` (one row per Depends, Pre-Depends,
Recommends or Suggests entry), ``changes`` (one row per changelog entry: most are one or two
lines, "New upstream release", "Rebuild against ...") and ``conffiles``, which Datasette's
metadata opens to the ``root`` actor only. ``packages`` has a full-text index; the metadata holds
two canned queries for everyone and one for ``root`` only. Datasette serves the database on two
ports of 127.0.0.1 (two processes on the one file: a fleet of two), sqlite-web (Flask, read-only)
on a third.

The truth (``{url: (group, label)}``, ~640 URLs; each URL its own group unless said):

- Datasette's row pages, each a key/value table of one row and its "Links from other tables"
  counts: 220 packages, 50 maintainers (a name, an address and one count), 140 changelog entries
  (the shortest of each package: many are one line, and several say the same words for
  different packages or versions);
- table pages: every page of ``packages`` by its ``_next`` links, the first pages of the other
  tables, ``packages`` sorted by version, by size descending, 50 rows a page, filtered to six
  sections, and three full-text searches whose results differ; the index, the database page,
  four ``/-/`` introspection pages (versions, settings, databases, metadata); the two canned
  queries (the per-maintainer one for eight maintainers) and three SQL queries typed in the URL;
- the duplicates such an app really produces, each in the group of its page: the first table
  page with the default sort (``_sort=name``, the primary key) and the default size
  (``_size=100``) made explicit, its ``.html`` form, the trailing-slash form Datasette redirects;
  ``section=X`` and its explicit form ``section__exact=X``; row pages with a tracking parameter,
  in ``.html`` form, with a trailing slash (a redirect) or on the second port; table, database
  and query pages on the second port;
- its 404s: one template whose message says "Database not found", "Table not found" or "Record
  not found" (missing databases, tables, a table name in capitals, rows, sub-paths, on either
  port): one group, ``E3``; its 403s for the ``root``-only table, its rows, the ``root``-only
  query and the permissions debug page ("Forbidden"): one group, ``E3``;
- sqlite-web's pages of the same database, each its own group (a row shown by two applications
  is two pages): the overview, the tables' structure pages, content pages 50 rows each (the first
  with ``?page=1`` and ``?ordering=1``, the default order by the first column, as the same page;
  ``?page=999`` is the last page, which it shows for any page past the end), a content page by
  size (``?ordering=-6``: a column's number, negative for descending), 80 row pages
  (``/T/row/<base64 of the JSON key>/``; a few also without the slash, which redirects), and its
  404 template ("404 · Not Found"): one group, ``E3``.

Left out as arguable: a table page with a facet (``?_facet=section``: the same rows and a box of
counts per section: the table page, or a page of its own?), a filter or search with no result
("0 rows where ...": the table page, or a not-found answer?), ``_hide_sql`` forms of a query
(the same result, the SQL hidden), a SQL error (400, the query editor with the error message),
``/-/plugins`` and ``/-/actor`` (``[]`` and ``null``: thin or content?), JSON/CSV exports (not
HTML); of sqlite-web its query and export forms (a form naming the table's columns: content?)
and a missing row (a redirect to the content page with a message). The URL list is shuffled; the
crawl is websim's shipped defaults. Last line (see ``bench/appbench.py``):

    set=datasette urls=N groups=G dup_share=D missing=M precision=P recall=R f1=F false_pairs=K
    missed_pairs=K lost=L rules=right/special (pct) content_as_junk=J
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import html
import json
import os
import re
import sqlite3
import sys
import tempfile
import urllib.parse
from typing import Dict, Iterator, List, Optional, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import appbench  # noqa: E402  (bench/appbench.py)
import debian_meta  # noqa: E402  (bench/debian_meta.py)

from scrapy_websim.testing import servers  # noqa: E402

VENV = os.path.join(tempfile.gettempdir(), "websim-bench-venv")
DATASETTE = "datasette==0.65.5"
SQLITE_WEB = "sqlite-web==0.8.2"
ROWS = {"packages": 220, "maintainers": 50, "changes": 140}
#: row pages sqlite-web serves of the same database
SQLITE_WEB_ROWS = {"packages": 40, "maintainers": 15, "changes": 25}

METADATA = {
    "title": "Debian packages",
    "description": "The packages installed on this machine, from dpkg's status file and their changelogs.",
    "databases": {"debian": {
        "tables": {
            "maintainers": {"label_column": "name"},
            "packages": {"fts_table": "packages_fts", "fts_pk": "rowid"},
            "conffiles": {"allow": {"id": "root"}},
        },
        "queries": {
            "section_sizes": {
                "title": "Installed size per section",
                "sql": "select section, count(*) as packages, sum(installed_size) as kb from packages "
                       "group by section order by kb desc"},
            "maintainer_packages": {
                "title": "Packages of a maintainer",
                "sql": "select name, version, summary from packages where maintainer_id = :maintainer order by name"},
            "conffile_report": {
                "title": "Configuration files per package", "allow": {"id": "root"},
                "sql": "select package, count(*) as files from conffiles group by package order by files desc"},
        },
    }},
}

SCHEMA = """
create table maintainers (id integer primary key, name text, email text unique);
create table packages (name text primary key, version text, architecture text, section text, priority text,
  installed_size integer, maintainer_id integer references maintainers(id), source text, homepage text,
  summary text, description text);
create table dependencies (id integer primary key, package text references packages(name), kind text,
  depends_on text, version_constraint text);
create table changes (id integer primary key, package text references packages(name), version text,
  distribution text, urgency text, author text, date text, text text);
create table conffiles (id integer primary key, package text references packages(name), path text, md5 text);
create virtual table packages_fts using fts5(name, summary, description, content=[packages]);
"""
QUERIES = (
    "select maintainer_id, count(*) as n from packages group by maintainer_id order by n desc limit 20",
    "select name, installed_size from packages order by installed_size desc limit 25",
    "select depends_on, count(*) as n from dependencies where kind = 'Depends' group by depends_on "
    "order by n desc limit 30",
)
SEARCHES = ("compression", "python", "documentation")


def ensure_packages() -> Tuple[str, str]:
    """The ``datasette`` and ``sqlite_web`` commands of the bench's own virtual environment
    (created and installed if missing)."""
    exes = (os.path.join(VENV, "bin", "datasette"), os.path.join(VENV, "bin", "sqlite_web"))
    if not all(os.path.exists(exe) for exe in exes):
        appbench.pip_install(VENV, [DATASETTE, SQLITE_WEB])
    return exes


def build_db(path: str) -> None:
    """``debian.db`` from dpkg's status file and the packages' changelogs."""
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    maintainers: Dict[str, int] = {}
    names = set()
    for rec in debian_meta.packages():
        names.add(rec["Package"])
        name, email = debian_meta.maintainer(rec)
        if email not in maintainers:
            maintainers[email] = len(maintainers) + 1
            db.execute("insert into maintainers values (?, ?, ?)", (maintainers[email], name, email))
        summary, paras = debian_meta.description(rec)
        db.execute("insert into packages values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (
            rec["Package"], rec.get("Version"), rec.get("Architecture"), rec.get("Section"), rec.get("Priority"),
            int(rec.get("Installed-Size") or 0), maintainers[email],
            rec.get("Source", "").split(" ")[0] or rec["Package"], rec.get("Homepage"), summary, "\n\n".join(paras)))
        for kind in ("Pre-Depends", "Depends", "Recommends", "Suggests"):
            for dep in filter(None, (d.strip() for d in rec.get(kind, "").split(","))):
                one = re.match(r"^(\S+)\s*(?:\(([^)]*)\))?$", dep)
                db.execute("insert into dependencies (package, kind, depends_on, version_constraint) values "
                           "(?, ?, ?, ?)", (rec["Package"], kind, one[1] if one else dep, one[2] if one else None))
        for line in rec.get("Conffiles", "").split("\n"):
            parts = line.split()
            if len(parts) >= 2:
                db.execute("insert into conffiles (package, path, md5) values (?, ?, ?)",
                           (rec["Package"], parts[0], parts[1]))
    for package in debian_meta.changelog_packages():
        if package in names:
            for e in debian_meta.changelog(package):
                db.execute("insert into changes (package, version, distribution, urgency, author, date, text) "
                           "values (?, ?, ?, ?, ?, ?, ?)", (package, e["version"], e["distribution"], e["urgency"],
                                                            e["author"], e["date"], e["text"]))
    db.execute("insert into packages_fts (rowid, name, summary, description) "
               "select rowid, name, summary, description from packages")
    db.commit()
    db.close()


def spread(items: list, n: int) -> list:
    """``n`` items evenly spread over ``items`` (all of them if fewer)."""
    if len(items) <= n:
        return list(items)
    return [items[i * len(items) // n] for i in range(n)]


def next_pages(base: str, path: str, limit: int) -> List[str]:
    """The URLs of a table's pages after the first, by following its "Next page" links."""
    out: List[str] = []
    url = base + path
    while len(out) < limit:
        page = servers.fetch(url).text
        m = re.search(r'<a href="([^"]+)">Next page</a>', page)
        if not m:
            break
        url = html.unescape(m.group(1))
        out.append(url)
    return out


def q(value: object) -> str:
    """A value as Datasette puts it in a path: tilde-encoded (``libdb5.3`` is ``libdb5~2E3``, as a
    dot would start a format extension)."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "_-") else "+" if c == " " else
                   "".join(f"~{byte:02X}" for byte in c.encode()) for c in str(value))


def add(truth: appbench.Truth, name: str, urls: List[str], label: Optional[str] = None) -> None:
    """``urls`` as one group of ``truth``."""
    for url in urls:
        assert url not in truth, url
        truth[url] = (name, label)


def sqlite_web_truth(db: sqlite3.Connection, base: str, truth: appbench.Truth) -> None:
    """sqlite-web's pages of the same database: the overview, each table's structure page (its
    form without the slash redirects to it), content pages (``?page=1`` and ``?ordering=1`` are
    the first page: the default made explicit; a page past the end is the last page), row pages
    (``/T/row/<base64 of the JSON key>/``) and its 404 template."""

    def group(name: str, urls: List[str], label: Optional[str] = None) -> None:
        add(truth, "sqlite-web " + name, urls, label)

    group("index", [f"{base}/"])
    for table in ("packages", "maintainers", "dependencies", "changes"):
        group(f"{table}/", [f"{base}/{table}/"] + ([f"{base}/{table}"] if table == "packages" else []))
    pages = -(-db.execute("select count(*) from packages").fetchone()[0] // 50)
    # ``ordering`` is a column's number, negative for descending; rows come in key order by default
    columns = [c[1] for c in db.execute("pragma table_info(packages)")]
    group("packages/content", [f"{base}/packages/content/", f"{base}/packages/content/?page=1",
                               f"{base}/packages/content/?ordering={columns.index('name') + 1}"])
    for page in (2, 3, 4, pages):
        group(f"packages/content?page={page}", [f"{base}/packages/content/?page={page}"]
              + ([f"{base}/packages/content/?page=999"] if page == pages else []))
    by_size = f"ordering=-{columns.index('installed_size') + 1}"
    group(f"packages/content?{by_size}", [f"{base}/packages/content/?{by_size}"])
    for table in ("maintainers", "changes"):
        group(f"{table}/content", [f"{base}/{table}/content/"])
        group(f"{table}/content?page=2", [f"{base}/{table}/content/?page=2"])
    for table, n in SQLITE_WEB_ROWS.items():
        keys = [k for (k,) in db.execute(f"select {'name' if table == 'packages' else 'id'} from {table} order by 1")]
        for i, key in enumerate(spread(keys[3:], n)):
            token = base64.b64encode(json.dumps([key]).encode()).decode()
            url = f"{base}/{table}/row/{token}/"
            group(f"{table}/row/{key}", [url] + ([url[:-1]] if i % 9 == 4 else []))
    group("404", [f"{base}/nosuchtable/", f"{base}/PACKAGES/", f"{base}/packages/info/",
                  f"{base}/packages/indexes/", f"{base}/debian/packages/", f"{base}/maintainers/rows/"], "E3")


def build_truth(db_path: str, a: str, b: str, web: str) -> appbench.Truth:
    """The truth for Datasette on ``a`` and its second process on ``b``, sqlite-web on ``web``."""
    db = sqlite3.connect(db_path)
    truth: appbench.Truth = {}

    def group(name: str, urls: List[str], label: Optional[str] = None) -> None:
        add(truth, name, urls, label)

    t = f"{a}/debian"
    # the first page of packages and the forms of it the app serves as the same page
    group("packages-1", [f"{t}/packages", f"{t}/packages?_sort=name", f"{t}/packages?_size=100",
                         f"{t}/packages.html", f"{t}/packages/", f"{b}/debian/packages"])
    for i, url in enumerate(next_pages(a, "/debian/packages", 20)):
        group(f"packages-{i + 2}", [url])
    for table, pages in (("maintainers", 2), ("dependencies", 3), ("changes", 3)):
        group(f"{table}-1", [f"{t}/{table}"] + ([f"{b}/debian/{table}"] if table == "changes" else []))
        for i, url in enumerate(next_pages(a, f"/debian/{table}", pages - 1)):
            group(f"{table}-{i + 2}", [url])
    for view in ("_sort=version", "_sort_desc=installed_size", "_size=50"):
        group(f"packages?{view}", [f"{t}/packages?{view}"])
    sections = [s for (s,) in db.execute("select section from packages group by section having count(*) >= 5 "
                                         "order by count(*) desc, section limit 6")]
    for section in sections:
        s = urllib.parse.quote(section, safe="")
        group(f"section={section}", [f"{t}/packages?section={s}", f"{t}/packages?section__exact={s}"])
    for word in SEARCHES:
        group(f"search={word}", [f"{t}/packages?_search={word}"])
    group("index", [f"{a}/", f"{b}/"])
    group("database", [t, f"{t}/", f"{b}/debian"])
    for page in ("versions", "settings", "databases", "metadata"):
        group(f"-/{page}", [f"{a}/-/{page}"])
    group("section_sizes", [f"{t}/section_sizes", f"{b}/debian/section_sizes"])
    busy = [m for (m,) in db.execute("select maintainer_id from packages group by maintainer_id "
                                     "having count(*) >= 3 order by maintainer_id")]
    for m in spread(busy, 8):
        group(f"maintainer_packages={m}", [f"{t}/maintainer_packages?maintainer={m}"])
    for i, sql in enumerate(QUERIES):
        group(f"sql-{i}", [f"{t}?sql={urllib.parse.quote_plus(sql)}"])

    # row pages: one group each; every few rows a variant the app serves as the same page
    variants = (lambda u: [u + "?utm_source=newsletter&utm_medium=email"], lambda u: [u + ".html"],
                lambda u: [u + "/"], lambda u: [u.replace(a, b, 1)])
    names = [n for (n,) in db.execute("select name from packages order by name")]
    ids = {"maintainers": [i for (i,) in db.execute("select id from maintainers order by id")],
           # the shortest entries, as many packages as possible
           "changes": [i for (i,) in db.execute("select min(id) from changes where length(text) < 90 "
                                                "group by package order by min(id)")]}
    k = 0
    for table, keys in (("packages", names), ("maintainers", ids["maintainers"]), ("changes", ids["changes"])):
        for key in spread(keys, ROWS[table]):
            url = f"{t}/{table}/{q(key)}"
            group(f"{table}/{key}", [url] + (variants[(k // 18) % 4](url) if k % 18 == 9 else []))
            k += 1

    # the 404 template (its three messages) and the 403 template
    group("404", [f"{a}/nosuchdb", f"{b}/debian-archive", f"{t}/nosuchtable", f"{t}/Packages",
                  f"{t}/package", f"{b}/debian/sources", f"{t}/packages/nosuchpackage",
                  f"{t}/packages/{q(names[0])}-doc-missing", f"{t}/packages/{q(names[5])}/extra",
                  f"{t}/maintainers/0", f"{t}/maintainers/99999", f"{t}/changes/999999",
                  f"{b}/debian/changes/0", f"{t}/dependencies/999999"], "E3")
    group("403", [f"{t}/conffiles", f"{t}/conffiles/1", f"{t}/conffiles/2", f"{b}/debian/conffiles",
                  f"{t}/conffile_report", f"{a}/-/permissions", f"{b}/-/permissions"], "E3")
    sqlite_web_truth(db, web, truth)
    db.close()
    return truth


@contextlib.contextmanager
def build(args: argparse.Namespace, tmp: str) -> Iterator[appbench.Truth]:
    exe, sqlite_web = ensure_packages()
    os.makedirs(tmp, exist_ok=True)
    db_path = os.path.join(tmp, "debian.db")
    if os.path.exists(db_path):
        os.remove(db_path)
    build_db(db_path)
    meta = os.path.join(tmp, "metadata.json")
    with open(meta, "w", encoding="utf-8") as fh:
        json.dump(METADATA, fh, indent=1)
    with contextlib.ExitStack() as stack:
        bases = []
        for name in ("a", "b"):
            port = servers.free_port()
            argv = [exe, "serve", db_path, "-m", meta, "-h", "127.0.0.1", "-p", str(port)]
            bases.append(stack.enter_context(servers.app_server(
                argv, port, os.path.join(tmp, f"datasette-{name}.log"), "/debian")))
        port = servers.free_port()
        web = stack.enter_context(servers.app_server(
            [sqlite_web, "--no-browser", "--read-only", "-H", "127.0.0.1", "-p", str(port), db_path], port,
            os.path.join(tmp, "sqlite-web.log"), "/"))
        yield build_truth(db_path, *bases, web)


if __name__ == "__main__":
    sys.exit(appbench.main("datasette", build, __doc__))
