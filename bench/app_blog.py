"""Pair F1, lost pages and special-page labels of a crawl of a real WordPress blog.

    python bench/app_blog.py [--uploads 300] [--articles 40] [--check] [-v] [--keep DIR]

Installs Debian's ``wordpress`` (6.1, its one theme Twenty Twenty-Three, a block theme),
``mariadb-server`` and PHP's CLI with ``php-mysql`` if missing. MariaDB runs from a data directory
of its own in the temporary directory, on a Unix socket only (no TCP port); WordPress runs from
a document root of symlinks to ``/usr/share/wordpress`` with its own ``wp-config.php`` and
``wp-content`` (Debian's ``/etc/wordpress`` is not read), installed by ``wp_install`` and filled
through WordPress's own functions (``wp_insert_post``, ``wp_insert_term``, ``wp_insert_comment``)
by a PHP script that loads ``wp-load.php``. Pretty permalinks (``/%year%/%monthnum%/%day%/%postname%/``),
ten posts a page. PHP's built-in server serves it on 127.0.0.1; an nginx reverse proxy on a second
port is its mirror (it passes the first port's Host, so WordPress answers as on the first port).
A must-use plugin keeps every page on 127.0.0.1: no emoji script from s.w.org, no avatars, no mail.

The blog holds real short texts and real long ones:

- ``--uploads`` posts (default 300), each one entry of a Debian changelog of a required or important
  package of the system (``/usr/share/doc/*/changelog.Debian.gz``, one or two bullets of 30-400
  characters, at most an even share per source package, no two with one text): titled
  "source version", the bullets as a list, "Uploaded to DIST (urgency U) by NAME." under it, dated
  as the entry, in the category of the package's Debian section and tagged with its source
  package. Most are a sentence or two of their own in a page that is all template;
- ``--articles`` long posts (default 40): the true texts of
  ``../shared/data/article-extraction-benchmark`` titled by their page's own title, in "Reading";
- comments on every tenth upload post (the package's description from ``/var/lib/dpkg/status``,
  with a threaded reply on some), and six pages, each a real ``README.Debian``.

The truth (``{url: (group, label)}``) holds:

- every post and page at its permalink, one group each; about one post in 24 also as WordPress
  answers it under another URL, in the same group: ``/?p=ID`` (301 to the permalink), the
  permalink without its trailing slash (301), with ``utm_*`` tracking parameters (200), the slug
  in capitals (200: MariaDB compares names without case and WordPress does not redirect), on the
  mirror, and three commented posts with ``?replytocom=ID`` (200, the reply form under that
  comment); a page as ``/?page_id=ID`` (301) and a page on the mirror;
- the listings, each page of a pagination its own group: the home page (``/``, ``/page/1/`` and
  the mirror's ``/``: one group) and ``/page/2/`` .. ``/page/12/``; every category (one also as
  ``?cat=ID``) and page 2 of the three largest; fifteen tags (one also as ``?tag=slug``); the
  twelve months with most posts (one also as ``?m=YYYYMM``) and four years; the two authors (one
  also as ``?author=ID``); three searches whose result lists differ;
- ``E3``: WordPress's "This page could not be found" page (404) for a dozen missing posts, pages,
  categories, tags, authors, dates, uploads and list pages: one group, one template (Twenty
  Twenty-Three's 404 echoes nothing of the request);
- ``L1``: the login form as ``wp-login.php``, with three ``redirect_to`` values, and as the 302 of
  ``/wp-admin/`` and three other admin screens to it (``reauth=1``): one group;
- ``E1``: four files of ``wp-includes`` requested directly, as scanners do: PHP stops with a fatal
  error and the answer is an empty 500: one group.

Left out as arguable: a search with no result (a soft 404 or a page of its own?), the
"registration disabled" and "lost password" forms (login pages or not?), password-protected posts,
the embed view (``/embed/``) of a post, the repair and "already installed" screens and the feeds
(not HTML). The posts depend on which required and important packages the machine has installed
and in which versions (the same on two machines of one Debian release and set of packages). The URL
list is shuffled; the crawl is websim's shipped defaults. Last line:

    set=blog urls=N groups=G dup_share=D missing=M precision=P recall=R f1=F false_pairs=K
    missed_pairs=K lost=L rules=right/special (pct) content_as_junk=J
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import datetime
import email.utils
import glob
import gzip
import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
from typing import Dict, Iterator, List, Optional, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import appbench  # noqa: E402  (bench/appbench.py)

from scrapy_websim.testing import servers  # noqa: E402

WORDPRESS = "/usr/share/wordpress"
THEME = os.path.join(WORDPRESS, "wp-content", "themes", "twentytwentythree")
PACKAGES = ("wordpress", "wordpress-theme-twentytwentythree", "mariadb-server", "php-cli", "php-mysql",
            "nginx-light")
#: next to the repository (or to the directory of git worktrees the repository is in)
BENCHMARK = next((p for p in (os.path.join(up, "shared", "data", "article-extraction-benchmark")
                              for up in (os.path.dirname(REPO), os.path.dirname(os.path.dirname(REPO))))
                  if os.path.exists(p)), os.path.join(os.path.dirname(REPO), "shared", "data",
                                                      "article-extraction-benchmark"))
#: README.Debian files of packages every Debian system or this bench installs, as the blog's pages
PAGE_SOURCES = ("bash", "mariadb-server", "nginx-light", "wordpress", "php-cli", "tzdata", "procps",
                "vim-common", "git", "man-db")
COMMENTERS = ("Apt Watcher", "Buildd Fan", "Changelog Reader")
PERMALINKS = "/%year%/%monthnum%/%day%/%postname%/"
#: wp-includes files that stop with a fatal error when requested directly (an empty 500)
FATAL = ("/wp-includes/class-wp-http.php", "/wp-includes/default-filters.php", "/wp-includes/cache.php",
         "/wp-includes/class-json.php")

CONFIG = """<?php
define('DB_NAME', 'wordpress');
define('DB_USER', 'wordpress');
define('DB_PASSWORD', 'bench');
define('DB_HOST', 'localhost:%(socket)s');
define('DB_CHARSET', 'utf8mb4');
define('DB_COLLATE', '');
define('WP_CONTENT_DIR', '%(content)s');
foreach (array('AUTH_KEY', 'SECURE_AUTH_KEY', 'LOGGED_IN_KEY', 'NONCE_KEY', 'AUTH_SALT', 'SECURE_AUTH_SALT',
               'LOGGED_IN_SALT', 'NONCE_SALT') as $key) { define($key, 'websim-bench-' . $key); }
define('AUTOMATIC_UPDATER_DISABLED', true);
define('WP_AUTO_UPDATE_CORE', false);
define('DISABLE_WP_CRON', true);
define('WP_HTTP_BLOCK_EXTERNAL', true);
$table_prefix = 'wp_';
if (!defined('ABSPATH')) { define('ABSPATH', '%(root)s/'); }
require_once ABSPATH . 'wp-settings.php';
"""
#: every request runs WordPress from this blog's document root (so its wp-config.php): files are
#: served as they are, a PHP script or a directory's index.php runs, anything else goes to index.php
#: (what WordPress's .htaccess does on Apache)
ROUTER = """<?php
define('ABSPATH', '%(root)s/');
$path = urldecode(parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH));
$file = ABSPATH . ltrim($path, '/');
if ($path !== '/' && is_file($file) && substr($path, -4) !== '.php') {
    return false;
}
if (preg_match('#^(/(?:[^/]+/)*[^/]+\\.php)#', $path, $m) && is_file(ABSPATH . ltrim($m[1], '/'))) {
    $script = $m[1];
} elseif (is_dir($file) && is_file(rtrim($file, '/') . '/index.php')) {
    $script = rtrim($path, '/') . '/index.php';
} else {
    $script = '/index.php';
}
$_SERVER['SCRIPT_NAME'] = $_SERVER['PHP_SELF'] = $script;
$_SERVER['SCRIPT_FILENAME'] = ABSPATH . ltrim($script, '/');
chdir(dirname($_SERVER['SCRIPT_FILENAME']));
require $_SERVER['SCRIPT_FILENAME'];
"""
#: a must-use plugin: nothing a page asks for leaves 127.0.0.1, no mail is sent
OFFLINE = """<?php
remove_action('wp_head', 'print_emoji_detection_script', 7);
remove_action('wp_print_styles', 'print_emoji_styles');
remove_action('admin_print_scripts', 'print_emoji_detection_script');
add_filter('emoji_svg_url', '__return_false');
add_filter('pre_wp_mail', '__return_false');
"""
INSTALL = """<?php
$home = $argv[1];
define('WP_INSTALLING', true);
$_SERVER['HTTP_HOST'] = parse_url($home, PHP_URL_HOST) . ':' . parse_url($home, PHP_URL_PORT);
$_SERVER['REQUEST_URI'] = '/';
define('ABSPATH', '%(root)s/');
require_once ABSPATH . 'wp-load.php';
function wp_new_blog_notification($blog_title, $blog_url, $user_id, $password) {}
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
wp_install('Bench Blog', 'editor', 'editor@example.org', true, '', wp_generate_password(20));
update_option('siteurl', $home);
update_option('home', $home);
global $wp_rewrite;
$wp_rewrite->set_permalink_structure($argv[2]);  // before the feeder loads: taxonomies register their pretty links
$wp_rewrite->flush_rules(false);
echo "installed\\n";
"""
#: reads the blog's content as JSON on stdin, saves it through WordPress, prints the URLs it got
FEEDER = """<?php
$home = $argv[1];
$_SERVER['HTTP_HOST'] = parse_url($home, PHP_URL_HOST) . ':' . parse_url($home, PHP_URL_PORT);
$_SERVER['REQUEST_URI'] = '/';
define('ABSPATH', '%(root)s/');
require_once ABSPATH . 'wp-load.php';
require_once ABSPATH . 'wp-admin/includes/admin.php';
$in = json_decode(stream_get_contents(STDIN), true);
update_option('blogdescription', 'Debian uploads and reading notes');
update_option('show_avatars', 0);
update_option('posts_per_page', 10);
foreach (get_posts(array('post_type' => array('post', 'page'), 'post_status' => 'any', 'numberposts' => -1)) as $p) {
    wp_delete_post($p->ID, true);  // the sample post, page and privacy policy
}
$out = array('posts' => array(), 'pages' => array(), 'categories' => array(), 'tags' => array(),
             'authors' => array(), 'months' => array(), 'years' => array());
$editor = get_user_by('login', 'editor');
wp_update_user(array('ID' => $editor->ID, 'display_name' => 'Bench Editor', 'nickname' => 'Bench Editor'));
$users = array('editor' => $editor->ID);
foreach ($in['users'] as $u) {
    $users[$u['login']] = wp_insert_user(array('user_login' => $u['login'], 'user_pass' => wp_generate_password(20),
        'user_email' => $u['login'] . '@example.org', 'display_name' => $u['display'], 'nickname' => $u['display'],
        'role' => 'author'));
}
wp_set_current_user($editor->ID);
$cats = array();
foreach ($in['categories'] as $c) {
    $t = wp_insert_term($c['name'], 'category', array('slug' => $c['slug']));
    $cats[$c['slug']] = $t['term_id'];
}
foreach ($in['posts'] as $p) {
    $id = wp_insert_post(array('post_title' => $p['title'], 'post_content' => $p['content'],
        'post_status' => 'publish', 'post_type' => $p['type'], 'post_date' => $p['date'],
        'post_date_gmt' => $p['date'], 'post_author' => $users[$p['author']],
        'post_category' => isset($p['category']) ? array($cats[$p['category']]) : array(),
        'tags_input' => $p['tags'], 'comment_status' => 'open'), true);
    if (is_wp_error($id)) { fwrite(STDERR, $id->get_error_message() . "\\n"); exit(1); }
    $comments = array();
    foreach ($p['comments'] as $c) {
        $comments[] = wp_insert_comment(array('comment_post_ID' => $id, 'comment_author' => $c['author'],
            'comment_author_email' => '', 'comment_content' => $c['content'], 'comment_date' => $c['date'],
            'comment_date_gmt' => $c['date'], 'comment_approved' => 1,
            'comment_parent' => $c['parent'] >= 0 ? $comments[$c['parent']] : 0));
    }
    $out[$p['type'] === 'page' ? 'pages' : 'posts'][$p['key']] = array('id' => $id, 'url' => get_permalink($id),
        'comments' => $comments);
}
foreach (get_categories(array('hide_empty' => true)) as $c) {
    $out['categories'][$c->slug] = array('id' => $c->term_id, 'url' => get_category_link($c), 'count' => $c->count);
}
foreach (get_tags(array('hide_empty' => true)) as $t) {
    $out['tags'][$t->slug] = array('id' => $t->term_id, 'url' => get_tag_link($t), 'count' => $t->count);
}
foreach ($users as $login => $id) {
    $out['authors'][$login] = array('id' => $id, 'url' => get_author_posts_url($id));
}
foreach ($wpdb->get_results("SELECT YEAR(post_date) y, MONTH(post_date) m, COUNT(*) n FROM $wpdb->posts
                             WHERE post_type = 'post' AND post_status = 'publish' GROUP BY y, m") as $r) {
    $out['months'][sprintf('%%04d%%02d', $r->y, $r->m)] = array('url' => get_month_link($r->y, $r->m),
                                                               'count' => (int) $r->n);
    $y = $out['years'][$r->y] ?? array('url' => get_year_link($r->y), 'count' => 0);
    $y['count'] += (int) $r->n;
    $out['years'][$r->y] = $y;
}
flush_rewrite_rules(false);  // with the taxonomies' pretty links, registered now that permalinks are on
$out['home'] = home_url('/');
echo json_encode($out);
"""

Truth = Dict[str, Tuple[str, Optional[str]]]


def ensure_packages() -> None:
    have_mysqli = shutil.which("php") and "mysqli" in subprocess.run(
        ["php", "-m"], capture_output=True, text=True, check=False).stdout
    if (os.path.isfile(os.path.join(WORDPRESS, "wp-load.php")) and os.path.isdir(THEME) and have_mysqli
            and shutil.which("mariadbd", path="/usr/sbin:/usr/bin") and shutil.which("nginx", path="/usr/sbin")):
        return
    print("installing " + " ".join(PACKAGES), flush=True)
    subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *PACKAGES], check=True,
                   stdout=subprocess.DEVNULL, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    for service in ("mariadb", "nginx", "apache2"):  # the bench starts its own, on its own socket and ports
        subprocess.run(["service", service, "stop"], capture_output=True, check=False)


@contextlib.contextmanager
def mariadb(tmp: str) -> Iterator[str]:
    """A MariaDB server of its own (data directory in ``tmp``, a Unix socket, no TCP) with an empty
    ``wordpress`` database; yields the socket's path."""
    data, sock = os.path.join(tmp, "mysql"), os.path.join(tmp, "mysql.sock")
    log = os.path.join(tmp, "mysql.log")
    subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={data}", "--user=root",
                    "--auth-root-authentication-method=normal", "--skip-test-db"],
                   check=True, capture_output=True)
    proc = subprocess.Popen(["mariadbd", "--no-defaults", f"--datadir={data}", f"--socket={sock}", "--skip-networking",
                             "--user=root", f"--pid-file={os.path.join(tmp, 'mysql.pid')}", f"--log-error={log}",
                             "--innodb-buffer-pool-size=64M", "--skip-log-bin"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        sql = ("CREATE DATABASE wordpress CHARACTER SET utf8mb4; "
               "CREATE USER 'wordpress'@'localhost' IDENTIFIED BY 'bench'; "
               "GRANT ALL ON wordpress.* TO 'wordpress'@'localhost';")
        for _ in range(300):
            if proc.poll() is not None:
                raise RuntimeError(f"mariadbd exited with {proc.returncode}: {servers._tail(log)}")
            done = subprocess.run(["mariadb", "--no-defaults", "-S", sock, "-uroot", "-e", sql],
                                  capture_output=True, check=False) if os.path.exists(sock) else None
            if done is not None and done.returncode == 0:
                break
            time.sleep(0.1)
        else:
            raise RuntimeError(f"mariadbd did not answer: {servers._tail(log)}")
        yield sock
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(60)


def site_files(tmp: str, sock: str) -> dict:
    """The blog's document root (symlinks to Debian's WordPress, its own wp-config.php and
    wp-content), its router and its PHP scripts; their paths."""
    root, content = os.path.join(tmp, "wordpress"), os.path.join(tmp, "wp-content")
    os.makedirs(root)
    for sub in ("uploads", "mu-plugins"):
        os.makedirs(os.path.join(content, sub))
    for name in os.listdir(WORDPRESS):
        if name not in ("wp-config.php", "wp-content"):
            os.symlink(os.path.join(WORDPRESS, name), os.path.join(root, name))
    os.symlink(content, os.path.join(root, "wp-content"))
    for sub in ("themes", "plugins"):
        os.symlink(os.path.join(WORDPRESS, "wp-content", sub), os.path.join(content, sub))
    paths = {"root": root, "content": content, "socket": sock}
    for path, text in ((os.path.join(root, "wp-config.php"), CONFIG),
                       (os.path.join(content, "mu-plugins", "offline.php"), OFFLINE),
                       (os.path.join(tmp, "router.php"), ROUTER), (os.path.join(tmp, "install.php"), INSTALL),
                       (os.path.join(tmp, "feeder.php"), FEEDER)):
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text % paths)
    paths.update(router=os.path.join(tmp, "router.php"), install=os.path.join(tmp, "install.php"),
                 feeder=os.path.join(tmp, "feeder.php"), log=os.path.join(tmp, "php.log"))
    return paths


# --- the content -------------------------------------------------------------------------------

HEAD = re.compile(r"^(\S+) \(([^)]+)\) ([^;]+); urgency=(\S+)", re.M)
TRAILER = re.compile(r"^ -- (.+?) <[^>]*>\s+(.+)$", re.M)


def dpkg_status() -> Dict[str, dict]:
    """The installed packages of ``/var/lib/dpkg/status``: name -> fields."""
    out = {}
    with open("/var/lib/dpkg/status", encoding="utf-8", errors="replace") as fh:
        for stanza in fh.read().split("\n\n"):
            fields = dict(re.findall(r"^([\w-]+): (.*)$", stanza, re.M))
            desc = re.search(r"^Description: .*\n((?: .*\n?)*)", stanza, re.M)
            fields["long"] = desc.group(1) if desc else ""
            if fields.get("Package") and fields.get("Status", "").endswith(" installed"):
                out[fields["Package"]] = fields
    return out


def changelog_entries(path: str) -> List[dict]:
    """The entries of a changelog.Debian.gz with one or two bullets and no sub-items, 30-400 characters."""
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    starts = [m.start() for m in HEAD.finditer(text)]
    out = []
    for a, b in zip(starts, starts[1:] + [len(text)]):
        entry = text[a:b]
        head, trailer = HEAD.match(entry), TRAILER.search(entry)
        if not trailer:
            continue
        lines = entry[head.end():trailer.start()].split("\n")
        if any(re.match(r"^\s{4,}[-+*] ", line) or re.match(r"^\s+\[", line) for line in lines):
            continue
        bullets: List[str] = []
        for line in lines:
            if line.startswith("  * "):
                bullets.append(line[4:].strip())
            elif line.strip() and bullets:
                bullets[-1] += " " + line.strip()
        size = sum(len(x) for x in bullets)
        try:
            date = email.utils.parsedate_to_datetime(trailer.group(2).strip())
        except (TypeError, ValueError):
            continue
        if 1 <= len(bullets) <= 2 and 30 <= size <= 400 and date.tzinfo is not None:
            out.append({"source": head.group(1), "version": head.group(2), "dist": head.group(3).strip(),
                        "urgency": head.group(4), "bullets": bullets, "by": trailer.group(1).strip(),
                        "date": date.astimezone(datetime.timezone.utc)})
    return out


def uploads(status: Dict[str, dict], n: int) -> List[dict]:
    """``n`` short changelog entries of the required and important packages, an even share per source
    package at most (spread over its history), each text once; with the package's section and description."""
    by_source: Dict[str, List[dict]] = {}
    for name, fields in sorted(status.items()):
        path = f"/usr/share/doc/{name}/changelog.Debian.gz"
        if fields.get("Priority") not in ("required", "important") or not os.path.isfile(path):
            continue
        source = fields.get("Source", name).split()[0]
        if source in by_source:
            continue
        entries = changelog_entries(os.path.realpath(path))
        for e in entries:
            e["section"] = fields.get("Section", "misc").split("/")[-1]
            e["description"] = fields.get("long", "")
        if entries:
            by_source[source] = entries
    seen: set = set()
    for source, entries in by_source.items():
        unique = []
        for e in entries:
            text = " ".join(e["bullets"])
            if text not in seen:
                seen.add(text)
                unique.append(e)
        by_source[source] = unique
    cap = 1
    while sum(min(cap, len(v)) for v in by_source.values()) < n and cap < 1000:
        cap += 1
    out = []
    for entries in by_source.values():
        take = min(cap, len(entries))
        out.extend(entries[int(i * len(entries) / take)] for i in range(take))
    out.sort(key=lambda e: e["date"])
    return out[-n:]


def page_title(path: str) -> str:
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    m = (re.search(r"""<meta[^>]+property=["']og:title["'][^>]*content=(["'])(.*?)\1""", text, re.I | re.S)
         or re.search(r"(?is)<title[^>]*>()(.*?)</title>", text))
    return re.sub(r"\s+", " ", html.unescape(m.group(2))).strip() if m else ""


def articles(n: int) -> List[dict]:
    if n and not os.path.isdir(BENCHMARK):
        raise SystemExit(f"{BENCHMARK} not found (--articles 0 builds the blog without the long posts)")
    if not n:
        return []
    with open(os.path.join(BENCHMARK, "ground-truth.json"), encoding="utf-8") as fh:
        truth = json.load(fh)
    out = []
    for key, value in sorted(truth.items()):
        body = value.get("articleBody", "")
        title = page_title(os.path.join(BENCHMARK, "html", key + ".html.gz"))
        if len(body) > 1500 and 10 <= len(title) <= 150 and title not in {a["title"] for a in out}:
            out.append({"title": title, "paras": [p.strip() for p in body.split("\n") if p.strip()]})
        if len(out) == n:
            break
    return out


def blocks(paras: List[str], bullets: Tuple[str, ...] = ()) -> str:
    """Block-editor markup: paragraphs, then a list."""
    out = [f"<!-- wp:paragraph -->\n<p>{html.escape(p, quote=False)}</p>\n<!-- /wp:paragraph -->" for p in paras]
    if bullets:
        items = "".join(f"<li>{html.escape(b, quote=False)}</li>" for b in bullets)
        out.insert(0, f"<!-- wp:list -->\n<ul>{items}</ul>\n<!-- /wp:list -->")
    return "\n\n".join(out)


def readme(name: str) -> str:
    for path in sorted(glob.glob(f"/usr/share/doc/{name}/README.Debian*")):
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
            return fh.read()
    return ""


def content(n_uploads: int, n_articles: int) -> dict:
    """Users, categories, posts (with their comments) and pages for the feeder."""
    status = dpkg_status()
    entries = uploads(status, n_uploads)
    posts, categories = [], {}
    for i, e in enumerate(entries):
        categories[e["section"]] = e["section"].capitalize()
        desc = [p.strip().replace("\n ", " ") for p in re.split(r"\n \.\n", e["description"]) if p.strip()]
        comments = []
        if i % 10 == 3 and desc:
            when = (e["date"] + datetime.timedelta(days=2)).strftime("%Y-%m-%d %H:%M:%S")
            comments.append({"author": COMMENTERS[i % 3], "content": desc[0], "date": when, "parent": -1})
            if len(desc) > 1 and i % 20 == 3:
                comments.append({"author": COMMENTERS[(i + 1) % 3], "content": desc[1], "date": when, "parent": 0})
        tags = [e["source"]] + (["security"] if "security" in e["dist"] or "CVE-" in " ".join(e["bullets"]) else [])
        posts.append({"key": f"u{i}", "type": "post", "title": f"{e['source']} {e['version']}",
                      "content": blocks([f"Uploaded to {e['dist']} (urgency {e['urgency']}) by {e['by']}."],
                                        tuple(e["bullets"])),
                      "date": e["date"].strftime("%Y-%m-%d %H:%M:%S"), "author": "uploads",
                      "category": e["section"], "tags": tags, "comments": comments})
    step = max(1, len(entries) // max(1, n_articles))
    for i, a in enumerate(articles(n_articles)):
        date = entries[min(len(entries) - 1, i * step + step // 2)]["date"] + datetime.timedelta(hours=1)
        posts.append({"key": f"a{i}", "type": "post", "title": a["title"], "content": blocks(a["paras"]),
                      "date": date.strftime("%Y-%m-%d %H:%M:%S"), "author": "editor", "category": "reading",
                      "tags": [], "comments": []})
    categories["reading"] = "Reading"
    pages = []
    last = entries[-1]["date"]
    for name in PAGE_SOURCES:
        text = readme(name)
        paras = [re.sub(r"\s+", " ", p).strip() for p in re.split(r"\n\s*\n", text)]
        paras = [p for p in paras if len(p) > 20 and not set(p) <= set("-=* ")]
        if len(paras) >= 2 and len(pages) < 6:
            pages.append({"key": f"p{len(pages)}", "type": "page", "title": f"Notes on {name}",
                          "content": blocks(paras[:12]), "date": last.strftime("%Y-%m-%d %H:%M:%S"),
                          "author": "editor", "tags": [], "comments": []})
    return {"users": [{"login": "uploads", "display": "Upload Desk"}],
            "categories": [{"slug": s, "name": c} for s, c in sorted(categories.items())],
            "posts": posts + pages}


def feed(paths: dict, home: str, data: dict) -> dict:
    for script, stdin in ((paths["install"], ""), (paths["feeder"], json.dumps(data))):
        proc = subprocess.run(["php", script, home, PERMALINKS], input=stdin, capture_output=True, text=True,
                              cwd=paths["root"], check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"{os.path.basename(script)} failed: {proc.stdout[-800:]} {proc.stderr[-1500:]}")
    with open(os.path.join(os.path.dirname(paths["root"]), "fed.json"), "w", encoding="utf-8") as fh:
        fh.write(proc.stdout[proc.stdout.index("{"):])
    return json.loads(proc.stdout[proc.stdout.index("{"):])


# --- the truth ---------------------------------------------------------------------------------

def search_words(data: dict) -> List[str]:
    """Three words each found in 2-8 upload posts, in three different sets of posts."""
    docs = collections.defaultdict(set)
    for p in data["posts"]:
        if p["key"].startswith("u"):
            for w in re.findall(r"[a-z]{8,}", p["content"].lower()):
                docs[w].add(p["key"])
    chosen: List[str] = []
    sets: List[set] = []
    for w in sorted(docs, key=lambda w: (-len(docs[w]), w)):
        if 2 <= len(docs[w]) <= 8 and all(docs[w] != s for s in sets):
            chosen.append(w)
            sets.append(docs[w])
        if len(chosen) == 3:
            break
    return chosen


def truth_of(got: dict, data: dict, base: str, mirror: str) -> Truth:
    truth: Truth = {}

    def add(group: str, urls, label: Optional[str] = None) -> None:
        for u in urls:
            assert u not in truth, u
            truth[u] = (group, label)

    def on_mirror(url: str) -> str:
        return mirror + url[len(base):]

    commented = 0
    for i, (key, post) in enumerate(sorted(got["posts"].items(), key=lambda kv: kv[1]["id"])):
        url, pid = post["url"], post["id"]
        urls = [url]
        variant = i % 120
        if variant == 7:
            urls.append(f"{base}/?p={pid}")
        elif variant == 31:
            urls.append(url.rstrip("/"))
        elif variant == 55:
            urls.append(url + "?utm_source=newsletter&utm_medium=email&utm_campaign=weekly")
        elif variant == 79:
            head, slug = url.rstrip("/").rsplit("/", 1)
            urls.append(f"{head}/{slug.upper()}/")
        elif variant == 103:
            urls.append(on_mirror(url))
        elif post["comments"] and commented < 3:
            commented += 1
            urls.append(f"{url}?replytocom={post['comments'][0]}")
        add(f"post:{key}", urls)
    for i, (key, page) in enumerate(sorted(got["pages"].items())):
        urls = [page["url"]] + ([f"{base}/?page_id={page['id']}"] if i == 1 else []) \
            + ([on_mirror(page["url"])] if i == 4 else [])
        add(f"page:{key}", urls)
    n_posts = len(got["posts"])
    add("home", [f"{base}/", f"{base}/page/1/", f"{mirror}/"])
    for n in range(2, min(12, (n_posts + 9) // 10) + 1):
        add(f"home:{n}", [f"{base}/page/{n}/"])
    cats = sorted(got["categories"].items(), key=lambda kv: (-kv[1]["count"], kv[0]))
    for i, (slug, cat) in enumerate(cats):
        add(f"category:{slug}", [cat["url"]] + ([f"{base}/?cat={cat['id']}"] if i == 1 else []))
        if i < 3 and cat["count"] > 10:
            add(f"category:{slug}:2", [cat["url"] + "page/2/"])
    tags = sorted(got["tags"].items(), key=lambda kv: (-kv[1]["count"], kv[0]))[:15]
    for i, (slug, tag) in enumerate(tags):
        add(f"tag:{slug}", [tag["url"]] + ([f"{base}/?tag={slug}"] if i == 2 else []))
    months = sorted(got["months"].items(), key=lambda kv: (-kv[1]["count"], kv[0]))[:12]
    for i, (ym, month) in enumerate(months):
        add(f"month:{ym}", [month["url"]] + ([f"{base}/?m={ym}"] if i == 0 else []))
    for year, y in sorted(got["years"].items(), key=lambda kv: (-kv[1]["count"], kv[0]))[:4]:
        add(f"year:{year}", [y["url"]])
    for login, author in sorted(got["authors"].items()):
        add(f"author:{login}", [author["url"]] + ([f"{base}/?author={author['id']}"] if login == "uploads" else []))
    for word in search_words(data):
        add(f"search:{word}", [f"{base}/?s={word}"])
    some_post = sorted(p["url"] for p in got["posts"].values())[0]
    add("404", [f"{base}/{path}" for path in (
        "2016/02/29/retired-announcement/", "2021/07/04/no-longer-here/", "?p=999999", "category/obsolete-section/",
        "tag/never-used-tag/", "author/nobody/", "page/999/", "1970/01/", "wp-content/uploads/2020/05/missing.png",
        "notes-on-nothing/", "reading/unknown-article/", "?page_id=999998")], "E3")
    login = f"{base}/wp-login.php"
    add("login", [login] + [f"{login}?redirect_to={urllib.parse.quote(t, safe='')}" for t in (
        f"{base}/wp-admin/", f"{base}/wp-admin/post-new.php", some_post)]
        + [f"{base}/wp-admin/{screen}" for screen in ("", "edit.php", "profile.php", "options-general.php")], "L1")
    add("fatal", [base + path for path in FATAL], "E1")
    return truth


@contextlib.contextmanager
def build(args: argparse.Namespace, tmp: str) -> Iterator[Truth]:
    ensure_packages()
    os.makedirs(tmp)
    os.chmod(tmp, 0o755)
    data = content(args.uploads, args.articles)
    port = servers.free_port()
    base = f"http://127.0.0.1:{port}"
    with mariadb(tmp) as sock:
        paths = site_files(tmp, sock)
        got = feed(paths, base, data)
        with servers.php_server(port, paths["root"], paths["router"], paths["log"], "/") as served:
            assert served == base
            proxy = (f"location / {{ proxy_pass {base}; proxy_set_header Host 127.0.0.1:{port}; "
                     "proxy_redirect off; proxy_buffers 16 64k; }")
            with servers.nginx_server(locations=proxy) as mirror:
                yield truth_of(got, data, base, mirror)


def check(truth: Truth) -> str:
    """``--check``: the statuses per label, then every content URL that does not end in a 200."""
    odd = []
    for url, (group, label) in truth.items():
        if label is None:
            got = servers.fetch(url)
            if got.status != 200:
                odd.append(f"  {got.status} {url} ({group})")
    return "\n".join([appbench.check_truth("blog", truth), *odd])


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--uploads", type=int, default=300, help="short posts: Debian changelog entries")
    parser.add_argument("--articles", type=int, default=40, help="long posts: the article benchmark's texts")


if __name__ == "__main__":
    sys.exit(appbench.main("blog", build, __doc__, add_args, check))
