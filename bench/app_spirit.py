"""Clusters and labels of a crawl of a real Spirit forum: topics, categories, lists, redirects, logins.

    python bench/app_spirit.py [--topics 170] [--check] [-v] [--keep DIR]

Held aside: run once the design is settled, its first figures reported as they came.

Runs Spirit (PyPI ``django-spirit``, a Django forum) from a virtual environment of its own
(``$TMPDIR/websim-bench-spirit``: Spirit pins its Django, installed with pip on first use). ``spirit
startproject`` makes a project in the temporary directory; its development settings (SQLite) with
``DEBUG = False``, ``manage.py migrate`` its database, and ``manage.py runserver --insecure`` (static
files served) serves it on 127.0.0.1, plus a second ``runserver`` on another port over the same
database (a mirror). Its content, saved through Spirit's own models and the function its
publishing views call after a comment (``comment_posted``), the comment rendered by Spirit's
Markdown:

- the uploaders of a few Debian changelogs installed here as users; eight categories of source
  packages (web servers, version control, databases...), each with a one-line description;
- ``--topics`` topics, one per upload (``appdata.changelog_items``): titled ``SOURCE: first
  sentence``, by its uploader, in its package's category, its items (up to four) the comments, the
  first by the uploader and the others by other users; dated over the first half of 2024 (Spirit
  shows the date: a fixed date, no "3 minutes ago"). A topic's page is a few sentences; topics
  differ in those sentences only.

The truth (``{url: (group, label)}``, content label ``None``):

- one group per topic (``/topic/PK/SLUG/``: all its comments on one page, Spirit's default of 20
  a page); per page of each category's topic list (``/category/PK/SLUG/?page=N``, 20 topics a
  page, newest activity first) and of the forum's "active topics" list (``/``, ``/topic/active/``,
  ``?page=N``);
- the variants, each in its page's group: ``/topic/PK/`` and a wrong slug (Spirit's 301 to the
  topic's address), a comment's ``/comment/PK/find/`` (a 302 to its topic's page), the first page
  explicit (``?page=1``), a tracking parameter (``utm_source``), the mirror port;
- special pages: Spirit's 404 page ("Error 404: what you are looking for is gone...": a topic,
  category or comment that does not exist, the private category, a page past the last), one
  group, ``E3``; Spirit's login form, asked for or where every page for signed-in users sends an
  anonymous visitor (a 302 to ``/user/login/?next=PATH``: user profiles, search, unread topics,
  the new-topic and reply forms, the forum's admin), one group, ``L1``.

Left out as arguable: the registration, password-reset and activation forms (login walls or
content?), the category index (``/category/``: an empty page in this version, status 200), the
private-topic list (for signed-in users only, like the profiles, but it answers 404 without a
session: an error or a login wall?). The URL list is shuffled; the crawl is websim's shipped
defaults. Last line (see ``bench/appbench.py``):

    set=spirit urls=N groups=G dup_share=D missing=M precision=P recall=R f1=F false_pairs=K
    missed_pairs=K lost=L rules=right/special (pct) content_as_junk=J
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import urllib.parse
from typing import Dict, Iterator, List

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import appbench  # noqa: E402
import appdata  # noqa: E402
from app_roundup import check_texts  # noqa: E402

from scrapy_websim.testing import servers  # noqa: E402

NAME = "spirit"
VENV = os.path.join(tempfile.gettempdir(), "websim-bench-spirit")
SPIRIT = "django-spirit==0.14.3"
#: Spirit's topics per list page (``topics_per_page``)
PAGE = 20
#: category title, description, source packages
CATEGORIES = (
    ("Web servers", "nginx, Apache httpd and lighttpd packaging.", ("nginx", "apache2", "lighttpd")),
    ("Version control", "git and its tools.", ("git",)),
    ("Networking", "curl, OpenSSH and friends.", ("curl", "openssh")),
    ("Databases", "SQLite, MariaDB and Redis.", ("sqlite3", "mariadb", "redis")),
    ("Languages", "Python, PHP and Perl interpreters.", ("python3.11", "php8.2", "perl")),
    ("Core system", "systemd, coreutils and util-linux.", ("systemd", "coreutils", "util-linux")),
    ("Security", "OpenSSL and TLS.", ("openssl",)),
    ("Desktop", "Chromium and vim.", ("chromium", "vim")),
)
SETTINGS = """from .dev import *  # noqa: F401,F403
DEBUG = False
TEMPLATES[0]["OPTIONS"]["debug"] = False
ALLOWED_HOSTS = ["127.0.0.1"]
"""
#: runs in the project with Django set up: users, categories, topics and comments, as Spirit's
#: views save them, then the dates moved to the upload's
FEEDER = r"""
import datetime as dt, json, sys
import django
django.setup()
from django.contrib.auth import get_user_model
from spirit.category.models import Category
from spirit.comment.models import Comment
from spirit.comment.utils import comment_posted
from spirit.core.utils.markdown import Markdown
from spirit.topic.models import Topic
User = get_user_model()
data = json.load(sys.stdin)
users = {name: User.objects.create_user(username=name, email=mail) for name, mail in data["users"]}
cats = {title: Category.objects.create(title=title, description=desc) for title, desc in data["categories"]}
def when(t):
    return dt.datetime.fromtimestamp(t, dt.timezone.utc)
out = []
for t in data["topics"]:
    topic = Topic.objects.create(user=users[t["user"]], category=cats[t["category"]], title=t["title"])
    ids = []
    for user, text, at in t["comments"]:
        c = Comment.objects.create(user=users[user], topic=topic, comment=text, comment_html=Markdown().render(text))
        comment_posted(comment=c, mentions=None)
        Comment.objects.filter(pk=c.pk).update(date=when(at))
        ids.append(c.pk)
    Topic.objects.filter(pk=topic.pk).update(date=when(t["comments"][0][2]), last_active=when(t["comments"][-1][2]))
    out.append({"id": topic.pk, "slug": Topic.objects.get(pk=topic.pk).slug, "comments": ids,
                "category": t["category"], "last": t["comments"][-1][2]})
print(json.dumps({"topics": out, "users": {n: [u.pk, u.st.slug] for n, u in users.items()},
                  "categories": {n: [c.pk, c.slug] for n, c in cats.items()},
                  "private": [c.pk for c in Category.objects.filter(is_private=True)]}))
"""


def venv_bin(name: str) -> str:
    return os.path.join(VENV, "bin", name)


def ensure_spirit() -> None:
    if os.path.exists(venv_bin("spirit")):
        return
    appbench.pip_install(VENV, [SPIRIT])


def content(n: int) -> dict:
    """Users, categories and ``n`` topics from the changelogs (see the module docstring)."""
    sources = [s for _, _, members in CATEGORIES for s in members]
    category_of = {s: title for title, _, members in CATEGORIES for s in members}
    chosen, _ = appdata.changelog_items(sources, n)
    people = sorted({(e.author, e.email) for e, _ in chosen})
    names: Dict[tuple, str] = {}
    for author, mail in people:
        base = "".join(ch for ch in mail.split("@")[0].lower() if ch.isalnum()) or "user"
        name = base
        while name in names.values():
            name += "x"
        names[(author, mail)] = name
    start = dt.datetime(2024, 1, 2, 8, 0, tzinfo=dt.timezone.utc).timestamp()
    span = 170 * 86400
    topics = []
    for i, (entry, items) in enumerate(chosen):
        at = start + i * span / max(1, len(chosen))
        first = names[(entry.author, entry.email)]
        comments = []
        for k, item in enumerate(items[:4]):
            user = first if k == 0 else names[people[(i * 7 + k * 3) % len(people)]]
            if k and user == comments[-1][0]:
                user = names[people[(people.index(next(p for p in people if names[p] == user)) + 1) % len(people)]]
            comments.append((user, item, at + k * 5400))
        topics.append({"user": first, "category": category_of[entry.source],
                       "title": f"{entry.source}: {appdata.summary_of(items[0])}", "comments": comments})
    return {"users": [(names[p], p[1]) for p in people], "categories": [(t, d) for t, d, _ in CATEGORIES],
            "topics": topics}


def setup(tmp: str, n_topics: int) -> dict:
    """The project in ``tmp/forum``, migrated and fed; the ids and slugs Spirit gave."""
    os.makedirs(tmp)
    subprocess.run([venv_bin("spirit"), "startproject", "forum"], cwd=tmp, check=True, capture_output=True)
    home = os.path.join(tmp, "forum")
    with open(os.path.join(home, "forum", "settings", "bench.py"), "w", encoding="utf-8") as fh:
        fh.write(SETTINGS)
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="forum.settings.bench", PYTHONPATH=home)
    subprocess.run([venv_bin("python"), "manage.py", "migrate"], cwd=home, env=env, check=True, capture_output=True)
    proc = subprocess.run([venv_bin("python"), "-c", FEEDER], cwd=home, env=env, capture_output=True, text=True,
                          input=json.dumps(content(n_topics)), check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"feeding the forum failed: {proc.stderr[-2000:]}")
    site = json.loads(proc.stdout.strip().splitlines()[-1])
    site["home"], site["env"] = home, env
    return site


def runserver(site: dict, log: str):
    port = servers.free_port()
    argv = [venv_bin("python"), "manage.py", "runserver", "--noreload", "--insecure", f"127.0.0.1:{port}"]
    return servers.app_server(argv, port, log, "/", env=site["env"], cwd=site["home"])


# -- the truth ---------------------------------------------------------------------------------------------------


def truth_of(site: dict, base: str, mirror: str) -> appbench.Truth:
    truth: appbench.Truth = {}

    add = appbench.truth_adder(truth, base)

    topics = site["topics"]
    for k, t in enumerate(topics):
        path = f"/topic/{t['id']}/{t['slug']}/"
        urls = [path]
        variant = k % 13
        if variant == 1:
            urls.append(f"/topic/{t['id']}/")
        elif variant == 4:
            old = t["slug"].rsplit("-", 1)[0] if "-" in t["slug"] else "topic"
            urls.append(f"/topic/{t['id']}/{old}/")
        elif variant == 6:
            urls.append(f"/comment/{t['comments'][-1]}/find/")
        elif variant == 8:
            urls.append(path + "?page=1")
        elif variant == 10:
            urls.append(path + "?utm_source=newsletter&utm_medium=email")
        elif variant == 12:
            urls.append(mirror + path)
        add(f"topic:{t['id']}", None, *urls)

    def lists(group: str, path: str, count: int, first_variants: List[str]) -> None:
        for p in range(1, (count + PAGE - 1) // PAGE + 1):
            urls = [f"{path}?page={p}" if p > 1 else path]
            if p == 1:
                urls += first_variants
            elif p == 2:
                urls.append(mirror + f"{path}?page={p}")
            add(f"{group}:{p}", None, *urls)

    lists("active", "/", len(topics), ["/topic/active/", "/?page=1", mirror + "/", "/?utm_source=feed"])
    for c, (title, (pk, slug)) in enumerate(site["categories"].items()):
        count = sum(1 for t in topics if t["category"] == title)
        path = f"/category/{pk}/{slug}/"
        lists(f"category:{slug}", path, count, [f"/category/{pk}/"] + ([path + "?page=1"] if c % 2 else []))

    last = topics[-1]
    n_active = (len(topics) + PAGE - 1) // PAGE
    missing_topic = last["id"] + 500
    add("spirit-404", "E3", f"/topic/{missing_topic}/", f"/topic/{missing_topic}/no-such-topic/", "/topic/99999/x/",
        "/category/999/", f"/category/{site['private'][0]}/", f"/comment/{last['comments'][-1] + 900}/find/",
        f"/?page={n_active + 3}", f"/topic/{last['id']}/{last['slug']}/?page=7", "/nosuch/", "/forum/",
        mirror + f"/topic/{missing_topic}/")
    q = urllib.parse.quote
    users = list(site["users"].values())
    protected = ["/user/", "/search/?q=openssl", "/search/", "/topic/unread/", "/topic/publish/",
                 f"/comment/{topics[3]['id']}/publish/", "/st/admin/", "/user/menu/"]
    protected += [f"/user/{pk}/{slug}/" for pk, slug in users[:: max(1, len(users) // 5)]]
    protected += [f"/user/topics/{pk}/{slug}/" for pk, slug in users[1:: max(1, len(users) // 3)]]
    add("login", "L1", "/user/login/", *protected, f"/user/login/?next={q('/topic/unread/', safe='')}",
        mirror + "/user/login/", mirror + f"/user/{users[0][0]}/{users[0][1]}/")
    return truth


def check(truth: appbench.Truth) -> str:
    """``--check``: see ``app_roundup.check_texts`` (no crawl: plain HTTP fetches)."""
    return check_texts(NAME, truth)


@contextlib.contextmanager
def build(args: argparse.Namespace, tmp: str) -> Iterator[appbench.Truth]:
    ensure_spirit()
    site = setup(tmp, args.topics)
    logs = os.path.dirname(tmp)
    with runserver(site, os.path.join(logs, "spirit.log")) as base, \
            runserver(site, os.path.join(logs, "spirit-mirror.log")) as mirror:
        yield truth_of(site, base, mirror)


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--topics", type=int, default=170, help="topics from Debian changelog uploads")


if __name__ == "__main__":
    sys.exit(appbench.main(NAME, build, __doc__, add_args, check))
