"""Clusters and labels of a crawl of a real Mercurial hgweb over this repository's history.

    python bench/app_hgweb.py --check            # set up, fetch every truth URL once: statuses per label
    python bench/app_hgweb.py [-v] [--keep DIR]  # set up, crawl with the shipped defaults, score
    python bench/appbench.py DIR [--refeature]   # re-score a kept crawl with the current code
    options: [--changesets 300]

Installs Debian's ``mercurial`` (6.3.2) and git if missing. Converts a single-branch bare clone
of this repository's ``main`` to Mercurial with ``hg convert`` (every commit, its author, date,
message and merges: a few hundred changesets, most changing a few dozen lines) and serves it as
hgweb does a collection: ``hg serve --web-conf`` with an ``hgweb.config`` of its own (style
``paper``, Mercurial reading no system or user hgrc) over three repositories: ``websim`` (the
history), ``private`` (a clone whose ``allow_read`` lets only "alice" read) and ``legacy`` (a
clone removed from disk after it was configured, as when a repository is moved away). Two
``hg serve`` processes over the one collection on two ports of 127.0.0.1 (a fleet of two).

The truth (``{url: (group, label)}``, about 430 URLs, each URL its own group unless said):

- ``--changesets`` changeset pages (``/websim/rev/<12-hex>``, as hgweb links them: message,
  author, date, parents, children, files and the whole diff), spread evenly over the history
  among the changesets that change at most 1,000 lines;
- each page of the three logs as their own "-60" / "-10" links page them: the shortlog (60 a
  page, six pages), the changelog (10 a page, fifteen) and the graph (four);
- the file browser at the tip: the root, six directories, twenty files, four annotations and
  four file histories; the tags, branches and bookmarks pages; hgweb's help index and twelve of
  its topics;
- the variants, each in its page's group: the second port; a changeset by its full 40-hex node,
  its local revision number, the ``/changeset/`` alias, an 8-hex prefix, a trailing slash,
  ``utm_source``, ``?style=paper`` (the default style made explicit), one kind per changeset on
  one changeset in twenty; the shortlog as ``/websim/``, ``/websim``, ``/shortlog``,
  ``/shortlog/tip``, ``/shortlog/<tip node>``, ``?revcount=60``; ``/log`` and ``/log/tip``;
  ``/graph`` and ``/graph/tip``; the file root as ``/file``, ``/file/tip`` and ``/file/tip/``; a
  file at ``tip``, at the tip's node and at the branch name ``default``;
- special pages, one group per template and status, whatever name the message echoes: ``E3``:
  hgweb's error page with 404 (an unknown revision, hash prefix or branch, a path not in the
  manifest, an unknown help topic: "An error occurred while processing your request: unknown
  revision 'x'" / "x@node: not found in manifest" / "Not Found"), the collection's "repository
  not found" page (404, its own template), the private repository's "read not authorized"
  (401, no ``WWW-Authenticate``: hgweb leaves authentication to the web server in front), the
  error page with 403 (archives not allowed, the gitweb-only ``summary`` view); ``E1``: the
  moved repository's 500 (a bare "Internal Server Error": hgweb fails while rendering its own
  error page).

Arguable, so not counted (:func:`arguable`): log windows that may share more than half of their
entries as rendered (the paper style's log page loads 60 more as it scrolls). Left out as
arguable: the collection's index (``/`` on both ports: a table of the one repository it
serves, 119 characters of entries, thin by the spec's measure, a front page to a person), searches
(``/log?rev=keyword``; an empty one is a 200 "searching for" page with no entry), the 400 of an
unknown command ("method not found": neither an error page nor content by the spec), pages of
another style (``?style=gitweb``: the same content in another template), files at older revisions
(the same text when the file did not change), the per-file diff and comparison views, raw files and
changesets (``raw-*``, not HTML) and the Atom/RSS feeds. hgweb has no login page. Mercurial's lazy
imports are off (``HGDEMANDIMPORT=disable``): with them, the first requests that arrive together
fail with 500s that a second fetch does not. Setup takes 1-2 minutes (most of it ``hg convert``).
Last line (see ``bench/appbench.py``):

    set=hgweb urls=N groups=G dup_share=D missing=M precision=P recall=R f1=F false_pairs=K
    missed_pairs=K lost=L rules=right/special (pct) content_as_junk=J
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from typing import Dict, Iterator, List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import appbench  # bench/appbench.py

from scrapy_websim.testing import servers

PACKAGES = ("mercurial", "git")
REPO = appbench.REPO
#: the collection's repositories: the history served, a private clone, a repository gone from disk
NAME, PRIVATE, LEGACY = "websim", "private", "legacy"
#: files and directories of this repository shown by the file browser (those the tip has)
FILES = ("README.md", "pyproject.toml", "setup.cfg", "mkdocs.yml", ".gitignore", "docs/architecture.md",
         "docs/settings.md", "docs/clustering.md", "docs/development.md", "docs/index.md", "docs/usage.md",
         "scripts/setup.sh", "scripts/test.sh", "scripts/demo.sh", "scrapy_websim/__init__.py",
         "scrapy_websim/config.py", "scrapy_websim/cli.py", "bench/appbench.py", "bench/dokuwiki.py",
         "tests/conftest.py")
DIRS = ("docs", "bench", "scripts", "tests", "scrapy_websim", "scrapy_websim/core")
HELP = ("config", "revsets", "templating", "dates", "patterns", "urls", "hgweb", "filesets", "phases",
        "glossary", "log", "diff")


def ensure_packages() -> None:
    if shutil.which("hg") and shutil.which("git"):
        return
    print("installing " + " ".join(PACKAGES), flush=True)
    subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *PACKAGES], check=True,
                   stdout=subprocess.DEVNULL, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))


def hg_env(tmp: str, plain: bool = False) -> Dict[str, str]:
    """Mercurial reads only this bench's configuration (no system or user hgrc) and imports its
    modules at start: hgweb's lazy imports race when the first requests come in parallel (a 500
    "module 'mercurial.formatter' has no attribute 'templateresources'"). ``plain``: output for
    scripts (not for the server: hgweb's help index fails in plain mode)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HG")}
    env.update(HGRCPATH=os.path.join(tmp, "hgrc"), HGENCODING="utf-8", HGDEMANDIMPORT="disable")
    if plain:
        env["HGPLAIN"] = "1"
    return env


def run(argv: List[str], tmp: str, cwd: Optional[str] = None) -> str:
    proc = subprocess.run(argv, cwd=cwd, env=hg_env(tmp, plain=True), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return proc.stdout


def setup(tmp: str) -> Tuple[str, str]:
    """The repositories and the collection's configuration in ``tmp``; (its hgweb.config, the
    served repository's path)."""
    if os.path.exists(os.path.join(tmp, "repos")):
        raise SystemExit(f"{tmp}/repos exists: --keep wants a directory that holds no repositories yet")
    os.makedirs(tmp, exist_ok=True)
    with open(os.path.join(tmp, "hgrc"), "w", encoding="utf-8") as fh:
        fh.write("[ui]\nusername = bench\n")
    has_main = subprocess.run(["git", "-C", REPO, "rev-parse", "--verify", "-q", "refs/heads/main"],
                              capture_output=True, check=False).returncode == 0
    branch = "main" if has_main else run(["git", "-C", REPO, "rev-parse", "--abbrev-ref", "HEAD"], tmp).strip()
    src = os.path.join(tmp, "src.git")
    run(["git", "clone", "-q", "--bare", "--single-branch", "--branch", branch, REPO, src], tmp)
    repos = os.path.join(tmp, "repos")
    os.makedirs(repos)
    path = os.path.join(repos, NAME)
    run(["hg", "--config", "extensions.convert=", "convert", "-q", src, path], tmp)
    for name in (PRIVATE, LEGACY):
        run(["hg", "clone", "-q", "-U", path, os.path.join(repos, name)], tmp)
    hgrcs = {NAME: "[web]\ndescription = scrapy-websim, converted from git\ncontact = scrapy-websim maintainers\n",
             PRIVATE: "[web]\ndescription = A private fork\nallow_read = alice\n"}
    for name, text in hgrcs.items():
        with open(os.path.join(repos, name, ".hg", "hgrc"), "w", encoding="utf-8") as fh:
            fh.write(text)
    conf = os.path.join(tmp, "hgweb.config")
    with open(conf, "w", encoding="utf-8") as fh:
        fh.write("[paths]\n" + "".join(f"{n} = {os.path.join(repos, n)}\n" for n in (NAME, PRIVATE, LEGACY))
                 + "[web]\nstyle = paper\n")
    shutil.rmtree(os.path.join(repos, LEGACY))  # moved away, still in the configuration
    return conf, path


@contextlib.contextmanager
def serve(tmp: str, conf: str, ports: List[int]) -> Iterator[List[str]]:
    """One ``hg serve --web-conf`` per port of 127.0.0.1 over the one collection; yields their base URLs."""
    procs = []
    try:
        for port in ports:
            log = os.path.join(tmp, f"hg-{port}")
            procs.append(subprocess.Popen(
                ["hg", "serve", "--web-conf", conf, "-a", "127.0.0.1", "-p", str(port),
                 "-A", log + ".access.log", "-E", log + ".error.log"],
                cwd=tmp, env=hg_env(tmp), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        bases = [f"http://127.0.0.1:{port}" for port in ports]
        deadline = time.monotonic() + 120
        for base, proc in zip(bases, procs):
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"hg serve exited with {proc.returncode}: see {tmp}/hg-*.error.log")
                with contextlib.suppress(OSError):
                    urllib.request.urlopen(base + "/", timeout=30).read()
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"hg serve did not answer on {base} in 120 s")
                time.sleep(0.2)
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


def changesets(tmp: str, path: str) -> List[Tuple[int, str, int]]:
    """(local revision number, node, lines changed) of every changeset, oldest first."""
    out = run(["hg", "log", "-R", path, "-r", "0:tip", "-T", "{rev} {node} {diffstat}\\n"], tmp)
    rows = []
    for line in out.splitlines():
        rev, node, stat = line.split(" ", 2)
        # diffstat: "N: +A/-D"
        plus, _, minus = stat.partition(": ")[2].partition("/")
        rows.append((int(rev), node, int(plus.lstrip("+") or 0) + int(minus.lstrip("-") or 0)))
    return rows


#: a hash prefix no changeset has (``ffff...`` is Mercurial's working-directory pseudo-revision)
MISSING = "0badc0ffee00"


class Truth:
    def __init__(self) -> None:
        self.urls: appbench.Truth = {}

    def add(self, group: str, urls: List[str], label: Optional[str] = None) -> None:
        for url in urls:
            assert url not in self.urls, url
            self.urls[url] = (group, label)


def truth(a: str, b: str, revs: List[Tuple[int, str, int]], files: List[str], dirs: List[str],
          n_changesets: int) -> appbench.Truth:
    """``a`` and ``b``: the two servers' base URLs; ``revs`` from :func:`changesets`."""
    t = Truth()
    w, wb = f"{a}/{NAME}", f"{b}/{NAME}"
    # changesets: hgweb links them by their 12-hex short hash
    fit = [r for r in revs if r[2] <= 1000]
    chosen = [fit[i * len(fit) // n_changesets] for i in range(min(n_changesets, len(fit)))]  # spread evenly
    kinds = ("full", "number", "alias", "prefix", "slash", "utm", "port", "style")
    for k, (rev, node, _) in enumerate(chosen):
        short = node[:12]
        urls = [f"{w}/rev/{short}"]
        if k % 20 == 5:
            kind = kinds[(k // 20) % len(kinds)]
            urls.append({"full": f"{w}/rev/{node}", "number": f"{w}/rev/{rev}",
                         "alias": f"{w}/changeset/{short}", "prefix": f"{w}/rev/{node[:8]}",
                         "slash": f"{w}/rev/{short}/", "utm": f"{w}/rev/{short}?utm_source=mail",
                         "port": f"{wb}/rev/{short}", "style": f"{w}/rev/{short}?style=paper"}[kind])
        t.add(f"rev-{short}", urls)
    tip = revs[-1]
    assert not any(node.startswith((MISSING, "deadbeef")) for _, node, _ in revs)
    node_of = {rev: node for rev, node, _ in revs}
    # the three logs, each page of its pagination ("-60" / "-10" from the tip) its own group
    t.add("shortlog-0", [f"{w}/", w, f"{w}/shortlog", f"{w}/shortlog/tip", f"{w}/shortlog?revcount=60",
                         f"{w}/shortlog/{tip[1][:12]}", f"{wb}/"])
    for k in range(1, 6):
        if tip[0] - 60 * k >= 0:
            t.add(f"shortlog-{k}", [f"{w}/shortlog/{node_of[tip[0] - 60 * k][:12]}"])
    t.add("log-0", [f"{w}/log", f"{w}/log/tip"])
    for k in range(1, 15):
        if tip[0] - 10 * k >= 0:
            t.add(f"log-{k}", [f"{w}/log/{node_of[tip[0] - 10 * k][:12]}"])
    t.add("graph-0", [f"{w}/graph", f"{w}/graph/tip"])
    for k in range(1, 4):
        if tip[0] - 60 * k >= 0:
            t.add(f"graph-{k}", [f"{w}/graph/{node_of[tip[0] - 60 * k][:12]}"])
    # the file browser at the tip
    t.add("dir-root", [f"{w}/file/tip", f"{w}/file", f"{w}/file/tip/"])
    for d in dirs:
        t.add(f"dir-{d}", [f"{w}/file/tip/{d}"])
    for k, f in enumerate(files):
        urls = [f"{w}/file/tip/{f}"]
        if k == 0:
            urls += [f"{w}/file/{tip[1][:12]}/{f}", f"{w}/file/default/{f}"]
        t.add(f"file-{f}", urls)
    for f in files[:4]:
        t.add(f"annotate-{f}", [f"{w}/annotate/tip/{f}"])
        t.add(f"filelog-{f}", [f"{w}/log/tip/{f}"])
    for page in ("tags", "branches", "bookmarks"):
        t.add(page, [f"{w}/{page}"])
    t.add("help", [f"{w}/help"])
    for topic in HELP:
        t.add(f"help-{topic}", [f"{w}/help/{topic}"])
    # the collection's index is left out: one entry, thin by the spec's measure (see the docstring)

    # special pages: one group per template and status, whatever name the message echoes
    t.add("404", [f"{w}/rev/deadbeefcafe", f"{w}/rev/99999", f"{w}/rev/{tip[1][:6]}zz",
                  f"{w}/file/tip/no/such/file.py", f"{w}/file/deadbeef/README.md", f"{w}/annotate/tip/nosuch.md",
                  f"{w}/log/tip/nosuch.txt", f"{w}/shortlog/no-such-branch", f"{w}/help/no-such-topic",
                  f"{wb}/rev/{MISSING}"], "E3")
    t.add("404-collection", [f"{a}/no-such-repo/", f"{a}/websim-old/rev/tip", f"{a}/hg/", f"{b}/repo/"], "E3")
    t.add("401", [f"{a}/{PRIVATE}/", f"{a}/{PRIVATE}/rev/tip", f"{a}/{PRIVATE}/file/tip/README.md",
                  f"{b}/{PRIVATE}/shortlog"], "E3")
    t.add("403", [f"{w}/archive/tip.zip", f"{w}/archive/tip.tar.gz", f"{w}/archive/{tip[1][:12]}.tar.bz2",
                  f"{w}/summary"], "E3")
    t.add("500", [f"{a}/{LEGACY}/", f"{a}/{LEGACY}/rev/tip", f"{a}/{LEGACY}/shortlog",
                  f"{a}/{LEGACY}/file/tip/README.md"], "E1")
    return t.urls


#: Entries of a log page ("-10" pages) and of a shortlog page ("-60"), and the entries a log page's
#: scroll may add: the paper style loads the next shortlog page (60) when the end of the list is in
#: view (its ``ajaxScrollInit``), so a log page rendered in a browser shows 10 or 70 entries,
#: depending on when it was captured.
LOG_PAGE, SHORTLOG_PAGE, SCROLL_LOAD = 10, 60, 60


def _window(group: str) -> Optional[Tuple[int, int]]:
    """The entries (first, end) from the tip a log or shortlog group's page may show; None for others."""
    kind, _, k = group.rpartition("-")
    if not k.isdigit():
        return None
    if kind == "log":
        return LOG_PAGE * int(k), LOG_PAGE * int(k) + LOG_PAGE + SCROLL_LOAD
    if kind == "shortlog":
        return SHORTLOG_PAGE * int(k), SHORTLOG_PAGE * (int(k) + 1)
    return None


def arguable(truth: appbench.Truth) -> appbench.Arguable:
    """The pairs of the truth that are not counted (``bench/appbench.py``): the pages of two log
    windows that, with a log page's scroll load, may share more than half of the entries of each
    (the log pages 10, 20 or 30 entries apart, and a shortlog page with the log pages inside it).
    Each window is its own page by its URL, yet as rendered the two list mostly the same
    changesets: 60 of 70 for neighbours, about as much as a noisy copy of a long page keeps of it.
    Whether they are one page is arguable, and whether the scroll loaded depends on when the page
    was captured; the truth does not guess."""
    windows = {g: w for g in {g for g, _ in truth.values()} if (w := _window(g)) is not None}
    close = set()
    for ga, (a0, a1) in windows.items():
        for gb, (b0, b1) in windows.items():
            if ga < gb and 2 * (min(a1, b1) - max(a0, b0)) > min(a1 - a0, b1 - b0):
                close.add((ga, gb))
    urls: Dict[str, List[str]] = {}
    for url, (g, _) in truth.items():
        urls.setdefault(g, []).append(url)
    return {(min(a, b), max(a, b)) for ga, gb in close for a in urls[ga] for b in urls[gb]}


@contextlib.contextmanager
def build(args: argparse.Namespace, tmp: str) -> Iterator[appbench.Truth]:
    ensure_packages()
    started = time.monotonic()
    conf, path = setup(tmp)
    revs = changesets(tmp, path)
    manifest = set(run(["hg", "files", "-r", "tip"], tmp, cwd=path).splitlines())
    files = [f for f in FILES if f in manifest]
    dirs = [d for d in DIRS if any(m.startswith(d + "/") for m in manifest)]
    ports: List[int] = []
    while len(ports) < 2:
        port = servers.free_port()
        if port not in ports:
            ports.append(port)
    with serve(tmp, conf, ports) as (a, b):
        print(f"hgweb: set up in {time.monotonic() - started:.0f} s: {a} and {b}", file=sys.stderr, flush=True)
        yield truth(a, b, revs, files, dirs, args.changesets)


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--changesets", type=int, default=300, help="changeset pages of this repository's history")


if __name__ == "__main__":
    sys.exit(appbench.main("hgweb", build, __doc__, add_args, arguable=arguable))
