"""Clusters and labels of a real crawl of a real Trac: tickets, changesets, wiki pages, reports.

    python bench/app_trac.py [--tickets 240] [--changesets 130] [--check] [-v] [--keep DIR]

Runs Trac (PyPI ``Trac`` 1.6, Python 3) from a virtual environment of its own
(``~/.cache/scrapy-websim/trac-venv``, or ``$TRAC_VENV``; made with pip on first use, or by
``scripts/setup.sh bench``): Trac parses requests with any module named ``multipart``, and the one
PyPI's ``python-multipart`` installs makes it fail every request. Creates a Trac environment with
``trac-admin initenv`` in the temporary directory (SQLite database, its own ``trac.ini``) and
serves it with Trac's ``tracd`` on 127.0.0.1, HTTP basic authentication on ``/login`` (an htpasswd
file of one user), plus a second ``tracd`` on another port over the same environment (a mirror).
Its content, fed through Trac's own interfaces:

- the repository browser over a real git repository (``tracopt.versioncontrol.git``): a
  single-branch bare clone of this repository, a few hundred commits of real history;
- ``--tickets`` tickets saved through Trac's ticket model (``trac.ticket.model.Ticket``, what the
  web form calls), each from one entry of a Debian changelog installed here
  (``/usr/share/doc/*/changelog.Debian.gz``; each source package of ``COMPONENTS`` with ten usable
  uploads is a component: twelve on this machine): the entry is the description (most are one
  sentence), its first words the summary, the uploader the reporter, the upload's urgency the
  priority, the Debian release it went to (or the next one after its date) the milestone
  (``trac-admin milestone add``); created over the last 45 days. Three in five are closed as fixed
  by the uploader with the comment "Fixed in <package> <version> (<distribution>)."; one in five
  is accepted or assigned; one in seven carries a second entry of the same upload as a comment;
- wiki pages imported with ``trac-admin wiki import``: articles from the true texts of
  ``../shared/data/article-extraction-benchmark`` (real prose), a third of them in two versions (the
  first with 60 % of the text); a start page linking to them; Trac's own guide pages stay;
- a report whose SQL names a column the ticket table does not have (an administrator's typo): Trac
  answers "Report execution failed" with status 200; and a second repository (``legacy``) whose
  directory is gone: Trac answers its pages with a 500.

The truth (``{url: (group, label)}``, content label ``None``):

- one group per ticket, per changeset (``/changeset/<7-hex>``; most of the chosen commits change
  20 lines or fewer, the rest up to 300), per wiki page and per older wiki version
  (``?version=1``), per repository directory or file (``/browser/...``), per revision log
  (``/log/...``), per report (but 7, "My Tickets", empty for anonymous users) and per page of a
  paginated report or query, per component / milestone / type query and the security-keyword
  query, per milestone, per timeline period (``from=`` and ``daysback=`` as Trac's own "Previous
  Period" links write them), per search (three words each in a different set of 2-6 tickets), the
  roadmap, the report list, the title index, recent changes, about and preferences;
- the variants, each in its page's group: the mirror port; ``utm_source`` on a ticket; the
  trailing slash Trac redirects (``/ticket/N/`` 301, ``/wiki/Page/`` 302) or serves
  (``/changeset/H/``); the full 40-hex hash of a changeset; a ticket number with a leading zero;
  Trac's quick-jump search (``/search?q=%23N``, ``?q=changeset:H``, ``?q=wiki:Page``, 302 to the
  item); the latest version made explicit (``/ticket/N?version=<last>``, ``/wiki/P?version=<last>``,
  the same text under a "Version N" line); default parameters made explicit (``/report/1?page=1``,
  ``/query?status=!closed&order=priority``, ``authors=`` on ``/timeline?daysback=30``); the start
  page as ``/``, ``/wiki`` and ``/wiki/WikiStart``;
- special pages: Trac's 404 page (missing tickets, changesets, repository paths, wiki pages,
  milestones, reports, attachments and unknown paths: one ``error.html`` template that names the
  missing item) is ONE group, ``E3``; its 403 page (``TICKET_CREATE`` / ``WIKI_MODIFY`` / ...
  "privileges are required", anonymous users' permissions are Trac's defaults) one group, ``E3``;
  the broken report (``/report/N`` and ``?page=1``) one group, ``E3`` (an error message served with
  200); the ``legacy`` repository's 500 pages one group, ``E1``; ``/login`` with different
  ``referer=`` return-to URLs, on both ports (tracd's 401 with ``WWW-Authenticate``), one group,
  ``L1``.

Left out as arguable: ``/timeline`` without ``daysback=`` (it shows as many days as the browser
session's last timeline did: Trac keeps that in the session, so its text depends on the crawl
order), a report or query sorted by another column (the same rows in another order),
two queries whose filters differ but whose rows are the same (a component whose every ticket one
uploader reported, and that uploader's query), an empty query, report or search, a wiki page's
history of two versions (its own text is under 200 characters: thin by the spec's measure, a page
of its own to a person), the diff of two wiki versions, a query page past the last page (Trac
answers with the last page), a timeline period with no events, a ticket at an older version, a
file at an older revision (the same text when the file did not change), 400 pages
(``?version=abc``: their label is neither E3 nor content by the spec). A missing wiki page is
Trac's 404 for anonymous users (only a user with ``WIKI_CREATE`` gets the "create this page"
view), so it is in the 404 group.
Last line (see ``bench/appbench.py``):

    set=trac urls=N groups=G dup_share=D missing=M precision=P recall=R f1=F false_pairs=K
    missed_pairs=K lost=L rules=right/special (pct) content_as_junk=J
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import datetime as dt
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from typing import Dict, Iterator, List, Optional, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import appbench  # noqa: E402
import appdata  # noqa: E402

from scrapy_websim.testing import servers  # noqa: E402

NAME = "trac"
#: Trac's own virtual environment (see :func:`trac_python`)
TRAC_VENV = os.environ.get("TRAC_VENV") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "scrapy-websim", "trac-venv")
#: source packages whose changelogs give the tickets: one Trac component each
COMPONENTS = ("nginx", "git", "curl", "sqlite3", "openssl", "systemd", "apache2", "lighttpd",
              "python3.11", "php8.2", "redis", "chromium")
PRIORITY = {"critical": "critical", "emergency": "blocker", "high": "critical", "medium": "major", "low": "minor"}
START = "WikiStart"
ARTICLE_NS = "Articles"
#: Trac's own guide pages (installed by initenv) crawled as content
GUIDE = ("TracGuide", "TracTickets", "TracQuery", "TracTimeline", "TracBrowser", "TracChangeset",
         "TracWiki", "TracReports")
BROKEN_REPORT = ("Tickets by sprint", "SELECT id AS ticket, summary, sprint FROM ticket WHERE status <> 'closed'",
                 "Open tickets of each sprint.")

#: runs inside Trac's Python: saves the tickets through Trac's ticket model, then the broken report
FEEDER = r"""
import json, sys
from datetime import datetime, timezone
from trac.env import Environment
from trac.ticket.model import Ticket
env = Environment(sys.argv[1])
data = json.load(sys.stdin)
def when(t):
    return datetime.fromtimestamp(t, timezone.utc)
for item in data["tickets"]:
    t = Ticket(env)
    for k, v in item["fields"].items():
        t[k] = v
    tid = t.insert(when=when(item["time"]))
    for change in item["changes"]:
        for k, v in change.get("fields", {}).items():
            t[k] = v
        t.save_changes(change["author"], change["comment"], when=when(change["time"]))
    assert tid == item["id"], (tid, item["id"])
with env.db_transaction as db:
    db("INSERT INTO report (author, title, query, description) VALUES (%s, %s, %s, %s)", data["report"])
    print(len(data["tickets"]), "tickets, report", db("SELECT max(id) FROM report")[0][0])
"""


def trac_python() -> str:
    """The Python of Trac's own virtual environment (``TRAC_VENV``), made with pip on first use.
    Trac runs apart from the crawler's environment: Trac picks any module named ``multipart``
    for its request parsing, and the one of PyPI's ``python-multipart`` (a web framework's
    dependency) breaks every request."""
    python = os.path.join(TRAC_VENV, "bin", "python")
    probe = [python, "-c", "import trac, sys; sys.exit(trac.__version__ < '1.6')"]
    if os.path.exists(python) and subprocess.run(probe, capture_output=True, check=False).returncode == 0:
        return python
    print(f"installing Trac (pip) in {TRAC_VENV}", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", TRAC_VENV], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", "Trac>=1.6"], check=True)
    return python


def admin(env: str, *argv: str, stdin: Optional[str] = None) -> str:
    """``trac-admin ENV ...`` (commands read from ``stdin`` when no argument is given)."""
    proc = subprocess.run([trac_python(), "-m", "trac.admin.console", env, *argv], input=stdin,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0 or "Error" in proc.stderr:
        raise RuntimeError(f"trac-admin {' '.join(argv)[:80]} failed: {proc.stdout[-800:]} {proc.stderr[-1500:]}")
    return proc.stdout


# -- content ---------------------------------------------------------------------------------------------------


def tickets(n: int, now: float) -> Tuple[List[dict], List[str]]:
    """``n`` tickets from the changelogs, spread over the components and the last 45 days; the
    components that gave some."""
    chosen, components = appdata.changelog_items(COMPONENTS, n)
    out = []
    span = 45 * 86400
    for i, (entry, bullets) in enumerate(chosen):
        created = now - span + i * span / max(1, len(chosen)) - 3600
        user = entry.email.split("@")[0].lower()
        btype = ("defect" if re.match(r"(?i)(fix|correct|avoid|don't|do not|prevent|handle)", bullets[0])
                 else "enhancement" if re.match(r"(?i)(add|support|enable|new|provide|introduce)", bullets[0])
                 else "task")
        fields = {"summary": appdata.summary_of(bullets[0]), "description": bullets[0], "reporter": user,
                  "component": entry.source, "milestone": appdata.release_of(entry), "type": btype,
                  "priority": PRIORITY.get(entry.urgency, "major"), "status": "new",
                  "keywords": "security" if "CVE-" in bullets[0] else ""}
        changes = []
        if i % 7 == 3 and len(bullets) > 1:
            changes.append({"author": user, "comment": bullets[1], "time": created + 1800})
        if i % 5 < 3:
            changes.append({"author": user, "time": created + 5400,
                            "comment": f"Fixed in {entry.source} {entry.version} ({entry.dist}).",
                            "fields": {"status": "closed", "resolution": "fixed", "owner": user}})
        elif i % 5 == 3:  # taken by its uploader: accepted (as Trac's "accept" action does) or assigned
            changes.append({"author": user, "comment": "", "time": created + 600,
                            "fields": {"status": "accepted" if i % 10 == 3 else "assigned", "owner": user}})
        out.append({"id": i + 1, "time": created, "fields": fields, "changes": changes})
    return out, components


def search_words(items: List[dict]) -> List[str]:
    """Three words of 7+ letters each found in 2-6 tickets, in three different sets of tickets."""
    docs: Dict[str, set] = collections.defaultdict(set)
    for t in items:
        text = " ".join([t["fields"]["summary"], t["fields"]["description"], *(c["comment"] for c in t["changes"])])
        for w in re.findall(r"[a-z]{7,}", text.lower()):
            docs[w].add(t["id"])
    chosen: List[str] = []
    sets: List[set] = []
    for w in sorted(docs, key=lambda w: (-len(docs[w]), w)):
        if 2 <= len(docs[w]) <= 6 and all(docs[w] != s for s in sets):
            chosen.append(w)
            sets.append(docs[w])
        if len(chosen) == 3:
            break
    return chosen


def clean_wiki(para: str) -> str:
    """Prose as Trac wiki text: no markup a sentence could start by accident."""
    para = re.sub(r"[\[\]{}]", lambda m: "(" if m.group() in "[{" else ")", para)
    para = para.replace("'''", "'").replace("''", "'").replace("~~", "~").replace("^", "")
    return para.strip().lstrip("*-=>|# ")


def page_name(title: str, used: set) -> str:
    name = "".join(w.capitalize() for w in title.split())
    while name in used:
        name += "X"
    used.add(name)
    return f"{ARTICLE_NS}/{name}"


def wikitext(title: str, body: str, share: float) -> str:
    keep = [p for p in map(clean_wiki, appdata.paragraphs(body, share)) if p]
    out = [f"= {title} ="]
    for i, para in enumerate(keep):
        if i and i % 4 == 0:
            out.append(f"== Part {i // 4 + 1} ==")
        out.append(para)
    return "\n\n".join(out) + "\n"


# -- the site ----------------------------------------------------------------------------------------------------


def setup(tmp: str, n_tickets: int, n_articles: int) -> dict:
    """A Trac environment in ``tmp`` fed with tickets, wiki pages and a git repository."""
    os.makedirs(tmp)
    repo = os.path.join(tmp, "repo.git")
    appdata.clone(repo, bare=True)
    env = os.path.join(tmp, "env")
    admin(env, "initenv", "Bench Trac", "sqlite:db/trac.db")
    with open(os.path.join(tmp, "htpasswd"), "w", encoding="utf-8") as fh:
        fh.write(servers.htpasswd_line("admin", "bench-secret"))

    now = time.time()
    items, components = tickets(n_tickets, now)
    admin(env, stdin='config set components tracopt.versioncontrol.git.* enabled\n'
                     'config set project descr "Web page similarity for crawlers"\n')
    cmds = [f'repository add "(default)" "{repo}" git',
            f'repository add legacy "{os.path.join(tmp, "legacy.git")}" git']
    cmds += [f"component remove component{i}" for i in (1, 2)]
    cmds += [f"milestone remove milestone{i}" for i in (1, 2, 3, 4)]
    cmds += ["version remove 1.0", "version remove 2.0"]
    owners = {}
    for t in items:
        owners.setdefault(t["fields"]["component"], t["fields"]["reporter"])
    cmds += [f"component add {c} {owners.get(c, 'admin')}" for c in components]
    for name, date in appdata.RELEASES:
        cmds.append(f"milestone add {name} {date}")
        if appdata.released(name):
            cmds.append(f"milestone completed {name} {date}")
    cmds.append("permission add admin TRAC_ADMIN")
    admin(env, stdin="\n".join(cmds) + "\n")
    report = ("admin", *BROKEN_REPORT)
    proc = subprocess.run([trac_python(), "-c", FEEDER, env], input=json.dumps({"tickets": items, "report": report}),
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"saving the tickets failed: {proc.stdout[-500:]} {proc.stderr[-2000:]}")
    report_id = int(proc.stdout.split()[-1])

    pages = []
    used: set = set()
    texts = os.path.join(tmp, "wiki")
    os.makedirs(texts)
    imports = []
    for i, (title, body) in enumerate(appdata.articles(n_articles)):
        name = page_name(title, used)
        versions = (0.6, 1.0) if i % 3 == 0 else (1.0,)
        for k, share in enumerate(versions):
            path = os.path.join(texts, f"{i}-{k}.txt")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(wikitext(title, body, share))
            imports.append((name, path, k))
        pages.append((name, len(versions)))
    start = os.path.join(texts, "start.txt")
    with open(start, "w", encoding="utf-8") as fh:
        fh.write("= Bench Trac =\n\nThe project's tickets, its source and these articles:\n\n"
                 + "".join(f" * [wiki:{name}]\n" for name, _ in pages))
    # one trac-admin run per version round (an import of a page already at that text is skipped)
    for k in (0, 1):
        batch = [f'wiki import "{name}" "{path}"' for name, path, kk in imports if kk == k]
        if k == 1:
            batch.append(f'wiki import {START} "{start}"')
        admin(env, stdin="\n".join(batch) + "\n")
    return {"env": env, "repo": repo, "tickets": items, "components": components, "pages": pages,
            "report": report_id}


def tail(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()[-2000:]


@contextlib.contextmanager
def tracd(env: str, htpasswd: str, log: str) -> Iterator[str]:
    port = servers.free_port()
    argv = [trac_python(), "-m", "trac.web.standalone", "-s", "-b", "127.0.0.1", "-p", str(port),
            f"--basic-auth=*,{htpasswd},Bench Trac", env]
    with open(log, "ab") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):  # a page of Trac's answers 200: the environment loads and renders
            if proc.poll() is not None:
                raise RuntimeError(f"tracd exited with {proc.returncode}: {tail(log)}")
            with contextlib.suppress(OSError):
                urllib.request.urlopen(base + "/about", timeout=5).read()
                break
            time.sleep(0.1)
        else:
            raise RuntimeError(f"tracd at {base} does not answer /about with 200: {tail(log)}")
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def truth_of(site: dict, base: str, mirror: str, n_changesets: int) -> appbench.Truth:
    truth: appbench.Truth = {}

    add = appbench.truth_adder(truth, base)

    q = urllib.parse.quote
    items = site["tickets"]
    # tickets, a few with their variants
    with_comments = [t for t in items if len(t["changes"]) > 1]
    for t in items:
        n = t["id"]
        add(f"ticket:{n}", None, f"/ticket/{n}")
    for k, t in enumerate(items[5::37]):
        n = t["id"]
        variant = (f"{mirror}/ticket/{n}", f"/ticket/{n}?utm_source=newsletter&utm_medium=email",
                   f"/ticket/{n}/", f"/search?q=%23{n}", f"/ticket/0{n}")[k % 5]
        add(f"ticket:{n}", None, variant)
    for t in with_comments[:2]:
        if f"{base}/ticket/{t['id']}?version={len(t['changes'])}" not in truth:
            add(f"ticket:{t['id']}", None, f"/ticket/{t['id']}?version={len(t['changes'])}")

    # changesets: the short hash, a few with the full hash, a trailing slash, the mirror, the quick jump
    hashes = appdata.commits(site["repo"], n_changesets)
    for h in hashes:
        add(f"changeset:{h}", None, f"/changeset/{h[:7]}")
    for k, h in enumerate(hashes[3::20]):
        add(f"changeset:{h}", None, (f"/changeset/{h}", f"/changeset/{h[:7]}/", f"{mirror}/changeset/{h[:7]}",
                                     f"/search?q=changeset%3A{h[:7]}")[k % 4])

    # wiki: the start page, the articles (older versions, histories), Trac's guide, indexes
    add("wiki:start", None, "/", "/wiki", f"/wiki/{START}")
    for k, (name, versions) in enumerate(site["pages"]):
        add(f"wiki:{name}", None, f"/wiki/{name}")
        if versions > 1:
            add(f"wiki:{name}@1", None, f"/wiki/{name}?version=1")
        if k % 6 == 1:
            add(f"wiki:{name}", None, (f"/wiki/{name}/", f"{mirror}/wiki/{name}", f"/search?q=wiki%3A{name}",
                                       f"/wiki/{name}?version={versions}")[k // 6 % 4])
    for name in GUIDE:
        add(f"wiki:{name}", None, f"/wiki/{name}")
    add("wiki:TitleIndex", None, "/wiki/TitleIndex")
    add("wiki:RecentChanges", None, "/wiki/RecentChanges")

    # repository browser and revision logs
    files = appdata.files(site["repo"])
    dirs = sorted({os.path.dirname(f) for f in files if os.path.dirname(f)})
    add("browser:/", None, "/browser")
    for d in [d for d in dirs if d.count("/") <= 1][:10]:
        add(f"browser:{d}", None, f"/browser/{q(d)}")
    chosen = ["README.md", "setup.cfg", "pyproject.toml", "scripts/setup.sh"]
    chosen += [f for f in files if f.startswith("docs/") and f.endswith(".md")][:8]
    chosen += [f for f in files if f.startswith("bench/") and f.endswith(".py")][:6]
    for f in chosen:
        if f in files:
            add(f"browser:{f}", None, f"/browser/{q(f)}")
    add("browser:README.md", None, "/search?q=source%3AREADME.md")
    add("log:/", None, "/log/")
    for f in ("README.md", "docs/settings.md", "scrapy_websim/config.py"):
        if f in files:
            add(f"log:{f}", None, f"/log/{q(f)}")

    # reports and queries, each page of a pagination its own
    add("report:list", None, "/report")
    add("report:1", None, "/report/1", "/report/1?page=1")
    def closed(t: dict) -> bool:
        return any(c.get("fields", {}).get("status") == "closed" for c in t["changes"])

    open_count = sum(1 for t in items if not closed(t))
    for p in range(2, (open_count - 1) // 100 + 2):
        add(f"report:1:page{p}", None, f"/report/1?page={p}")
    for r in (2, 3, 4, 5, 6, 8):  # 7, "My Tickets", is empty for an anonymous user
        add(f"report:{r}", None, f"/report/{r}")
    for p in range(2, (len(items) - 1) // 100 + 2):
        add(f"report:6:page{p}", None, f"/report/6?page={p}")
    add("query:default", None, "/query", "/query?status=!closed&order=priority")
    # queries: one each whose rows no other query gives (two queries with the same rows and
    # another filter, or a query with no row, are arguable and left out)
    rows_of: dict = {frozenset(t["id"] for t in items if not closed(t)): "query:default"}

    def query(group: str, path: str, pick) -> None:
        ids = frozenset(t["id"] for t in items if pick(t))
        if ids and ids not in rows_of:
            rows_of[ids] = group
            add(group, None, path)

    for c in site["components"]:
        query(f"query:component={c}", f"/query?component={q(c)}", lambda t, c=c: t["fields"]["component"] == c)
    for name, _ in appdata.RELEASES:
        query(f"query:milestone={name}", f"/query?milestone={name}&status=!closed",
              lambda t, m=name: t["fields"]["milestone"] == m and not closed(t))
        if any(t["fields"]["milestone"] == name for t in items):
            add(f"milestone:{name}", None, f"/milestone/{name}")
    for kind in ("defect", "enhancement", "task"):
        query(f"query:type={kind}", f"/query?type={kind}&status=!closed&order=priority",
              lambda t, k=kind: t["fields"]["type"] == k and not closed(t))
    query("query:security", "/query?keywords=~security", lambda t: "security" in t["fields"]["keywords"])
    add("query:all:page1", None, "/query?status=closed&order=id")
    closed = len(items) - open_count
    for p in range(2, (closed - 1) // 100 + 2):
        add(f"query:all:page{p}", None, f"/query?status=closed&order=id&page={p}")
    add("roadmap", None, "/roadmap")

    # timeline: the default (30 days) and earlier periods as Trac's "Previous Period" links write them
    today = dt.date.today()
    # (a bare /timeline shows as many days as this browser session's last timeline did: left out)
    add("timeline:30", None, "/timeline?daysback=30", "/timeline?authors=&daysback=30")
    for back, days in ((31, 13), (38, 6)):  # the tickets span the last 45 days: no period is empty
        day = today - dt.timedelta(days=back)
        add(f"timeline:{day}-{days}", None, f"/timeline?authors=&daysback={days}&from={day}")
    for back in (2, 9, 16, 23):
        day = today - dt.timedelta(days=back)
        add(f"timeline:tickets:{day}", None, f"/timeline?from={day}&daysback=3&ticket=on")

    # searches whose result lists differ; about and preferences
    for word in search_words(items):
        add(f"search:{word}", None, f"/search?q={word}")
    add("about", None, "/about")
    add("prefs", None, "/prefs")

    # special pages
    last = len(items)
    add("trac-404", "E3", f"/ticket/{last + 1}", f"/ticket/{last + 500}", "/ticket/99999",
        "/changeset/0badc0de", f"/changeset/{hashes[0][:7]}/nosuch.py", "/browser/nosuch", "/browser/docs/missing.md",
        "/log/nosuch/path.py", f"/wiki/{ARTICLE_NS}/NoSuchArticle", "/wiki/Sandbox", "/milestone/squeeze",
        "/report/999", f"/attachment/ticket/{items[0]['id']}/patch.diff", "/admin", "/wp-login.php",
        f"{mirror}/ticket/99999")
    add("trac-403", "E3", "/newticket", "/newticket?component=nginx", f"/wiki/{START}?action=edit",
        f"/wiki/{site['pages'][0][0]}?action=edit", "/report?action=new")
    add("broken-report", "E3", f"/report/{site['report']}", f"/report/{site['report']}?page=1")
    add("trac-500", "E1", "/browser/legacy", "/browser/legacy/README", "/log/legacy", "/query?max=abc",
        "/query?status=!closed&max=all")
    add("login", "L1", "/login", f"/login?referer={q(base + '/ticket/3', safe='')}",
        f"/login?referer={q(base + '/wiki/' + START, safe='')}", f"{mirror}/login",
        f"{mirror}/login?referer={q(mirror + '/timeline', safe='')}")
    return truth


@contextlib.contextmanager
def build(args: argparse.Namespace, tmp: str) -> Iterator[appbench.Truth]:
    trac_python()
    site = setup(tmp, args.tickets, args.articles)
    htpasswd = os.path.join(tmp, "htpasswd")
    with tracd(site["env"], htpasswd, os.path.join(tmp, "tracd.log")) as base, \
            tracd(site["env"], htpasswd, os.path.join(tmp, "tracd-mirror.log")) as mirror:
        yield truth_of(site, base, mirror, args.changesets)


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tickets", type=int, default=240, help="tickets from Debian changelog entries")
    parser.add_argument("--changesets", type=int, default=130, help="changesets crawled (small diffs first)")
    parser.add_argument("--articles", type=int, default=24, help="wiki pages from real articles")


if __name__ == "__main__":
    sys.exit(appbench.main(NAME, build, __doc__, add_args))
