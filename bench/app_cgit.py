"""Pair F1, lost pages and special-page labels of a crawl of a real cgit over real git repositories.

    python bench/app_cgit.py [--commits 180,120,50] [--check] [-v] [--keep DIR]

Installs Debian's ``cgit`` (1.2.3, a CGI) and ``lighttpd`` if missing and serves cgit with
lighttpd's ``mod_cgi`` on 127.0.0.1 (``virtual-root=/``, no cache, cgit's defaults otherwise: 50
commits a log page, blame and statistics off), with a configuration file of its own in the
temporary directory, over three repositories:

- ``websim``: a clone of this repository's ``main`` branch (its real history, real diffs);
- ``debianutils`` and ``coreutils``: the Debian packaging history of the two packages rebuilt
  from their ``/usr/share/doc/*/changelog.Debian.gz`` by ``git fast-import``: one commit per
  upload as ``gbp import-dsc`` records it ("Import Debian changes VERSION", the entry as the
  message, by the uploader at the upload's date), adding that entry to ``debian/changelog``, and a
  DEP-14 tag per upload (``debian/VERSION``). Half of debianutils' commits add seven lines or
  fewer (an entry of one or two bullets), most of coreutils' nine or fewer: commit pages that are
  nearly all template.

A second lighttpd on another port serves the same configuration and repositories (a mirror).
``--commits`` says how many commit pages of each repository the list holds (spread over its
history). The truth (``{url: (group, label)}``) holds:

- every listed commit (not a merge) at ``/REPO/commit/?id=FULLHASH``, a group each; about one in
  fourteen also as cgit answers it under another URL, in the same group: a 7-character prefix of
  the hash, the hash in capitals, the default branch explicit (``?h=main&id=``, ``?h=master&id=``),
  the default context explicit (``&context=3``), ``commit?id=`` without the slash, on the mirror;
- each repository's log, each page its own group (``log/``, ``log/?ofs=50``, ...; ``log/?ofs=0``
  and ``log/?h=BRANCH`` are ``log/``), the log of three files, three commit searches
  (``log/?qt=grep&q=``) whose result lists differ, the summary (``/REPO/``, ``/REPO``,
  ``/REPO/summary/``: one group), the refs page, tree pages (directories and files at the tip,
  ``tree/?h=BRANCH`` is ``tree/``) and files at two older commits far apart, six range diffs
  (``diff/?id=X&id2=Y``, three commits apart), the repository index (``/`` and the mirror's ``/``);
- ``E3``, one group per error template cgit answers with, the same across repositories: the
  spec groups error pages by their HTML, not by the message they show, so the messages a
  repository's page frame shows with one status are one group (most echo what was asked):
  "Bad object id" (a hash prefix no object has, asked of the commit page) and "Statistics type
  disabled" (400); "Invalid revision name" (the same asked of a tree), "Path not found",
  "Invalid request" (a page cgit does not have) and "Invalid branch" (``?h=`` a missing branch)
  (404); "Blame is disabled" (403); and apart, "No repositories found" (404, a repository that
  does not exist: the index's frame, not a repository's).

A directory of one entry and the refs page of a repository with one branch are content pages,
however little they hold. Left out as arguable: the log from a revision that does not exist
(``log/?id=``: an empty list of commits with status 200 and no error words: a soft 404 or a thin
page?), ``diff/?id=X`` of one commit (the commit page without its message: the same page or
not?), the side-by-side view (``ss=1``: the same commit in another layout?), a file one upload
older than the tip (the same page or another revision?), the index sorted another way and the
commit pages of merges (their diff against the first parent repeats the merged commits' diffs:
the same page as a merged commit or not?). Not HTML: ``patch``, ``plain``, ``atom``; ``about``
answers a redirect to a bad URL when a repository has no readme. The URL list is shuffled; the
crawl is websim's shipped defaults. Last line:

    set=cgit urls=N groups=G dup_share=D missing=M precision=P recall=R f1=F false_pairs=K
    missed_pairs=K lost=L rules=right/special (pct) content_as_junk=J
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import email.utils
import gzip
import os
import re
import shutil
import subprocess
import sys
from typing import Dict, Iterator, List, Optional, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import appbench  # noqa: E402  (bench/appbench.py)

from scrapy_websim.testing import servers  # noqa: E402

CGIT = "/usr/lib/cgit/cgit.cgi"
PACKAGES = ("cgit", "lighttpd", "git")
#: the Debian packages whose packaging history becomes a repository
CHANGELOG_REPOS = ("debianutils", "coreutils")
HEAD = re.compile(r"^(\S+) \(([^)]+)\) ([^;]+); urgency=(\S+)", re.M)
TRAILER = re.compile(r"^ -- (.+?) <([^>]*)>\s+(.+)$", re.M)

CGITRC = """css=/cgit-css/cgit.css
logo=/cgit-css/cgit.png
favicon=/cgit-css/favicon.ico
virtual-root=/
cache-size=0
root-title=Bench git
root-desc=Real repositories, served by cgit
enable-index-links=1
enable-log-filecount=1
enable-log-linecount=1
"""
#: lighttpd runs cgit.cgi for every URL but cgit's own style sheet and images
LIGHTTPD = """mimetype.assign += ( ".png" => "image/png", ".ico" => "image/x-icon" )
alias.url = ( "/cgit-css/" => "/usr/share/cgit/", "/cgit.cgi" => "%(cgi)s" )
setenv.add-environment = ( "CGIT_CONFIG" => "%(rc)s" )
$HTTP["url"] =~ "^/cgit\\.cgi" { cgi.assign = ( "" => "" ) }
url.rewrite-if-not-file = ( "^/cgit-css/.*" => "$0", "^/(.*)$" => "/cgit.cgi/$1" )
"""

Truth = Dict[str, Tuple[str, Optional[str]]]


def ensure_packages() -> None:
    if os.path.isfile(CGIT) and servers.have("/usr/sbin/lighttpd") and shutil.which("git"):
        return
    print("installing " + " ".join(PACKAGES), flush=True)
    subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *PACKAGES], check=True,
                   stdout=subprocess.DEVNULL, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    subprocess.run(["service", "lighttpd", "stop"], capture_output=True, check=False)


def git(repo: str, *args: str, stdin: Optional[bytes] = None) -> str:
    proc = subprocess.run(["git", "-C", repo, *args], input=stdin, capture_output=True, check=True)
    return proc.stdout.decode("utf-8", "replace")


# --- the repositories --------------------------------------------------------------------------

def clone_websim(dest: str) -> str:
    """A bare clone of this repository's ``main`` (or its current branch if it has no ``main``)."""
    branches = git(REPO, "for-each-ref", "--format=%(refname:short)", "refs/heads").split()
    branch = "main" if "main" in branches else git(REPO, "rev-parse", "--abbrev-ref", "HEAD").strip()
    subprocess.run(["git", "clone", "-q", "--bare", "--single-branch", "--branch", branch, "--no-tags", REPO, dest],
                   check=True, capture_output=True)
    return branch


def uploads(package: str) -> List[dict]:
    """The entries of a package's changelog.Debian.gz, oldest first: text, version, uploader, date."""
    with gzip.open(f"/usr/share/doc/{package}/changelog.Debian.gz", "rt", encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    starts = [m.start() for m in HEAD.finditer(text)]
    out = []
    for a, b in zip(starts, starts[1:] + [len(text)]):
        chunk = text[a:b]
        head, trailer = HEAD.match(chunk), TRAILER.search(chunk)
        when = email.utils.parsedate_tz(trailer.group(3).strip()) if trailer else None
        out.append({"text": chunk, "version": head.group(2), "name": trailer.group(1) if trailer else "",
                    "email": trailer.group(2) if trailer else "",
                    "body": chunk[head.end():trailer.start()].strip("\n") if trailer else "",
                    "stamp": email.utils.mktime_tz(when) if when else None, "tz": (when[9] or 0) if when else 0})
    return out[::-1]


def _data(text: str) -> bytes:
    raw = text.encode("utf-8")
    return b"data %d\n" % len(raw) + raw + b"\n"


def changelog_repo(package: str, dest: str) -> str:
    """A bare repository of ``package``'s uploads (see the module docstring); its branch."""
    subprocess.run(["git", "init", "-q", "--bare", "--initial-branch=master", dest], check=True)
    stream, log, mark = [], "", 0
    for e in uploads(package):
        log = e["text"] + log
        if e["stamp"] is None:
            continue  # an entry without a readable trailer goes in with the next upload
        mark += 1
        tz = f"{'+' if e['tz'] >= 0 else '-'}{abs(e['tz']) // 3600:02d}{abs(e['tz']) % 3600 // 60:02d}"
        who = f"{e['name']} <{e['email']}> {e['stamp']} {tz}"
        stream.append(f"commit refs/heads/master\nmark :{mark}\nauthor {who}\ncommitter {who}\n".encode())
        stream.append(_data(f"Import Debian changes {e['version']}\n\n{e['body']}\n"))
        if mark > 1:
            stream.append(f"from :{mark - 1}\n".encode())
        stream.append(b"M 100644 inline debian/changelog\n" + _data(log))
        tag = "debian/" + e["version"].replace(":", "%").replace("~", "_")  # DEP-14
        stream.append(f"reset refs/tags/{tag}\nfrom :{mark}\n\n".encode())
    git(dest, "fast-import", "--quiet", stdin=b"".join(stream))
    return "master"


def setup(tmp: str) -> Tuple[str, Dict[str, str]]:
    """The repositories and cgit's configuration in ``tmp``; the configuration's path and
    ``{repository: default branch}``."""
    os.makedirs(tmp)
    branches = {"websim": clone_websim(os.path.join(tmp, "websim.git"))}
    descs = {"websim": "scrapy-websim: render, compare and cluster web pages"}
    for package in CHANGELOG_REPOS:
        branches[package] = changelog_repo(package, os.path.join(tmp, package + ".git"))
        descs[package] = f"Debian packaging history of {package}"
    rc = os.path.join(tmp, "cgitrc")
    with open(rc, "w", encoding="utf-8") as fh:
        fh.write(CGITRC)
        for name in branches:
            fh.write(f"\nrepo.url={name}\nrepo.path={os.path.join(tmp, name + '.git')}\nrepo.desc={descs[name]}\n")
    return rc, branches


# --- the truth ---------------------------------------------------------------------------------

def spread(items: list, n: int) -> list:
    """``n`` of ``items`` evenly spaced (all of them if fewer)."""
    if n >= len(items):
        return list(items)
    return [items[int(i * len(items) / n)] for i in range(n)]


def search_words(messages: List[str]) -> List[str]:
    """Three words each in the messages of 2-10 commits, in three different sets of commits."""
    docs = collections.defaultdict(set)
    for i, s in enumerate(messages):
        for w in re.findall(r"[a-z]{7,}", s.lower()):
            docs[w].add(i)
    chosen: List[str] = []
    sets: List[set] = []
    for w in sorted(docs, key=lambda w: (-len(docs[w]), w)):
        if 2 <= len(docs[w]) <= 10 and all(docs[w] != s for s in sets):
            chosen.append(w)
            sets.append(docs[w])
        if len(chosen) == 3:
            break
    return chosen


def repo_truth(add, tmp: str, name: str, branch: str, n_commits: int, base: str, mirror: str, k: int) -> None:
    """The content URLs of repository ``name`` (``k``: its place, to spread the variants)."""
    path = os.path.join(tmp, name + ".git")
    r = f"{base}/{name}"
    hashes = git(path, "rev-list", branch).split()
    singles = git(path, "rev-list", "--no-merges", branch).split()
    messages = git(path, "log", "-z", "--format=%B", branch).split("\0")
    for i, h in enumerate(spread(singles, n_commits)):
        urls = [f"{r}/commit/?id={h}"]
        variant = (i + 7 * k) % 72
        if variant == 3:
            urls.append(f"{r}/commit/?id={h[:7]}")
        elif variant == 17:
            urls.append(f"{r}/commit/?h={branch}&id={h}")
        elif variant == 31:
            urls.append(f"{r}/commit/?id={h.upper()}")
        elif variant == 45:
            urls.append(f"{r}/commit?id={h}" if i % 2 else f"{r}/commit/?id={h}&context=3")
        elif variant == 59:
            urls.append(f"{mirror}/{name}/commit/?id={h}")
        add(f"{name}:commit:{h}", urls)
    for ofs in range(0, len(hashes), 50):
        add(f"{name}:log:{ofs}", [f"{r}/log/?ofs={ofs}" if ofs else f"{r}/log/"]
            + ([f"{r}/log/?ofs=0", f"{r}/log/?h={branch}"] if ofs == 0 and k == 0 else []))
    files = git(path, "ls-tree", "-r", "--name-only", branch).split()
    dirs = sorted({f.rsplit("/", 1)[0] for f in files if "/" in f})
    add(f"{name}:tree", [f"{r}/tree/"] + ([f"{r}/tree/?h={branch}"] if k == 0 else []))
    for d in spread(dirs, 6):
        add(f"{name}:tree:{d}", [f"{r}/tree/{d}/"])
    shown = spread([f for f in files if f.endswith((".py", ".md", ".sh", ".toml", ".cfg"))] or files, 16)
    for f in shown:
        add(f"{name}:blob:{f}", [f"{r}/tree/{f}"])
    changed = max(shown, key=lambda f: len(git(path, "log", "--format=%H", branch, "--", f).split()))
    history = git(path, "log", "--format=%H", branch, "--", changed).split()
    for h in (history[len(history) // 3], history[2 * len(history) // 3]) if len(history) >= 3 else ():
        add(f"{name}:blob:{changed}@{h}", [f"{r}/tree/{changed}?id={h}"])
    if len(files) > 3:
        for f in spread(shown, 3):
            add(f"{name}:filelog:{f}", [f"{r}/log/{f}"])
    for word in search_words(messages):
        add(f"{name}:search:{word}", [f"{r}/log/?qt=grep&q={word}"])
    add(f"{name}:summary", [f"{r}/"] + ([r, f"{r}/summary/"] if k < 2 else []))
    add(f"{name}:refs", [f"{r}/refs/"])
    for h in spread(hashes[:-3], 3 if k == 0 else 2):
        ancestor = hashes[hashes.index(h) + 3]
        add(f"{name}:diff:{h}", [f"{r}/diff/?id={h}&id2={ancestor}"])


def truth_of(tmp: str, branches: Dict[str, str], counts: List[int], base: str, mirror: str) -> Truth:
    truth: Truth = {}

    def add(group: str, urls, label: Optional[str] = None) -> None:
        for u in urls:
            assert u not in truth, u
            truth[u] = (group, label)

    for k, (name, branch) in enumerate(branches.items()):
        repo_truth(add, tmp, name, branch, counts[k], base, mirror, k)
    add("index", [f"{base}/", f"{mirror}/"])
    names = list(branches)
    # one group per status of the repository frame's error template (the module's docstring)
    frame = {"bad-object": "error-400", "no-stats": "error-400", "bad-revision": "error-404", "no-path": "error-404",
             "bad-request": "error-404", "no-branch": "error-404", "no-blame": "error-403"}

    def add_error(message: str, urls) -> None:
        add(frame.get(message, message), urls, "E3")

    add_error("bad-object", [f"{base}/{names[0]}/commit/?id=0123abc", f"{base}/{names[1]}/commit/?id=deadbeef1",
                             f"{base}/{names[2]}/commit/?id=ffff0000"])
    add_error("bad-revision", [f"{base}/{names[0]}/tree/?id=abcdef9", f"{base}/{names[2]}/tree/?id=deadbeef",
                               f"{base}/{names[1]}/tree/debian/?id=0badc0de"])
    add_error("no-path", [f"{base}/{names[0]}/tree/docs/missing.md", f"{base}/{names[1]}/tree/debian/control",
                          f"{base}/{names[2]}/tree/README"])
    add_error("no-repo", [f"{base}/{n}/" for n in ("linux", "old-websim")] + [f"{base}/{names[0].upper()}/log/"])
    add_error("bad-request", [f"{base}/{names[0]}/history/", f"{base}/{names[1]}/Commit/?id=1",
                              f"{base}/{names[2]}/changes/"])
    add_error("no-branch", [f"{base}/{n}/log/?h={b}" for n, b in zip(names, ("develop", "debian/sid", "upstream"))])
    add_error("no-blame", [f"{base}/{names[0]}/blame/README.md", f"{base}/{names[1]}/blame/debian/changelog"])
    add_error("no-stats", [f"{base}/{n}/stats/" for n in names])
    return truth


def check(truth: Truth) -> str:
    """``--check``: the statuses per label, then every content URL that does not end in a 200 HTML page."""
    odd = []
    for url, (group, label) in truth.items():
        if label is None:
            got = servers.fetch(url)
            if got.status != 200 or "html" not in got.content_type:
                odd.append(f"  {got.status} {got.content_type} {url} ({group})")
    return "\n".join([appbench.check_truth("cgit", truth), *odd])


@contextlib.contextmanager
def build(args: argparse.Namespace, tmp: str) -> Iterator[Truth]:
    ensure_packages()
    rc, branches = setup(tmp)
    counts = [int(x) for x in args.commits.split(",")]
    config = LIGHTTPD % {"cgi": CGIT, "rc": rc}
    modules = ("mod_setenv", "mod_cgi", "mod_rewrite")
    with servers.lighttpd_server(config, modules=modules) as base, \
            servers.lighttpd_server(config, modules=modules) as mirror:
        yield truth_of(tmp, branches, counts, base, mirror)


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--commits", default="180,120,50",
                        help="commit pages of websim, debianutils and coreutils (comma-separated)")


if __name__ == "__main__":
    sys.exit(appbench.main("cgit", build, __doc__, add_args, check))
