"""Clusters and labels of a crawl of a real Redmine: issues, a wiki, news and a repository browser.

    python bench/app_redmine.py --check            # set up, fetch every truth URL once: statuses per label
    python bench/app_redmine.py [-v] [--keep DIR]  # set up, crawl with the shipped defaults, score
    python bench/appbench.py DIR [--refeature]     # re-score a kept crawl with the current code
    options: [--issues 220] [--articles 24] [--revisions 90] [--seed 7]

Installs Debian's ``redmine`` and ``redmine-sqlite`` (Redmine 5.0.4, Rails 6.1, Ruby 3.1) and git
if missing. Builds a Redmine of its own in the temporary directory: Debian's code linked, its own
copy of the configuration and Gemfile, one instance (Debian's multi-instance layout,
``REDMINE_INSTANCE``) with its own SQLite database, secret, files, logs and caches; migrated and
given Redmine's default data (trackers, statuses, roles) by its own rake tasks. Nothing under
``/etc/redmine`` or ``/var/lib/redmine`` is read or written. Everything is saved through Redmine's
own models by a script run with ``rails runner``:

- ``--issues`` issues (and twelve more, below), each one entry of a Debian changelog installed
  here (``/usr/share/doc/*/changelog.Debian.gz``, one to three items and at most 320 characters:
  most are a sentence or two, many say "New upstream release." or "Team upload."), at most two
  per source package, in three public projects by the package's Debian section (libraries,
  language runtimes, system tools); subject "package version: first item", the items as a
  Textile list, the uploader as author (one user per uploader), dated as the upload, tracker Bug /
  Feature / Support by its words, target version ``bullseye`` or ``bookworm`` by its date (the
  first closed); one in four gets the package's next upload as a note and is resolved or closed;
- twelve news items, each the newest entry of a package's ``NEWS.Debian.gz``;
- a wiki (project "Newsroom") of ``--articles`` articles from the true texts of
  ``../shared/data/article-extraction-benchmark`` (real prose), each saved in two versions (60 %
  of the text, then all of it), three of them renamed afterwards (Redmine keeps a redirect from
  the old title), and a start page linking to them; a second wiki-only project, "Handbook";
- the repository browser (project "scrapy-websim") over a single-branch bare clone of this
  repository's ``main``: a few hundred real commits, fetched once (autofetch off, as with a cron
  job);
- a private project and an archived one (six issues each), e-mail notifications off.

``rails server`` (WEBrick) serves the instance on two ports of 127.0.0.1: two processes over the
one database (a fleet of two). The truth (``{url: (group, label)}``, about 520 URLs, each URL its
own group unless said):

- every public issue (``/issues/N``), every news item, every wiki article, its history (half of
  them) and its first version (a third: 60 % of the text), ``--revisions`` changeset pages (every
  third of the oldest commits: message, parents and the list of changed files), the diff pages
  of fifteen of them that change 40 lines or fewer, eight files, three file histories, five
  directories, the first eight pages of the revision list, every page of the open-issue list and
  the first pages of each project's, the projects' overviews, roadmaps and news lists, the six
  versions, the wiki's start page and its index, the home page and the project list (board
  and list view, two pages);
- the variants, each in its page's group: the second port (issues, a page of the issue list,
  wiki pages, changesets, the home page, the login page and one 404); ``utm_*`` tracking
  parameters; Redmine's quick jump (``/search?q=%23N``, 302 to the issue); default parameters
  made explicit (``?tab=history`` on an issue with notes, ``?page=1``, ``?sort=id:desc``,
  ``?per_page=25``, ``?display_type=board``, the current wiki version by its number
  ``/wiki/Page/2``, ``?rev=main`` on the repository root); a trailing slash; a wiki title in
  lower case; a renamed page's old title (302); a changeset by its 8-hex short hash and through
  the "Revision" box (``/revision?rev=H``); the repository root with and without its
  identifier; the wiki start page as ``/wiki``, ``/wiki/Wiki`` and ``/wiki/wiki``;
- special pages, one group per template and status whatever the message says: ``L1``: the
  login page with different ``back_url=`` values, and as the 302 target of ``/my/page``,
  ``/projects/new``, the private project and the private and archived projects' issues
  (Redmine sends anonymous users to the login page); ``E3``: Redmine's 404 in its layout
  (missing issues, news, projects, users and wiki pages: "The page you were trying to access
  doesn't exist or has been removed"; missing revisions and files: "The entry or revision was
  not found in the repository"; inside a project, framed by its menu), the static
  ``public/404.html`` of unknown routes, Redmine's 403 in its layout (the archived project:
  "...has been archived"; a disabled module: "You are not authorized to access this page");
  ``E1``: a page number past SQLite's 64-bit integers (what a fuzzer sends), answered by the
  issue lists with Redmine's "An error occurred while executing the query" 500 in its layout,
  and by other lists with the static ``public/500.html``.

Left out as arguable: an issue's ``?tab=notes`` (the same issue with its history hidden), wiki
diffs and annotations, the wiki's index by date (here the index by title under date headings),
the activity pages (periods counted back from today, mostly "No data to display"), searches,
calendars and Gantt charts, an issue list sorted or filtered otherwise, the lost-password form,
the Atom/CSV/PDF exports (not HTML), and ``/issues/gantt.png`` (a 500 only where ImageMagick
lacks its fonts). Redmine writes relative times ("3 days ago"): two fetches of one page a minute
apart are the same. Each server answers one request at a time (``Rack::Lock``, as a Passenger
or Unicorn worker does): Redcarpet, which renders the repository's Markdown files and READMEs,
is not thread-safe, and two renders at once abort WEBrick's whole process. Setup takes 3-6
minutes (most of it Rails booting four times on a busy machine). Last line (see
``bench/appbench.py``):

    set=redmine urls=N groups=G dup_share=D missing=M precision=P recall=R f1=F false_pairs=K
    missed_pairs=K lost=L rules=right/special (pct) content_as_junk=J
"""

from __future__ import annotations

import argparse
import contextlib
import email.utils
import glob
import gzip
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
import unicodedata
import urllib.parse
import urllib.request
from typing import Dict, Iterator, List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import appbench  # bench/appbench.py

from scrapy_websim.testing import servers

REDMINE = "/usr/share/redmine"
PACKAGES = ("redmine", "redmine-sqlite", "git")
REPO = appbench.REPO
#: next to the repository (or to the directory of git worktrees the repository is in)
ARTICLES = next((p for p in (os.path.join(up, "shared", "data", "article-extraction-benchmark", "ground-truth.json")
                             for up in (os.path.dirname(REPO), os.path.dirname(os.path.dirname(REPO))))
                 if os.path.exists(p)), "")
INSTANCE = "bench"

#: Debian sections -> the issue-tracker project their packages' changelog entries go to
SECTIONS = {
    "libraries": ("libs", "libdevel", "oldlibs", "introspection"),
    "languages": ("ruby", "php", "python", "java", "perl", "javascript", "interpreters"),
}
TRACKER_PROJECTS = ("libraries", "languages", "system")

FEEDER = r"""
# Fills this Redmine instance from a JSON file (ARGV[0]) through its own models; writes ids to ARGV[1].
require 'json'
data = JSON.parse(File.read(ARGV[0]))
out = {"issues" => [], "news" => [], "versions" => {}}
t = ->(s) { Time.iso8601(s) }
ActiveRecord::Base.transaction do  # one commit: sqlite syncs the disk once
Setting.app_title = data["title"]
Setting.default_language = 'en'
Setting.text_formatting = 'textile'
Setting.notified_events = []
Setting.autofetch_changesets = '0'  # the changesets are fetched once, below, as a cron job would
admin = User.find_by_login('admin')
users = {}
data["users"].each do |u|
  user = User.new(:firstname => u["firstname"], :lastname => u["lastname"], :mail => "#{u['login']}@example.org")
  user.login = u["login"]
  user.password = user.password_confirmation = "bench-#{u['login']}-pass"
  user.save!
  users[u["login"]] = user
end
User.current = admin
trackers = Tracker.all.index_by(&:name)
statuses = IssueStatus.all.index_by(&:name)
priority = IssuePriority.default || IssuePriority.first
projects = {}
data["projects"].each do |p|
  project = Project.new(:name => p["name"], :identifier => p["identifier"], :description => p["description"],
                        :is_public => p["public"])
  project.enabled_module_names = p["modules"]
  project.trackers = Tracker.all
  project.save!
  projects[p["identifier"]] = project
end
versions = {}
data["versions"].each do |v|
  version = Version.create!(:project => projects[v["project"]], :name => v["name"], :description => v["description"],
                            :effective_date => Date.iso8601(v["date"]), :status => 'open')
  versions[[v["project"], v["name"]]] = version
  out["versions"]["#{v['project']}/#{v['name']}"] = version.id
end
data["issues"].each do |i|
  created = t.(i["created"])
  issue = Issue.new(:project => projects[i["project"]], :tracker => trackers[i["tracker"]], :subject => i["subject"],
                    :description => i["description"], :priority => priority, :status => statuses["New"],
                    :created_on => created, :updated_on => created)
  issue.author = users[i["author"]]
  issue.fixed_version = versions[[i["project"], i["version"]]] if i["version"]
  issue.start_date = created.to_date
  issue.save or raise "issue #{i['subject']}: #{issue.errors.full_messages.join(', ')}"
  issue.update_columns(:created_on => created)
  (i["journals"] || []).each do |j|
    issue.reload
    issue.init_journal(users[j["author"]], j["notes"])
    issue.status = statuses[j["status"]] if j["status"]
    issue.save or raise "journal of #{i['subject']}: #{issue.errors.full_messages.join(', ')}"
    at = t.(j["created"])
    issue.current_journal.update_columns(:created_on => at)
    issue.update_columns(:updated_on => at)
    issue.update_columns(:closed_on => at) if issue.closed?
  end
  out["issues"] << issue.id
end
data["versions"].each { |v| versions[[v["project"], v["name"]]].update!(:status => v["status"]) }
data["wiki"].each do |w|
  page = projects[w["project"]].wiki.find_or_new_page(w["title"])
  w["versions"].each do |v|
    content = page.content || WikiContent.new(:page => page)
    content.text = v["text"]
    content.comments = v["comments"]
    content.author = users[v["author"]] || admin
    page.save_with_content(content) or raise "wiki page #{w['title']} not saved"
    page.reload
    at = t.(v["date"])
    page.content.update_columns(:updated_on => at)
    page.content.versions.order(:version).last.update_columns(:updated_on => at)
    page.update_columns(:created_on => at) if page.content.version == 1
  end
  if w["rename_to"]
    page.reload
    page.title = w["rename_to"]
    page.save!
  end
end
data["news"].each do |n|
  news = News.new(:project => projects[n["project"]], :title => n["title"], :summary => n["summary"],
                  :description => n["description"])
  news.author = users[n["author"]] || admin
  news.save!
  news.update_columns(:created_on => t.(n["created"]))
  out["news"] << news.id
end
data["repositories"].each do |r|
  repo = Repository::Git.new(:project => projects[r["project"]], :identifier => r["identifier"], :url => r["url"],
                             :is_default => true, :path_encoding => 'UTF-8')
  repo.save!
  repo.fetch_changesets
end
data["archive"].each { |ident| projects[ident].reload.archive }
end
File.write(ARGV[1], JSON.generate(out))
"""


def ensure_packages() -> None:
    if os.path.isfile(os.path.join(REDMINE, "config", "application.rb")) and shutil.which("git") and \
            os.path.isdir("/usr/share/doc/redmine-sqlite"):
        return
    print("installing " + " ".join(PACKAGES), flush=True)
    subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *PACKAGES], check=True,
                   stdout=subprocess.DEVNULL, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))


# ---------------------------------------------------------------- real content

HEAD = re.compile(r"^(\S+) \(([^)]+)\) [^;]*;")
TRAIL = re.compile(r"^ -- (.+?) <[^>]*>  (.+)$")


def debian_entries(kind: str) -> Dict[str, List[dict]]:
    """{source package: its entries, newest first} of every ``/usr/share/doc/*/{kind}.Debian.gz``
    (``changelog`` or ``NEWS``); an entry has ``pkg``, ``version``, ``lines``, ``maint``, ``date``
    (ISO 8601) and ``section`` (the Debian section of the binary package whose directory it is in)."""
    sections = {}
    pkg = ""
    with open("/var/lib/dpkg/status", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.startswith("Package: "):
                pkg = line.split()[1]
            elif line.startswith("Section: "):
                sections[pkg] = line.split()[1]
    out: Dict[str, List[dict]] = {}
    for path in sorted(glob.glob(f"/usr/share/doc/*/{kind}.Debian.gz")):
        try:
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError, EOFError):
            continue
        section = sections.get(os.path.basename(os.path.dirname(path)), "misc")
        entries: List[dict] = []
        cur: Optional[dict] = None
        for line in text.splitlines():
            m = HEAD.match(line)
            if m:
                cur = {"pkg": m.group(1), "version": m.group(2), "lines": [], "section": section}
                continue
            m = TRAIL.match(line)
            if m and cur is not None:
                try:
                    cur["date"] = email.utils.parsedate_to_datetime(m.group(2)).isoformat()
                except (TypeError, ValueError):
                    cur = None
                    continue
                cur["maint"] = m.group(1).strip()
                entries.append(cur)
                cur = None
            elif cur is not None:
                cur["lines"].append(line)
        if entries and entries[0]["pkg"] not in out:  # one copy of a source's changelog
            out[entries[0]["pkg"]] = entries
    return out


def bullets(lines: List[str]) -> List[Tuple[int, str]]:
    """A changelog entry's items as (depth, text): ``*`` items depth 1, ``-`` and ``+`` depth 2,
    continuation lines joined; ``[ Name ]`` lines (who did the items below) kept as depth 0."""
    items: List[Tuple[int, str]] = []
    for line in lines:
        s = line.strip()
        if not s:
            continue
        if s.startswith("[") and s.endswith("]"):
            items.append((0, s))
        elif s[:2] in ("* ", "- ", "+ "):
            items.append((1 if s[0] == "*" else 2, s[2:].strip()))
        elif items:
            depth, text = items[-1]
            items[-1] = (depth, text + " " + s)
        else:
            items.append((0, s))
    return items


def prose(text: str) -> str:
    """Plain text as Textile: no markup a sentence could start by accident (Redmine's wiki links,
    macros, tables, images, block signatures)."""
    text = text.replace("[[", "(").replace("]]", ")").replace("{{", "(").replace("}}", ")").replace("|", "/")
    text = re.sub(r"!(\S)", r"! \1", text)
    text = re.sub(r"^(h\d|bq|fn\d+|p|pre|bc|table)\.", r"\1 .", text.strip())
    return text.lstrip("*#-=>")


def textile_items(items: List[Tuple[int, str]]) -> str:
    out = []
    for depth, text in items:
        out.append(("*" * depth + " " if depth else "") + prose(text))
    return "\n".join(out)


def news_blocks(lines: List[str]) -> List[str]:
    """A NEWS entry as Textile blocks: its paragraphs, and its ``*``/``-`` items as list items."""
    blocks: List[List[str]] = []
    cur: List[str] = []
    for line in lines + [""]:
        s = line.strip()
        if not s:
            if cur:
                blocks.append(cur)
            cur = []
        elif s[:2] in ("* ", "- ", "o "):
            if cur and not cur[-1].startswith("* "):
                blocks.append(cur)
                cur = []
            cur.append("* " + prose(s[2:]))
        elif cur:
            cur[-1] += " " + (prose(s) if not cur[-1].startswith("* ") else s)
        else:
            cur.append(prose(s))
    return ["\n".join(b) for b in blocks]


def login_of(name: str, used: Dict[str, str]) -> str:
    if name in used:
        return used[name]
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    base = re.sub(r"[^a-z0-9]+", ".", ascii_name.lower()).strip(".")[:40] or "maintainer"
    login, n = base, 1
    while login in used.values():
        n += 1
        login = f"{base}{n}"
    used[name] = login
    return login


def clip(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    return text[:width].rsplit(" ", 1)[0].rstrip(",;:") + "..."


def project_of(section: str) -> str:
    return next((p for p, secs in SECTIONS.items() if section in secs), "system")


def pick_issues(changelogs: Dict[str, List[dict]], n: int, rng: random.Random) -> List[Tuple[dict, dict]]:
    """``n`` (entry, newer entry) pairs: changelog entries of one to three items and at most 320
    characters (a ticket with a sentence or two of its own), at most two per source package."""
    pool = []
    for pkg in sorted(changelogs):
        entries = changelogs[pkg]
        fit = [(e, entries[k - 1]) for k, e in enumerate(entries) if k
               and 1 <= sum(d == 1 for d, _ in bullets(e["lines"])) <= 3
               and len(" ".join(t for _, t in bullets(e["lines"]))) <= 320]
        pool.extend(rng.sample(fit, min(2, len(fit))))
    return rng.sample(pool, n)


def tracker_of(text: str) -> str:
    if re.search(r"\b(fix|fixes|fixed|crash|CVE-\d|Closes: ?#|FTBFS|regression)", text, re.I):
        return "Bug"
    return "Feature" if re.search(r"new upstream|\bnew\b|\badd", text, re.I) else "Support"


def article_pages(n: int) -> List[Tuple[str, str]]:
    """(wiki title, text) of ``n`` articles of the extraction benchmark (1500+ characters)."""
    with open(ARTICLES, encoding="utf-8") as fh:
        items = json.load(fh)
    out: List[Tuple[str, str]] = []
    seen = set()
    for _, item in sorted(items.items()):
        body = item.get("articleBody", "")
        if len(body) < 1500:
            continue
        slug = urllib.parse.urlsplit(item.get("url", "")).path.rstrip("/").rsplit("/", 1)[-1]
        words = [w for w in re.split(r"[^A-Za-z]+", slug.rsplit(".", 1)[0]) if w and not w.isdigit()][:5]
        title = "_".join(words).capitalize() if len(words) >= 2 else f"Article_{len(out) + 1}"
        if title.lower() in seen:
            continue
        seen.add(title.lower())
        out.append((title, body))
        if len(out) == n:
            break
    return out


def wikitext(title: str, body: str, share: float) -> str:
    paras = [prose(p) for p in body.split("\n") if p.strip()]
    keep = [p for p in paras[: max(2, int(len(paras) * share))] if p]
    out = [f"h1. {title.replace('_', ' ')}"]
    for i, para in enumerate(keep):
        if i and i % 4 == 0:
            out.append(f"h2. Part {i // 4 + 1}")
        out.append(para)
    return "\n\n".join(out) + "\n"


def plan(rng: random.Random, n_issues: int, n_articles: int, n_news: int) -> dict:
    """What the instance holds (the feeder's input) and what the truth needs to know about it."""
    changelogs = debian_entries("changelog")
    picked = pick_issues(changelogs, n_issues + 12, rng)
    picked.sort(key=lambda pair: pair[0]["date"])
    names: Dict[str, str] = {}
    issues = []
    for k, (entry, newer) in enumerate(picked):
        items = bullets(entry["lines"])
        first = next((t for d, t in items if d == 1), items[0][1])
        if k < n_issues:
            project = project_of(entry["section"])
        else:  # the last twelve: six in a private project, six in an archived one
            project = "internal" if k % 2 else "old-tools"
        created = entry["date"]
        issue = {"project": project, "tracker": tracker_of(" ".join(t for _, t in items)),
                 "subject": clip(f"{entry['pkg']} {entry['version']}: {prose(first)}", 200),
                 "description": textile_items(items), "author": login_of(entry["maint"], names),
                 "created": created, "journals": [],
                 "version": "bookworm" if "2021-08-14" < created[:10] <= "2023-06-10" else
                 "bullseye" if "2019-07-06" < created[:10] <= "2021-08-14" else None}
        if k % 4 == 1:
            later = newer["date"] if newer["date"] > created else created
            issue["journals"].append({
                "author": login_of(newer["maint"], names), "created": later,
                "status": "Resolved" if k % 8 == 1 else "Closed",
                "notes": f"Follow-up in {newer['version']}:\n\n" + textile_items(bullets(newer["lines"]))})
        issues.append(issue)

    news_entries = debian_entries("NEWS")
    news = []
    for pkg in rng.sample(sorted(news_entries), len(news_entries)):
        entry = news_entries[pkg][0]
        paras = news_blocks(entry["lines"])
        text = "\n\n".join(paras)
        if not paras or not 200 <= len(text) <= 2000:
            continue
        news.append({"project": project_of(entry["section"]), "title": clip(f"{pkg} {entry['version']}", 60),
                     "summary": clip(paras[0].lstrip("* ").replace("\n* ", " "), 250), "description": text,
                     "author": login_of(entry["maint"], names), "created": entry["date"]})
        if len(news) == n_news:
            break
    news.sort(key=lambda x: x["created"])

    articles = article_pages(n_articles + 1)
    handbook_title, handbook_body = articles.pop()
    start = int(time.time()) - 5 * 86400
    wiki = []
    for i, (title, body) in enumerate(articles):
        when = [time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(start + i * 600 + k * 3600)) for k in (0, 1)]
        wiki.append({"project": "newsroom", "title": title,
                     "rename_to": f"{title}_(article)" if i % 8 == 3 else None,
                     "versions": [{"text": wikitext(title, body, 0.6), "comments": "first draft", "date": when[0],
                                   "author": issues[i]["author"]},
                                  {"text": wikitext(title, body, 1.0), "comments": "complete text",
                                   "date": when[1], "author": issues[i]["author"]}]})
    final = [w["rename_to"] or w["title"] for w in wiki]
    index = "h1. Newsroom\n\nArticles kept for reading:\n\n" + "\n".join(f"* [[{t}]]" for t in final) + "\n"
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(start + 2 * 86400))
    wiki.append({"project": "newsroom", "title": "Wiki", "rename_to": None,
                 "versions": [{"text": index, "comments": "index", "date": stamp, "author": ""}]})
    wiki.append({"project": "handbook", "title": "Wiki", "rename_to": None,
                 "versions": [{"text": wikitext(handbook_title, handbook_body, 1.0), "comments": "", "date": stamp,
                               "author": ""}]})

    users = []
    for name, login in names.items():
        first, _, last = name.partition(" ")
        users.append({"login": login, "firstname": first[:30], "lastname": last or "(Debian)"})
    projects = [
        {"identifier": "libraries", "name": "Debian libraries", "public": True,
         "description": "Changes to the shared libraries of this system, from their Debian changelogs.",
         "modules": ["issue_tracking", "news", "calendar", "gantt", "time_tracking"]},
        {"identifier": "languages", "name": "Language runtimes and modules", "public": True,
         "description": "Ruby, PHP, Python, Java, Perl and JavaScript packages.",
         "modules": ["issue_tracking", "news", "calendar", "gantt", "time_tracking"]},
        {"identifier": "system", "name": "System tools", "public": True,
         "description": "Administration tools, utilities, servers and everything else.",
         "modules": ["issue_tracking", "news", "calendar", "gantt", "time_tracking"]},
        {"identifier": "newsroom", "name": "Newsroom", "public": True,
         "description": "Articles kept for reading, in the wiki.", "modules": ["wiki"]},
        {"identifier": "handbook", "name": "Handbook", "public": True,
         "description": "A wiki only.", "modules": ["wiki"]},
        {"identifier": "websim", "name": "scrapy-websim", "public": True,
         "description": "The history of scrapy-websim, in its repository browser.", "modules": ["repository"]},
        {"identifier": "mirror", "name": "Mirror", "public": True,
         "description": "A mirror whose repository was moved away.", "modules": ["repository"]},
        {"identifier": "internal", "name": "Internal", "public": False,
         "description": "Not for the public.", "modules": ["issue_tracking"]},
        {"identifier": "old-tools", "name": "Old tools", "public": True,
         "description": "Archived.", "modules": ["issue_tracking"]},
    ]
    versions = [{"project": p, "name": name, "date": date, "status": status,
                 "description": f"Changes released with Debian {name}"}
                for p in TRACKER_PROJECTS
                for name, date, status in (("bullseye", "2021-08-14", "closed"), ("bookworm", "2023-06-10", "open"))]
    return {"title": "Bench Redmine", "users": users, "projects": projects, "versions": versions,
            "issues": issues, "wiki": wiki, "news": news, "archive": ["old-tools"], "repositories": []}


# ---------------------------------------------------------------- the instance


def install(tmp: str) -> str:
    """A Redmine of its own in ``tmp/redmine``: Debian's code (linked), a copy of its configuration
    and Gemfile, and one instance (``instances/bench``: database, secret, files, logs, caches);
    its sqlite database migrated and Redmine's default data (trackers, statuses, roles) loaded."""
    root = os.path.join(tmp, "redmine")
    if os.path.exists(root):
        raise SystemExit(f"{root} exists: --keep wants a directory that holds no Redmine yet")
    os.makedirs(os.path.join(root, "db"))
    for name in ("app", "extra", "lib", "public"):
        os.symlink(os.path.join(REDMINE, name), os.path.join(root, name))
    os.symlink(os.path.join(REDMINE, "db", "migrate"), os.path.join(root, "db", "migrate"))
    for name in ("bin", "config"):
        shutil.copytree(os.path.join(REDMINE, name), os.path.join(root, name), symlinks=True,
                        ignore=shutil.ignore_patterns("locales", "database.yml"))
    os.symlink(os.path.join(REDMINE, "config", "locales"), os.path.join(root, "config", "locales"))
    for name in ("config.ru", "Rakefile"):
        shutil.copy(os.path.join(REDMINE, name), root)
    with open(os.path.join(REDMINE, "Gemfile"), encoding="utf-8") as fh:  # its databases' gems from here
        gemfile = fh.read().replace("/usr/share/redmine/{config,instances/*/config}", f"{root}/instances/*/config")
    files = {
        "Gemfile": gemfile,
        "Gemfile.local": "gem 'webrick'\n",  # Debian's Redmine has no application server of its own
        # no schema.rb written into Debian's db/; jobs (mail notifications) run in the request's own
        # thread; one request at a time per server process, as under Passenger or Unicorn: Redcarpet,
        # which renders Markdown files and READMEs in the repository browser, is not thread-safe (two
        # rendered at once abort the whole process: "sd_markdown_render: Assertion ... failed")
        "config/additional_environment.rb": "config.active_record.dump_schema_after_migration = false\n"
                                            "config.active_job.queue_adapter = :inline\n"
                                            "config.middleware.insert_before 0, Rack::Lock\n",
        f"instances/{INSTANCE}/config/database.yml":
            f"production:\n  adapter: sqlite3\n  database: {root}/instances/{INSTANCE}/db.sqlite3\n  timeout: 10000\n",
        f"instances/{INSTANCE}/config/secret_key.txt": os.urandom(32).hex() + "\n",
        "feeder.rb": FEEDER,
    }
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    for sub in ("files", "log", "tmp/cache", "tmp/pids", "public/plugin_assets"):
        os.makedirs(os.path.join(root, "instances", INSTANCE, sub), exist_ok=True)
    rails(root, "bin/rake", "db:migrate")
    rails(root, "bin/rake", "redmine:load_default_data", REDMINE_LANG="en")
    return root


def rails_env(root: str, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BUNDLE_", "RAILS_", "REDMINE_", "GEM_"))}
    env.update(REDMINE_INSTANCE=INSTANCE, RAILS_ENV="production", BUNDLE_GEMFILE=os.path.join(root, "Gemfile"),
               **extra)
    return env


def rails(root: str, *argv: str, **extra: str) -> str:
    proc = subprocess.run(["ruby", *argv], cwd=root, env=rails_env(root, **extra), capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        errors = "\n".join(line for line in proc.stderr.splitlines() if "warning:" not in line)
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stdout[-1500:]} {errors[:3000]}")
    return proc.stdout


def feed(root: str, data: dict) -> dict:
    """Run the feeder through ``rails runner``: Redmine's own models save everything."""
    src, out = os.path.join(root, "data.json"), os.path.join(root, "ids.json")
    with open(src, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
    rails(root, "bin/rails", "runner", "feeder.rb", src, out)
    with open(out, encoding="utf-8") as fh:
        return json.load(fh)


@contextlib.contextmanager
def serve(root: str, ports: List[int]) -> Iterator[List[str]]:
    """One ``rails server`` (WEBrick, threaded) per port of 127.0.0.1, all over the one instance (a
    fleet of identical servers); yields their base URLs once each answers its home page."""
    procs = []
    try:
        for port in ports:
            with open(os.path.join(root, f"server-{port}.log"), "ab") as out:
                procs.append(subprocess.Popen(
                    ["ruby", "bin/rails", "server", "-u", "webrick", "-b", "127.0.0.1", "-p", str(port),
                     "-P", os.path.join(root, "instances", INSTANCE, "tmp", "pids", f"{port}.pid")],
                    cwd=root, env=rails_env(root), stdout=out, stderr=subprocess.STDOUT))
        bases = [f"http://127.0.0.1:{port}" for port in ports]
        deadline = time.monotonic() + 300
        for base, proc in zip(bases, procs):
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"rails server exited with {proc.returncode}: see {root}/server-*.log")
                with contextlib.suppress(OSError):
                    urllib.request.urlopen(base + "/", timeout=30).read()
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"rails server did not answer on {base} in 300 s")
                time.sleep(0.5)
        yield bases
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


# ---------------------------------------------------------------- the repository


def git(*argv: str, cwd: Optional[str] = None) -> str:
    return subprocess.run(["git", *argv], cwd=cwd, check=True, capture_output=True, text=True).stdout


def clone(dest: str) -> str:
    """A bare clone of this repository's ``main`` branch only (or of its current branch when it has no
    ``main``); its branch name."""
    has_main = subprocess.run(["git", "-C", REPO, "rev-parse", "--verify", "-q", "refs/heads/main"],
                              capture_output=True, check=False).returncode == 0
    branch = "main" if has_main else git("-C", REPO, "rev-parse", "--abbrev-ref", "HEAD").strip()
    git("clone", "-q", "--bare", "--single-branch", "--branch", branch, REPO, dest)
    return branch


def history(path: str, branch: str) -> List[Tuple[str, int]]:
    """(hash, lines changed) of every commit of ``branch``, oldest first."""
    out = git("-C", path, "log", "--reverse", "--format=@%H", "--shortstat", branch)
    commits: List[Tuple[str, int]] = []
    for line in out.splitlines():
        if line.startswith("@"):
            commits.append((line[1:], 0))
        elif line.strip() and commits:
            changed = sum(int(n) for n in re.findall(r"(\d+) (?:insertion|deletion)", line))
            commits[-1] = (commits[-1][0], changed)
    return commits


# ---------------------------------------------------------------- the truth


class Truth:
    def __init__(self) -> None:
        self.urls: appbench.Truth = {}

    def add(self, group: str, urls: List[str], label: Optional[str] = None) -> None:
        for url in urls:
            assert url not in self.urls, url
            self.urls[url] = (group, label)


HUGE = "99999999999999999999"  # a page number past SQLite's 64-bit integers


def truth(a: str, b: str, data: dict, ids: dict, repo: dict) -> appbench.Truth:
    """``a`` and ``b``: the two servers' base URLs."""
    t = Truth()
    issues = list(zip(ids["issues"], data["issues"]))
    public = [(n, i) for n, i in issues if i["project"] in TRACKER_PROJECTS]
    for k, (n, issue) in enumerate(public):
        urls = [f"{a}/issues/{n}"]
        if k % 80 == 3:
            urls.append(f"{a}/issues/{n}?utm_source=newsletter&utm_medium=email")
        elif k % 80 == 23:
            urls.append(f"{b}/issues/{n}")
        elif k % 80 == 43:
            urls.append(f"{a}/search?q=%23{n}")  # Redmine's quick jump: 302 to the issue
        elif k % 80 == 63:
            urls.append(f"{a}/issues/{n}?tab=history" if issue["journals"] else f"{a}/issues/{n}/")
        t.add(f"issue-{n}", urls)

    def still_open(issue: dict) -> bool:
        return not issue["journals"] or issue["journals"][-1]["status"] != "Closed"

    per_page = 25
    pages = -(-sum(still_open(i) for _, i in public) // per_page)
    for p in range(1, pages + 1):
        urls = [f"{a}/issues?page={p}"]
        if p == 1:
            urls = [f"{a}/issues", f"{a}/issues?page=1", f"{a}/issues?sort=id%3Adesc"]
        elif p == 2:
            urls.append(f"{b}/issues?page=2")
        t.add(f"issues-page-{p}", urls)
    for project in TRACKER_PROJECTS:
        n_open = sum(still_open(i) for _, i in public if i["project"] == project)
        for p in range(1, min(3, -(-n_open // per_page)) + 1):
            urls = [f"{a}/projects/{project}/issues" + (f"?page={p}" if p > 1 else "")]
            if p == 1 and project == "libraries":
                urls.append(f"{a}/projects/libraries/issues?per_page=25")
            t.add(f"{project}-issues-page-{p}", urls)
        t.add(f"{project}-overview", [f"{a}/projects/{project}"])
        t.add(f"{project}-roadmap", [f"{a}/projects/{project}/roadmap"])
        t.add(f"{project}-news", [f"{a}/projects/{project}/news"])
    for key, vid in sorted(ids["versions"].items()):
        t.add(f"version-{vid}", [f"{a}/versions/{vid}"])
    t.add("projects", [f"{a}/projects", f"{a}/projects?display_type=board"])
    t.add("projects-list", [f"{a}/projects?display_type=list"])
    t.add("home", [f"{a}/", f"{b}/"])
    t.add("news", [f"{a}/news", f"{a}/news?page=1"])
    for k, nid in enumerate(ids["news"]):
        t.add(f"news-{nid}", [f"{a}/news/{nid}"])

    wiki = f"{a}/projects/newsroom/wiki"
    articles = [w for w in data["wiki"] if w["project"] == "newsroom" and w["title"] != "Wiki"]
    for k, w in enumerate(articles):
        title = w["rename_to"] or w["title"]
        q = urllib.parse.quote(title)
        urls = [f"{wiki}/{q}"]
        if w["rename_to"]:
            urls.append(f"{wiki}/{urllib.parse.quote(w['title'])}")  # the old title: 302 to the new one
        elif k == 1:
            urls.append(f"{wiki}/{q.lower()}")  # Redmine finds a title whatever its case
        elif k == 9:
            urls.append(f"{wiki}/{q}/2")  # the current version by its number
        elif k == 17:
            urls.append(f"{b}/projects/newsroom/wiki/{q}")
        t.add(f"wiki-{title}", urls)
        if k % 2 == 0:
            t.add(f"wiki-{title}-history", [f"{wiki}/{q}/history"])
        if k % 3 == 0:
            t.add(f"wiki-{title}-v1", [f"{wiki}/{q}/1"])
    t.add("wiki-start", [wiki, f"{wiki}/Wiki", f"{wiki}/wiki"])
    t.add("wiki-index", [f"{wiki}/index"])
    t.add("newsroom-overview", [f"{a}/projects/newsroom"])
    t.add("handbook-wiki", [f"{a}/projects/handbook/wiki"])
    t.add("handbook-overview", [f"{a}/projects/handbook"])

    r = f"{a}/projects/websim/repository/websim"
    commits = repo["commits"]
    chosen = commits[1:repo["n"] * 3:3]
    for k, (h, changed) in enumerate(chosen):
        urls = [f"{r}/revisions/{h}"]
        if k % 30 == 2:
            urls.append(f"{r}/revisions/{h[:8]}")  # as Redmine prints it
        elif k % 30 == 12:
            urls.append(f"{r}/revision?rev={h}")  # the "Revision" box of the revisions page
        elif k % 30 == 22:
            urls.append(f"{b}/projects/websim/repository/websim/revisions/{h}")
        t.add(f"revision-{h[:12]}", urls)
    small = [h for h, changed in chosen if 0 < changed <= 40]
    for h in small[:: max(1, len(small) // 15)][:15]:
        t.add(f"diff-{h[:12]}", [f"{r}/revisions/{h}/diff"])
    for p in range(1, min(8, -(-len(commits) // per_page)) + 1):
        t.add(f"revisions-page-{p}", [f"{r}/revisions?page={p}"] + ([f"{r}/revisions"] if p == 1 else []))
    t.add("repository-root", [f"{a}/projects/websim/repository", r, f"{r}?rev={repo['branch']}"])
    for path in repo["files"]:
        t.add(f"entry-{path}", [f"{r}/entry/{path}"])
    for path in repo["files"][:3]:
        t.add(f"changes-{path}", [f"{r}/changes/{path}"])
    for path in repo["dirs"]:
        t.add(f"dir-{path}", [f"{r}/show/{path}"])
    t.add("websim-overview", [f"{a}/projects/websim"])

    # special pages
    internal = [n for n, i in issues if i["project"] == "internal"]
    archived = [n for n, i in issues if i["project"] == "old-tools"]
    back = urllib.parse.quote
    t.add("login", [f"{a}/login", f"{a}/login?back_url={back(a + '/issues/1', safe='')}",
                    f"{a}/login?back_url={back('/projects/libraries', safe='')}", f"{b}/login",
                    f"{a}/my/page", f"{a}/projects/new", f"{a}/projects/internal",
                    *[f"{a}/issues/{n}" for n in internal[:1] + archived[:1]]], "L1")
    # one group per template and status, whatever the message says (Redmine's error view in its
    # layout, framed by the project's menu when there is a project, or Rails' static pages)
    t.add("404", [f"{a}/issues/{10 ** 6}", f"{a}/news/{10 ** 5}", f"{a}/projects/no-such-project",
                  f"{a}/users/{10 ** 5}", f"{b}/issues/{10 ** 6 + 1}",
                  f"{wiki}/{urllib.parse.quote(articles[0]['title'])}_draft",
                  f"{r}/revisions/{'0' * 7}1", f"{r}/entry/no/such/file.py"], "E3")
    t.add("404-static", [f"{a}/no/such/path", f"{a}/wp-login.php",
                         f"{a}/projects/websim/repository/revisions/{commits[1][0]}"], "E3")
    t.add("403", [f"{a}/projects/old-tools", f"{a}/projects/old-tools/issues", f"{a}/projects/handbook/issues",
                  f"{a}/projects/websim/issues"], "E3")
    t.add("500", [f"{a}/issues?page={HUGE}", f"{a}/issues?page=9223372036854775808",
                  f"{a}/projects/languages/issues?page={HUGE}"], "E1")
    t.add("500-static", [f"{a}/news?page={HUGE}", f"{r}/revisions?page={HUGE}",
                         f"{a}/projects?display_type=list&page={HUGE}"], "E1")
    return t.urls


FILES = ("README.md", "pyproject.toml", "setup.cfg", "mkdocs.yml", ".gitignore", "docs/architecture.md",
         "docs/settings.md", "scrapy_websim/__init__.py")
DIRS = ("docs", "bench", "tests", "scrapy_websim", "scrapy_websim/core")


@contextlib.contextmanager
def build(args: argparse.Namespace, tmp: str) -> Iterator[appbench.Truth]:
    if not ARTICLES:
        raise SystemExit("set=redmine skipped: shared/data/article-extraction-benchmark not found")
    ensure_packages()
    os.makedirs(tmp, exist_ok=True)
    started = time.monotonic()
    root = install(tmp)
    data = plan(random.Random(args.seed), args.issues, args.articles, 12)
    gitdir = os.path.join(tmp, "git", "websim.git")
    branch = clone(gitdir)
    data["repositories"] = [{"project": "websim", "identifier": "websim", "url": gitdir}]
    ids = feed(root, data)
    tree = set(git("-C", gitdir, "ls-tree", "-r", "-t", "--name-only", branch).split("\n"))
    repo = {"branch": branch, "commits": history(gitdir, branch), "n": args.revisions,
            "files": [f for f in FILES if f in tree], "dirs": [d for d in DIRS if d in tree]}
    ports: List[int] = []
    while len(ports) < 2:
        port = servers.free_port()
        if port not in ports:
            ports.append(port)
    with serve(root, ports) as (a, b):
        print(f"redmine: set up in {time.monotonic() - started:.0f} s: {a} and {b}", file=sys.stderr, flush=True)
        yield truth(a, b, data, ids, repo)


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--issues", type=int, default=220, help="issues from Debian changelog entries")
    parser.add_argument("--articles", type=int, default=24, help="wiki pages from the extraction benchmark")
    parser.add_argument("--revisions", type=int, default=90, help="changeset pages of this repository's history")
    parser.add_argument("--seed", type=int, default=7)


if __name__ == "__main__":
    sys.exit(appbench.main("redmine", build, __doc__, add_args))
