"""Clusters and labels of a crawl of a real gitweb over real git repositories.

    python bench/app_gitweb.py [--commits 110,90,50] [--check] [-v] [--keep DIR]

Held aside: run once the design is settled, its first figures reported as they came.

Installs Debian's ``gitweb`` (git's own CGI web interface, Perl) and ``lighttpd`` if missing and
serves ``/usr/share/gitweb/gitweb.cgi`` with lighttpd's ``mod_cgi`` on 127.0.0.1 (``/`` is the
script too; its style sheet, script and images from ``/usr/share/gitweb/static``), with a
``GITWEB_CONFIG`` of its own in the temporary directory (gitweb's defaults otherwise: 100 commits a
shortlog or log page, blame off), over the three repositories ``bench/app_cgit.py`` builds: a bare
clone of this repository's ``main`` (real history, real diffs) and the Debian packaging histories
of ``debianutils`` and ``coreutils`` rebuilt from their ``changelog.Debian.gz`` (one commit per
upload, the entry as the message, adding it to ``debian/changelog``: commit pages that are nearly
all template). A second lighttpd on another port serves the same configuration (a mirror: gitweb's
links are paths without a host, so its pages are the same). The newest commits of this repository
may be minutes old: gitweb writes their age ("35 min ago"), which can tick between two fetches of
one page (``--check`` then reports that page's group as showing two texts; it is one page).

The truth (``{url: (group, label)}``, content label ``None``):

- every listed commit (not a merge; ``--commits`` per repository, spread over its history) at
  ``?p=REPO;a=commit;h=FULLHASH``, a group each; about one in twelve also under another URL gitweb
  answers with the same page: a 7-character prefix of the hash, the hash in capitals, the
  parameters in another order (``?p=REPO;h=HASH;a=commit``), ``&`` instead of ``;``, the mirror;
- the diff of one in four of those commits (``a=commitdiff``: the commit with its diff, another
  page than the commit's list of files), a group each;
- each repository's summary (``?p=REPO``, ``?p=REPO;a=summary``: one group), each page of its
  shortlog and the first two of its log (``pg=N``; ``pg=0``, ``h=HEAD`` and ``h=refs/heads/BRANCH``
  are the first page), its heads and tags, its tree at the tip (``hb=HEAD`` and ``hb=BRANCH`` are
  the same), directories, files (``a=blob;f=PATH;hb=HEAD``), two files at two older commits far
  apart, the history of three files, three commit searches whose result lists differ; the project
  list (``/``, ``/gitweb.cgi``, the mirror's ``/``);
- ``E3``, one group per error template and status: gitweb's repository frame with "404 - Unknown
  commit object" (a hash no object has, asked of a commit or a diff), "404 - Cannot find file"
  (a blob path that does not exist) and "404 - No such tree" (a missing directory): one group;
  the same frame with "403 - Blame view not allowed" (blame is off): another; the project list's
  frame with "404 - No such project" (a repository that does not exist): another.

Left out as arguable: gitweb's 400 pages ("Invalid action parameter", "Invalid hash parameter":
neither E3 nor content by the spec), a blob without ``hb=`` (the same file shown without the
commit it comes from: the same page or not?), a commit asked by a tag name (the same commit,
the tag shown beside it?), the commit pages of merges, a file one upload older than the tip,
snapshots, patches, plain blobs and feeds (not HTML pages). The URL list is shuffled; the crawl is
websim's shipped defaults. Last line (see ``bench/appbench.py``):

    set=gitweb urls=N groups=G dup_share=D missing=M precision=P recall=R f1=F false_pairs=K
    missed_pairs=K lost=L rules=right/special (pct) content_as_junk=J
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
from typing import Dict, Iterator, List, Optional

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import app_cgit  # noqa: E402  (its repository builder)
import appbench  # noqa: E402
from app_cgit import git, search_words, spread  # noqa: E402
from app_roundup import check_texts  # noqa: E402

from scrapy_websim.testing import servers  # noqa: E402

NAME = "gitweb"
GITWEB = "/usr/share/gitweb/gitweb.cgi"
PACKAGES = ("gitweb", "lighttpd", "git")
#: gitweb's shortlog and log pages
PAGE = 100

GITWEB_CONF = """$projectroot = "%(root)s";
$git_temp = "%(tmp)s";
$site_name = "Bench gitweb";
@stylesheets = ("/static/gitweb.css");
$javascript = "/static/gitweb.js";
$logo = "/static/git-logo.png";
$favicon = "/static/git-favicon.png";
"""
#: lighttpd runs gitweb.cgi for ``/gitweb.cgi`` and ``/``, and serves gitweb's static files
LIGHTTPD = """mimetype.assign += ( ".png" => "image/png", ".js" => "application/javascript" )
alias.url = ( "/static/" => "/usr/share/gitweb/static/", "/gitweb.cgi" => "%(cgi)s" )
setenv.add-environment = ( "GITWEB_CONFIG" => "%(conf)s" )
$HTTP["url"] =~ "^/gitweb\\.cgi" { cgi.assign = ( "" => "" ) }
url.rewrite-once = ( "^/$" => "/gitweb.cgi", "^/\\?(.*)$" => "/gitweb.cgi?$1" )
"""


def ensure_packages() -> None:
    if os.path.isfile(GITWEB) and servers.have("/usr/sbin/lighttpd") and shutil.which("git"):
        return
    print("installing " + " ".join(PACKAGES), flush=True)
    subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *PACKAGES], check=True,
                   stdout=subprocess.DEVNULL, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    subprocess.run(["service", "lighttpd", "stop"], capture_output=True, check=False)


def setup(tmp: str) -> Dict[str, str]:
    """The repositories (``NAME.git``, with a description) and gitweb's configuration in ``tmp``;
    ``{repository: default branch}``."""
    os.makedirs(tmp)
    root = os.path.join(tmp, "repos")
    os.makedirs(root)
    branches = {"websim": app_cgit.clone_websim(os.path.join(root, "websim.git"))}
    descs = {"websim": "scrapy-websim: render, compare and cluster web pages"}
    for package in app_cgit.CHANGELOG_REPOS:
        branches[package] = app_cgit.changelog_repo(package, os.path.join(root, package + ".git"))
        descs[package] = f"Debian packaging history of {package}"
    for name, desc in descs.items():
        with open(os.path.join(root, name + ".git", "description"), "w", encoding="utf-8") as fh:
            fh.write(desc + "\n")
    os.makedirs(os.path.join(tmp, "tmp"))
    with open(os.path.join(tmp, "gitweb.conf"), "w", encoding="utf-8") as fh:
        fh.write(GITWEB_CONF % {"root": root, "tmp": os.path.join(tmp, "tmp")})
    return branches


def repo_truth(add, root: str, name: str, branch: str, n_commits: int, base: str, mirror: str, k: int) -> None:
    """The content URLs of repository ``name`` (``k``: its place, to spread the variants)."""
    path = os.path.join(root, name + ".git")
    p = f"{base}/gitweb.cgi?p={name}.git"
    hashes = git(path, "rev-list", branch).split()
    singles = git(path, "rev-list", "--no-merges", branch).split()
    messages = git(path, "log", "-z", "--format=%B", branch).split("\0")
    for i, h in enumerate(spread(singles, n_commits)):
        urls = [f"{p};a=commit;h={h}"]
        variant = (i + 5 * k) % 60
        if variant == 2:
            urls.append(f"{p};a=commit;h={h[:7]}")
        elif variant == 12:
            urls.append(f"{p};a=commit;h={h.upper()}")
        elif variant == 22:
            urls.append(f"{p};h={h};a=commit")
        elif variant == 32:
            urls.append(f"{base}/gitweb.cgi?p={name}.git&a=commit&h={h}")
        elif variant == 42:
            urls.append(f"{mirror}/gitweb.cgi?p={name}.git;a=commit;h={h}")
        add(f"{name}:commit:{h}", urls)
        if i % 4 == 1:
            add(f"{name}:commitdiff:{h}", [f"{p};a=commitdiff;h={h}"])
    add(f"{name}:summary", [p, f"{p};a=summary"] + ([f"{mirror}/gitweb.cgi?p={name}.git"] if k == 0 else []))
    for pg in range(0, (len(hashes) + PAGE - 1) // PAGE):
        extra = [f"{p};a=shortlog;pg=0", f"{p};a=shortlog;h=HEAD", f"{p};a=shortlog;h=refs/heads/{branch}"]
        add(f"{name}:shortlog:{pg}", [f"{p};a=shortlog;pg={pg}" if pg else f"{p};a=shortlog"]
            + (extra if pg == 0 and k == 0 else []))
    for pg in range(0, min(2, (len(hashes) + PAGE - 1) // PAGE)):
        add(f"{name}:log:{pg}", [f"{p};a=log;pg={pg}" if pg else f"{p};a=log"])
    add(f"{name}:heads", [f"{p};a=heads"])
    add(f"{name}:tags", [f"{p};a=tags"])
    files = git(path, "ls-tree", "-r", "--name-only", branch).split()
    dirs = sorted({f.rsplit("/", 1)[0] for f in files if "/" in f})
    add(f"{name}:tree", [f"{p};a=tree", f"{p};a=tree;hb=HEAD"] + ([f"{p};a=tree;hb={branch}"] if k == 0 else []))
    for d in spread(dirs, 6):
        add(f"{name}:tree:{d}", [f"{p};a=tree;f={d};hb=HEAD"])
    shown = spread([f for f in files if f.endswith((".py", ".md", ".sh", ".toml", ".cfg"))] or files, 16)
    for i, f in enumerate(shown):
        add(f"{name}:blob:{f}", [f"{p};a=blob;f={f};hb=HEAD"] + ([f"{p};a=blob;f={f};hb={branch}"] if i == 3 else []))
    changed = max(shown, key=lambda f: len(git(path, "log", "--format=%H", branch, "--", f).split()))
    history = git(path, "log", "--format=%H", branch, "--", changed).split()
    for h in (history[len(history) // 3], history[2 * len(history) // 3]) if len(history) >= 3 else ():
        add(f"{name}:blob:{changed}@{h}", [f"{p};a=blob;f={changed};hb={h}"])
    for f in spread(shown, 3):
        add(f"{name}:history:{f}", [f"{p};a=history;f={f};hb=HEAD"])
    for word in search_words(messages):
        add(f"{name}:search:{word}", [f"{p};a=search;h=HEAD;st=commit;s={word}"])


def truth_of(root: str, branches: Dict[str, str], counts: List[int], base: str, mirror: str) -> appbench.Truth:
    truth: appbench.Truth = {}

    def add(group: str, urls, label: Optional[str] = None) -> None:
        for u in urls:
            assert u not in truth, u
            truth[u] = (group, label)

    for k, (name, branch) in enumerate(branches.items()):
        repo_truth(add, root, name, branch, counts[k], base, mirror, k)
    add("projects", [f"{base}/", f"{base}/gitweb.cgi", f"{mirror}/"])
    a, b, c = (f"{base}/gitweb.cgi?p={n}.git" for n in branches)
    add("repo-404", [f"{a};a=commit;h=0123abcd", f"{b};a=commit;h=deadbeef1", f"{c};a=commitdiff;h=ffff0000",
                     f"{a};a=blob;f=docs/missing.md;hb=HEAD", f"{b};a=blob;f=debian/control;hb=HEAD",
                     f"{c};a=tree;f=src;hb=HEAD", f"{a};a=tree;f=nosuch/dir;hb=HEAD",
                     f"{mirror}/gitweb.cgi?p={next(iter(branches))}.git;a=commit;h=0badc0de"], "E3")
    add("repo-403", [f"{a};a=blame;f=README.md;hb=HEAD", f"{b};a=blame;f=debian/changelog;hb=HEAD",
                     f"{c};a=blame;f=debian/changelog"], "E3")
    add("no-project", [f"{base}/gitweb.cgi?p={n}" for n in ("linux.git", "old-websim.git", "websim", "git.git")]
        + [f"{base}/gitweb.cgi?p=nosuch.git;a=log", f"{mirror}/gitweb.cgi?p=linux.git"], "E3")
    return truth


def check(truth: appbench.Truth) -> str:
    """``--check``: see ``app_roundup.check_texts`` (no crawl: plain HTTP fetches)."""
    return check_texts(NAME, truth)


@contextlib.contextmanager
def build(args: argparse.Namespace, tmp: str) -> Iterator[appbench.Truth]:
    ensure_packages()
    branches = setup(tmp)
    counts = [int(x) for x in args.commits.split(",")]
    config = LIGHTTPD % {"cgi": GITWEB, "conf": os.path.join(tmp, "gitweb.conf")}
    modules = ("mod_setenv", "mod_cgi", "mod_rewrite")
    with servers.lighttpd_server(config, modules=modules) as base, \
            servers.lighttpd_server(config, modules=modules) as mirror:
        yield truth_of(os.path.join(tmp, "repos"), branches, counts, base, mirror)


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--commits", default="110,90,50",
                        help="commit pages of websim, debianutils and coreutils (comma-separated)")


if __name__ == "__main__":
    sys.exit(appbench.main(NAME, build, __doc__, add_args, check))
