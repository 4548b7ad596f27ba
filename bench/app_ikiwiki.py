"""Clusters and labels of a crawl of a real ikiwiki: package pages, a blog of short posts, tags,
recent changes, the CGI's sign-in page and ikiwiki's own "missing page" 404.

    python bench/app_ikiwiki.py [--packages 110] [--posts 60] [--check] [-v] [--keep DIR]

Held aside: run once the design is settled, its first figures reported as they came.

Installs Debian's ``ikiwiki`` (a wiki compiler, Perl) with the Perl modules its CGI needs, a C
compiler (ikiwiki compiles its CGI wrapper) and ``apache2`` if missing. The wiki's source is a
git repository (ikiwiki's ``git`` back end, its pages committed in a few steps with their own
dates); ``ikiwiki --setup`` compiles it into static HTML (``usedirs``: a page ``PATH`` is
``/PATH/``, the file ``/PATH/index.html``) and writes the ``ikiwiki.cgi`` wrapper. Two Apache
servers (``mod_cgid``) on 127.0.0.1 serve the same compiled tree and run the same CGI: the second
is a mirror. ``ErrorDocument 404 /ikiwiki.cgi`` with ikiwiki's ``404`` plugin: a missing page is
answered by ikiwiki, not by Apache. The wiki lives in a directory of its own under the system's
temporary directory (the Apache workers, which drop root, must read it), removed at the end. Its
pages (real text but for the uploader pages' one template and the section pages' few lines):

- ``packages/NAME``: one page per Debian binary package installed here with a long description
  (``--packages``, spread over the alphabet): its synopsis, its description, section, priority,
  version and maintainer's name. A library and its siblings often share a description but for a
  sentence or the name (``libpango-1.0-0``, ``libpangocairo-1.0-0`` and ``libpangoft2-1.0-0``
  differ by the name and the synopsis; ``libcurl4`` and ``libcurl3-gnutls`` by a sentence): a
  few such families are taken whole when installed. Such pages differ by little and are
  different pages;
- ``changelogs/SOURCE``: the newest uploads of a source package's Debian changelog;
- ``blog/posts/...``: one post per upload of those changelogs (``--posts``): one to three of its
  items, a title from the first, dated by the upload, tagged with the source package and the
  Debian release it went to; ``/blog/`` shows the ten newest posts in full; ``tags/TAG``: the
  tag's page (ikiwiki's ``tag_autocreate``: the titles of the posts with the tag);
- ``people/NAME``: a page for each of the eight uploaders of the most posts, all of one template with the same
  paragraph: they differ by the name (and the e-mail address);
- ``/``, ``/packages/``, ``/changelogs/``, ``/people/``: the home page and the section maps;
  ``/recentchanges/``: ikiwiki's recent changes (the git commits); a few pages of ikiwiki's own
  base wiki (``ikiwiki/formatting``, ``shortcuts``...).

The truth (``{url: (group, label)}``, content label ``None``):

- one group per page, content; its variants in its group, spread over the pages: the mirror's
  port, ``index.html``, the directory without its slash (Apache's 301 to it), a tracking parameter
  (``utm_source``, which a static server ignores);
- special pages: the CGI's sign-in form (a name and a password field: ``do=signin``, and what
  ``do=prefs``, ``do=edit`` and ``do=create`` show to a visitor who is not signed in, the same
  form; on both ports), one group, ``L1``; ikiwiki's "missing page" answer (404, "The page ?NAME
  does not exist", for a missing page, a missing page under a section, an ``.html`` name, the
  CGI's ``do=goto`` of a missing page; on both ports), one group, ``E3``.

Left out as arguable: ``ikiwiki.cgi`` without a query (a 200 "Error: missing page parameter": a
soft 404 or an error of another kind?); tag pages with fewer than three posts (a line or two
under the header: thin or content?); the feeds (``.rss``, ``.atom``: not HTML pages). ikiwiki
has no history page of its own (its ``historyurl`` points at an external repository viewer):
``/recentchanges/`` stands for it. The URL list is shuffled; the crawl is websim's shipped
defaults. Last line (see ``bench/appbench.py``):

    set=ikiwiki urls=N groups=G dup_share=D missing=M precision=P recall=R f1=F false_pairs=K
    missed_pairs=K lost=L rules=right/special (pct) content_as_junk=J
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Dict, Iterator, List, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import appbench  # noqa: E402
import appdata  # noqa: E402
from app_roundup import check_texts  # noqa: E402

from scrapy_websim.testing import servers  # noqa: E402

NAME = "ikiwiki"
#: Debian packages: ikiwiki, the compiler of its CGI wrapper, what its CGI and its git back end load, the server
PACKAGES = ("ikiwiki", "gcc", "libc6-dev", "libcgi-formbuilder-perl", "libcgi-session-perl", "libcgi-pm-perl",
            "libtimedate-perl", "apache2", "git")
NEEDED = ("/usr/bin/ikiwiki", "/usr/bin/cc", "/usr/share/perl5/CGI.pm", "/usr/share/perl5/CGI/FormBuilder.pm",
          "/usr/share/perl5/CGI/Session.pm", "/usr/share/perl5/Date/Parse.pm", "/usr/sbin/apache2",
          "/usr/lib/apache2/modules/mod_cgid.so")
#: source packages whose changelog uploads are the blog's posts
SOURCES = ("curl", "openssh", "systemd", "coreutils", "apache2", "nginx", "openssl", "vim", "sqlite3", "git")
#: binary packages that share their long description but for a sentence or the name, taken when installed
FAMILIES = (("liblua5.1-0", "liblua5.3-0"), ("libpango-1.0-0", "libpangocairo-1.0-0", "libpangoft2-1.0-0"),
            ("libcurl3-gnutls", "libcurl3-nss", "libcurl4"), ("libxml2", "libxml2-dev"), ("jq", "libjq1"))
#: pages of ikiwiki's base wiki in the truth
BASEWIKI = ("ikiwiki/formatting", "ikiwiki/markdown", "ikiwiki/wikilink", "ikiwiki/pagespec", "ikiwiki/directive",
            "ikiwiki/subpage", "shortcuts", "templates", "smileys")
#: uploader pages (the uploaders of the most posts)
PEOPLE = 8
#: the least text of a post's changelog items
MIN_POST = 120
TRACKING = "?utm_source=newsletter&utm_medium=email"

SETUP = """# IkiWiki::Setup::Yaml - YAML formatted setup file
wikiname: Bench wiki
adminuser: [admin]
adminemail: admin@bench.invalid
srcdir: %(src)s
destdir: %(dest)s
url: %(url)s
cgiurl: %(url)s/ikiwiki.cgi
cgi_wrapper: %(dest)s/ikiwiki.cgi
cgi_wrappermode: '06755'
rcs: git
gitorigin_branch: ''
add_plugins: [goodstuff, 404, tag, recentchanges, passwordauth]
disable_plugins: [openid, emailauth, loginselector]
tagbase: tags
tag_autocreate: 1
tag_autocreate_commit: 1
usedirs: 1
timeformat: '%%Y-%%m-%%d'
"""

#: both Apache servers: the compiled wiki as document root, its CGI, ikiwiki's 404 handler
APACHE = """DocumentRoot %(dest)s
<Directory %(dest)s>
    Require all granted
    Options +ExecCGI -Indexes
    AddHandler cgi-script .cgi
    DirectoryIndex index.html
</Directory>
ErrorDocument 404 /ikiwiki.cgi
AddType text/css .css
AddType image/png .png
AddType application/javascript .js
"""

PERSON = """[[!meta title="%(name)s"]]
%(name)s <%(email)s> uploads packages to Debian. Their uploads of the packages this wiki follows
are posted to the [[blog]] and tagged with the package's name; the package pages under
[[packages]] say which version is installed on the bench machine.

Write to the maintainers' list rather than to one person when a change concerns a whole team,
and open a bug in the Debian bug tracker for anything that should outlive a conversation.
"""


def ensure_packages() -> None:
    if all(os.path.exists(p) for p in NEEDED) and shutil.which("git"):
        return
    print("installing " + " ".join(PACKAGES), flush=True)
    subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *PACKAGES], check=True,
                   stdout=subprocess.DEVNULL, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    subprocess.run(["service", "apache2", "stop"], capture_output=True, check=False)


# -- content -----------------------------------------------------------------------------------------------------


def installed_packages(n: int) -> List[Dict[str, str]]:
    """``n`` installed binary packages with a long description of 300+ characters, spread evenly
    over the alphabet, and the installed ones of ``FAMILIES``: name, synopsis, description
    (paragraphs), section, priority, version, maintainer."""
    with open("/var/lib/dpkg/status", encoding="utf-8", errors="replace") as fh:
        stanzas = fh.read().split("\n\n")
    found: Dict[str, Dict[str, str]] = {}
    for stanza in stanzas:
        fields: Dict[str, str] = {}
        key = ""
        for line in stanza.splitlines():
            if line.startswith((" ", "\t")) and key:
                fields[key] += "\n" + line
            elif ":" in line:
                key, value = line.split(":", 1)
                fields[key] = value.strip()
        if "installed" not in fields.get("Status", "") or "Description" not in fields:
            continue
        synopsis, _, long = fields["Description"].partition("\n")
        paras = [" ".join(ln.strip() for ln in block.splitlines())
                 for block in re.split(r"\n \.\n", long)]
        body = "\n\n".join(p for p in paras if p and not p.startswith(("*", "-")))
        if len(body) < 300:
            continue
        found[fields["Package"]] = {"name": fields["Package"], "synopsis": synopsis.strip(), "description": body,
                                    "section": fields.get("Section", ""), "priority": fields.get("Priority", ""),
                                    "version": fields.get("Version", ""),
                                    "maintainer": fields.get("Maintainer", "").split("<")[0].strip()}
    names = sorted(found)
    step = max(1.0, len(names) / n)
    chosen = {names[int(i * step)] for i in range(min(n, len(names)))}
    chosen.update(name for family in FAMILIES for name in family if name in found)
    return [found[name] for name in sorted(chosen)]


def md(text: str) -> str:
    """Text safe in an ikiwiki markdown page (no directive, no wiki link, no HTML)."""
    return text.replace("[[", "[ [").replace("<", "&lt;").replace("*", "\\*").replace("_", "\\_")


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40].strip("-")


def blog_posts(n: int) -> Tuple[List[dict], Dict[str, List[appdata.Entry]]]:
    """Up to ``n`` posts, one per changelog upload whose first one to three items say 120
    characters or more (a one-sentence item says too little for a page of its own), and the
    newest changelog entries per source package."""
    chosen, sources = appdata.changelog_items(list(SOURCES), 4 * n)
    posts, seen = [], set()
    for entry, items in chosen:
        body = next((items[:k] for k in (1, 2, 3) if sum(map(len, items[:k])) >= MIN_POST), None)
        path = f"blog/posts/{slug(entry.source)}-{slug(entry.version)}"
        if body is None or path in seen:
            continue
        seen.add(path)
        posts.append({"path": path, "source": entry.source, "title": f"{entry.source} {entry.version}: "
                      + appdata.summary_of(items[0]), "body": body, "date": entry.date,
                      "release": appdata.release_of(entry), "author": entry.author, "email": entry.email})
        if len(posts) == n:
            break
    return posts, {s: appdata.changelog_entries(s)[:6] for s in sources}


def write(src: str, path: str, text: str) -> None:
    full = os.path.join(src, path + ".mdwn")
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as fh:
        fh.write(text)


def commit(src: str, message: str, date: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="Bench", GIT_AUTHOR_EMAIL="bench@bench.invalid",
               GIT_COMMITTER_NAME="Bench", GIT_COMMITTER_EMAIL="bench@bench.invalid",
               GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    subprocess.run(["git", "-C", src, "add", "-A"], check=True)
    subprocess.run(["git", "-C", src, "commit", "-q", "-m", message], check=True, env=env)


def write_wiki(src: str, packages: List[Dict[str, str]], posts: List[dict],
               changelogs: Dict[str, List[appdata.Entry]]) -> Dict[str, List[str]]:
    """The wiki's source in ``src`` (a git repository, committed step by step); the page paths
    per kind."""
    os.makedirs(src)
    subprocess.run(["git", "init", "-q", "-b", "master", src], check=True)
    for key, value in (("user.name", "Bench"), ("user.email", "bench@bench.invalid")):
        subprocess.run(["git", "-C", src, "config", key, value], check=True)
    write(src, "index", "[[!meta title=\"Bench wiki\"]]\nThis wiki follows a few Debian packages: their "
          "[[descriptions|packages]], their [[changelogs]], the [[people]] who upload them and a [[blog]] of "
          "their uploads. [[RecentChanges|recentchanges]] lists the latest edits.\n\nThe package pages are "
          "written from the descriptions the packages carry; the posts and the changelogs from the Debian "
          "changelogs installed with them.\n")
    write(src, "packages", "[[!meta title=\"Packages\"]]\nThe Debian packages installed on the bench machine "
          "that this wiki describes.\n\n[[!map pages=\"packages/*\"]]\n")
    pages: Dict[str, List[str]] = collections.defaultdict(list)
    for p in packages:
        write(src, f"packages/{p['name']}",
              f"[[!meta title=\"{p['name']}\"]]\n**{md(p['synopsis'])}**\n\n{md(p['description'])}\n\n"
              f"* Section: {md(p['section'])}\n* Priority: {p['priority']}\n* Version: {md(p['version'])}\n"
              f"* Maintainer: {md(p['maintainer'])}\n")
        pages["package"].append(f"packages/{p['name']}")
    commit(src, "describe the installed packages", "2024-01-15T10:00:00Z")
    write(src, "changelogs", "[[!meta title=\"Changelogs\"]]\nThe newest uploads of each source package this "
          "wiki follows, as its Debian changelog lists them: the version, the distribution it went to, its date, what "
          "changed and who uploaded it.\n\n"
          "[[!map pages=\"changelogs/*\"]]\n")
    for source, entries in changelogs.items():
        text = [f"[[!meta title=\"{source} changelog\"]]"]
        for e in entries:
            text.append(f"## {md(e.version)} ({e.dist}, {e.date:%Y-%m-%d})\n")
            text += [f"* {md(b)}" for b in e.bullets] + [f"\n-- {md(e.author)}\n"]
        write(src, f"changelogs/{source}", "\n".join(text) + "\n")
        pages["changelog"].append(f"changelogs/{source}")
    commit(src, "add the changelogs", "2024-02-01T09:30:00Z")
    uploads = collections.Counter((post["author"], post["email"]) for post in posts)
    people = {slug(name): (name, email) for (name, email), _ in uploads.most_common(PEOPLE)}
    write(src, "people", "[[!meta title=\"People\"]]\nThe uploaders of the posts in the [[blog]].\n\n"
          "[[!map pages=\"people/*\"]]\n")
    for key, (name, email) in sorted(people.items()):
        write(src, f"people/{key}", PERSON % {"name": md(name), "email": email})
        pages["person"].append(f"people/{key}")
    commit(src, "a page per uploader", "2024-02-10T18:00:00Z")
    write(src, "blog", "[[!meta title=\"Blog\"]]\nUploads of the packages this wiki follows, newest first.\n\n"
          "[[!inline pages=\"page(blog/posts/*)\" show=\"10\" actions=\"yes\" rootpage=\"blog/posts\"]]\n")
    for post in sorted(posts, key=lambda p: p["date"]):
        write(src, post["path"], f"[[!meta title=\"{md(post['title'])}\"]]\n"
              f"[[!meta date=\"{post['date']:%Y-%m-%d %H:%M}\"]]\n" + "\n\n".join(md(b) for b in post["body"])
              + f"\n\n[[!tag {post['source']} {post['release']}]]\n")
        pages["post"].append(post["path"])
        commit(src, f"post {post['path'].rsplit('/', 1)[-1]}", post["date"].isoformat())
    return pages


def compile_wiki(root: str, url: str) -> None:
    with open(os.path.join(root, "setup.yaml"), "w", encoding="utf-8") as fh:
        fh.write(SETUP % {"src": os.path.join(root, "src"), "dest": os.path.join(root, "dest"), "url": url})
    proc = subprocess.run(["ikiwiki", "--setup", os.path.join(root, "setup.yaml")], capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0 or not os.path.exists(os.path.join(root, "dest", "ikiwiki.cgi")):
        raise RuntimeError(f"ikiwiki failed ({proc.returncode}): {proc.stdout[-1500:]} {proc.stderr[-1500:]}")


def tag_counts(posts: List[dict]) -> collections.Counter:
    return collections.Counter(t for p in posts for t in (p["source"], p["release"]))


# -- the truth ---------------------------------------------------------------------------------------------------


def truth_of(pages: Dict[str, List[str]], posts: List[dict], base: str, mirror: str) -> appbench.Truth:
    truth: appbench.Truth = {}

    add = appbench.truth_adder(truth, base)

    tags = [f"tags/{t}" for t, n in sorted(tag_counts(posts).items()) if n >= 3]
    content = ["", "packages", "changelogs", "people", "blog", "recentchanges", *BASEWIKI, *tags,
               *(p for kind in ("package", "changelog", "person", "post") for p in pages[kind])]
    for k, page in enumerate(content):
        path = f"/{page}/" if page else "/"
        urls = [path]
        variant = k % 9
        if variant == 1:
            urls.append(mirror + path)
        elif variant == 3:
            urls.append(path + "index.html")
        elif variant == 5 and page:
            urls.append(path.rstrip("/"))
        elif variant == 7:
            urls.append(path + TRACKING)
        add(f"page:{page or 'index'}", None, *urls)

    cgi = "/ikiwiki.cgi"
    add("signin", "L1", f"{cgi}?do=signin", f"{cgi}?do=prefs", f"{cgi}?do=edit&page=blog",
        f"{cgi}?do=edit&page={pages['package'][0]}", f"{cgi}?do=edit&page={pages['post'][-1]}",
        f"{cgi}?do=create&page=blog/posts/new-post&from=blog", f"{cgi}?do=create&page=people/nobody&from=people",
        f"{mirror}{cgi}?do=signin", f"{mirror}{cgi}?do=edit&page=index")
    add("missing", "E3", "/no-such-page/", "/no-such-page", "/packages/no-such-package/",
        f"/{pages['package'][1]}.html", "/blog/posts/2024/", "/tags/no-such-tag/", "/people/nobody/index.html",
        "/changelogs/linux/", f"{cgi}?do=goto&page=no-such-page", f"{mirror}/no-such-page/",
        f"{mirror}/packages/no-such-package/")
    return truth


def check(truth: appbench.Truth) -> str:
    """``--check``: see ``app_roundup.check_texts``, then the titles of each group of special pages,
    then the content pages that show the least visible text (no crawl: plain HTTP fetches)."""
    from app_roundup import visible_text

    short = []
    for url, (group, label) in truth.items():
        if label is None and not url.endswith(TRACKING):
            text = visible_text(servers.fetch(url).body)
            if len(text) < 400:
                short.append((len(text), url))
    lines = [f"  {n} chars: {url}" for n, url in sorted(short)[:12]]
    sample = []
    for url in [u for u, (_, label) in truth.items() if label is None][::40]:
        title = re.search(r"<title>(.*?)</title>", servers.fetch(url).text, re.S)
        sample.append(f"  {' '.join((title.group(1) if title else '-').split())[:70]}: {url}")
    return "\n".join([check_texts(NAME, truth), appbench.special_titles(truth),
                      "content pages with the least visible text:", *lines, "a sample of titles:", *sample])


@contextlib.contextmanager
def build(args: argparse.Namespace, tmp: str) -> Iterator[appbench.Truth]:
    ensure_packages()
    os.makedirs(tmp, exist_ok=True)
    root = tempfile.mkdtemp(prefix="websim-bench-ikiwiki-")
    os.chmod(root, 0o755)
    os.makedirs(os.path.join(root, "dest"))
    try:
        posts, changelogs = blog_posts(args.posts)
        pages = write_wiki(os.path.join(root, "src"), installed_packages(args.packages), posts, changelogs)
        config = APACHE % {"dest": os.path.join(root, "dest")}
        with servers.apache_server(config, modules=("cgid",)) as base, \
                servers.apache_server(config, modules=("cgid",)) as mirror:
            compile_wiki(root, base)
            yield truth_of(pages, posts, base, mirror)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--packages", type=int, default=110, help="package pages (installed Debian packages)")
    parser.add_argument("--posts", type=int, default=60, help="blog posts (Debian changelog uploads)")


if __name__ == "__main__":
    sys.exit(appbench.main(NAME, build, __doc__, add_args, check))
