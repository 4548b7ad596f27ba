"""Pair precision / recall / F1 of a real crawl of a real MediaWiki.

    python bench/wiki.py [--articles 24] [--skin vector|monobook|timeless] [-v] [--keep DIR]
    python bench/wiki.py --short-titles [--lang ja]    # one-word titles, request echoes

Installs Debian's ``mediawiki`` (1.39) with SQLite and PHP's CLI if missing, sets up a wiki in a
temporary directory, serves it with PHP's built-in server on 127.0.0.1 and writes ``--articles``
articles from the true texts of ``../shared/data/article-extraction-benchmark`` (real prose),
each in three revisions and in one of four categories. The crawl list holds, per article, its
URL variants (``index.php?title=X``, ``index.php/X``, ``&action=view``, a tracking parameter,
``?curid=N``: one page, one group), its history (``action=history``: revision lists of the same
user and template, which must stay apart), its first revision (``oldid``: 60 % of the text, a
page of its own) and for a third of the articles its information page (``action=info``), plus
the category pages and ``Special:AllPages``. With ``--short-titles`` each article is titled by one
word of its own (``Harbour``, ``Senate``: the revision histories of two articles then share most
heading words, ``Revision history of "Harbour"``), and the list adds ``Special:AllPages`` from two
letters (three different pages), the missing-article 404 of a third of the titles (one template:
one group) and the login page with ``returnto=`` for four titles (one group). ``--lang`` sets the
wiki's interface language (``ja``, ``zh-hans``...). The URL list is shuffled; the crawl is the
shipped defaults through ``python -m scrapy_websim.cli``. Last line:

    site=wiki-SKIN urls=N missing=N precision=P recall=R f1=F false_pairs=K missed_pairs=M
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from scrapy_websim.testing import servers, sites  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sites import crawl_and_score  # noqa: E402  (bench/sites.py)

MEDIAWIKI = "/usr/share/mediawiki"
PACKAGES = ("mediawiki", "php-cli", "php-sqlite3", "php-intl", "php-mbstring", "php-xml")
ARTICLES = os.path.join(os.path.dirname(REPO), "shared", "data", "article-extraction-benchmark", "ground-truth.json")
CATEGORIES = ("Technology", "Science", "Business", "Culture")
#: --skin -> the skin's directory (Debian's mediawiki ships these four)
SKINS = {"vector": "Vector", "monobook": "MonoBook", "timeless": "Timeless", "minerva": "MinervaNeue"}
ROUTER = """<?php
define('MW_CONFIG_FILE', __DIR__ . '/LocalSettings.php');
$IP = '%s';
$path = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
if ($path !== '/' && !str_ends_with($path, '.php') && is_file($IP . $path)) {
    return false;
}
chdir($IP);
if (preg_match('#^/(load|api|opensearch_desc|rest)\\.php#', $path, $m)) {
    require $IP . '/' . $m[1] . '.php';
    return true;
}
require $IP . '/index.php';
""" % MEDIAWIKI


def ensure_packages() -> None:
    if os.path.isdir(MEDIAWIKI) and shutil.which("php"):
        return
    print("installing " + " ".join(PACKAGES), flush=True)
    subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *PACKAGES], check=True,
                   stdout=subprocess.DEVNULL)


def php(tmp: str, *args: str, stdin: str = "") -> str:
    proc = subprocess.run(["php", *args], input=stdin, capture_output=True, text=True, cwd=MEDIAWIKI, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"php {' '.join(args[:2])} failed: {proc.stdout[-500:]} {proc.stderr[-1500:]}")
    return proc.stdout


def maintenance(tmp: str, script: str, *args: str, stdin: str = "") -> str:
    return php(tmp, f"{MEDIAWIKI}/maintenance/{script}", "--conf", os.path.join(tmp, "LocalSettings.php"), *args,
               stdin=stdin)


@contextlib.contextmanager
def wiki(tmp: str, skin: str = "vector", lang: str = "en"):
    """Install a wiki in ``tmp`` with this skin and interface language and serve it; yields its base URL."""
    port = servers.free_port()
    base = f"http://127.0.0.1:{port}"
    os.makedirs(os.path.join(tmp, "db"))
    php(tmp, f"{MEDIAWIKI}/maintenance/install.php", "--dbtype=sqlite", f"--dbpath={tmp}/db", "--dbname=wiki",
        f"--server={base}", "--scriptpath=", f"--confpath={tmp}", "--pass=Websim-bench-2026", f"--skins={SKINS[skin]}",
        f"--lang={lang}", "Bench Wiki", "Admin")
    with open(os.path.join(tmp, "LocalSettings.php"), "a") as fh:
        fh.write(f'\n$wgDefaultSkin = "{skin}";\n')
    with open(os.path.join(tmp, "router.php"), "w") as fh:
        fh.write(ROUTER)
    with servers.php_server(port, MEDIAWIKI, os.path.join(tmp, "router.php"), os.path.join(tmp, "php.log"),
                            "/index.php?title=Main_Page") as base:
        yield base


def wikitext(body: str, share: float, category: str, note: str = "") -> str:
    paras = [p.strip() for p in body.split("\n") if p.strip()]
    keep = paras[: max(2, int(len(paras) * share))]
    out = []
    for i, para in enumerate(keep):
        if i and i % 4 == 0:
            out.append(f"== Part {i // 4 + 1} ==")
        out.append(para.replace("[", "(").replace("]", ")").replace("{", "(").replace("}", ")"))
    if note:
        out.append(note)
    out.append(f"[[Category:{category}]]")
    return "\n\n".join(out)


def one_word_titles(bodies) -> list:
    """A title of one word per article, a word of its own text (capitalised, 5+ letters, unused)."""
    used, out = set(), []
    for i, body in enumerate(bodies):
        words = [w for w in body.split() if w.isalpha() and len(w) >= 5 and w.lower() not in used]
        word = (words[0] if words else f"Article{i}").capitalize()
        used.add(word.lower())
        out.append(word)
    return out


def build(tmp: str, base: str, n: int, short_titles: bool = False) -> sites.Site:
    with open(ARTICLES, encoding="utf-8") as fh:
        truth = json.load(fh)
    bodies = [v["articleBody"] for _, v in sorted(truth.items()) if len(v.get("articleBody", "")) > 1500][:n]
    site = sites.Site()
    pages = []
    short = one_word_titles(bodies) if short_titles else []
    for i, body in enumerate(bodies):
        words = [w for w in body.split()[:4] if w.isalpha()] or ["Article"]
        title = short[i] if short_titles else f"Article {i + 1:02d} " + " ".join(words[:3])
        category = CATEGORIES[i % len(CATEGORIES)]
        for share, note in ((0.6, ""), (1.0, ""), (1.0, "See also the other articles of this category.")):
            maintenance(tmp, "edit.php", "-u", "Admin", "-s", f"revision at {int(share * 100)} %", title,
                        stdin=wikitext(body, share, category, note))
        pages.append(title)
    for category in CATEGORIES:
        maintenance(tmp, "edit.php", "-u", "Admin", "-s", "category", f"Category:{category}",
                    stdin=f"Articles about {category.lower()}.")
    info = {}
    for title in pages:  # the first revision of each (the API lists one page's revisions at a time)
        api = json.loads(urllib.request.urlopen(
            base + "/api.php?action=query&format=json&prop=revisions&rvlimit=1&rvdir=newer&titles="
            + urllib.parse.quote(title), timeout=60).read())
        page = next(iter(api["query"]["pages"].values()))
        info[title] = (page["pageid"], page["revisions"][0]["revid"])
    for i, title in enumerate(pages):
        q = urllib.parse.quote(title.replace(" ", "_"))
        pageid, first_rev = info[title]
        site.add_group([f"W:/index.php?title={q}", f"W:/index.php/{q}", f"W:/index.php?title={q}&action=view",
                        f"W:/index.php?title={q}&utm_source=newsletter", f"W:/index.php?curid={pageid}"])
        site.add_group([f"W:/index.php?title={q}&action=history"])
        site.add_group([f"W:/index.php?title={q}&oldid={first_rev}"])
        if i % 3 == 0:
            site.add_group([f"W:/index.php?title={q}&action=info"])
    for category in CATEGORIES:
        site.add_group([f"W:/index.php?title=Category:{category}"])
    site.add_group(["W:/index.php?title=Special:AllPages"])
    if short_titles:
        letters = sorted({t[0].upper() for t in pages})
        for letter in (letters[len(letters) // 3], letters[2 * len(letters) // 3]):
            site.add_group([f"W:/index.php?title=Special:AllPages&from={letter}"])
        site.add_group([f"W:/index.php?title={urllib.parse.quote(t)}_%28draft%29" for t in pages[::3]])
        site.add_group([f"W:/index.php?title=Special:UserLogin&returnto={urllib.parse.quote(t)}" for t in pages[:4]])
    return site


def run(n: int, verbose: bool, keep: str = "", skin: str = "vector", short_titles: bool = False,
        lang: str = "en") -> str:
    tmp = keep or tempfile.mkdtemp(prefix="websim-wiki-")
    os.makedirs(tmp, exist_ok=True)
    name = f"wiki-{skin}" + ("-short" if short_titles else "") + ("" if lang == "en" else f"-{lang}")
    try:
        with wiki(os.path.join(tmp, "wiki"), skin, lang) as base:
            site = build(os.path.join(tmp, "wiki"), base, n, short_titles)
            return crawl_and_score(name, site, {"W": base}, tmp, verbose)
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--articles", type=int, default=24)
    parser.add_argument("--skin", default="vector", choices=sorted(SKINS))
    parser.add_argument("-v", "--verbose", action="store_true", help="print every URL's group and cluster")
    parser.add_argument("--keep", default="", help="keep the wiki, the URL list and the result in this directory")
    parser.add_argument("--short-titles", action="store_true",
                        help="one-word titles, AllPages from two letters, missing articles, login pages")
    parser.add_argument("--lang", default="en", help="the wiki's interface language (en, ja, zh-hans, ...)")
    args = parser.parse_args()
    if not os.path.exists(ARTICLES):
        print(f"site=wiki skipped: {ARTICLES} not found")
        return 1
    ensure_packages()
    print(run(args.articles, args.verbose, args.keep, args.skin, args.short_titles, args.lang), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
