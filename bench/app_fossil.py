"""Clusters and labels of a real crawl of a real Fossil: check-ins, tickets, wiki pages, files.

    python bench/app_fossil.py [--tickets 240] [--checkins 140] [--check] [-v] [--keep DIR]

Installs Debian's ``fossil`` (2.21) if it is missing and builds a Fossil repository in the
temporary directory from this repository's real history (``git fast-export`` of a single-branch
clone into ``fossil import --git``: a few hundred check-ins), named "Bench Fossil"; serves it with
``fossil server --localhost`` on 127.0.0.1, plus a second ``fossil server`` on another port over
the same repository file (a mirror). Anonymous users have Fossil's default capabilities (read,
no hyperlinks until the browser proves itself human, tickets and wiki read-only). Fed through
Fossil's own command line:

- ``--tickets`` tickets (``fossil ticket add``, dated over the last 45 days with
  ``--date-override``, by the uploader as a Fossil user), each from one entry of a Debian changelog
  installed here (``/usr/share/doc/*/changelog.Debian.gz``, twelve source packages as subsystems):
  the entry is the description (most are one sentence), its first words the title, the upload's
  urgency the priority, its version "found in". Three in five are closed as fixed with the comment
  "Fixed in <package> <version> (<distribution>)." (``fossil ticket set ... icomment``); some others
  carry a second entry of the same upload as a comment;
- wiki pages (``fossil wiki create``, Markdown): articles from the true texts of
  ``../shared/data/article-extraction-benchmark`` (real prose), a third of them in two versions (the
  first with 60 % of the text, ``fossil wiki commit``), and the home page, a wiki page named after
  the project that links to them.

The truth (``{url: (group, label)}``, content label ``None``):

- one group per check-in (``/info/<10-hex>``: most of the chosen commits change 20 lines or fewer,
  the rest up to 300; the page is mostly the graph of neighbouring check-ins and the file list),
  per ticket (``/tktview/<10-hex>``), per wiki page, per directory of ten entries or more
  (``/dir``), per file (``/file?name=F&ci=tip``), per file history (``/finfo``), per document
  (``/doc/tip/F``), per timeline (the default, tickets, wiki, all events, a day of check-ins, a
  month of tickets), the ticket report, the wiki list, statistics and the site map;
- the variants, each in its page's group: the mirror port; the full 64-hex hash of a check-in, a
  6-hex prefix and the ``/vinfo/`` and ``/ci/`` forms of ``/info/``; the full 40-hex ticket id and
  ``/tktview?name=``; ``utm_source`` on a ticket; ``/wiki/Name`` for ``/wiki?name=Name``; a document
  at ``tip``, ``trunk`` and its check-in's hash; ``/timeline?n=50`` (the default); the home page as
  ``/`` (302), ``/index``, ``/home`` and its wiki page;
- special pages: Fossil's not-found page (``/info`` of a missing hash "No such object", ``/file``
  and ``/finfo`` of a missing file "No such file", both status 200, and ``/doc`` of a missing
  document, status 404: one page template of one line) one group, ``E3``; the server's bare 404
  ("Page not found: ...") for unknown paths one group, ``E3``; a missing wiki page (200, "Empty
  Page") one group, ``E3``; the login page with different ``g=`` return-to paths, on both ports,
  and the pages that redirect to it (``/setup``, ``/tktnew``, ``/forum``) one group, ``L1``.

Arguable, so not counted: Fossil's not-found page of ``/finfo`` with the others of its group
(:func:`arguable`). Left out as arguable: the view of a missing ticket (``/tktview/<unknown id>``:
status 200, the
ticket page with every field empty and the hash "Deleted", no error word: a "not found" to a person,
but not a soft 404 by the spec's words, and a page of the ticket template to websim), a directory
listing of a missing directory (an empty list), the history of a missing wiki page (an empty list),
a timeline with no event (a month without check-ins), a timeline around a check-in (``?c=``: the
same entries under another heading when it is the newest), ``/file`` and ``/doc`` of one Markdown
file (one text in two views), diffs, 400 pages (``/file`` at a missing check-in: their label is
neither E3 nor content by the spec), downloads (tarball, zip), and the pages whose own text is under
200 characters (thin by the spec's measure, a page of its own to a person): a wiki page's history of
two versions, the branch list (one branch), the tag list, the report list (one report), a directory
of a few files. Fossil answers no page with a 5xx here, so the set has no E1. The forum needs a
login, so it is empty and only its redirect to the login page is crawled. Last line (see
``bench/appbench.py``):

    set=fossil urls=N groups=G dup_share=D missing=M precision=P recall=R f1=F false_pairs=K
    missed_pairs=K lost=L rules=right/special (pct) content_as_junk=J
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import datetime as dt
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from typing import Dict, Iterator, List, Optional

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import appbench  # noqa: E402
import appdata  # noqa: E402

from scrapy_websim.testing import servers  # noqa: E402

NAME = "fossil"
PROJECT = "Bench Fossil"
#: source packages whose changelogs give the tickets: one Fossil subsystem each
SUBSYSTEMS = ("nginx", "git", "curl", "sqlite3", "openssl", "systemd", "apache2", "lighttpd",
              "python3.11", "php8.2", "redis", "chromium")
PRIORITY = {"critical": "Immediate", "emergency": "Immediate", "high": "High", "medium": "Medium", "low": "Low"}


def ensure_packages() -> None:
    if shutil.which("fossil"):
        return
    print("installing fossil", flush=True)
    subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", "fossil"], check=True,
                   stdout=subprocess.DEVNULL, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))


def fossil(repo: str, *argv: str, user: str = "admin", when: float = 0.0, stdin: Optional[str] = None) -> str:
    """``fossil ARGV -R REPO`` as ``user`` (none: ``""``), dated ``when`` (a Unix time) if given."""
    extra = ["-U", user] if user else []
    if when:
        extra += ["--date-override", time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(when))]
    proc = subprocess.run(["fossil", *argv, "-R", repo, *extra], input=stdin, capture_output=True,
                          text=True, check=False, env=dict(os.environ, USER="admin"))
    if proc.returncode != 0:
        raise RuntimeError(f"fossil {' '.join(argv)[:80]} failed: {proc.stdout[-800:]} {proc.stderr[-800:]}")
    return proc.stdout


def ticket_fields(entry: appdata.Entry, text: str) -> List[str]:
    kind = ("Build_Problem" if re.search(r"(?i)\b(ftbfs|build|compile|linker)\b", text)
            else "Documentation" if re.search(r"(?i)\b(doc|docs|documentation|manpage|man page|readme)\b", text)
            else "Feature_Request" if re.match(r"(?i)(add|support|enable|new|provide|introduce)", text)
            else "Code_Defect")
    severity = ("Critical" if "CVE-" in text else "Cosmetic" if re.search(r"(?i)(typo|spelling|lintian)", text)
                else "Important")
    return ["title", appdata.summary_of(text), "comment", text, "type", kind, "status", "Open",
            "subsystem", entry.source, "priority", PRIORITY.get(entry.urgency, "Medium"), "severity", severity,
            "foundin", entry.version, "mimetype", "text/x-fossil-plain"]


def add_tickets(repo: str, n: int, now: float) -> List[dict]:
    """``n`` tickets from the changelogs, dated over the last 45 days; ``[{uuid, ...}]`` in order."""
    chosen, _ = appdata.changelog_items(SUBSYSTEMS, n)
    users = sorted({e.email.split("@")[0].lower() for e, _ in chosen})
    for user in users:
        fossil(repo, "user", "new", user, "", os.urandom(6).hex(), user="")
    out = []
    span = 45 * 86400
    for i, (entry, bullets) in enumerate(chosen):
        created = now - span + i * span / max(1, len(chosen)) - 3600
        user = entry.email.split("@")[0].lower()
        said = fossil(repo, "ticket", "add", *ticket_fields(entry, bullets[0]), user=user, when=created)
        uuid = re.search(r"\b([0-9a-f]{40})\b", said)
        if not uuid:
            raise RuntimeError(f"no ticket id in {said!r}")
        changes = 0
        if i % 7 == 3 and len(bullets) > 1:
            fossil(repo, "ticket", "set", uuid.group(1), "icomment", bullets[1], "login", user, "username", user,
                   "mimetype", "text/x-fossil-plain", user=user, when=created + 1800)
            changes += 1
        if i % 5 < 3:
            fossil(repo, "ticket", "set", uuid.group(1), "status", "Closed", "resolution", "Fixed", "icomment",
                   f"Fixed in {entry.source} {entry.version} ({entry.dist}).", "login", user, "username", user,
                   "mimetype", "text/x-fossil-plain", user=user, when=created + 5400)
            changes += 1
        out.append({"uuid": uuid.group(1), "user": user, "subsystem": entry.source, "changes": changes})
    return out


def markdown(title: str, body: str, share: float) -> str:
    def clean(para: str) -> str:
        para = re.sub(r"[\[\]<>`*_\\]", " ", para)
        return re.sub(r"^[#>+\-=|0-9. ]+", "", para).strip()

    out = [f"# {title}"]
    for i, para in enumerate(p for p in map(clean, appdata.paragraphs(body, share)) if p):
        if i and i % 4 == 0:
            out.append(f"## Part {i // 4 + 1}")
        out.append(para)
    return "\n\n".join(out) + "\n"


def add_wiki(repo: str, tmp: str, n: int) -> List[tuple]:
    """``n`` article pages (a third in two versions) and the home page; ``[(name, versions)]``."""
    pages = []
    used: set = set()
    for i, (title, body) in enumerate(appdata.articles(n)):
        name = title
        while name in used:
            name += " bis"
        used.add(name)
        versions = (0.6, 1.0) if i % 3 == 0 else (1.0,)
        for k, share in enumerate(versions):
            path = os.path.join(tmp, f"wiki-{i}-{k}.md")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(markdown(title, body, share))
            fossil(repo, "wiki", "create" if k == 0 else "commit", name, path, "--mimetype", "text/x-markdown")
        pages.append((name, len(versions)))
    home = os.path.join(tmp, "home.md")
    with open(home, "w", encoding="utf-8") as fh:
        fh.write(f"# {PROJECT}\n\nThe project's check-ins, its tickets and these articles:\n\n"
                 + "".join(f"* [{name}](/wiki?name={urllib.parse.quote_plus(name)})\n" for name, _ in pages))
    fossil(repo, "wiki", "create", PROJECT, home, "--mimetype", "text/x-markdown")
    return pages


def setup(tmp: str, n_tickets: int, n_articles: int) -> dict:
    os.makedirs(tmp)
    clone = appdata.clone(os.path.join(tmp, "clone"))
    repo = os.path.join(tmp, "bench.fossil")
    gitmarks, fossilmarks = os.path.join(tmp, "git.marks"), os.path.join(tmp, "fossil.marks")
    export = subprocess.Popen(["git", "-C", clone, "fast-export", "--all", f"--export-marks={gitmarks}"],
                              stdout=subprocess.PIPE)
    proc = subprocess.run(["fossil", "import", "--git", "--admin-user", "admin", "--export-marks", fossilmarks, repo],
                          stdin=export.stdout,
                          capture_output=True, text=True, check=False, env=dict(os.environ, USER="admin"))
    export.wait()
    if proc.returncode != 0 or export.returncode != 0:
        raise RuntimeError(f"fossil import failed: {proc.stdout[-800:]} {proc.stderr[-800:]}")
    fossil(repo, "sqlite3", user="", stdin="REPLACE INTO config(name, value, mtime) "
                                           f"VALUES('project-name', '{PROJECT}', now());\n")
    fossil_of = marks(fossilmarks)
    checkins = {sha: fossil_of[mark] for mark, sha in marks(gitmarks).items() if mark in fossil_of}
    now = time.time()
    tickets = add_tickets(repo, n_tickets, now)
    pages = add_wiki(repo, tmp, n_articles)
    return {"repo": repo, "clone": clone, "tickets": tickets, "pages": pages, "checkins": checkins}


@contextlib.contextmanager
def fossil_server(repo: str, log: str) -> Iterator[str]:
    port = servers.free_port()
    with open(log, "ab") as out:
        proc = subprocess.Popen(["fossil", "server", "--localhost", "--port", str(port), repo], stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            if proc.poll() is not None:
                raise RuntimeError(f"fossil server exited with {proc.returncode}")
            with contextlib.suppress(OSError):
                urllib.request.urlopen(base + "/index", timeout=5).read()
                break
            time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def marks(path: str) -> Dict[str, str]:
    """``{mark: hash}`` of a marks file (git's ``:MARK SHA1``, Fossil's ``cRID :MARK HASH``)."""
    out = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 2:
                out[parts[-2]] = parts[-1]
    return out


def truth_of(site: dict, base: str, mirror: str, n_checkins: int) -> appbench.Truth:
    truth: appbench.Truth = {}

    add = appbench.truth_adder(truth, base)

    q = urllib.parse.quote_plus
    # check-ins: Fossil's hash of each chosen git commit
    chosen = [site["checkins"][h] for h in appdata.commits(site["clone"], n_checkins) if h in site["checkins"]]
    for u in chosen:
        add(f"checkin:{u}", None, f"/info/{u[:10]}")
    for k, u in enumerate(chosen[2::15]):
        add(f"checkin:{u}", None, (f"/info/{u}", f"/vinfo/{u[:10]}", f"{mirror}/info/{u[:10]}", f"/info/{u[:6]}",
                                   f"/ci/{u[:10]}")[k % 5])

    # tickets
    tickets = site["tickets"]
    for t in tickets:
        add(f"ticket:{t['uuid']}", None, f"/tktview/{t['uuid'][:10]}")
    for k, t in enumerate(tickets[4::30]):
        u = t["uuid"]
        add(f"ticket:{u}", None, (f"/tktview/{u}", f"{mirror}/tktview/{u[:10]}", f"/tktview?name={u[:10]}",
                                  f"/tktview/{u[:10]}?utm_source=newsletter&utm_medium=email")[k % 4])
    add("report:1", None, "/rptview?rn=1")

    # wiki: the home page, the articles, their histories
    add("home", None, "/", "/index", "/home", f"/wiki?name={q(PROJECT)}")
    for k, (name, versions) in enumerate(site["pages"]):
        add(f"wiki:{name}", None, f"/wiki?name={q(name)}")
        if k % 6 == 1:
            variants = (f"/wiki/{urllib.parse.quote(name)}", f"{mirror}/wiki?name={q(name)}")
            add(f"wiki:{name}", None, variants[k // 6 % 2])
    add("wcontent", None, "/wcontent")

    # files and documents
    files = appdata.files(site["clone"])
    entries = collections.Counter(os.path.dirname(p) for p in {os.path.dirname(f) for f in files} | set(files))
    add("dir:/", None, "/dir?ci=tip")
    for d in [d for d in sorted(entries) if d and d.count("/") <= 1 and entries[d] >= 10][:10]:
        add(f"dir:{d}", None, f"/dir?ci=tip&name={q(d)}")
    sources = ["setup.cfg", "pyproject.toml", "scripts/setup.sh"]
    sources += [f for f in files if f.startswith("bench/") and f.endswith(".py")][:6]
    sources += [f for f in files if f.startswith("scrapy_websim/") and f.endswith(".py")][:6]
    for f in sources:
        if f in files:
            add(f"file:{f}", None, f"/file?name={q(f)}&ci=tip")
    for f in ("README.md", "scrapy_websim/config.py", "docs/settings.md"):
        if f in files:
            add(f"finfo:{f}", None, f"/finfo?name={q(f)}")
    head = subprocess.run(["git", "-C", site["clone"], "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    tip = site["checkins"][head][:10]
    docs = ["README.md"] + [f for f in files if f.startswith("docs/") and f.endswith(".md")][:8]
    for k, f in enumerate(docs):
        add(f"doc:{f}", None, f"/doc/tip/{f}")
        if k < 3:
            add(f"doc:{f}", None, (f"/doc/trunk/{f}", f"/doc/{tip}/{f}", f"{mirror}/doc/tip/{f}")[k])

    # timelines and lists
    add("timeline", None, "/timeline", "/timeline?n=50")
    add("timeline:tickets", None, "/timeline?y=t")
    add("timeline:wiki", None, "/timeline?y=w")
    add("timeline:all", None, "/timeline?y=all")
    days = subprocess.run(["git", "-C", site["clone"], "log", "--format=%cd", "--date=format:%Y-%m-%d"],
                          capture_output=True, text=True, check=True).stdout.split()
    for day, _ in collections.Counter(days).most_common(3):
        add(f"timeline:{day}", None, f"/timeline?ymd={day}")
    month = (dt.date.today() - dt.timedelta(days=30)).strftime("%Y-%m")  # the tickets span 45 days
    add(f"timeline:tickets:{month}", None, f"/timeline?y=t&ym={month}")
    for name in ("stat", "sitemap"):
        add(name, None, f"/{name}")

    # special pages
    add("fossil-notfound", "E3", "/info/deadbeef0000", "/info/0123456789abcdef", f"{mirror}/info/feedface99",
        "/file?name=nosuch.py&ci=tip", "/file?name=docs%2Fmissing.md&ci=tip", "/finfo?name=nosuch.py",
        "/doc/tip/nosuch.md", "/doc/trunk/docs/missing.md")
    add("server-404", "E3", "/nosuch", "/wp-login.php", "/admin", "/.env", f"{mirror}/nosuch/page")
    # the view of a missing ticket is left out: no error word (see the docstring)
    add("wiki-empty", "E3", "/wiki?name=NoSuchPage", "/wiki?name=Sandbox", f"/wiki?name={q('Release notes')}")
    add("login", "L1", "/login", "/login?g=/timeline", "/login?g=/wcontent", "/setup", "/tktnew", "/forum",
        f"{mirror}/login?g=/timeline")
    return truth


def arguable(truth: appbench.Truth) -> appbench.Arguable:
    """The pairs of the truth that are not counted (``bench/appbench.py``): Fossil's not-found
    page of ``/finfo`` with the others of that group. It is the same error page (the frame, "No
    such file: ...") with what the ``finfo`` view adds around it: its view selector (a form), a
    notice to anonymous visitors ("Many hyperlinks are disabled") and their script, 25 % more
    HTML than the others. One template to a person reading it; two by the spec's E3 rule, which
    groups error pages by fingerprint with HTML lengths within 20 %. Not guessed either way."""
    group = [u for u, (g, _) in truth.items() if g == "fossil-notfound"]
    finfo = [u for u in group if urllib.parse.urlsplit(u).path == "/finfo"]
    return {(min(a, b), max(a, b)) for a in finfo for b in group if b != a}


@contextlib.contextmanager
def build(args: argparse.Namespace, tmp: str) -> Iterator[appbench.Truth]:
    ensure_packages()
    site = setup(tmp, args.tickets, args.articles)
    with fossil_server(site["repo"], os.path.join(tmp, "server.log")) as base, \
            fossil_server(site["repo"], os.path.join(tmp, "server-mirror.log")) as mirror:
        yield truth_of(site, base, mirror, args.checkins)


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tickets", type=int, default=240, help="tickets from Debian changelog entries")
    parser.add_argument("--checkins", type=int, default=140, help="check-ins crawled (small diffs first)")
    parser.add_argument("--articles", type=int, default=24, help="wiki pages from real articles")


if __name__ == "__main__":
    sys.exit(appbench.main(NAME, build, __doc__, add_args, arguable=arguable))
