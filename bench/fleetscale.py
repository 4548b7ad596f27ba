"""Fleet scale: a list of thousands of host URLs over hundreds of origins, most showing one of a few
hundred things; websim's pages/s, renders, CPU, memory and clusters against a bare scrapy-playwright
crawl of the same list, in one run on one machine.

    python bench/fleetscale.py [--urls 5000] [--origins 500] [--bare-sample N] [--keep DIR] [-v]
    python bench/fleetscale.py --check [--urls N --origins M]     # set up, fetch every URL once, no crawl
    python bench/fleetscale.py --memory [--urls 10000] [--origins M] [--keep DIR]
    python bench/fleetscale.py --rescore DIR [-v]                  # score a kept run again

**The fleet.** Every origin is a ``127.0.0.N:PORT`` (N from 2 to 254, a few ports per server) of
one real server process: Debian's nginx, Apache httpd, lighttpd and Tomcat 10 (installed with apt
when missing, as root; left out with a note when it cannot be), each listening on all of its
origins, and two Verdaccio registries (``bench/app_spa.py``). An origin has a profile
(``PROFILES``; its share of the origins in the ``fleet`` mix, the default, and in the ``fast``
mix of ``--memory``):

* default pages: nginx's welcome page, Apache's Debian default page, lighttpd's placeholder,
  Tomcat's "It works !" with its manager application (a 401: no users);
* admin applications' login pages as the Debian packages serve them: phpMyAdmin, Roundcube and
  Adminer (``php -S`` started once to capture the page and the assets it loads, as in
  ``bench/app_logins.py``), Django's admin (and its 404 page); nginx serves them with each
  per-request token (CSRF tokens, nonces, session ids: what differs between two fetches of the
  live page) replaced by nginx's request id, and the applications' real scripts and styles;
* whole-host pages, written here, with per-request noise from nginx SSI: a parked domain (its
  host name, a click id per link, the date), a hosting company's placeholder (host, port, date),
  a WAF block page (403, incident id, date, client), a maintenance page (503, or 200), and
  nginx's own 502 (a dead upstream) and 401 (basic auth);
* unique content: documentation sites (python3-doc and postgresql-doc-15 on nginx, debian-reference
  on nginx, the Apache manual on Apache, git's on lighttpd): each host its own pages of one set,
  about one page in ten also on another host of the set (a mirror: the same thing), the set's
  index at ``/``; Apache directory listings of different real files per host;
* client-rendered apps: the Verdaccio pair (every URL the same shell; a package page per URL,
  the home page on both, a not-found page) and "Fleet Console" hosts: one shell on every host
  whose script fetches the host's own ``/api/host.json`` (real Debian package texts, different per
  host) and renders the overview (``/``), the package list (``/packages``) or a not-found view
  (any other path: a client-rendered soft 404); three "twin" hosts serve identical data.

Each origin's URLs are ``/`` and the profile's own pages, then probe paths of a triage list
(``PROBES``: ``/login``, ``/.env``, ``/wp-login.php``, ...) answered by the profile: the server's
404 or 403, PHP-FPM's "File not found.", the whole-host page, the console's not-found view. The
URL count per origin varies (seeded); the list is shuffled (seed 7).

**Truth** (written here per URL): a group key (URLs of one key show the same thing) and the
expected rule label (``None`` for content; ``?`` not scored: a documentation page of under 400
characters, thin or content, and the package mirrors' pages). ``distinct`` is the number of
groups of HTML answers; ``must_render`` the renders no rule avoids: one per distinct thing, and
for the shells that fetch their content (the consoles, Verdaccio) one per path and query and
host's data (a console's not-found view at ``/login`` and at ``/.env`` are one thing but two
renders: a client-side router could show anything at either; two consoles with their own data are
two renders; the twins, and the Verdaccio pair on one storage, serve the same data);
``--spa-twins N`` makes N twins (a fleet of one client-rendered appliance); the non-HTML URLs (``robots.txt``,
the consoles' JSON) are apart: websim does not cluster non-HTML answers (they take part in
rules only) and never renders them.

**Measured**, same list, same machine, one after the other: websim at its defaults
(``python -m scrapy_websim.cli -l urls.txt -O result-default.json --features-file ...``),
websim ``--render-all`` when the CLI has that flag (else the output says so), and
``bench/bare_crawl.py`` (goto, screenshot, HTML; same browser and launch flags, websim's pages in
flight) on the whole list or, with ``--bare-sample N``, on N URLs drawn from it with seed 11. Per
crawl: pages/s = URLs / wall seconds of the process (start-up and websim's clustering included),
CPU seconds of the whole process tree (the crawl, Playwright's node driver, every Chromium
process; ``bench/crawl.py``'s sampler, or the reaped tree's rusage when larger; ``cpu_split`` by
process kind), peak summed PSS
of the tree (``bench/memory.py``), renders (websim's stats: ``websim/renders`` when present, else
``websim/rendered``), and for websim pair F1 and lost against the truth (lost: a truth group none
of whose URLs is a canonical row), rule labels, and nginx's count of document requests per listed
nginx URL. Last lines, ``key=value``: one per crawl and a summary.

``--memory``: the ``fast`` mix (small pages, many repeats: default pages, logins, error and
whole-host pages, package pages of Debian package mirrors) at ``--urls`` (default 10000) over
``--origins`` (default: URLs / 50, at least 500); only websim at its defaults; reports the peak
PSS of its process tree, the peak RSS of the websim process, the peak size of its temporary
folder (the record store, Chromium's profile) and of the files it wrote.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import json
import math
import os
import random
import resource
import shlex
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)
sys.path.insert(0, HERE)

import fleetscale_servers as fs  # noqa: E402  (bench/fleetscale_servers.py)
from crawl import TreeSampler, websim_stats  # noqa: E402  (bench/crawl.py)
from memory import MB, MemorySampler  # noqa: E402  (bench/memory.py)

from scrapy_websim.crawler.addon import max_pages_in_flight  # noqa: E402

Truth = Dict[str, Tuple[str, Optional[str]]]
SPECIAL = ("E1", "E3", "L1", "W1", "M1", "T1")
NONHTML = "nonhtml:"

#: profile -> (server, fleet mix share, fast mix share). Shares are relative weights of origins.
PROFILES: Dict[str, Tuple[str, float, float]] = {
    "nginx-default": ("nginx", 16, 26),
    "apache-default": ("apache", 9, 12),
    "lighttpd-default": ("lighttpd", 5, 6),
    "tomcat-default": ("tomcat", 4, 0),
    "phpmyadmin": ("nginx", 5, 4),
    "roundcube": ("nginx", 4, 3),
    "adminer": ("nginx", 2, 2),
    "django": ("nginx", 2, 2),
    "basic-auth": ("nginx", 3, 4),
    "parked": ("nginx", 5, 6),
    "hosting": ("nginx", 3, 4),
    "waf": ("nginx", 3, 4),
    "maint-503": ("nginx", 2, 3),
    "maint-200": ("nginx", 1, 2),
    "bad-gateway": ("nginx", 3, 4),
    "docs-python": ("nginx", 7, 0),
    "docs-postgres": ("nginx", 7, 0),
    "docs-debref": ("nginx", 2, 0),
    "docs-apache": ("apache", 4, 0),
    "docs-git": ("lighttpd", 3, 0),
    "listing": ("apache", 2, 0),
    "spa-dash": ("nginx", 2, 0),
    "pkgsite": ("nginx", 0, 18),
}
#: The nginx ``server`` block of each nginx profile (fleetscale_servers.nginx_conf).
NGINX_BLOCK = {"docs-python": "docs", "docs-postgres": "docs", "docs-debref": "docs", "spa-dash": "spa",
               "spa-twin": "spa"}
SPA_TWINS = 3
DOC_SRC = {"python": fs.PYDOC, "postgres": fs.PGDOC, "debref": fs.DEBREF, "apache": fs.APACHEDOC, "git": fs.GITDOC}
VERDACCIO_PACKAGES = 16

#: Paths a triage tool tries on every host.
PROBES = ["/login", "/admin/", "/wp-login.php", "/.env", "/.git/config", "/server-status", "/phpmyadmin/",
          "/api/v1/status", "/backup.zip", "/console/", "/manager/html", "/robots.txt", "/index.php",
          "/old/index.html", "/test.php", "/cgi-bin/test.cgi", "/config.json", "/user/login", "/xmlrpc.php",
          "/actuator/health", "/.DS_Store", "/sitemap.xml", "/owa/", "/remote/login", "/jenkins/", "/solr/",
          "/debug/default/view", "/.htaccess", "/web.config", "/install.php"]
EXTRA_WORDS = ["archive", "assets", "blog", "docs", "files", "images", "media", "news", "shop", "static", "support",
               "uploads"]
#: Folders nginx serves only internally on whole-host origins (fleetscale_servers: ``internal``).
INTERNAL_DIRS = ("/pages/", "/login/", "/assets/")
INTERNAL_PROFILES = ("parked", "waf", "maint-503", "maint-200")
DOTFILES = ("/.env", "/.git/config", "/.DS_Store", "/.htaccess")

CORE = {  # the profile's own URLs, listed first (as many as the origin's share of the list allows)
    "phpmyadmin": ["/", "/index.php", "/index.php?route=/server/databases",
                   "/index.php?route=/sql&db=mysql&table=user"],
    "roundcube": ["/", "/?_task=mail", "/?_task=mail&_mbox=INBOX", "/?_task=settings", "/index.php"],
    "adminer": ["/", "/?server=127.0.0.1", "/?server=127.0.0.1&username=root", "/index.php"],
    "django": ["/admin/login/", "/", "/admin/password_change/", "/admin/auth/user/"],
}
WHOLE_HOST = {"parked": ("parked", None), "waf": ("waf-block", "W1"), "maint-503": ("maint-503", "E1"),
              "maint-200": ("maint-200", "M1"), "bad-gateway": ("nginx-502", "E1"), "basic-auth": ("nginx-401", "L1")}
DEFAULT_PAGE = {"nginx-default": ("nginx-welcome", "T1"), "apache-default": ("apache-default", None),
                "lighttpd-default": ("lighttpd-placeholder", None), "tomcat-default": ("tomcat-default", None),
                "hosting": ("hosting-default", None)}
LOGIN = {"phpmyadmin": "phpmyadmin-login", "roundcube": "roundcube-login", "adminer": "adminer-login",
         "django": "django-login"}


@dataclass
class Origin:
    profile: str
    n_urls: int
    serial: int = 0  # its place in the plan
    index: int = 0  # among the origins of its server
    addr: str = ""
    port: int = 0
    urls: List[Tuple[str, str, Optional[str]]] = field(default_factory=list)  # (path, group, label)
    pages: List[str] = field(default_factory=list)  # a doc site's pages, a package mirror's packages
    data: dict = field(default_factory=dict)

    @property
    def server(self) -> str:
        return "nginx" if self.profile == "spa-twin" else "verdaccio" if self.profile == "verdaccio" \
            else PROFILES[self.profile][0]

    @property
    def key(self) -> str:
        return f"{self.addr}_{self.port}"

    @property
    def base(self) -> str:
        return f"http://{self.addr}:{self.port}"


# ---------------------------------------------------------------------------------------------
# The plan: origins, their profiles and URLs, and the truth


def apportion(total: int, weights: Dict[str, float]) -> Dict[str, int]:
    """``total`` split by ``weights`` (largest remainders)."""
    s = sum(weights.values())
    if total <= 0 or s <= 0:
        return {k: 0 for k in weights}
    exact = {k: total * w / s for k, w in weights.items()}
    out = {k: int(v) for k, v in exact.items()}
    for k in sorted(exact, key=lambda k: exact[k] - out[k], reverse=True)[:total - sum(out.values())]:
        out[k] += 1
    return out


def probe_paths(n: int, rng: random.Random) -> List[str]:
    paths = rng.sample(PROBES, min(n, len(PROBES)))
    k = 0
    while len(paths) < n:
        paths.append(f"/{EXTRA_WORDS[k % len(EXTRA_WORDS)]}/{rng.choice(EXTRA_WORDS)}-{k}.html")
        k += 1
    return paths


def probe_truth(profile: str, path: str, robots: bool = False) -> Tuple[str, Optional[str]]:
    """What an origin of ``profile`` answers to a probe ``path``: (group, label)."""
    server = "nginx" if profile == "spa-twin" else PROFILES[profile][0]
    if profile in WHOLE_HOST:
        # the folders of pages, login captures and assets are internal there: nginx's 404
        internal = profile in INTERNAL_PROFILES and path.startswith(INTERNAL_DIRS)
        return ("nginx-404", "E3") if internal else WHOLE_HOST[profile]
    if profile in ("spa-dash", "spa-twin"):
        return ("console-not-found", "E3")
    if robots and path == "/robots.txt":
        return (f"{NONHTML}robots-search", None)
    if server == "apache":
        return ("apache-403", "E3") if path.startswith("/.ht") else ("apache-404", "E3")
    if server == "lighttpd":
        return ("lighttpd-404", "E3")
    if server == "tomcat":
        return ("tomcat-manager-401", "L1") if path == "/manager/html" else ("tomcat-404", "E3")
    if profile == "django":
        return ("django-login", "L1") if path.startswith("/admin/") else ("django-404", "E3")
    if profile in ("hosting", "phpmyadmin", "roundcube", "adminer") and path in DOTFILES:
        return ("nginx-403", "E3")
    if profile in ("phpmyadmin", "roundcube", "adminer") and path.endswith(".php"):
        return (LOGIN[profile], "L1") if path == "/index.php" else ("phpfpm-404", "E3")
    return ("nginx-404", "E3")


class Pools:
    """Unique pages handed to the origins that show them: each page to one host, about one in ten
    to a second host too (a mirror)."""

    def __init__(self, rng: random.Random, mirror_share: float = 0.1) -> None:
        self.rng = rng
        self.mirror_share = mirror_share
        self.free: Dict[str, List[str]] = {}
        self.used: Dict[str, List[str]] = collections.defaultdict(list)

    def add(self, name: str, items: Sequence[str]) -> None:
        items = list(items)
        self.rng.shuffle(items)
        self.free[name] = items

    def take(self, name: str, n: int) -> List[str]:
        out: List[str] = []
        while len(out) < n:
            mirror = self.used[name] and (self.rng.random() < self.mirror_share or not self.free[name])
            if mirror:
                choices = [p for p in self.used[name] if p not in out]
                if not choices:
                    break
                out.append(self.rng.choice(choices))
            else:
                page = self.free[name].pop()
                self.used[name].append(page)
                out.append(page)
        return out


def plan(n_urls: int, n_origins: int, mix: str, servers_ok: Iterable[str], seed: int = 5,
         twins: int = SPA_TWINS) -> List[Origin]:
    """The origins with their profiles and URLs (paths, groups, labels); addresses come later.
    ``twins``: console hosts that serve the same data (a fleet of one appliance)."""
    rng = random.Random(seed)
    ok = set(servers_ok)
    col = 1 if mix == "fleet" else 2
    weights = {p: v[col] for p, v in PROFILES.items() if v[col] > 0 and v[0] in ok}
    fixed: List[Origin] = []
    if mix == "fleet" and "verdaccio" in ok and n_urls >= 400 and n_origins >= 40:
        fixed += [Origin("verdaccio", 0), Origin("verdaccio", 0)]
    if mix == "fleet" and "spa-dash" in weights and n_origins >= 40:
        fixed += [Origin("spa-twin", 0) for _ in range(twins)]
    counts = apportion(n_origins - len(fixed), weights)
    origins = fixed + [Origin(p, 0) for p, c in counts.items() for _ in range(c)]
    rng.shuffle(origins)
    for serial, o in enumerate(origins):
        o.serial = serial
    # URLs per origin: about the same number each (+-40 %); the Verdaccio pair has its own set
    n_verdaccio = (VERDACCIO_PACKAGES + 11) if any(o.profile == "verdaccio" for o in origins) else 0
    rest = [o for o in origins if o.profile != "verdaccio"]
    budget = n_urls - n_verdaccio
    if budget < len(rest):
        raise SystemExit(f"--urls {n_urls} is fewer than one URL per origin ({len(rest)} origins)")
    raw = [rng.uniform(0.6, 1.4) for _ in rest]
    share = [max(1, int(budget * w / sum(raw))) for w in raw]
    while sum(share) != budget:
        i = rng.randrange(len(rest))
        if sum(share) < budget:
            share[i] += 1
        elif share[i] > 1:
            share[i] -= 1
    for o, n in zip(rest, share):
        o.n_urls = n
    pools = Pools(rng)
    docsets = fs.doc_sets()
    for name, ds in docsets.items():
        pools.add(name, ds.pages)
    if mix == "fast":
        import debian_meta

        pools.add("pkg", [r["Package"] for r in debian_meta.packages()])
    for o in origins:
        add_urls(o, rng, pools)
    return origins


def add_urls(o: Origin, rng: random.Random, pools: Pools) -> None:
    p, n = o.profile, o.n_urls
    if p == "verdaccio":
        return  # its URLs need the published names: verdaccio_truth
    urls: List[Tuple[str, str, Optional[str]]] = []
    if p in DEFAULT_PAGE:
        urls.append(("/", *DEFAULT_PAGE[p]))
        if p == "tomcat-default" and n > 1:
            urls.append(("/manager/html", "tomcat-manager-401", "L1"))
    elif p in WHOLE_HOST:
        urls.append(("/", *WHOLE_HOST[p]))
    elif p in LOGIN:
        core = CORE[p][:max(1, min(len(CORE[p]), n // 2))]
        urls += [(path, LOGIN[p], "L1") for path in core]
    elif p.startswith("docs-"):
        name = p[len("docs-"):]
        o.pages = pools.take(name, max(1, min(40, round(0.55 * (n - 1))))) if n > 1 else []
        urls.append(("/", f"doc:{name}:index", None))
        urls += [("/" + rel, f"doc:{name}:{rel}", doc_label(name, rel)) for rel in o.pages]
        o.data["robots"] = rng.random() < 0.5
    elif p == "listing":
        urls.append(("/", f"listing:{o.serial}", None))
    elif p in ("spa-dash", "spa-twin"):
        unique = f"console:{o.serial}" if p == "spa-dash" else "console:twin"
        urls += [("/", f"{unique}:overview", None), ("/packages", f"{unique}:packages", None)][:max(1, n)]
        if n > 3 and p == "spa-dash":
            urls.append(("/api/host.json", f"{NONHTML}{unique}:json", None))
    elif p == "pkgsite":
        o.pages = pools.take("pkg", max(1, round(0.7 * (n - 1)))) if n > 1 else []
        urls.append(("/", "pkgsite-index", None))
        urls += [(f"/pkg/{name}", f"pkg:{name}", "?") for name in o.pages]
    taken = {u[0] for u in urls}
    for path in probe_paths(max(0, n - len(urls)) + 8, rng):
        if len(urls) >= max(n, 1):
            break
        if path not in taken:
            urls.append((path, *probe_truth(p, path, o.data.get("robots", False))))
            taken.add(path)
    o.urls = urls


@functools.lru_cache(maxsize=None)
def doc_label(name: str, rel: str) -> Optional[str]:
    """A documentation page is content (``None``), but one whose whole visible text is under 400
    characters (git's ``git-stage.html``: "a synonym for git-add"; PostgreSQL's chapter stubs) is
    arguably thin: ``?``, its label not scored."""
    import lxml.html

    body = lxml.html.parse(os.path.join(DOC_SRC[name], rel)).getroot().find(".//body")
    text = " ".join((body.text_content() if body is not None else "").split())
    return "?" if len(text) < 400 else None


def verdaccio_truth(a: str, b: str, names: Sequence[str]) -> Truth:
    truth: Truth = {f"{a}/": ("verdaccio-home", None), f"{b}/": ("verdaccio-home", None)}
    for i, name in enumerate(names):
        truth[f"{a}/-/web/detail/{name}"] = (f"npm:{name}", None)
        if i < 6:
            truth[f"{b}/-/web/detail/{name}"] = (f"npm:{name}", None)
    for base, missing in ((a, "nosuchpackage"), (b, "left-pad-deb"), (a, "@debian/libnosuch1")):
        truth[f"{base}/-/web/detail/{missing}"] = ("verdaccio-not-found", "E3")
    return truth


def assign_addresses(origins: Sequence[Origin]) -> Dict[str, List[Origin]]:
    """Addresses and ports: a server's origins cycle through 127.0.0.2-254, a new port each round."""
    by_server: Dict[str, List[Origin]] = collections.defaultdict(list)
    for o in origins:
        by_server[o.server].append(o)
    taken: set = set()
    for server, group in by_server.items():
        if server == "verdaccio":
            continue
        ports = [fs.pick_port(fs.ADDRS[:len(group)], taken) for _ in range(math.ceil(len(group) / len(fs.ADDRS)))]
        for j, o in enumerate(group):
            o.index = j
            o.addr, o.port = fs.ADDRS[j % len(fs.ADDRS)], ports[j // len(fs.ADDRS)]
    return by_server


def write_sites(www: str, origins: Sequence[Origin], rng: random.Random) -> None:
    """What the doc, listing, console and package-mirror origins serve, under ``www``."""
    docsets = fs.doc_sets()
    spa_recs: List[dict] = []
    for o in origins:
        if o.profile.startswith("docs-"):
            fs.write_doc_host(www, o.key, docsets[o.profile[len("docs-"):]], o.pages, o.data.get("robots", False))
        elif o.profile == "listing":
            write_listing(www, o, rng)
        elif o.profile in ("spa-dash", "spa-twin"):
            if not spa_recs:
                spa_recs = package_texts()
            fs.write_spa_data(www, o.key, console_data(o, spa_recs))
        elif o.profile == "pkgsite" and not os.path.isdir(os.path.join(www, "pkgsite")):
            write_pkgsite(www)


def write_listing(www: str, o: Origin, rng: random.Random) -> None:
    import glob
    import shutil

    files = sorted(glob.glob("/usr/share/doc/*/copyright"))
    root = fs.doc_root(www, o.key)
    os.makedirs(root, exist_ok=True)
    for path in rng.sample(files, 10):
        shutil.copy(path, os.path.join(root, path.split("/")[-2] + "-copyright.txt"))


def package_texts() -> List[dict]:
    import debian_meta

    out = []
    for rec in debian_meta.packages():
        summary, paras = debian_meta.description(rec)
        out.append({"name": rec["Package"], "version": rec.get("Version", ""), "summary": summary,
                    "description": paras[:2]})
    return out


ROLES = ["db", "web", "cache", "queue", "build", "backup", "mail", "proxy"]
SITES = ["ams1", "fra2", "iad3", "sin1", "gru1"]


def console_data(o: Origin, recs: List[dict]) -> dict:
    """The host's own data for the console (the twins share theirs)."""
    if o.profile == "spa-twin":
        i, hostname = 997, "pool-a (replica set)"
    else:
        i = o.serial * 7919
        hostname = f"{ROLES[i % len(ROLES)]}-{SITES[i % len(SITES)]}-{o.serial:03d}"
    start = (i * 17) % len(recs)
    chosen = [recs[(start + k) % len(recs)] for k in range(14)]
    featured = [r for r in chosen if sum(len(p) for p in r["description"]) > 200][:3] or chosen[:3]
    return {"hostname": hostname, "role": ROLES[i % len(ROLES)] + " server", "site": SITES[i % len(SITES)],
            "os": "Debian GNU/Linux 12 (bookworm)", "featured": featured,
            "packages": [{k: r[k] for k in ("name", "version", "summary")} for r in chosen]}


def write_pkgsite(www: str) -> None:
    import debian_meta

    root = os.path.join(www, "pkgsite")
    names = []
    for rec in debian_meta.packages():
        path = os.path.join(root, "pkg", rec["Package"] + ".html")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(fs.pkg_page(rec))
        names.append(rec["Package"])
    links = "".join(f'<li><a href="/pkg/{n}">{n}</a></li>' for n in names[::20])
    with open(os.path.join(root, "index.html"), "w", encoding="utf-8") as fh:
        fh.write("<!doctype html><html><head><meta charset=utf-8><title>Package mirror</title></head><body>"
                 f"<h1>Package mirror</h1><p>Debian packages mirrored here, a selection:</p><ul>{links}</ul>"
                 "</body></html>\n")


def build_truth(origins: Sequence[Origin]) -> Truth:
    truth: Truth = {}
    for o in origins:
        for path, group, label in o.urls:
            url = o.base + path
            assert url not in truth, url
            truth[url] = (group, label)
    return truth


# ---------------------------------------------------------------------------------------------
# Serving


@contextlib.contextmanager
def serve(origins: List[Origin], workdir: str, notes: List[str]):
    """Start every server of the plan; yields (truth, nginx access log, the URLs nginx serves)."""
    by_server = assign_addresses(origins)
    www = os.path.join(workdir, "www")
    os.makedirs(www, exist_ok=True)
    os.chmod(workdir, 0o755)
    write_sites(www, origins, random.Random(3))
    taken: set = set()
    with contextlib.ExitStack() as stack:
        captured: Dict[str, fs.Captured] = {}
        if any(o.profile in LOGIN for o in origins):
            print("capturing the login pages of phpMyAdmin, Roundcube, Adminer and Django", flush=True)
            captured = fs.capture_logins(os.path.join(workdir, "capture"))

        def profiles(server: str, block: bool = False) -> Dict[str, List[Tuple[str, int]]]:
            out: Dict[str, List[Tuple[str, int]]] = collections.defaultdict(list)
            for o in by_server.get(server, []):
                out[NGINX_BLOCK.get(o.profile, o.profile) if block else o.profile].append((o.addr, o.port))
            return out

        access_log = stack.enter_context(fs.nginx_fleet(
            os.path.join(workdir, "nginx"), www, profiles("nginx", True), fs.pick_port(["127.0.0.1"], taken),
            fs.pick_port(["127.0.0.1"], taken), captured))
        if by_server.get("apache"):
            stack.enter_context(fs.apache_fleet(os.path.join(workdir, "apache"), www, profiles("apache"),
                                                fs.pick_port(["127.0.0.1"], taken)))
        if by_server.get("lighttpd"):
            stack.enter_context(fs.lighttpd_fleet(os.path.join(workdir, "lighttpd"), www, profiles("lighttpd"),
                                                  fs.pick_port(["127.0.0.1"], taken)))
        if by_server.get("tomcat"):
            stack.enter_context(fs.tomcat_fleet(os.path.join(workdir, "tomcat"),
                                                [(o.addr, o.port) for o in by_server["tomcat"]],
                                                fs.pick_port(["127.0.0.1"], taken)))
        truth = build_truth(origins)
        if by_server.get("verdaccio"):
            try:
                a, b, names = stack.enter_context(fs.verdaccio_pair(os.path.join(workdir, "verdaccio"),
                                                                    VERDACCIO_PACKAGES))
                truth.update(verdaccio_truth(a, b, names))
            except Exception as exc:  # noqa: BLE001 - said in the output, the bench goes on without it
                notes.append(f"verdaccio left out: {exc}")
        yield truth, access_log, {o.base + path for o in by_server.get("nginx", []) for path, _g, _l in o.urls}


# ---------------------------------------------------------------------------------------------
# Crawls


class DirSampler(threading.Thread):
    """Peak total size of the files under a folder (sampled every 2 s)."""

    def __init__(self, path: str, interval: float = 2.0) -> None:
        super().__init__(daemon=True)
        self.path, self.interval = path, interval
        self.peak = 0
        self.peak_store = 0
        self.stop = threading.Event()

    def sample(self) -> None:
        total = store = 0
        for dirpath, _dirs, names in os.walk(self.path):
            in_store = os.path.relpath(dirpath, self.path).startswith("websim-")
            for name in names:
                with contextlib.suppress(OSError):
                    size = os.lstat(os.path.join(dirpath, name)).st_size
                    total += size
                    store += size if in_store else 0
        self.peak, self.peak_store = max(self.peak, total), max(self.peak_store, store)

    def run(self) -> None:
        while not self.stop.is_set():
            self.sample()
            self.stop.wait(self.interval)


def run_crawl(name: str, cmd: List[str], workdir: str, outputs: Sequence[str]) -> Dict[str, float]:
    """Run one crawl as a child process; wall, CPU and memory of its tree, and its temporary folder."""
    tmpdir = os.path.join(workdir, f"tmp-{name}")
    os.makedirs(tmpdir, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""), TMPDIR=tmpdir)
    log_path = os.path.join(workdir, f"{name}.log")
    load = os.getloadavg()[0]
    print(f"{name}: {' '.join(cmd[1:4])} ... (load {load:.1f})", flush=True)
    with open(log_path, "w", encoding="utf-8") as log:
        start = time.time()
        proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT)
        cpu, mem, disk = TreeSampler(proc.pid), MemorySampler(proc.pid, 0.5), DirSampler(tmpdir)
        for t in (cpu, mem, disk):
            t.start()
        _pid, status, rusage = os.wait4(proc.pid, 0)
        wall = time.time() - start
        for t in (cpu, mem, disk):
            t.stop.set()
            t.join()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        with open(log_path, encoding="utf-8", errors="replace") as fh:
            raise SystemExit(f"{name} exited {code}; see {log_path}:\n{fh.read()[-3000:]}")
    kinds = cpu.by_kind()
    res = {"wall": wall, "cpu": max(rusage.ru_utime + rusage.ru_stime, sum(kinds.values())),
           "peak_mb": mem.peak_total / MB, "peak_rss_mb": mem.peak_rss / MB, "tmp_peak_mb": disk.peak / MB,
           "store_peak_mb": disk.peak_store / MB, "load_before": load, "load_after": os.getloadavg()[0],
           "files_mb": sum(os.path.getsize(p) for p in outputs if os.path.exists(p)) / MB}
    res.update({f"cpu_{k}": v for k, v in kinds.items()})
    if name != "bare":
        res["stats"] = websim_stats(log_path)
    return res


def websim_accepts(flag: str) -> bool:
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-m", "scrapy_websim.cli", "--help"], capture_output=True, text=True,
                         env=env, timeout=120)
    return flag in out.stdout


#: ``--websim-args``: options given to every websim crawl of the run (e.g. ``-t 64``).
WEBSIM_ARGS: List[str] = []


def websim_cmd(listing: str, out: str, features: str, extra: Sequence[str] = ()) -> List[str]:
    cmd = [sys.executable, "-m", "scrapy_websim.cli", "-l", listing, "-O", out, "--loglevel", "INFO"]
    if features:
        cmd += ["--features-file", features]
    return cmd + WEBSIM_ARGS + list(extra)


def document_requests(access_log: str, start: float, end: float, listed: set) -> Tuple[int, int]:
    """(requests nginx answered for listed URLs between ``start`` and ``end``, listed nginx URLs)."""
    count = 0
    with open(access_log, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            parts = line.split(" ", 3)
            if len(parts) == 4 and start <= float(parts[0]) <= end:
                key = "http://" + parts[1] + parts[3].strip().strip('"')
                if key in listed:
                    count += 1
    return count, len(listed)


# ---------------------------------------------------------------------------------------------
# Scoring


def _pairs(n: int) -> int:
    return n * (n - 1) // 2


def pair_f1(pred: Dict[str, str], true: Dict[str, str], urls: Iterable[str]) -> Tuple[float, float, float]:
    """Pair precision, recall, F1 of ``pred`` (url -> cluster, "" alone) against ``true``."""
    cells: collections.Counter = collections.Counter()
    p_sizes: collections.Counter = collections.Counter()
    t_sizes: collections.Counter = collections.Counter()
    for u in urls:
        p, t = pred.get(u, ""), true.get(u, "")
        if p:
            p_sizes[p] += 1
        if t:
            t_sizes[t] += 1
        if p and t:
            cells[(p, t)] += 1
    tp = sum(_pairs(n) for n in cells.values())
    pp, tt = sum(_pairs(n) for n in p_sizes.values()), sum(_pairs(n) for n in t_sizes.values())
    precision = tp / pp if pp else 1.0
    recall = tp / tt if tt else 1.0
    return precision, recall, (2 * precision * recall / (precision + recall) if precision + recall else 0.0)


def scored(truth: Truth) -> List[str]:
    return [u for u, (g, _) in truth.items() if not g.startswith(NONHTML)]


def distinct(truth: Truth) -> int:
    return len({truth[u][0] for u in scored(truth)})


#: Groups of pages whose document is a shell that fetches what it shows (the consoles, Verdaccio's
#: pages): such a page is rendered on every host, its data could differ per host.
SHELL_GROUPS = ("console", "verdaccio-", "npm:")


def must_render(truth: Truth) -> int:
    """The renders no rule avoids: one per distinct thing; a shell that fetches its content once
    per path and query and host data (the twin consoles serve the same data, as do the Verdaccio
    pair on one storage; every other console its own: one of their pages is never another host's
    page without rendering it)."""
    shared = {host(u): "twin" for u in truth if truth[u][0].startswith("console:twin")}
    shared.update({host(u): "verdaccio" for u in truth if truth[u][0].startswith(("verdaccio-", "npm:"))})
    things = set()
    for u in scored(truth):
        group = truth[u][0]
        if group.startswith(SHELL_GROUPS):
            parts = urllib.parse.urlsplit(u)
            things.add((group, parts.path + "?" + parts.query, shared.get(host(u), host(u))))
        else:
            things.add((group, "", ""))
    return len(things)


def host(url: str) -> str:
    return urllib.parse.urlsplit(url).netloc


def score_run(truth: Truth, rows: Dict[str, dict], verbose: bool = False) -> Dict[str, float]:
    urls = scored(truth)
    pred = {u: rows[u]["cluster_id"] for u in urls if u in rows}
    precision, recall, f1 = pair_f1(pred, {u: truth[u][0] for u in urls}, urls)
    groups: Dict[str, List[str]] = collections.defaultdict(list)
    for u in urls:
        groups[truth[u][0]].append(u)
    lost = [g for g, members in groups.items()
            if not any(u not in rows or not rows[u]["cluster_id"] or rows[u]["is_canonical"] for u in members)]
    special = right = junk = 0
    wrong: collections.Counter = collections.Counter()
    for u in urls:
        want = truth[u][1]
        if want == "?":
            continue
        got = rows.get(u, {}).get("cluster_kind", "")
        got = got if got in SPECIAL else None
        junk += want is None and got is not None
        if want is not None or got is not None:
            special += 1
            right += want == got
            if want != got:
                wrong[(truth[u][0], want, got)] += 1
    if verbose:
        explain(truth, rows, urls, groups, lost, wrong)
    return {"precision": precision, "recall": recall, "f1": f1, "lost": len(lost), "labels_right": right,
            "labels_total": special, "content_as_junk": junk, "missing": sum(u not in rows for u in urls)}


def explain(truth: Truth, rows: Dict[str, dict], urls: Sequence[str], groups: Dict[str, List[str]],
            lost: Sequence[str], wrong: collections.Counter) -> None:
    """Which truth groups one cluster joins (false pairs), which groups are split, the lost groups
    and the wrong labels, counted."""
    by_cluster: Dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for u in urls:
        if u in rows and rows[u]["cluster_id"]:
            by_cluster[rows[u]["cluster_id"]][truth[u][0]] += 1
    for cid, c in sorted(by_cluster.items(), key=lambda kv: -sum(kv[1].values())):
        if len(c) > 1:
            print(f"  JOINED {cid}: {dict(c.most_common(6))}")
    for g, members in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        split = collections.Counter(rows[u]["cluster_id"] or "(alone)" for u in members if u in rows)
        if len(split) > 1:
            print(f"  SPLIT  {g}: {dict(split.most_common(6))}  e.g. {members[0]}")
    for g in lost:
        print(f"  LOST   {g}: {groups[g][:2]}")
    for (g, want, got), n in wrong.most_common(30):
        print(f"  LABEL  {g}: want {want or 'content'} got {got or 'content'} x{n}")


def load_rows(path: str) -> Dict[str, dict]:
    with open(path, encoding="utf-8") as fh:
        return {row["url"]: row for row in json.load(fh)["urls"]}


def renders(res: Dict[str, float], rows: Dict[str, dict]) -> Tuple[int, int]:
    """(renders, renders reused) of a websim crawl: its stats, or its rows' ``render_from``."""
    stats: Dict[str, float] = res.get("stats") or {}
    if "websim/renders" in stats:
        return int(stats["websim/renders"]), int(stats.get("websim/renders_reused", 0))
    reused = sum(1 for r in rows.values() if r.get("render_from"))
    return int(stats.get("websim/rendered", 0)), reused


# ---------------------------------------------------------------------------------------------
# Main


def fetch_any(url: str) -> Tuple[int, str]:
    """GET a loopback URL (127.0.0.0/8 only), following redirects; (status, content type)."""
    host = urllib.parse.urlsplit(url).hostname or ""
    if not host.startswith("127."):
        raise ValueError(f"only loopback: {url}")
    req = urllib.request.Request(url, headers={"User-Agent": "websim-bench"})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            resp.read()
            return resp.status, resp.headers.get("Content-Type", "")
    except urllib.error.HTTPError as err:
        with err:
            return err.code, err.headers.get("Content-Type", "")


def check(truth: Truth) -> None:
    """Fetch every URL once (no browser): statuses and content types per group."""
    urls = list(truth)
    with ThreadPoolExecutor(16) as pool:
        got = dict(zip(urls, pool.map(lambda u: fetch_any(u), urls)))
    per: Dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for u, (status, ctype) in got.items():
        per[truth[u][0]][(status, ctype.split(";")[0])] += 1
    shared = {g: c for g, c in per.items() if sum(c.values()) > 1}
    for g, c in sorted(shared.items(), key=lambda kv: -sum(kv[1].values())):
        print(f"  {g} ({truth_label(truth, g)}): {dict(c)}")
    singles = collections.Counter((status, ctype.split(";")[0]) for u, (status, ctype) in got.items()
                                  if sum(per[truth[u][0]].values()) == 1)
    print(f"  {len(per) - len(shared)} groups of one URL: {dict(singles)}")


def truth_label(truth: Truth, group: str) -> str:
    return next(str(lab) for g, lab in truth.values() if g == group)


def figures_line(name: str, n: int, res: Dict[str, float], extra: Dict[str, object]) -> str:
    pps = n / res["wall"]
    split = ",".join(f"{k[4:]}:{v:.0f}" for k, v in sorted(res.items()) if k.startswith("cpu_") and v)
    base = {"crawl": name, "urls": n, "pps": f"{pps:.2f}", "wall_s": f"{res['wall']:.0f}",
            "cpu_s": f"{res['cpu']:.0f}", "cpu_per_page": f"{res['cpu'] / n:.3f}", "cpu_split": split,
            "peak_mb": f"{res['peak_mb']:.0f}"}
    base.update(extra)
    return " ".join(f"{k}={v}" for k, v in base.items())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--urls", type=int, default=0, help="URLs in the list (default 5000; --memory 10000)")
    ap.add_argument("--origins", type=int, default=0, help="origins (default 500; --memory URLs/50, >= 500)")
    ap.add_argument("--bare-sample", type=int, default=0,
                    help="the bare crawl on N URLs drawn from the list (seed 11); 0: the whole list")
    ap.add_argument("--keep", default="", help="keep the list, truth, outputs and logs in this folder")
    ap.add_argument("--check", action="store_true", help="set up, fetch every URL once, print what answered; no crawl")
    ap.add_argument("--memory", action="store_true", help="the fast mix, websim at its defaults only: memory, files")
    ap.add_argument("--no-verdaccio", action="store_true", help="leave the Verdaccio pair out")
    ap.add_argument("--spa-twins", type=int, default=SPA_TWINS,
                    help=f"console hosts serving the same data, a fleet of one appliance (default {SPA_TWINS})")
    ap.add_argument("--no-render-all", action="store_true",
                    help="leave the --render-all crawl out: websim at its defaults and the bare crawl only")
    ap.add_argument("--websim-args", default="", help="options for every websim crawl (e.g. --websim-args='-t 64')")
    ap.add_argument("--rescore", default="", help="score a kept run's results again (a --keep folder)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print joined and split groups, wrong labels")
    args = ap.parse_args()
    WEBSIM_ARGS[:] = shlex.split(args.websim_args)
    if args.rescore:
        return rescore(args.rescore, args.verbose)
    n_urls = args.urls or (10000 if args.memory else 5000)
    n_origins = args.origins or (max(500, n_urls // 50) if args.memory else 500)
    workdir = args.keep or tempfile.mkdtemp(prefix="websim-fleetscale-")
    os.makedirs(workdir, exist_ok=True)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))
    notes: List[str] = []
    ok = {"nginx"}
    for server, binary in (("apache", "apache2"), ("lighttpd", "lighttpd")):
        if fs.servers.have(binary):
            ok.add(server)
        else:
            notes.append(f"{binary} is not installed: its profiles left out")
    if not args.memory:
        if fs.ensure_tomcat():
            ok.add("tomcat")
        else:
            notes.append("tomcat10 could not be installed: its profile left out")
        if not args.no_verdaccio:
            ok.add("verdaccio")
    origins = plan(n_urls, n_origins, "fast" if args.memory else "fleet", ok, twins=args.spa_twins)
    if not fs.have_login_apps():
        raise SystemExit("phpmyadmin, roundcube-core, adminer and php-cli are needed (see bench/app_logins.py)")
    started = time.time()
    with serve(origins, workdir, notes) as (truth, access_log, on_nginx):
        print(f"set up in {time.time() - started:.0f} s: {len(truth)} URLs over "
              f"{len({u.split('/')[2] for u in truth})} origins, {distinct(truth)} distinct things, "
              f"{len(truth) - len(scored(truth))} non-HTML URLs; profiles: "
              + ", ".join(f"{p} {c}" for p, c in collections.Counter(o.profile for o in origins).most_common()),
              flush=True)
        for note in notes:
            print("note:", note, flush=True)
        with open(os.path.join(workdir, "truth.json"), "w", encoding="utf-8") as fh:
            json.dump({"name": "fleetscale", "truth": truth, "family": {}}, fh, indent=0)
        if args.check:
            check(truth)
            return 0
        urls = list(truth)
        random.Random(7).shuffle(urls)
        listing = os.path.join(workdir, "urls.txt")
        with open(listing, "w", encoding="utf-8") as fh:
            fh.write("\n".join(urls) + "\n")
        if args.memory:
            return memory_run(truth, urls, listing, workdir, notes)
        return fleet_run(truth, urls, listing, workdir, (access_log, on_nginx), notes, args)


def fleet_run(truth: Truth, urls: List[str], listing: str, workdir: str, nginx: Tuple[str, set], notes: List[str],
              args: argparse.Namespace) -> int:
    lines: List[str] = []
    results: Dict[str, Dict[str, dict]] = {}
    render_all = websim_accepts("--render-all") and not args.no_render_all
    runs = [("default", [])] + ([("render-all", ["--render-all"])] if render_all else [])
    if not render_all and not args.no_render_all:
        notes.append("this websim has no --render-all: only the default crawl is measured")
    summary: Dict[str, object] = {"urls": len(urls), "origins": len({u.split("/")[2] for u in urls}),
                                  "distinct": distinct(truth), "must_render": must_render(truth),
                                  "non_html": len(urls) - len(scored(truth))}
    pps: Dict[str, float] = {}
    for name, extra in runs:
        out, feats = os.path.join(workdir, f"result-{name}.json"), os.path.join(workdir, f"features-{name}.jsonl")
        t0 = time.time()
        res = run_crawl(name, websim_cmd(listing, out, feats, extra), workdir, [out, feats])
        requests, listed = document_requests(nginx[0], t0, time.time(), nginx[1])
        rows = load_rows(out)
        results[name] = rows
        sc = score_run(truth, rows, args.verbose)
        done, reused = renders(res, rows)
        pps[name] = len(urls) / res["wall"]
        lines.append(figures_line(name, len(urls), res, {
            "renders": done, "reused": reused, "f1": f"{sc['f1']:.4f}", "precision": f"{sc['precision']:.4f}",
            "recall": f"{sc['recall']:.4f}", "lost": sc["lost"],
            "labels": f"{sc['labels_right']}/{sc['labels_total']}", "content_as_junk": sc["content_as_junk"],
            "missing": sc["missing"], "doc_requests_per_url": f"{requests / max(1, listed):.2f}",
            "files_mb": f"{res['files_mb']:.1f}", "load": f"{res['load_before']:.1f}-{res['load_after']:.1f}"}))
        print(lines[-1], flush=True)
        key = name.replace("-", "_")
        summary.update({f"{key}_pps": f"{pps[name]:.2f}", f"{key}_renders": done,
                        f"{key}_renders_per_distinct": f"{done / max(1, distinct(truth)):.2f}",
                        f"{key}_renders_beyond_must_pct": f"{100.0 * (done / max(1, must_render(truth)) - 1):.1f}",
                        f"{key}_f1": f"{sc['f1']:.4f}",
                        f"{key}_lost": sc["lost"], f"{key}_cpu_s": f"{res['cpu']:.0f}",
                        f"{key}_peak_mb": f"{res['peak_mb']:.0f}"})
    sample = urls if not args.bare_sample or args.bare_sample >= len(urls) else \
        random.Random(11).sample(urls, args.bare_sample)
    bare_list = os.path.join(workdir, "urls-bare.txt")
    with open(bare_list, "w", encoding="utf-8") as fh:
        fh.write("\n".join(sample) + "\n")
    bare_out = os.path.join(workdir, "bare.jsonl")
    in_flight = max_pages_in_flight()
    res = run_crawl("bare", [sys.executable, os.path.join(HERE, "bare_crawl.py"), bare_list, bare_out, str(in_flight)],
                    workdir, [bare_out])
    with open(bare_out, encoding="utf-8") as fh:
        bare_rows = [json.loads(line) for line in fh if line.strip()]
    pps["bare"] = len(sample) / res["wall"]
    lines.append(figures_line("bare", len(sample), res, {
        "rendered": sum(1 for r in bare_rows if "png" in r), "errors": sum(1 for r in bare_rows if "error" in r),
        "sample_of": len(urls), "in_flight": in_flight, "load": f"{res['load_before']:.1f}-{res['load_after']:.1f}"}))
    print(lines[-1], flush=True)
    summary["bare_pps"] = f"{pps['bare']:.2f}"
    for name in pps:
        if name != "bare":
            summary[f"ratio_{name.replace('-', '_')}"] = f"{pps[name] / pps['bare']:.2f}"
    if "render-all" in results:
        common = [u for u in scored(truth) if u in results["default"] and u in results["render-all"]]
        p, r, f = pair_f1({u: results["default"][u]["cluster_id"] for u in common},
                          {u: results["render-all"][u]["cluster_id"] for u in common}, common)
        summary["f1_default_vs_render_all"] = f"{f:.4f}"
    else:
        summary["f1_default_vs_render_all"] = "NA"
    summary["bare_sample"] = len(sample) if len(sample) < len(urls) else 0
    summary["render_all"] = "yes" if "render-all" in results else "no"
    lines.append(" ".join(f"{k}={v}" for k, v in summary.items()))
    with open(os.path.join(workdir, "figures.txt"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(notes + lines) + "\n")
    print()
    for note in notes:
        print("note:", note)
    print(f"bare crawl: {'the whole list' if len(sample) == len(urls) else f'{len(sample)} URLs drawn (seed 11)'}; "
          f"pages/s = URLs / wall seconds of each process" + (f"; kept in {workdir}" if args.keep else ""))
    for line in lines:
        print(line)
    return 0


def memory_run(truth: Truth, urls: List[str], listing: str, workdir: str, notes: List[str]) -> int:
    out = os.path.join(workdir, "result-default.json")
    res = run_crawl("default", websim_cmd(listing, out, ""), workdir, [out])
    rows = load_rows(out)
    sc = score_run(truth, rows)
    done, reused = renders(res, rows)
    line = figures_line("memory", len(urls), res, {
        "origins": len({u.split("/")[2] for u in urls}), "distinct": distinct(truth), "renders": done, "reused": reused,
        "peak_rss_websim_mb": f"{res['peak_rss_mb']:.0f}", "result_mb": f"{res['files_mb']:.1f}",
        "tmp_peak_mb": f"{res['tmp_peak_mb']:.1f}", "store_peak_mb": f"{res['store_peak_mb']:.1f}",
        "f1": f"{sc['f1']:.4f}", "lost": sc["lost"], "missing": sc["missing"],
        "load": f"{res['load_before']:.1f}-{res['load_after']:.1f}"})
    with open(os.path.join(workdir, "figures.txt"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(notes + [line]) + "\n")
    for note in notes:
        print("note:", note)
    print(line)
    return 0


def rescore(workdir: str, verbose: bool) -> int:
    with open(os.path.join(workdir, "truth.json"), encoding="utf-8") as fh:
        truth: Truth = {u: (g, lab) for u, (g, lab) in json.load(fh)["truth"].items()}
    results = {}
    for name in ("default", "render-all"):
        path = os.path.join(workdir, f"result-{name}.json")
        if os.path.exists(path):
            results[name] = load_rows(path)
            sc = score_run(truth, results[name], verbose)
            print(f"crawl={name} urls={len(truth)} distinct={distinct(truth)} f1={sc['f1']:.4f} "
                  f"precision={sc['precision']:.4f} recall={sc['recall']:.4f} lost={sc['lost']} "
                  f"labels={sc['labels_right']}/{sc['labels_total']} content_as_junk={sc['content_as_junk']} "
                  f"missing={sc['missing']}")
    if len(results) == 2:
        common = [u for u in scored(truth) if u in results["default"] and u in results["render-all"]]
        _p, _r, f = pair_f1({u: results["default"][u]["cluster_id"] for u in common},
                            {u: results["render-all"][u]["cluster_id"] for u in common}, common)
        print(f"f1_default_vs_render_all={f:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
