"""Clusters and labels of a crawl of a real Roundup issue tracker: issues, messages, keywords, lists.

    python bench/app_roundup.py [--issues 300] [--messages 60] [--check] [-v] [--keep DIR]

Held aside: run once the design is settled, its first figures reported as they came.

Runs Roundup (PyPI ``roundup``) from the benches' virtual environment (``$TMPDIR/websim-bench-venv``,
installed with pip on first use or by ``scripts/setup.sh bench``). ``roundup-admin install`` makes a
tracker with the ``classic`` template on SQLite in the temporary directory, ``roundup-admin
initialise`` its database, and ``roundup-server`` serves it on 127.0.0.1 (as ``nobody``: it does not
run as root), plus a second ``roundup-server`` on another port over the same tracker (a mirror: the
tracker's configured address is the first port's, so both serve the same pages). Its content, saved
through Roundup's own Python interface (``roundup.instance``, what the web forms call):

- ``--issues`` issues, each from one entry of a Debian changelog installed here
  (``/usr/share/doc/*/changelog.Debian.gz``, the source packages of ``SOURCES`` with ten usable
  uploads): its first words the title, the entry (most are one sentence) the first message, by the
  uploader (a tracker user), the source package its keyword, the upload's urgency its priority;
  spread over the last 45 days. One in seven carries a second entry of the same upload as a second
  message; one in three is resolved with the message "Fixed in <package> <version> (<distribution>).";
  one in five of the rest is in progress, assigned to its uploader.

The truth (``{url: (group, label)}``, content label ``None``):

- one group per issue (``/issueN``), per message crawled (``/msgN``: the message and its history,
  not the issue's page), per keyword (``/keywordN``: the keyword editing page, which lists every
  keyword and names one: pages alike that are different items), the keyword list, the front page
  (``/``, ``/home``, ``/index``: one group), the search form (``issue?@template=search``);
- the issue lists, each page its own group (50 rows a page): the bare list (``/issue``: every
  column, every issue), the same list sorted by title, the tracker's "Show All" link (unresolved
  issues grouped by priority), the issues of each keyword, of each of three statuses, and three
  full-text searches (``@search_text=``, each word in a different set of 2-10 issues);
- the variants, each in its page's group: the mirror port; a number with a leading zero
  (``/issue05``); the default template explicit (``issue5?@template=item``,
  ``issue?@template=index``); default paging explicit (``@pagesize=50&@startwith=0``); tracking
  parameters (``utm_source``, which Roundup ignores); the same list's parameters in another order;
  a keyword filter by name instead of id. Roundup writes a fresh CSP nonce and CSRF token into
  every page, and the page's own address into the login form's return-to field: nothing a reader
  sees (``--check`` compares the visible text of every group of content URLs);
- special pages: Roundup's "Item Not Found" page (404, ``_generic.404.html``, "There is no issue
  with id N": missing issues, messages, keywords, files, users) is one group, ``E3``; the server's
  own "Error response" page (404, "Nothing matches the given URI": a class that does not exist, a
  path under an item, ``/issue5/``) another, ``E3``; the page anonymous users get for the user
  class (the user list, any user's page, the new-user form: the tracker's page frame with its
  login form and "Please login with your username and password.", status 200) one group, ``L1``:
  one login form, whatever page asked for it.

Left out as arguable: a list sorted by a property that does not exist or with an unknown action
(the list, status 200, with a line "Unknown sort property" / "No such action": an error page or the
list?), an unknown template (400: neither E3 nor content by the spec), the new-issue form for
anonymous users (a form with no inputs: thin, a login wall, or content?), the registration and
lost-password forms (login walls or content?), a list past its last page, an issue's history view,
the CSV export (not HTML). The URL list is shuffled; the crawl is websim's shipped defaults.
Last line (see ``bench/appbench.py``):

    set=roundup urls=N groups=G dup_share=D missing=M precision=P recall=R f1=F false_pairs=K
    missed_pairs=K lost=L rules=right/special (pct) content_as_junk=J
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
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

NAME = "roundup"
VENV = os.path.join(tempfile.gettempdir(), "websim-bench-venv")
ROUNDUP = "roundup==2.6.0"
#: the tracker's path under the server
TRACKER = "bench"
#: source packages whose changelogs give the issues: one keyword each
SOURCES = ("nginx", "git", "curl", "sqlite3", "openssl", "systemd", "apache2", "lighttpd",
           "python3.11", "php8.2", "redis", "chromium")
PRIORITY = {"critical": "critical", "emergency": "critical", "high": "urgent", "medium": "bug", "low": "wish"}
PAGE = 50
#: shown by the classic template's lists, in this order
COLUMNS = "id,activity,title,creator,status"

#: runs inside the venv's Python: saves users, keywords, messages and issues through Roundup's
#: interface, then dates them (Roundup stamps "now") in its SQLite database
FEEDER = r"""
import json, sqlite3, sys, time
import roundup.instance
home = sys.argv[1]
data = json.load(sys.stdin)
db = roundup.instance.open(home).open('admin')
users, keywords = {}, {}
for name, real, mail in data["users"]:
    users[name] = db.user.create(username=name, realname=real, address=mail, roles='User')
for k in data["keywords"]:
    keywords[k] = db.keyword.create(name=k)
stamps = {"issue": {}, "msg": {}}
for item in data["issues"]:
    msgs = []
    for text, at in item["messages"]:
        m = db.msg.create(content=text, author=users[item["user"]])
        stamps["msg"][m] = at
        msgs.append(m)
    fields = dict(title=item["title"], messages=msgs, keyword=[keywords[item["keyword"]]],
                  nosy=[users[item["user"]]], priority=db.priority.lookup(item["priority"]),
                  status=db.status.lookup(item["status"]))
    if item["assigned"]:
        fields["assignedto"] = users[item["user"]]
    i = db.issue.create(**fields)
    stamps["issue"][i] = (item["time"], item["messages"][-1][1])
    assert int(i) == item["id"], (i, item["id"])
db.commit()
db.close()
def stamp(t):
    return time.strftime("%Y%m%d%H%M%S", time.gmtime(t)) + ".000"
con = sqlite3.connect(home + "/db/db")
for i, (created, last) in stamps["issue"].items():
    con.execute("UPDATE _issue SET _creation=?, _activity=? WHERE id=?", (stamp(created), stamp(last), int(i)))
    con.execute("UPDATE issue__journal SET date=? WHERE nodeid=?", (stamp(created), int(i)))
for m, at in stamps["msg"].items():
    con.execute("UPDATE _msg SET _creation=?, _activity=?, _date=? WHERE id=?", (stamp(at),) * 3 + (int(m),))
    con.execute("UPDATE msg__journal SET date=? WHERE nodeid=?", (stamp(at), int(m)))
con.commit()
print(json.dumps({"users": users, "keywords": keywords}))
"""


def venv_bin(name: str) -> str:
    return os.path.join(VENV, "bin", name)


def ensure_roundup() -> None:
    if os.path.exists(venv_bin("roundup-server")) and os.path.exists(venv_bin("roundup-admin")):
        return
    appbench.pip_install(VENV, [ROUNDUP])


def roundup_admin(home: str, *argv: str) -> str:
    proc = subprocess.run([venv_bin("roundup-admin"), "-i", home, *argv], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0 or "Error" in proc.stdout[-400:]:
        raise RuntimeError(f"roundup-admin {' '.join(argv)[:80]} failed: {proc.stdout[-800:]} {proc.stderr[-1500:]}")
    return proc.stdout


# -- content -----------------------------------------------------------------------------------------------------


def issues(n: int, now: float) -> Tuple[List[dict], List[tuple], List[str]]:
    """``n`` issues from the changelogs, spread over the keywords and the last 45 days; the users
    (uploaders) and the keywords that gave some."""
    chosen, sources = appdata.changelog_items(SOURCES, n)
    span = 45 * 86400
    out, users = [], {}
    for i, (entry, bullets) in enumerate(chosen):
        created = now - span + i * span / max(1, len(chosen)) - 3600
        user = re.sub(r"[^a-z0-9]", "", entry.email.split("@")[0].lower()) or "uploader"
        users.setdefault(user, (user, entry.author, entry.email))
        messages = [(bullets[0], created)]
        if i % 7 == 3 and len(bullets) > 1:
            messages.append((bullets[1], created + 1800))
        status, assigned = "unread" if i % 2 else "chatting", False
        if i % 3 == 0:
            status = "resolved"
            messages.append((f"Fixed in {entry.source} {entry.version} ({entry.dist}).", created + 5400))
        elif i % 5 == 1:
            status, assigned = "in-progress", True
        out.append({"id": i + 1, "time": created, "title": appdata.summary_of(bullets[0]), "messages": messages,
                    "user": user, "keyword": entry.source, "priority": PRIORITY.get(entry.urgency, "bug"),
                    "status": status, "assigned": assigned})
    return out, list(users.values()), sources


def search_words(items: List[dict]) -> List[str]:
    """Three words of 7+ letters each in the messages of 2-10 issues, in three different sets of issues."""
    docs: Dict[str, set] = collections.defaultdict(set)
    for t in items:
        for w in re.findall(r"[a-z]{7,}", " ".join([t["title"], *(m for m, _ in t["messages"])]).lower()):
            docs[w].add(t["id"])
    chosen: List[str] = []
    sets: List[set] = []
    for w in sorted(docs, key=lambda w: (-len(docs[w]), w)):
        if 2 <= len(docs[w]) <= 10 and all(docs[w] != s for s in sets):
            chosen.append(w)
            sets.append(docs[w])
        if len(chosen) == 3:
            break
    return chosen


def setup(tmp: str, port: int, n_issues: int) -> dict:
    """The tracker in ``tmp/tracker``, its address ``http://127.0.0.1:PORT/bench/``, fed with issues."""
    os.makedirs(tmp)
    home = os.path.join(tmp, "tracker")
    roundup_admin(home, "install", "classic", "sqlite",
                  f"tracker_web=http://127.0.0.1:{port}/{TRACKER}/,mail_domain=bench.invalid,mail_host=127.0.0.1")
    with open(os.path.join(home, "config.ini"), encoding="utf-8") as fh:
        config = fh.read()
    with open(os.path.join(home, "config.ini"), "w", encoding="utf-8") as fh:
        fh.write(re.sub(r"(?m)^name = Roundup issue tracker$", "name = Bench Roundup", config))
    roundup_admin(home, "initialise", "bench-secret")
    items, users, sources = issues(n_issues, time.time())
    proc = subprocess.run([venv_bin("python"), "-c", FEEDER, home], capture_output=True, text=True, check=False,
                          input=json.dumps({"users": users, "keywords": sources, "issues": items}))
    if proc.returncode != 0:
        raise RuntimeError(f"feeding the tracker failed: {proc.stderr[-2000:]}")
    ids = json.loads(proc.stdout.strip().splitlines()[-1])
    # roundup-server does not run as root: the server runs as nobody, who must write the tracker
    if os.getuid() == 0:
        subprocess.run(["chown", "-R", "nobody:nogroup", tmp], check=True)
        for up in (tmp, os.path.dirname(tmp)):
            os.chmod(up, 0o755)
    return {"home": home, "issues": items, "users": ids["users"], "keywords": ids["keywords"]}


@contextlib.contextmanager
def roundup_server(home: str, port: int, log: str) -> Iterator[str]:
    argv = [venv_bin("roundup-server"), "-n", "127.0.0.1", "-p", str(port), "-t", "fork", f"{TRACKER}={home}"]
    if os.getuid() == 0:
        argv[1:1] = ["-u", "nobody", "-g", "nogroup"]
    with open(log, "ab") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}/{TRACKER}"
    try:
        for _ in range(300):
            if proc.poll() is not None:
                raise RuntimeError(f"roundup-server exited with {proc.returncode}")
            with contextlib.suppress(OSError):
                urllib.request.urlopen(base + "/issue1", timeout=5).read()
                break
            time.sleep(0.1)
        else:
            raise RuntimeError(f"roundup-server at {base} does not answer")
        yield base
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 15)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait(10)


# -- the truth ---------------------------------------------------------------------------------------------------


def truth_of(site: dict, base: str, mirror: str, n_messages: int) -> appbench.Truth:
    truth: appbench.Truth = {}

    def add(group: str, label: Optional[str], *paths: str) -> None:
        for p in paths:
            url = p if p.startswith("http") else f"{base}/{p}"
            assert url not in truth, url
            truth[url] = (group, label)

    q = urllib.parse.quote
    items = site["issues"]
    n = len(items)
    for t in items:
        add(f"issue:{t['id']}", None, f"issue{t['id']}")
    for k, t in enumerate(items[4::29]):
        i = t["id"]
        add(f"issue:{i}", None, (f"{mirror}/issue{i}", f"issue0{i}", f"issue{i}?@template=item",
                                 f"issue{i}?utm_source=newsletter&utm_medium=email")[k % 4])

    # messages: the first of some issues, the second of some others (ids in the order they were saved)
    msg_ids, next_id = [], 1
    for t in items:
        msg_ids.append(list(range(next_id, next_id + len(t["messages"]))))
        next_id += len(t["messages"])
    picked = [ids[-1] if k % 3 == 2 else ids[0] for k, ids in enumerate(msg_ids[1::max(1, n // max(1, n_messages))])]
    for k, m in enumerate(picked[:n_messages]):
        add(f"msg:{m}", None, f"msg{m}", *([f"{mirror}/msg{m}"] if k % 15 == 7 else []))

    keywords = site["keywords"]
    for k, (name, kid) in enumerate(keywords.items()):
        add(f"keyword:{name}", None, f"keyword{kid}")
    add("keyword-list", None, "keyword")
    add("home", None, "", "home", "index", f"{mirror}/")
    add("search-form", None, "issue?@template=search")

    # the lists: 50 rows a page, each page its own group
    def pages(group: str, query: str, count: int, variants=()) -> None:
        for start in range(0, count, PAGE):
            paths = [f"issue?{query}&@startwith={start}" if query
                     else f"issue?@startwith={start}" if start else "issue"]
            if start == 0:
                paths += list(variants)
            add(f"{group}:{start}", None, *paths)

    pages("list", "", n, ["issue?@template=index", f"issue?@pagesize={PAGE}&@startwith=0",
                          "issue?utm_source=newsletter", f"{mirror}/issue"])
    cols = q(COLUMNS, safe="")
    by_title = f"@columns={cols}&@sort=title&@pagesize={PAGE}"
    pages("by-title", by_title, n, [f"issue?@sort=title&@pagesize={PAGE}&@columns={cols}"])
    unresolved = sum(1 for t in items if t["status"] != "resolved")
    show_all = (f"@sort=-activity&@group=priority&@filter=status&@columns=id%2Cactivity%2Ctitle%2Ccreator%2Cassignedto"
                f"%2Cstatus&@search_text=&status=-1%2C1%2C2%2C3%2C4%2C5%2C6%2C7&@dispname=Show%20All&@pagesize={PAGE}")
    pages("show-all", show_all, unresolved)
    for k, (name, kid) in enumerate(keywords.items()):
        count = sum(1 for t in items if t["keyword"] == name)
        query = f"@columns={cols}&@sort=id&@filter=keyword&keyword={kid}&@pagesize={PAGE}"
        variants = [f"issue?@columns={cols}&@sort=id&@filter=keyword&keyword={q(name)}&@pagesize={PAGE}&@startwith=0"
                    ] if k % 4 == 0 else []
        pages(f"keyword-issues:{name}", query, count, variants)
    status_ids = {"unread": 1, "chatting": 3, "in-progress": 5, "resolved": 8}
    for status in ("chatting", "in-progress", "resolved"):
        count = sum(1 for t in items if t["status"] == status)
        pages(f"status:{status}", f"@columns={cols}&@sort=id&@filter=status&status={status_ids[status]}"
                                  f"&@pagesize={PAGE}", count)
    for word in search_words(items):
        add(f"search:{word}", None, f"issue?@columns={cols}&@sort=id&@search_text={word}&@pagesize={PAGE}")

    # special pages
    add("item-not-found", "E3", f"issue{n + 1}", f"issue{n + 250}", "issue99999", f"msg{next_id + 40}",
        "keyword999", "file1", "file7", "user99999", f"{mirror}/issue99999")
    add("no-such-path", "E3", "ticket1", "issues", "nosuch", "bugs?@template=index", "issue5/", "issue12/msg1",
        f"{mirror}/ticket1")
    users = list(site["users"].values())
    add("login-wall", "L1", "user", "user?@template=item", "user1",
        *(f"user{u}" for u in users[::max(1, len(users) // 6)]), f"{mirror}/user", f"{mirror}/user{users[0]}")
    return truth


def visible_text(html: bytes) -> str:
    """A page's text as a reader sees it (no script, no style), spaces collapsed."""
    import lxml.html

    doc = lxml.html.fromstring(html)
    for node in doc.xpath("//script|//style"):
        node.drop_tree()
    return " ".join(doc.text_content().split())


def check_texts(name: str, truth: appbench.Truth) -> str:
    """``--check``: the statuses per label, then every group of content URLs whose visible text is
    not the same, two groups that show the same text, and every content URL that is not a 200 HTML page."""
    odd = []
    texts: Dict[str, Dict[str, str]] = collections.defaultdict(dict)
    for url, (group, label) in truth.items():
        if label is None:
            got = servers.fetch(url)
            if got.status != 200 or "html" not in got.content_type:
                odd.append(f"  {got.status} {got.content_type} {url} ({group})")
            texts[group][url] = visible_text(got.body)
    seen: Dict[str, str] = {}
    for group, by_url in texts.items():
        if len(set(by_url.values())) > 1:
            odd.append(f"  group {group} shows {len(set(by_url.values()))} different texts: {', '.join(by_url)}")
        for text in set(by_url.values()):
            if seen.setdefault(text, group) != group:
                odd.append(f"  groups {seen[text]} and {group} show the same text")
    return "\n".join([appbench.check_truth(name, truth), *odd])


def check(truth: appbench.Truth) -> str:
    return check_texts(NAME, truth)


@contextlib.contextmanager
def build(args: argparse.Namespace, tmp: str) -> Iterator[appbench.Truth]:
    ensure_roundup()
    port, mirror_port = servers.free_port(), servers.free_port()
    site = setup(tmp, port, args.issues)
    logs = os.path.dirname(tmp)
    with roundup_server(site["home"], port, os.path.join(logs, "roundup.log")) as base, \
            roundup_server(site["home"], mirror_port, os.path.join(logs, "roundup-mirror.log")) as mirror:
        yield truth_of(site, base, mirror, args.messages)


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--issues", type=int, default=300, help="issues from Debian changelog entries")
    parser.add_argument("--messages", type=int, default=60, help="message pages crawled")


if __name__ == "__main__":
    sys.exit(appbench.main(NAME, build, __doc__, add_args, check))
