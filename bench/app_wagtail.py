"""Clusters and labels of a crawl of a real Wagtail site: news posts, tags, people, forms, search, walls.

    python bench/app_wagtail.py [--posts 200] [--check] [-v] [--keep DIR]

Held aside: run once the design is settled, its first figures reported as they came.

Runs Wagtail (PyPI ``wagtail``, a Django CMS) from a virtual environment of its own
(``$TMPDIR/websim-bench-wagtail``, installed with pip on first use or by ``scripts/setup.sh bench``).
``wagtail start`` makes a project with Wagtail's default template (its home page, its search view
and its ``404.html``) in the temporary directory; the bench adds a ``news`` app written the way
Wagtail's tutorial writes its blog (an index paginated by Django's ``Paginator.get_page``, posts
with a date, an intro, a body, an author and tags, a tag index, people pages) and a contact form
from ``wagtail.contrib.forms``; ``DEBUG = False``, ``manage.py migrate`` on SQLite, and ``manage.py
runserver --insecure`` serves it on 127.0.0.1, plus a second ``runserver`` on another port over the
same database (a mirror; the site is Wagtail's default site, so both ports serve it). Its content,
saved through Wagtail's page tree (``add_child``) and ``wagtail.contrib.redirects``:

- ``--posts`` news posts, each one upload of the Debian changelogs installed here
  (``appdata.changelog_items``): titled "SOURCE VERSION", the first item the intro, up to three items
  the body, the uploader the author, the upload's date the post's date, tagged with the source
  package and the upload's urgency. A post's page is a sentence or three in the site's frame: posts
  differ in a version, a name and those sentences;
- a page per uploader under ``/people/`` (their name, "Debian uploader", the packages they uploaded
  and the titles of their posts: many have one post), the people index (names and post counts);
- two forms (``/contact/`` and ``/report/``, different fields); a members area restricted to
  signed-in users (Wagtail's page privacy "login"), and a page restricted by a shared password.

The truth (``{url: (group, label)}``, content label ``None``):

- one group per post, per person page, per form, the home page, the people index, each page of
  the news index (12 posts a page, newest first: ``/news/?page=N``), each page of each tag's
  listing (``/news/tags/?tag=T&page=N``) and each page of a few searches (Wagtail's search view, 10
  results a page);
- the variants, each in its page's group: the address without its trailing slash (Django's 301 to
  it); an old address kept by ``wagtail.contrib.redirects`` (a 301 to the post); the mirror port;
  tracking parameters (``utm_source``); ``?page=1``, a page past the last and a page that is not a
  number (``Paginator.get_page`` serves the last and the first page); a query's parameters in
  another order;
- special pages: the project's "Page not found" (404: paths that are no page, below a post, a
  form or the tag index, a missing document, a missing static file), one group, ``E3``; Wagtail's admin login
  (``/admin/...`` redirects there with ``?next=``), one group, ``L1``; Django's admin login
  (``/django-admin/...``), one group, ``L1``; Wagtail's front-end login for pages restricted to
  signed-in users (``/_util/login/?next=...``), one group, ``L1``; Wagtail's "Password required"
  form of the password-restricted page (status 200), one group, ``L1``.

Left out as arguable: the search page without a query (a form alone: thin?) and a search that
finds nothing ("No results found": an answer or a soft 404?), a tag listing of a tag that does not
exist (an empty listing, status 200), the password-reset forms. The URL list is shuffled; the
crawl is websim's shipped defaults. Last line (see ``bench/appbench.py``):

    set=wagtail urls=N groups=G dup_share=D missing=M precision=P recall=R f1=F false_pairs=K
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
import urllib.parse
from typing import Dict, Iterator, List

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import appbench  # noqa: E402
import appdata  # noqa: E402
from app_roundup import check_texts  # noqa: E402

from scrapy_websim.testing import servers  # noqa: E402

NAME = "wagtail"
VENV = os.path.join(tempfile.gettempdir(), "websim-bench-wagtail")
WAGTAIL = "wagtail==8.0.1"
PROJECT = "newsite"
#: the news index's and the tag listings' posts a page; the search view's results a page
PAGE, SEARCH_PAGE = 12, 10
SOURCES = ("nginx", "git", "curl", "sqlite3", "openssl", "systemd", "apache2", "lighttpd", "python3.11", "php8.2",
           "redis", "openssh", "vim", "perl")

SETTINGS = """from .base import *  # noqa: F401,F403
DEBUG = False
SECRET_KEY = "bench-not-secret"
ALLOWED_HOSTS = ["127.0.0.1"]
INSTALLED_APPS = ["news"] + INSTALLED_APPS
WAGTAIL_SITE_NAME = "Debian Package News"
WAGTAILADMIN_BASE_URL = "http://127.0.0.1"
"""

MODELS = '''from django.core.paginator import Paginator
from django.db import models
from modelcluster.contrib.taggit import ClusterTaggableManager
from modelcluster.fields import ParentalKey
from taggit.models import TaggedItemBase
from wagtail.contrib.forms.models import AbstractEmailForm, AbstractFormField
from wagtail.fields import RichTextField
from wagtail.models import Page

PER_PAGE = %d


class NewsIndexPage(Page):
    intro = RichTextField(blank=True)
    subpage_types = ["news.NewsPage", "news.NewsTagIndexPage"]

    def get_context(self, request):
        context = super().get_context(request)
        posts = NewsPage.objects.child_of(self).live().order_by("-date", "-pk")
        context["posts"] = Paginator(posts, PER_PAGE).get_page(request.GET.get("page"))
        return context


class NewsPageTag(TaggedItemBase):
    content_object = ParentalKey("NewsPage", related_name="tagged_items", on_delete=models.CASCADE)


class NewsPage(Page):
    date = models.DateField("Post date")
    intro = models.CharField(max_length=300)
    body = RichTextField(blank=True)
    author = models.ForeignKey("news.PersonPage", null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="posts")
    tags = ClusterTaggableManager(through=NewsPageTag, blank=True)
    parent_page_types = ["news.NewsIndexPage"]


class NewsTagIndexPage(Page):
    def get_context(self, request):
        tag = request.GET.get("tag")
        posts = NewsPage.objects.live().filter(tags__name=tag).order_by("-date", "-pk")
        context = super().get_context(request)
        context["tag"] = tag
        context["posts"] = Paginator(posts, PER_PAGE).get_page(request.GET.get("page"))
        return context


class PeopleIndexPage(Page):
    intro = RichTextField(blank=True)

    def get_context(self, request):
        context = super().get_context(request)
        context["people"] = PersonPage.objects.child_of(self).live().order_by("title")
        return context


class PersonPage(Page):
    role = models.CharField(max_length=100)
    bio = models.CharField(max_length=300, blank=True)
    parent_page_types = ["news.PeopleIndexPage"]


class FormField(AbstractFormField):
    page = ParentalKey("FormPage", on_delete=models.CASCADE, related_name="form_fields")


class FormPage(AbstractEmailForm):
    intro = RichTextField(blank=True)
    thank_you_text = RichTextField(blank=True)
''' % PAGE

TEMPLATES = {
    "base.html": """{% load static wagtailcore_tags %}<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>{% block title %}{{ page.title }}{% endblock %} - Debian Package News</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="{% static 'css/newsite.css' %}"></head>
<body class="{% block body_class %}{% endblock %}">
<header><p class="site"><a href="/">Debian Package News</a></p>
<nav><a href="/">Home</a> <a href="/news/">News</a> <a href="/people/">People</a> <a href="/contact/">Contact</a>
<a href="/report/">Report a problem</a> <a href="/members/">Members</a></nav>
<form action="/search/" method="get"><input type="text" name="query" placeholder="Search news">
<input type="submit" value="Search"></form></header>
<main>{% block content %}{% endblock %}</main>
<footer><p>Posts are written from the Debian changelogs of the packages they announce.
Debian is a registered trademark of Software in the Public Interest, Inc.</p></footer>
</body></html>
""",
    "404.html": """{% extends "base.html" %}
{% block title %}Page not found{% endblock %}
{% block body_class %}template-404{% endblock %}
{% block content %}<h1>Page not found</h1>
<h2>Sorry, this page could not be found.</h2>{% endblock %}
""",
    "home/home_page.html": """{% extends "base.html" %}
{% block content %}<h1>Debian Package News</h1>
<p>Every upload of a Debian package we follow gets a post here: its version, the day it was uploaded,
who uploaded it and what its changelog says.</p>
<ul><li><a href="/news/">All posts, newest first</a></li><li><a href="/people/">The uploaders</a></li>
<li><a href="/news/tags/?tag=high">Uploads of high urgency</a></li></ul>{% endblock %}
""",
    "news/news_index_page.html": """{% extends "base.html" %}{% load wagtailcore_tags %}
{% block content %}<h1>{{ page.title }}</h1><div class="intro">{{ page.intro|richtext }}</div>
{% include "news/post_list.html" %}{% endblock %}
""",
    "news/news_tag_index_page.html": """{% extends "base.html" %}{% load wagtailcore_tags %}
{% block content %}<h1>Posts tagged {{ tag }}</h1>
{% include "news/post_list.html" with query="tag="|add:tag|add:"&" %}{% endblock %}
""",
    "news/post_list.html": """{% load wagtailcore_tags %}<ul class="posts">{% for post in posts %}
<li><h2><a href="{% pageurl post %}">{{ post.title }}</a></h2><p class="meta">{{ post.date|date:"j F Y" }}</p>
<p>{{ post.intro }}</p></li>{% endfor %}</ul>
<p class="pages">Page {{ posts.number }} of {{ posts.paginator.num_pages }}.
{% if posts.has_previous %}<a href="?{{ query }}page={{ posts.previous_page_number }}">Newer posts</a>{% endif %}
{% if posts.has_next %}<a href="?{{ query }}page={{ posts.next_page_number }}">Older posts</a>{% endif %}</p>
""",
    "news/news_page.html": """{% extends "base.html" %}{% load wagtailcore_tags %}
{% block content %}<article><h1>{{ page.title }}</h1>
<p class="meta">{{ page.date|date:"j F Y" }}{% if page.author %} by
<a href="{% pageurl page.author %}">{{ page.author.title }}</a>{% endif %}</p>
<p class="intro">{{ page.intro }}</p>{{ page.body|richtext }}
<p class="tags">Tags: {% for tag in page.tags.all %}
<a href="/news/tags/?tag={{ tag.name|urlencode }}">{{ tag.name }}</a> {% endfor %}</p>
</article><p><a href="{{ page.get_parent.url }}">Back to the news</a></p>{% endblock %}
""",
    "news/people_index_page.html": """{% extends "base.html" %}{% load wagtailcore_tags %}
{% block content %}<h1>{{ page.title }}</h1><div class="intro">{{ page.intro|richtext }}</div>
<ul>{% for person in people %}
<li><a href="{% pageurl person %}">{{ person.title }}</a>: {{ person.posts.count }}</li>{% endfor %}</ul>
{% endblock %}
""",
    "news/person_page.html": """{% extends "base.html" %}{% load wagtailcore_tags %}
{% block content %}<h1>{{ page.title }}</h1><p class="role">{{ page.role }}</p><p>{{ page.bio }}</p>
<h2>Posts</h2><ul>{% for post in page.posts.all %}
<li><a href="{% pageurl post %}">{{ post.title }}</a></li>{% endfor %}</ul>
{% endblock %}
""",
    "news/form_page.html": """{% extends "base.html" %}{% load wagtailcore_tags %}
{% block content %}<h1>{{ page.title }}</h1>{{ page.intro|richtext }}
<form action="{% pageurl page %}" method="POST">{% csrf_token %}{{ form.as_p }}<input type="submit" value="Send"></form>
{% endblock %}
""",
    "news/form_page_landing.html": """{% extends "base.html" %}{% load wagtailcore_tags %}
{% block content %}<h1>{{ page.title }}</h1>{{ page.thank_you_text|richtext }}{% endblock %}
""",
}

#: runs in the project with Django set up: the page tree, the people, the posts, the redirects
FEEDER = r"""
import datetime as dt, json, sys
import django
django.setup()
from django.contrib.auth.models import Group
from wagtail.contrib.redirects.models import Redirect
from wagtail.models import Page, PageViewRestriction, Site
from news.models import (FormField, FormPage, NewsIndexPage, NewsPage, NewsTagIndexPage, PeopleIndexPage,
                         PersonPage)
from home.models import HomePage
data = json.load(sys.stdin)
home = HomePage.objects.first()
home.title = "Debian Package News"
home.save()
news = home.add_child(instance=NewsIndexPage(title="News", slug="news",
                      intro="<p>Uploads of Debian packages, one post each, newest first.</p>"))
tags = news.add_child(instance=NewsTagIndexPage(title="Tags", slug="tags"))
people = home.add_child(instance=PeopleIndexPage(title="People", slug="people",
                        intro="<p>The people who uploaded the packages announced here.</p>"))
persons = {}
for name, slug, bio in data["people"]:
    persons[name] = people.add_child(instance=PersonPage(title=name, slug=slug, role="Debian uploader", bio=bio))
out = {"posts": []}
for p in data["posts"]:
    page = news.add_child(instance=NewsPage(title=p["title"], slug=p["slug"], date=dt.date.fromisoformat(p["date"]),
                          intro=p["intro"], body="".join(f"<p>{b}</p>" for b in p["body"]),
                          author=persons[p["author"]]))
    page.tags.add(*p["tags"])
    page.save()
    out["posts"].append(page.url_path)
for title, slug, intro, fields in data["forms"]:
    form = FormPage(title=title, slug=slug, intro=intro, thank_you_text="<p>Thank you.</p>",
                    to_address="", from_address="", subject="")
    for label, kind in fields:
        choices = "minor\nserious\ncritical" if kind == "dropdown" else ""
        form.form_fields.add(FormField(label=label, field_type=kind, required=True, choices=choices))
    home.add_child(instance=form)
members = home.add_child(instance=NewsIndexPage(title="Members", slug="members",
                         intro="<p>Notes for the people who upload packages.</p>"))
PageViewRestriction.objects.create(page=members, restriction_type=PageViewRestriction.LOGIN)
embargo = home.add_child(instance=NewsIndexPage(title="Embargoed advisories", slug="embargoed",
                         intro="<p>Security advisories before their release date.</p>"))
PageViewRestriction.objects.create(page=embargo, restriction_type=PageViewRestriction.PASSWORD, password="bench")
site = Site.objects.get(is_default_site=True)
for old, slug in data["redirects"]:
    Redirect.objects.create(old_path=Redirect.normalise_path(old), site=None,
                            redirect_page=news.get_children().get(slug=slug), is_permanent=True)
print(json.dumps(out))
"""

FORMS = (
    ("Contact", "contact", "<p>Write to the editors of Debian Package News.</p>",
     (("Your name", "singleline"), ("Your e-mail address", "email"), ("Message", "multiline"))),
    ("Report a problem", "report", "<p>Tell us about a post that names the wrong version or upload.</p>",
     (("Address of the post", "url"), ("What is wrong", "multiline"), ("Severity", "dropdown"))),
)


def venv_bin(name: str) -> str:
    return os.path.join(VENV, "bin", name)


def ensure_wagtail() -> None:
    if os.path.exists(venv_bin("wagtail")):
        return
    appbench.pip_install(VENV, [WAGTAIL])


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def content(n: int) -> dict:
    """People, ``n`` posts from the changelogs and the redirects (see the module docstring)."""
    chosen, _ = appdata.changelog_items(SOURCES, n)
    posts, seen, count = [], set(), collections.Counter()
    for entry, items in chosen:
        title = f"{entry.source} {entry.version.split(':', 1)[-1]}"
        slug = slugify(title)
        if slug in seen:
            continue
        seen.add(slug)
        count[entry.author] += 1
        posts.append({"title": title, "slug": slug, "date": entry.date.date().isoformat(), "intro": items[0],
                      "body": items[1:4], "author": entry.author, "tags": [entry.source, entry.urgency],
                      "source": entry.source, "urgency": entry.urgency})
    people, slugs = [], set()
    for name in sorted(count):
        slug = slugify(name) or "uploader"
        while slug in slugs:
            slug += "-2"
        slugs.add(slug)
        packages = sorted({p["source"] for p in posts if p["author"] == name})
        people.append((name, slug, f"Uploaded {', '.join(packages)}."))
    redirects = [(f"/blog/{p['date'][:4]}/{p['slug']}.html", p["slug"]) for p in posts[5::23]]
    return {"posts": posts, "people": people, "forms": FORMS, "redirects": redirects}


def setup(tmp: str, n_posts: int) -> dict:
    """The project in ``tmp/site``, migrated and fed; its posts in the order of ``content``."""
    os.makedirs(tmp)
    home = os.path.join(tmp, "site")
    os.makedirs(home)
    subprocess.run([venv_bin("wagtail"), "start", PROJECT, home], check=True, capture_output=True)
    app = os.path.join(home, "news")
    os.makedirs(os.path.join(app, "migrations"))
    for path, text in {"__init__.py": "", "migrations/__init__.py": "", "models.py": MODELS}.items():
        with open(os.path.join(app, path), "w", encoding="utf-8") as fh:
            fh.write(text)
    for path, text in TEMPLATES.items():
        where = os.path.join(home, PROJECT, "templates", path) if "/" not in path else \
            os.path.join(app, "templates", path)
        os.makedirs(os.path.dirname(where), exist_ok=True)
        with open(where, "w", encoding="utf-8") as fh:
            fh.write(text)
    with open(os.path.join(home, PROJECT, "settings", "bench.py"), "w", encoding="utf-8") as fh:
        fh.write(SETTINGS)
    env = dict(os.environ, DJANGO_SETTINGS_MODULE=f"{PROJECT}.settings.bench", PYTHONPATH=home)
    for argv in (["makemigrations", "news"], ["migrate"]):
        proc = subprocess.run([venv_bin("python"), "manage.py", *argv], cwd=home, env=env, capture_output=True,
                              text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"manage.py {argv[0]} failed: {proc.stderr[-2000:]}")
    data = content(n_posts)
    proc = subprocess.run([venv_bin("python"), "-c", FEEDER], cwd=home, env=env, capture_output=True, text=True,
                          input=json.dumps(data), check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"feeding the site failed: {proc.stderr[-2000:]}")
    proc = subprocess.run([venv_bin("python"), "manage.py", "update_index"], cwd=home, env=env, capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"update_index failed: {proc.stderr[-2000:]}")
    data["home"], data["env"] = home, env
    return data


def runserver(site: dict, log: str):
    port = servers.free_port()
    argv = [venv_bin("python"), "manage.py", "runserver", "--noreload", "--insecure", f"127.0.0.1:{port}"]
    return servers.app_server(argv, port, log, "/", env=site["env"], cwd=site["home"], timeout=180)


# -- the truth ---------------------------------------------------------------------------------------------------


def search_terms(posts: List[dict]) -> List[str]:
    """The four package names with the most posts (their titles name them: a search for one finds its posts)."""
    by: Dict[str, int] = collections.Counter(p["source"] for p in posts)
    return [s for s in sorted(by, key=lambda s: (-by[s], s))[:4]]


def truth_of(site: dict, base: str, mirror: str) -> appbench.Truth:
    truth: appbench.Truth = {}

    add = appbench.truth_adder(truth, base)

    q = urllib.parse.quote
    posts = site["posts"]
    redirect_of = {f"/news/{slug}/": old for old, slug in site["redirects"]}
    for k, p in enumerate(posts):
        path = f"/news/{p['slug']}/"
        urls = [path]
        variant = k % 10
        if variant == 1:
            urls.append(path[:-1])
        elif variant == 3:
            urls.append(mirror + path)
        elif variant == 7:
            urls.append(path + "?utm_source=newsletter&utm_medium=email")
        if path in redirect_of:
            urls.append(redirect_of[path])
        add(f"post:{p['slug']}", None, *urls)
    for k, (name, slug, _) in enumerate(site["people"]):
        path = f"/people/{slug}/"
        add(f"person:{slug}", None, path, *([mirror + path] if k % 9 == 4 else []),
            *([path[:-1]] if k % 9 == 6 else []))
    add("people", None, "/people/", "/people", mirror + "/people/")
    add("home", None, "/", mirror + "/", "/?utm_source=newsletter")
    add("form:contact", None, "/contact/", "/contact", mirror + "/contact/")
    add("form:report", None, "/report/")

    def listing(group: str, path: str, query: str, count: int, per: int) -> None:
        last = max(1, (count + per - 1) // per)
        for n in range(1, last + 1):
            urls = [f"{path}?{query}page={n}" if n > 1 else (f"{path}?{query.rstrip('&')}" if query else path)]
            if n == 1:
                urls += [f"{path}?{query}page=1", f"{path}?{query}page=first"]
            if n == last:
                urls.append(f"{path}?{query}page={last + 5}")
            if n == 2:
                urls.append(mirror + urls[0])
            add(f"{group}:{n}", None, *urls)

    listing("news", "/news/", "", len(posts), PAGE)
    add("news:1", None, "/news", "/news/?utm_source=feed")
    for tag in sorted({t for p in posts for t in p["tags"]}):
        count = sum(1 for p in posts if tag in p["tags"])
        listing(f"tag:{tag}", "/news/tags/", f"tag={q(tag)}&", count, PAGE)
    for term in search_terms(posts):
        count = sum(1 for p in posts if p["source"] == term)
        listing(f"search:{term}", "/search/", f"query={q(term)}&", count, SEARCH_PAGE)

    add("not-found", "E3", "/news/no-such-post/", "/news/nginx-0-0-1/", "/people/nobody/", "/blog/", "/nosuch/",
        "/news/tags/nosuch/", "/contact/thanks/", f"/news/{posts[0]['slug']}/comments/", "/documents/99/x.pdf",
        "/static/no-such.css", mirror + "/news/no-such-post/", mirror + "/nosuch/")
    add("wagtail-admin-login", "L1", "/admin/", "/admin/login/", "/admin/pages/", "/admin/pages/3/edit/",
        "/admin/users/", "/admin/documents/", mirror + "/admin/", f"/admin/login/?next={q('/admin/pages/', safe='')}")
    add("django-admin-login", "L1", "/django-admin/", "/django-admin/login/", "/django-admin/auth/user/",
        mirror + "/django-admin/")
    add("members-login", "L1", "/members/", "/members/?page=2", "/_util/login/", "/_util/login/?next=/members/",
        mirror + "/members/")
    add("password-wall", "L1", "/embargoed/", "/embargoed/?page=1", mirror + "/embargoed/")
    return truth


def check(truth: appbench.Truth) -> str:
    """``--check``: see ``app_roundup.check_texts``, then the titles of each group of special pages
    (no crawl: plain HTTP fetches)."""
    return check_texts(NAME, truth) + "\n" + appbench.special_titles(truth)


@contextlib.contextmanager
def build(args: argparse.Namespace, tmp: str) -> Iterator[appbench.Truth]:
    ensure_wagtail()
    site = setup(tmp, args.posts)
    logs = os.path.dirname(tmp)
    with runserver(site, os.path.join(logs, "wagtail.log")) as base, \
            runserver(site, os.path.join(logs, "wagtail-mirror.log")) as mirror:
        yield truth_of(site, base, mirror)


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--posts", type=int, default=200, help="news posts from Debian changelog uploads")


if __name__ == "__main__":
    sys.exit(appbench.main(NAME, build, __doc__, add_args, check))
