"""Pair precision / recall / F1 and lost pages of a real crawl of a real DokuWiki.

    python bench/dokuwiki.py [--articles 24] [--short-titles] [--no-trace] [--send404] [-v] [--keep DIR]

Installs Debian's ``dokuwiki`` (2022-07-31 "Igor") and PHP's CLI if missing, sets up a wiki of its
own in a temporary directory (its configuration and its data directory: DokuWiki keeps pages as
flat text files) and serves it with PHP's built-in server on 127.0.0.1, nice URLs on
(``doku.php/ns/page``). ``--articles`` articles from the true texts of
``../shared/data/article-extraction-benchmark`` (real prose) are saved through DokuWiki itself,
each in three revisions an hour apart (60 % of the text, all of it, all of it and a closing note),
in one of four namespaces, each linking to the next article (so each has a backlink); the
fulltext index is built before the crawl. With ``--short-titles`` each page is named by one word
of its own text (``technology:harbour``), so two pages' revision lists share all their words but
the name. The crawl list holds:

- per article its URL variants, one group: ``doku.php?id=ns:x``, ``doku.php/ns/x``,
  ``doku.php/ns:x``, the name in capitals (``?id=NS:X``: DokuWiki lower-cases ids) and a tracking
  parameter;
- per article its revision list (``do=revisions``) and its first revision (``rev=T``, 60 % of the
  text): a page of their own each; for a third of the articles its backlinks (``do=backlink``,
  one entry each, a different one per page): a page of its own each;
- the start page (``doku.php`` and ``?id=start``: one group), the index (``do=index``) and the
  index opened at each namespace (``do=index&idx=ns`` and its short form ``?idx=ns``: one group
  per namespace, the namespaces apart), recent changes (``do=recent``), three searches whose
  result lists differ (``do=search&q=``, apart);
- the "This topic does not exist yet" page of a third of the articles' missing ``_draft`` pages,
  naming the missing page: one group (one template), and the login page with the return-to id
  (``do=login&id=``) of four articles: one group.

Left out as arguable: a backlink page with nothing on it ("Nothing was found": one template, or
a page of each article?) and the diff of two revisions. DokuWiki's defaults stay: its breadcrumb
trail ("Trace: ...", the pages the browser's session visited last, on every page: two fetches of
one page differ by that line; ``--no-trace`` turns it off) and a missing page answered with
status 200 (``--send404``: 404). The URL list is shuffled; the crawl is the shipped defaults through
``python -m scrapy_websim.cli``. Last line (``lost`` = true groups none of whose pages is a
canonical or alone):

    site=dokuwiki urls=N missing=N precision=P recall=R f1=F false_pairs=K missed_pairs=M lost=L
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from scrapy_websim.testing import servers, sites  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sites import crawl_and_score  # noqa: E402  (bench/sites.py)

DOKUWIKI = "/usr/share/dokuwiki"
ETC = "/etc/dokuwiki"
PACKAGES = ("dokuwiki", "php-cli", "php-xml", "php-mbstring", "php-intl")
#: next to the repository (or to the directory of git worktrees the repository is in)
ARTICLES = next((p for p in (os.path.join(up, "shared", "data", "article-extraction-benchmark", "ground-truth.json")
                             for up in (os.path.dirname(REPO), os.path.dirname(os.path.dirname(REPO))))
                 if os.path.exists(p)), os.path.join(os.path.dirname(REPO), "shared", "data",
                                                     "article-extraction-benchmark", "ground-truth.json"))
NAMESPACES = ("technology", "science", "business", "culture")

#: every request runs DokuWiki's own scripts with this wiki's configuration directory
ROUTER = """<?php
define('DOKU_CONF', '%(conf)s/');
$root = '%(root)s';
$path = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
if ($path === '/') {
    $m = array('', '/doku.php', '');
} elseif (!preg_match('#^(/(?:[^/]+/)*?[^/]+\\.php)(/.*)?$#', $path, $m) || !is_file($root . $m[1])) {
    return false;  // a file, or the server's own 404
}
$_SERVER['SCRIPT_NAME'] = $_SERVER['PHP_SELF'] = $m[1];
$_SERVER['SCRIPT_FILENAME'] = $root . $m[1];
if (!empty($m[2])) { $_SERVER['PATH_INFO'] = $m[2]; } else { unset($_SERVER['PATH_INFO']); }
chdir(dirname($root . $m[1]));
require $root . $m[1];
"""
LOCAL = """<?php
$conf['title'] = 'Bench Wiki';
$conf['savedir'] = '%(data)s';
$conf['userewrite'] = 2;
$conf['useslash'] = 1;
$conf['useacl'] = 1;
$conf['superuser'] = '@admin';
$conf['recent_days'] = 365;
$conf['license'] = 'cc-by-sa';
$conf['send404'] = %(send404)d;
$conf['breadcrumbs'] = %(trace)d;
"""
ACL = "# acl.auth.php\n# <?php exit()?>\n*\t@ALL\t1\n*\t@user\t8\n"
USERS = "# users.auth.php\n# <?php exit()?>\n"
#: saves revisions through DokuWiki (changelog, attic, metadata) at given times, then indexes
FEEDER = """<?php
define('DOKU_INC', '%(root)s/');
define('DOKU_CONF', '%(conf)s/');
define('NOSESSION', 1);
$_SERVER['REMOTE_USER'] = 'admin';
$_SERVER['REMOTE_ADDR'] = '127.0.0.1';
require_once(DOKU_INC . 'inc/init.php');
use dokuwiki\\File\\PageFile;
$when = 0;
$EVENT_HANDLER->register_hook('IO_WIKIPAGE_WRITE', 'AFTER', null, function ($event) use (&$when) {
    if ($event->data[3] === false) { touch($event->data[0][0], $when); clearstatcache(); }
});
$ids = array();
foreach (json_decode(stream_get_contents(STDIN), true) as $rev) {
    $when = $rev['date'];
    (new PageFile($rev['id']))->saveWikiText($rev['text'], $rev['summary']);
    $ids[$rev['id']] = 1;
}
foreach (array_keys($ids) as $id) {
    idx_addPage($id, false, true);
}
echo count($ids), " pages\\n";
"""


def ensure_packages() -> None:
    if os.path.isfile(os.path.join(DOKUWIKI, "doku.php")) and shutil.which("php"):
        return
    print("installing " + " ".join(PACKAGES), flush=True)
    subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *PACKAGES], check=True,
                   stdout=subprocess.DEVNULL, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))


def setup(tmp: str, send404: bool = False, trace: bool = True) -> dict:
    """A wiki's configuration and empty data directory in ``tmp``; the paths the PHP templates use."""
    paths = {"root": DOKUWIKI, "conf": os.path.join(tmp, "conf"), "data": os.path.join(tmp, "data"),
             "send404": int(send404), "trace": 10 if trace else 0}
    os.makedirs(paths["conf"])
    for sub in ("pages", "attic", "meta", "cache", "index", "locks", "tmp", "media", "media_attic",
                "media_meta", "log"):
        os.makedirs(os.path.join(paths["data"], sub))
    for name in ("plugins.php", "plugins.required.php"):  # Debian's: its test plugin off
        shutil.copy(os.path.join(ETC, name), paths["conf"])
    for name, text in (("local.php", LOCAL % paths), ("acl.auth.php", ACL), ("users.auth.php", USERS),
                       ("router.php", ROUTER % paths), ("feeder.php", FEEDER % paths)):
        with open(os.path.join(paths["conf"], name), "w", encoding="utf-8") as fh:
            fh.write(text)
    return paths


@contextlib.contextmanager
def serve(paths: dict):
    """Serve the wiki on a free loopback port; yields its base URL."""
    log = os.path.join(os.path.dirname(paths["conf"]), "php.log")
    with servers.php_server(servers.free_port(), DOKUWIKI, os.path.join(paths["conf"], "router.php"), log,
                            "/doku.php?id=start") as base:
        yield base


def clean(para: str) -> str:
    """Prose as DokuWiki text: no markup a sentence could start by accident."""
    para = re.sub(r"[\[\]{}<>|^]", lambda m: "(" if m.group() in "[{<" else ")" if m.group() in "]}>" else "/", para)
    for pair in ("//", "**", "__", "''", "%%", "~~", "\\\\"):
        para = para.replace(pair, pair[0])
    return para.strip().lstrip("*-=>")


def wikitext(title: str, body: str, share: float, link: str, note: str = "") -> str:
    paras = [clean(p) for p in body.split("\n") if p.strip()]
    keep = [p for p in paras[: max(2, int(len(paras) * share))] if p]
    out = [f"====== {title} ======"]
    for i, para in enumerate(keep):
        if i and i % 4 == 0:
            out.append(f"===== Part {i // 4 + 1} =====")
        out.append(para)
    out.append(f"Next article: [[{link}]]")
    if note:
        out.append(note)
    return "\n\n".join(out) + "\n"


def page_names(bodies, short: bool) -> list:
    """A page name per article: one word of its own text (5+ letters, unused) or a numbered phrase."""
    used, out = set(), []
    for i, body in enumerate(bodies):
        words = [w.lower() for w in body.split() if w.isalpha() and w.isascii()]
        if short:
            word = next((w for w in words if len(w) >= 5 and w not in used), f"article{i}")
            used.add(word)
            out.append(word)
        else:
            out.append(f"article_{i + 1:02d}_" + "_".join(words[:3] or ["article"]))
    return out


def search_words(bodies) -> list:
    """Three words each found in 2-6 articles, in three different sets of articles."""
    docs = collections.defaultdict(set)
    for i, body in enumerate(bodies):
        for w in re.findall(r"[a-z]{7,}", body.lower()):
            docs[w].add(i)
    chosen, sets = [], []
    for w in sorted(docs, key=lambda w: (-len(docs[w]), w)):
        if 2 <= len(docs[w]) <= 6 and all(docs[w] != s for s in sets):
            chosen.append(w)
            sets.append(docs[w])
        if len(chosen) == 3:
            break
    return chosen


def build(paths: dict, n: int, short_titles: bool = False) -> sites.Site:
    with open(ARTICLES, encoding="utf-8") as fh:
        truth = json.load(fh)
    bodies = [v["articleBody"] for _, v in sorted(truth.items()) if len(v.get("articleBody", "")) > 1500][:n]
    names = page_names(bodies, short_titles)
    ids = [f"{NAMESPACES[i % len(NAMESPACES)]}:{name}" for i, name in enumerate(names)]
    start = int(time.time()) - 3 * 86400
    revs, first = [], {}
    for i, (pid, body) in enumerate(zip(ids, bodies)):
        title = names[i].replace("_", " ").capitalize()
        link = ids[(i + 1) % len(ids)]
        revisions = ((0.6, ""), (1.0, ""), (1.0, "See also the other articles of this namespace."))
        for k, (share, note) in enumerate(revisions):
            date = start + k * 3600 + i * 60
            first.setdefault(pid, date)
            revs.append({"id": pid, "date": date, "summary": f"revision at {int(share * 100)} %",
                         "text": wikitext(title, body, share, link, note)})
    revs.sort(key=lambda r: r["date"])  # the wiki's changelog is in time order
    start_text = "====== Bench Wiki ======\n\n" + "\n".join(
        f"  * [[{ns}:]] articles about {ns}" for ns in NAMESPACES) + "\n"
    revs.append({"id": "start", "date": start + 4 * 3600, "summary": "start page", "text": start_text})
    proc = subprocess.run(["php", os.path.join(paths["conf"], "feeder.php")], input=json.dumps(revs),
                          capture_output=True, text=True, cwd=DOKUWIKI, check=False)
    if proc.returncode != 0 or "pages" not in proc.stdout:
        raise RuntimeError(f"saving the pages failed: {proc.stdout[-500:]} {proc.stderr[-1500:]}")

    site = sites.Site()
    for i, pid in enumerate(ids):
        ns, name = pid.split(":")
        q = urllib.parse.quote(pid)
        site.add_group([f"W:/doku.php?id={q}", f"W:/doku.php/{ns}/{name}", f"W:/doku.php/{q}",
                        f"W:/doku.php?id={urllib.parse.quote(pid.upper())}",
                        f"W:/doku.php?id={q}&utm_source=newsletter"])
        site.add_group([f"W:/doku.php?id={q}&do=revisions"])
        site.add_group([f"W:/doku.php?id={q}&rev={first[pid]}"])
        if i % 3 == 0:
            site.add_group([f"W:/doku.php?id={q}&do=backlink"])
    site.add_group(["W:/doku.php", "W:/doku.php?id=start"])
    site.add_group(["W:/doku.php?do=index"])
    for ns in NAMESPACES:
        site.add_group([f"W:/doku.php?do=index&idx={ns}", f"W:/doku.php?idx={ns}"])
    site.add_group(["W:/doku.php?do=recent"])
    for word in search_words(bodies):
        site.add_group([f"W:/doku.php?do=search&q={word}"])
    site.add_group([f"W:/doku.php?id={urllib.parse.quote(pid)}_draft" for pid in ids[::3]])
    site.add_group([f"W:/doku.php?id={urllib.parse.quote(pid)}&do=login" for pid in ids[:4]])
    return site


def lost(site: sites.Site, bases: dict, result: str) -> int:
    """True groups none of whose pages is a canonical or alone in the crawl's result."""
    with open(result, encoding="utf-8") as fh:
        rows = {row["url"]: row for row in json.load(fh)["urls"]}
    out = 0
    for members in site.groups:
        kept = False
        for m in members:
            r = rows.get(sites.resolve(m, bases))
            kept = kept or r is None or not r["cluster_id"] or bool(r["is_canonical"])
        out += not kept
    return out


def run(n: int, verbose: bool, keep: str = "", short_titles: bool = False, send404: bool = False,
        trace: bool = True) -> str:
    tmp = keep or tempfile.mkdtemp(prefix="websim-dokuwiki-")
    os.makedirs(tmp, exist_ok=True)
    name = "dokuwiki" + ("-short" if short_titles else "") + ("-404" if send404 else "") + ("" if trace else "-notrace")
    try:
        paths = setup(os.path.join(tmp, "wiki"), send404, trace)
        site = build(paths, n, short_titles)
        with serve(paths) as base:
            line = crawl_and_score(name, site, {"W": base}, tmp, verbose)
            if " failed:" not in line:
                line += f" lost={lost(site, {'W': base}, os.path.join(tmp, 'result.json'))}"
            return line
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--articles", type=int, default=24)
    parser.add_argument("-v", "--verbose", action="store_true", help="print every URL's group and cluster")
    parser.add_argument("--keep", default="", help="keep the wiki, the URL list and the result in this directory "
                                                   "(which must not hold a wiki yet)")
    parser.add_argument("--short-titles", action="store_true", help="name each page by one word of its own text")
    parser.add_argument("--send404", action="store_true",
                        help="DokuWiki's send404: a missing page's \"does not exist yet\" page is a 404, not a 200")
    parser.add_argument("--no-trace", action="store_true",
                        help="DokuWiki's breadcrumbs off (the trace of the pages a session visited last)")
    args = parser.parse_args()
    if not os.path.exists(ARTICLES):
        print(f"site=dokuwiki skipped: {ARTICLES} not found")
        return 1
    ensure_packages()
    print(run(args.articles, args.verbose, args.keep, args.short_titles, args.send404,
              not args.no_trace), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
