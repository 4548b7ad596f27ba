"""Clusters and labels of a crawl of a real django-helpdesk: public ticket pages, knowledge base, logins.

    python bench/app_helpdesk.py [--tickets 240] [--check] [-v] [--keep DIR]

Held aside: run once the design is settled, its first figures reported as they came.

Runs django-helpdesk (PyPI ``django-helpdesk``, a ticket tracker for support teams) from a
virtual environment of its own (``$TMPDIR/websim-bench-helpdesk``, installed with pip on first
use or by ``scripts/setup.sh bench``). ``django-admin startproject`` makes a project in the
temporary directory with the settings helpdesk's installation guide gives (the ``helpdesk``,
``sites``, ``humanize`` and ``rest_framework`` apps, helpdesk's URLs at the root, teams mode off,
the knowledge base on), ``DEBUG = False`` and no ``404.html`` of its own (Django's plain "Not
Found" page), ``manage.py migrate`` on SQLite, and ``manage.py runserver --insecure`` serves it on
127.0.0.1, plus a second ``runserver`` on another port over the same database (a mirror). Its
content, saved through helpdesk's models:

- five queues (teams of Debian source packages), all open to public submissions;
- ``--tickets`` tickets, each one upload of the Debian changelogs installed here
  (``appdata.changelog_items``): its first item, shortened, the title, the item the description,
  the uploader's address the submitter's, the upload's urgency its priority, the upload's date
  its date (months ago: the page says "N months ago", steady while the crawl runs); one in three
  resolved with a public follow-up "Fixed in SOURCE VERSION (DIST).", one in seven with a
  second item as a public follow-up;
- a knowledge-base category for the first source package of each queue, its items (questions and
  answers) from every other upload of that package: the category page lists them all.

A ticket's public page (``/view/?ticket=QUEUE-ID&email=ADDRESS&key=SECRET``, the link helpdesk
mails to its submitter) is the site's frame, a table of the ticket's fields and one to three
sentences: tickets differ in a title, an address and those sentences, and every ticket page has the
same path.

The truth (``{url: (group, label)}``, content label ``None``):

- one group per ticket's public page, per knowledge-base category page, the knowledge-base
  index, the public home page (the categories and the submission form) and the submission form;
- the variants, each in its page's group: the mirror port; the query's parameters in another
  order; the address or the key in capitals (helpdesk compares both without case); the ticket
  number alone or under another queue's name (helpdesk reads only the number after the last
  hyphen); a tracking parameter (``utm_source``); a category's slug in capitals (looked up
  without case);
- special pages: the "403 Forbidden" helpdesk answers for a ticket link whose key, address or
  number is wrong (and for ``/view/`` without them), one group, ``E3``; Django's "Not Found" (404:
  a category, a path that does not exist), one group, ``E3``; helpdesk's login page, where every
  staff page (``/tickets/``, ``/dashboard/``, a ticket's staff page, reports, the kanban board, the
  RSS feeds) sends an anonymous visitor, one group, ``L1``; Django's admin login, one group, ``L1``.

Left out as arguable: a category page with one item opened (``?kbitem=N``: another answer shown),
the category's page for embedding (``/kb_iframe/SLUG/``: the same items without the site's frame),
the submission form with a queue chosen (``?queue=N``), the password-reset form, the JSON API.
The URL list is shuffled; the crawl is websim's shipped defaults. Last line (see ``bench/appbench.py``):

    set=helpdesk urls=N groups=G dup_share=D missing=M precision=P recall=R f1=F false_pairs=K
    missed_pairs=K lost=L rules=right/special (pct) content_as_junk=J
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import urllib.parse
from typing import Iterator

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import appbench  # noqa: E402
import appdata  # noqa: E402
from app_roundup import check_texts  # noqa: E402

from scrapy_websim.testing import servers  # noqa: E402

NAME = "helpdesk"
VENV = os.path.join(tempfile.gettempdir(), "websim-bench-helpdesk")
HELPDESK = "django-helpdesk==2.6.1"
PROJECT = "desk"
#: queue slug, title, its source packages; the knowledge base covers the first package of each
QUEUES = (
    ("web", "Web servers", ("nginx", "apache2", "lighttpd", "curl")),
    ("security", "Security", ("openssl", "openssh")),
    ("core", "Core system", ("systemd", "coreutils", "util-linux")),
    ("lang", "Languages", ("python3.11", "php8.2", "perl")),
    ("data", "Databases", ("sqlite3", "redis", "mariadb")),
)
#: Debian urgency -> helpdesk priority (1 critical ... 5 very low)
PRIORITY = {"critical": 1, "emergency": 1, "high": 2, "medium": 3, "low": 4}
#: knowledge-base items a category
KB_ITEMS = 8

SETTINGS = """from .settings import *  # noqa: F401,F403
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1"]
INSTALLED_APPS += ["django.contrib.sites", "django.contrib.humanize", "rest_framework", "helpdesk"]
SITE_ID = 1
LOGIN_URL = "/login/"
TIME_ZONE = "UTC"
HELPDESK_TEAMS_MODE_ENABLED = False
HELPDESK_KB_ENABLED = True
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
"""
URLS = """from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("helpdesk.urls", namespace="helpdesk")),
]
"""

#: runs in the project with Django set up: queues, tickets, follow-ups, the knowledge base
FEEDER = r"""
import datetime as dt, json, sys
import django
django.setup()
from django.contrib.sites.models import Site
from helpdesk.models import FollowUp, KBCategory, KBItem, Queue, Ticket
data = json.load(sys.stdin)
Site.objects.filter(pk=1).update(domain="127.0.0.1", name="Debian package help")
queues = {}
for slug, title in data["queues"]:
    queues[slug] = Queue.objects.create(title=title, slug=slug, email_address=f"{slug}@bench.invalid",
                                        allow_public_submission=True)
def when(t):
    return dt.datetime.fromtimestamp(t, dt.timezone.utc)
out = []
for t in data["tickets"]:
    ticket = Ticket.objects.create(title=t["title"], queue=queues[t["queue"]], submitter_email=t["email"],
                                   description=t["description"], priority=t["priority"],
                                   status=Ticket.RESOLVED_STATUS if t["resolved"] else Ticket.OPEN_STATUS)
    for k, text in enumerate(t["followups"]):
        f = FollowUp.objects.create(ticket=ticket, title="Comment", comment=text, public=True,
                                    new_status=Ticket.RESOLVED_STATUS if t["resolved"] and k == len(t["followups"]) - 1
                                    else None)
        FollowUp.objects.filter(pk=f.pk).update(date=when(t["time"] + 3600 * (k + 1)))
    Ticket.objects.filter(pk=ticket.pk).update(created=when(t["time"]),
                                               modified=when(t["time"] + 3600 * len(t["followups"])))
    out.append({"id": ticket.pk, "key": ticket.secret_key})
for slug, title, description, queue, items in data["kb"]:
    category = KBCategory.objects.create(title=title, slug=slug, description=description, queue=queues[queue])
    for k, (item_title, question, answer) in enumerate(items):
        KBItem.objects.create(category=category, title=item_title, question=question, answer=answer, order=k + 1)
print(json.dumps({"tickets": out}))
"""


def venv_bin(name: str) -> str:
    return os.path.join(VENV, "bin", name)


def ensure_helpdesk() -> None:
    probe = subprocess.run([venv_bin("python"), "-c", "import helpdesk"], capture_output=True, check=False) \
        if os.path.exists(venv_bin("python")) else None
    if probe is not None and probe.returncode == 0:
        return
    appbench.pip_install(VENV, [HELPDESK])


def content(n: int) -> dict:
    """The queues, ``n`` tickets and the knowledge base from the changelogs (see the module docstring)."""
    queue_of = {s: slug for slug, _, members in QUEUES for s in members}
    kb_sources = [members[0] for _, _, members in QUEUES]
    chosen, _ = appdata.changelog_items(list(queue_of), n + KB_ITEMS * len(kb_sources))
    kb_items: dict = {s: [] for s in kb_sources}
    tickets = []
    seen: collections.Counter = collections.Counter()
    for entry, items in chosen:
        source = entry.source
        version = entry.version.split(":", 1)[-1]
        seen[source] += 1
        if source in kb_items and len(kb_items[source]) < KB_ITEMS and seen[source] % 2 == 0:
            kb_items[source].append((f"{source} {version}", f"What did the {source} {version} upload change?",
                                     "\n\n".join(items[:3])))
            continue
        if len(tickets) == n:
            continue
        followups = []
        k = len(tickets)
        if k % 7 == 3 and len(items) > 1:
            followups.append(items[1])
        resolved = k % 3 == 0
        if resolved:
            followups.append(f"Fixed in {source} {version} ({entry.dist}).")
        tickets.append({"title": f"{source}: {appdata.summary_of(items[0])}", "description": items[0],
                        "email": entry.email.lower(), "priority": PRIORITY.get(entry.urgency, 3),
                        "queue": queue_of[source], "time": entry.date.timestamp(), "resolved": resolved,
                        "followups": followups})
    kb = [(s.replace(".", "-"), s, f"Questions and answers about the {s} uploads.", queue_of[s], kb_items[s])
          for s in kb_sources if kb_items[s]]
    return {"queues": [(slug, title) for slug, title, _ in QUEUES], "tickets": tickets, "kb": kb}


def setup(tmp: str, n_tickets: int) -> dict:
    """The project in ``tmp/desk``, migrated and fed; the tickets with their ids and keys."""
    os.makedirs(tmp)
    home = os.path.join(tmp, "desk")
    os.makedirs(home)
    subprocess.run([venv_bin("django-admin"), "startproject", PROJECT, home], check=True, capture_output=True)
    for path, text in (("bench.py", SETTINGS), ("urls.py", URLS)):
        with open(os.path.join(home, PROJECT, path), "w", encoding="utf-8") as fh:
            fh.write(text)
    env = dict(os.environ, DJANGO_SETTINGS_MODULE=f"{PROJECT}.bench", PYTHONPATH=home)
    proc = subprocess.run([venv_bin("python"), "manage.py", "migrate"], cwd=home, env=env, capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"manage.py migrate failed: {proc.stderr[-2000:]}")
    data = content(n_tickets)
    proc = subprocess.run([venv_bin("python"), "-c", FEEDER], cwd=home, env=env, capture_output=True, text=True,
                          input=json.dumps(data), check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"feeding the helpdesk failed: {proc.stderr[-2000:]}")
    for t, saved in zip(data["tickets"], json.loads(proc.stdout.strip().splitlines()[-1])["tickets"]):
        t.update(saved)
    data["home"], data["env"] = home, env
    return data


def runserver(site: dict, log: str):
    port = servers.free_port()
    argv = [venv_bin("python"), "manage.py", "runserver", "--noreload", "--insecure", f"127.0.0.1:{port}"]
    return servers.app_server(argv, port, log, "/", env=site["env"], cwd=site["home"], timeout=180)


# -- the truth ---------------------------------------------------------------------------------------------------


def truth_of(site: dict, base: str, mirror: str) -> appbench.Truth:
    truth: appbench.Truth = {}

    add = appbench.truth_adder(truth, base)

    q = urllib.parse.quote
    tickets = site["tickets"]
    for k, t in enumerate(tickets):
        ticket, email, key = f"{t['queue']}-{t['id']}", q(t["email"], safe="@"), t["key"]
        path = f"/view/?ticket={ticket}&email={email}&key={key}"
        urls = [path]
        variant = k % 12
        if variant == 1:
            urls.append(f"/view/?key={key}&ticket={ticket}&email={email}")
        elif variant == 3:
            urls.append(f"/view/?ticket={ticket}&email={email.upper()}&key={key.upper()}")
        elif variant == 5:
            urls.append(f"/view/?ticket={t['id']}&email={email}&key={key}")
        elif variant == 7:
            other = next(slug for slug, _, _ in QUEUES if slug != t["queue"])
            urls.append(f"/view/?ticket={other}-{t['id']}&email={email}&key={key}")
        elif variant == 9:
            urls.append(mirror + path)
        elif variant == 11:
            urls.append(path + "&utm_source=newsletter&utm_medium=email")
        add(f"ticket:{t['id']}", None, *urls)
    for k, (slug, *_rest) in enumerate(site["kb"]):
        add(f"kb:{slug}", None, f"/kb/{slug}/", *([f"/kb/{slug.upper()}/"] if k % 2 == 0 else []),
            *([mirror + f"/kb/{slug}/"] if k % 2 == 1 else []))
    add("kb-index", None, "/kb/", mirror + "/kb/")
    add("home", None, "/", mirror + "/", "/?utm_source=newsletter")
    add("submit-form", None, "/tickets/submit/", mirror + "/tickets/submit/")

    first, second = tickets[0], tickets[1]
    add("forbidden", "E3", "/view/", f"/view/?ticket={first['queue']}-{first['id']}&email={q(first['email'], safe='@')}"
        f"&key=00000000-0000-0000-0000-000000000000",
        f"/view/?ticket={first['queue']}-{first['id']}&email=someone%40bench.invalid&key={first['key']}",
        f"/view/?ticket={first['queue']}-{first['id']}&email={q(second['email'], safe='@')}&key={second['key']}",
        f"/view/?ticket=web-99999&email={q(first['email'], safe='@')}&key={first['key']}",
        f"/view/?ticket=web-{first['id']}", f"/view/?email={q(first['email'], safe='@')}",
        f"/view/?ticket=web-x&email={q(first['email'], safe='@')}&key={first['key']}",
        mirror + "/view/", mirror + f"/view/?ticket=web-99999&email={q(first['email'], safe='@')}&key={first['key']}")
    add("not-found", "E3", "/kb/nosuch/", "/kb/nginx-extras/", "/nosuch/", "/tickets/submit/extra/", "/view/x/",
        "/kb/1/", "/helpdesk/", "/static/no-such.css", mirror + "/kb/nosuch/", mirror + "/nosuch/")
    add("helpdesk-login", "L1", "/login/", "/tickets/", "/dashboard/", f"/tickets/{first['id']}/",
        f"/tickets/{second['id']}/edit/", "/reports/", "/kanban/", "/rss/", "/tickets/my-tickets/",
        "/saved-searches/", "/settings/", f"/login/?next={q('/tickets/', safe='')}", mirror + "/login/",
        mirror + "/dashboard/")
    add("admin-login", "L1", "/admin/", "/admin/login/", "/admin/helpdesk/ticket/", mirror + "/admin/")
    return truth


def check(truth: appbench.Truth) -> str:
    """``--check``: see ``app_roundup.check_texts``, then the titles of each group of special pages
    (no crawl: plain HTTP fetches)."""
    return check_texts(NAME, truth) + "\n" + appbench.special_titles(truth)


@contextlib.contextmanager
def build(args: argparse.Namespace, tmp: str) -> Iterator[appbench.Truth]:
    ensure_helpdesk()
    site = setup(tmp, args.tickets)
    logs = os.path.dirname(tmp)
    with runserver(site, os.path.join(logs, "helpdesk.log")) as base, \
            runserver(site, os.path.join(logs, "helpdesk-mirror.log")) as mirror:
        yield truth_of(site, base, mirror)


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tickets", type=int, default=240, help="tickets from Debian changelog uploads")


if __name__ == "__main__":
    sys.exit(appbench.main(NAME, build, __doc__, add_args, check))
