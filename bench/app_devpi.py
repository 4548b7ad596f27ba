"""Clusters and labels of a crawl of a real devpi package index: releases, projects, indexes, search.

    python bench/app_devpi.py [--releases 240] [--check] [-v] [--keep DIR]

Held aside: run once the design is settled, its first figures reported as they came.

Runs devpi (PyPI ``devpi-server`` and its web interface ``devpi-web``, a private Python package
index) from a virtual environment of its own (``$TMPDIR/websim-bench-devpi``, installed with pip on
first use or by ``scripts/setup.sh bench``). ``devpi-init`` makes a server directory without the
PyPI mirror, ``devpi-server --role primary --offline-mode`` serves it on 127.0.0.1, and a second
``devpi-server`` on another port is its replica (``--primary-url``, the same secret file): a mirror
that copies everything the primary holds and serves the same pages. The content goes through
devpi's own HTTP interface, as ``devpi`` and ``twine`` send it (user and index creation, the
``submit`` action with a release's metadata, the ``file_upload`` action with a small source archive):

- five users (teams), each with one index (``TEAM/stable``) of a few projects; each project a
  Debian source package, each release one upload of its Debian changelog installed here
  (``appdata.changelog_items``, ``--releases`` in all, the epoch dropped from the version): its
  first item the summary, its items the description, its uploader the author.

devpi-web's pages carry a hidden search help of some 1,300 characters on every page: a release's
page is that help, a metadata table and its one to four sentences; releases differ in a version,
an uploader's name and a sentence.

The truth (``{url: (group, label)}``, content label ``None``):

- one group per release page (``/TEAM/stable/NAME/VERSION``), per project page (the versions table,
  ``/TEAM/stable/NAME``), per index page (``/TEAM/stable``: the newest release of each project), and
  the search help (``/+searchhelp``);
- the variants, each in its page's group: the replica's port; a trailing slash and the name in
  capitals (devpi's 302 to the page); ``NAME/latest`` (devpi-web serves the newest release's page
  there: which one is read from the project page's "Latest version on stage is"); a tracking
  parameter (``utm_source``, which devpi ignores);
- special pages: devpi-web's "Not Found" page (404, "The following resource could not be found"
  and a sentence naming the missing user, index, project or version), one group, ``E3``.

Left out as arguable: the root page and the user pages (a handful of links under the hidden help:
thin or content?), the simple index pages (a list of links for tools; thin for a person), the
search results (devpi-web indexes one release per project: a result page is a line or two, thin
or content?; a search that matches nothing, an answer or a soft 404?), ``/+status`` (counters that change while
the crawl runs). devpi has no login page (the client logs in through the API). The URL list is
shuffled; the crawl is websim's shipped defaults. Last line (see ``bench/appbench.py``):

    set=devpi urls=N groups=G dup_share=D missing=M precision=P recall=R f1=F false_pairs=K
    missed_pairs=K lost=L rules=right/special (pct) content_as_junk=J
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.parse
import urllib.request
from typing import Dict, Iterator, List, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import appbench  # noqa: E402
import appdata  # noqa: E402
from app_roundup import check_texts  # noqa: E402

from scrapy_websim.testing import servers  # noqa: E402

NAME = "devpi"
VENV = os.path.join(tempfile.gettempdir(), "websim-bench-devpi")
DEVPI = ("devpi-server==6.20.3", "devpi-web==5.1.1")
#: team -> its projects (Debian source packages)
TEAMS = (
    ("web", ("nginx", "apache2", "lighttpd", "curl")),
    ("security", ("openssl", "openssh")),
    ("core", ("systemd", "coreutils", "util-linux", "vim")),
    ("lang", ("python3.11", "php8.2", "perl")),
    ("data", ("sqlite3", "redis", "mariadb")),
)
INDEX = "stable"
PASSWORD = "bench-secret"


def venv_bin(name: str) -> str:
    return os.path.join(VENV, "bin", name)


def ensure_devpi() -> None:
    if os.path.exists(venv_bin("devpi-server")):
        return
    appbench.pip_install(VENV, DEVPI)


def normalized(name: str) -> str:
    """A project name as devpi keeps it in its addresses (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


# -- content -----------------------------------------------------------------------------------------------------


def releases(n: int) -> List[dict]:
    """``n`` releases from the changelogs (see the module docstring), each version once per project."""
    team_of = {s: team for team, members in TEAMS for s in members}
    chosen, _ = appdata.changelog_items(list(team_of), n)
    out, seen = [], set()
    for entry, items in chosen:
        version = entry.version.split(":", 1)[-1]
        if (entry.source, version) in seen:
            continue
        seen.add((entry.source, version))
        out.append({"team": team_of[entry.source], "name": entry.source, "version": version,
                    "summary": appdata.summary_of(items[0]), "description": "\n\n".join(items[:4]),
                    "author": entry.author, "author_email": entry.email,
                    "keywords": f"{entry.dist} urgency-{entry.urgency}",
                    "home_page": f"https://tracker.debian.org/pkg/{entry.source}",
                    "uploaded": entry.date.timestamp()})
    return out


def sdist(rel: dict) -> Tuple[str, bytes]:
    """A small source archive of a release: its PKG-INFO."""
    base = f"{rel['name']}-{rel['version']}"
    info = (f"Metadata-Version: 2.1\nName: {rel['name']}\nVersion: {rel['version']}\nSummary: {rel['summary']}\n"
            f"Author: {rel['author']}\n\n{rel['description']}\n").encode()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        ti = tarfile.TarInfo(f"{base}/PKG-INFO")
        ti.size, ti.mtime = len(info), 1700000000
        tar.addfile(ti, io.BytesIO(info))
    return f"{base}.tar.gz", buf.getvalue()


def export(rels: List[dict], dest: str) -> None:
    """``rels`` as a devpi export (``dataindex.json`` and the files) for ``devpi-import``: the
    teams' users and indexes, each release's metadata and its source archive, dated by its upload."""
    indexes: Dict[str, dict] = {}
    for team, _ in TEAMS:
        indexes[f"{team}/{INDEX}"] = {
            "indexconfig": {"type": "stage", "bases": [], "volatile": True, "acl_upload": [team],
                            "acl_toxresult_upload": [":ANONYMOUS:"], "mirror_whitelist": [],
                            "mirror_whitelist_inheritance": "intersection"},
            "projects": {}, "files": []}
    for rel in rels:
        index = indexes[f"{rel['team']}/{INDEX}"]
        meta = {"metadata_version": "2.1", "platform": [], "classifiers": [], "download_url": "", "license": "",
                "maintainer": "", "maintainer_email": "", "comment": "", "provides": [], "requires": [],
                "obsoletes": [], "supported_platform": [], "requires_dist": [], "requires_python": "",
                "requires_external": [], "provides_dist": [], "obsoletes_dist": [], "project_urls": [],
                **{k: rel[k] for k in ("name", "version", "summary", "description", "author", "author_email",
                                       "keywords", "home_page")}}
        index["projects"].setdefault(rel["name"], {})[rel["version"]] = meta
        filename, content = sdist(rel)
        relpath = f"{rel['team']}/{INDEX}/{rel['name']}/{rel['version']}/{filename}"
        os.makedirs(os.path.dirname(os.path.join(dest, relpath)), exist_ok=True)
        with open(os.path.join(dest, relpath), "wb") as fh:
            fh.write(content)
        digest = hashlib.sha256(content).hexdigest()
        when = time.gmtime(rel["uploaded"])
        index["files"].append({
            "type": "releasefile", "projectname": rel["name"], "version": rel["version"], "relpath": relpath,
            "entrymapping": {"last_modified": time.strftime("%a, %d %b %Y %H:%M:%S GMT", when),
                             "hash_spec": f"sha256={digest}", "hashes": {"sha256": digest},
                             "project": rel["name"], "version": rel["version"]},
            "log": [{"what": "upload", "who": rel["team"], "when": list(when[:6]), "dst": f"{rel['team']}/{INDEX}"}]})
    users = {team: {"username": team, "email": f"{team}@bench.invalid", "created": "2023-06-10T12:00:00Z"}
             for team, _ in TEAMS}
    with open(os.path.join(dest, "dataindex.json"), "w", encoding="utf-8") as fh:
        json.dump({"users": users, "indexes": indexes, "dumpversion": "2",
                   "pythonversion": list(sys.version_info), "devpi_server": DEVPI[0].split("==")[1]}, fh)


@contextlib.contextmanager
def devpi_server(tmp: str, name: str, secret: str, extra: List[str]) -> Iterator[str]:
    port = servers.free_port()
    argv = [venv_bin("devpi-server"), "--serverdir", os.path.join(tmp, name), "--host", "127.0.0.1",
            "--port", str(port), "--secretfile", secret, "--threads", "8", *extra]
    with servers.app_server(argv, port, os.path.join(os.path.dirname(tmp), f"{name}.log"), "/+api",
                            timeout=240) as base:
        yield base


def status(base: str) -> dict:
    req = urllib.request.Request(base + "/+status", headers={"Accept": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read())["result"]


def wait_indexed(base: str, rels: List[dict], timeout: float = 300) -> None:
    """Until ``base`` has run the events of every import (devpi-web indexes the releases for its
    search then) and its search index queue is empty."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = status(base)
        metrics = {m[0]: m[2] for m in info.get("metrics", [])}
        if info.get("event-serial") == info.get("serial") and not metrics.get("devpi_web_whoosh_index_queue_size"):
            last = rels[-1]
            url = f"{base}/{last['team']}/{INDEX}/{normalized(last['name'])}/{urllib.parse.quote(last['version'])}"
            if servers.fetch(url).status == 200:
                return
        time.sleep(1)
    raise RuntimeError(f"devpi at {base} did not index the releases within {timeout:.0f} s")


def setup(tmp: str, rels: List[dict]) -> str:
    """A devpi server directory in ``tmp/primary`` holding ``rels`` (``devpi-import`` of an export
    written here; the search index is built when the server starts), its copy in ``tmp/mirror``,
    and the secret file both servers use."""
    os.makedirs(tmp)
    secret = os.path.join(tmp, "secret")
    subprocess.run([venv_bin("devpi-gen-secret"), "--secretfile", secret], check=True, capture_output=True)
    dump = os.path.join(tmp, "export")
    export(rels, dump)
    proc = subprocess.run([venv_bin("devpi-import"), "--serverdir", os.path.join(tmp, "primary"), "--no-root-pypi",
                           "--root-passwd", PASSWORD, "--no-events", dump], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"devpi-import failed: {proc.stdout[-1500:]} {proc.stderr[-1500:]}")
    shutil.copytree(os.path.join(tmp, "primary"), os.path.join(tmp, "mirror"), symlinks=True)
    return secret


# -- the truth ---------------------------------------------------------------------------------------------------


def latest_versions(base: str) -> Dict[Tuple[str, str], str]:
    """(team, project) -> the version devpi-web names the latest on the project's page."""
    out = {}
    for team, members in TEAMS:
        for name in members:
            html = servers.fetch(f"{base}/{team}/{INDEX}/{normalized(name)}").text
            m = re.search(r"Latest version on stage is:\s*<a[^>]*>([^<]+)</a>", html)
            if not m:
                raise RuntimeError(f"no latest version on {team}/{INDEX}/{name}'s page")
            out[(team, normalized(name))] = m.group(1).strip()
    return out


def truth_of(rels: List[dict], base: str, mirror: str) -> appbench.Truth:
    truth: appbench.Truth = {}

    add = appbench.truth_adder(truth, base)

    latest = latest_versions(base)
    q = urllib.parse.quote
    for k, r in enumerate(rels):
        name = normalized(r["name"])
        path = f"/{r['team']}/{INDEX}/{name}/{q(r['version'])}"
        urls = [path]
        variant = k % 11
        if variant == 1:
            urls.append(path + "/")
        elif variant == 3:
            urls.append(f"/{r['team']}/{INDEX}/{name.upper()}/{q(r['version'])}")
        elif variant == 5:
            urls.append(mirror + path)
        elif variant == 7:
            urls.append(path + "?utm_source=newsletter&utm_medium=email")
        if latest[(r["team"], name)] == r["version"]:
            urls.append(f"/{r['team']}/{INDEX}/{name}/latest")
        add(f"release:{r['team']}/{name}/{r['version']}", None, *urls)
    for t, (team, members) in enumerate(TEAMS):
        for p, name in enumerate(members):
            path = f"/{team}/{INDEX}/{normalized(name)}"
            urls = [path, *([mirror + path] if p == 0 else []), *([path + "/"] if p == 1 else []),
                    *([f"/{team}/{INDEX}/{name.capitalize()}"] if p == 2 else [])]
            if name != normalized(name):
                urls.append(f"/{team}/{INDEX}/{name}")
            add(f"project:{team}/{name}", None, *urls)
        add(f"index:{team}", None, f"/{team}/{INDEX}", *([f"/{team}/{INDEX}/", mirror + f"/{team}/{INDEX}"]
                                                        if t % 2 == 0 else []))
    add("search-help", None, "/+searchhelp", mirror + "/+searchhelp")

    first = rels[0]
    name = normalized(first["name"])
    add("not-found", "E3", f"/{first['team']}/{INDEX}/{name}/99.0-1", f"/{first['team']}/{INDEX}/{name}/0.0.1",
        f"/{first['team']}/{INDEX}/no-such-project", f"/{first['team']}/{INDEX}/nginx-extras",
        f"/{first['team']}/testing", f"/{first['team']}/testing/{name}", "/nobody", "/nobody/stable",
        f"/{first['team']}/{INDEX}/{name}/latest/+doc", f"/{first['team']}/{INDEX}/+f/no/such/file.tar.gz",
        "/+login", mirror + f"/{first['team']}/{INDEX}/no-such-project", mirror + "/nobody/stable")
    return truth


def check(truth: appbench.Truth) -> str:
    """``--check``: see ``app_roundup.check_texts``, then the titles of each group of special pages
    (no crawl: plain HTTP fetches)."""
    return check_texts(NAME, truth) + "\n" + appbench.special_titles(truth)


@contextlib.contextmanager
def build(args: argparse.Namespace, tmp: str) -> Iterator[appbench.Truth]:
    ensure_devpi()
    rels = releases(args.releases)
    secret = setup(tmp, rels)
    with devpi_server(tmp, "primary", secret, ["--offline-mode"]) as base, \
            devpi_server(tmp, "mirror", secret, ["--offline-mode"]) as mirror:
        wait_indexed(base, rels)
        wait_indexed(mirror, rels)
        yield truth_of(rels, base, mirror)


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--releases", type=int, default=240, help="releases from Debian changelog uploads")


if __name__ == "__main__":
    sys.exit(appbench.main(NAME, build, __doc__, add_args, check))
