"""Labels and clusters of a crawl of real login-only applications, several instances of each (a
fleet): their login pages under every URL that reaches them, their 404s and error pages.

    python bench/app_logins.py --check            # set up, fetch every truth URL once: statuses per label
    python bench/app_logins.py [-v] [--keep DIR]  # set up, crawl with the shipped defaults, score
    python bench/appbench.py DIR [--refeature]    # re-score a kept crawl with the current code

Installs what is missing: JupyterLab 4 on Jupyter Server 2 (PyPI ``jupyterlab``, into
``$TMPDIR/websim-bench-venv``, not the project's environment), and Debian's ``roundcube-core``
(1.6, with ``roundcube-sqlite3``), ``phpmyadmin`` (5.2) and ``adminer`` (4.8) with PHP's CLI. Each
instance has its own configuration, data and session directories inside the bench's directory
(never the system's) and listens on its own port of 127.0.0.1:

- four JupyterLab servers (token login; a directory of real text files: Debian's
  ``copyright`` files), each with its own Jupyter config, data and runtime directories;
- three Roundcube webmails served by ``php -S`` from Debian's ``/var/lib/roundcube/public_html``,
  each with its own configuration directory and SQLite database (created from Roundcube's
  ``SQL/sqlite.initial.sql``); a fourth whose database directory does not exist, as after a
  broken deployment: Roundcube answers every request with its "Internal Error / Oops...
  something went wrong!" page, status 200;
- three phpMyAdmins served by ``php -S`` (cookie login against a MySQL port nobody listens on;
  a tree of symbolic links to Debian's ``/usr/share/phpmyadmin`` whose ``vendor_config.php`` points
  at the instance's own configuration and temporary directory), which also serve phpMyAdmin's
  own documentation (Sphinx HTML) without login;
- three Adminers served by ``php -S`` (Debian's ``adminer.php`` with its version check off, as
  Debian's configuration has it);
- three Django admin sites (``scrapy_websim.testing.servers.django_server``).

The truth (``{url: (group, label)}``, ~310 URLs):

- per application one ``L1`` group: its login page on every instance, under every URL a crawler
  meets it by: the login URL with and without its return-to parameter (``/login?next=/lab``,
  ``/admin/login/?next=/admin/auth/user/``), the deep links that redirect to it (``/lab/tree/FILE``,
  ``/files/FILE``, ``/admin/auth/user/1/change/``), Roundcube's tasks and actions (``?_task=mail&
  _mbox=INBOX&_uid=12&_action=show``), phpMyAdmin's routes (``index.php?route=/sql&db=D&table=T``),
  Adminer's server/user/database links (those with a user answer 403 with the login form);
- per 404 template one ``E3`` group: Jupyter Server's "404 : Not Found / You are requesting a page
  that does not exist!", Django's "Not Found", and ``php -S``'s own "Not Found: The requested
  resource /PATH was not found on this server." for missing files on every PHP instance (one
  server, one template across the three PHP applications);
- the broken Roundcube's internal-error page under five URLs: one group, ``E3`` (an error page
  served with 200);
- content: every page of phpMyAdmin's documentation on the first instance, each its own group,
  several also on the second and third instance and ``/doc/html/`` as the same page as
  ``/doc/html/index.html``.

Left out as arguable: Jupyter's "Successfully logged out" page (thin or content?), its JSON
answers (``/api``, a 403 of ``/api/contents``: not HTML), phpMyAdmin and Adminer under
``?lang=de`` (the login page in German: the same page?), Adminer's PostgreSQL link (a "No
extension" page: PHP's pgsql module missing is this machine's choice), phpMyAdmin's
``search.html`` (empty without a query) and ``url.php`` (a redirect page to any address). No
application here answers a 403 of its own in HTML but Adminer's login form, and none a 5xx:
there is no 403 or E1 group. Paths without an extension that match no file would be answered
by ``php -S`` with the application's ``index.php`` (the built-in server's fallback, not what
Apache or nginx do), so the PHP 404s are for paths with one. The URL list is shuffled; the
crawl is websim's shipped defaults. Last line (see ``bench/appbench.py``):

    set=logins urls=N groups=G dup_share=D missing=M precision=P recall=R f1=F false_pairs=K
    missed_pairs=K lost=L rules=right/special (pct) content_as_junk=J
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import urllib.parse
from typing import Dict, Iterator, List, Optional

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import appbench  # noqa: E402  (bench/appbench.py)

from scrapy_websim.testing import servers  # noqa: E402

VENV = os.path.join(tempfile.gettempdir(), "websim-bench-venv")
JUPYTERLAB = "jupyterlab==4.6.6"
APT = ("roundcube-core", "roundcube-sqlite3", "dbconfig-no-thanks", "phpmyadmin", "adminer", "php-cli", "php-sqlite3",
       "php-mbstring", "php-xml", "php-intl")
ROUNDCUBE = "/var/lib/roundcube/public_html"
PHPMYADMIN = "/usr/share/phpmyadmin"
PMA_DOCS = "/usr/share/doc/phpmyadmin/html"
ADMINER = "/usr/share/adminer"
INSTANCES = {"jupyter": 4, "roundcube": 3, "phpmyadmin": 3, "adminer": 3, "django": 3}

ROUNDCUBE_ROUTER = """<?php
define('RCMAIL_CONFIG_DIR', '%(config)s');
$path = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
if ($path === '/' || $path === '/index.php') {
    chdir('%(root)s');
    require '%(root)s/index.php';
    return true;
}
return false;  // a file, or the server's own 404
"""
ROUNDCUBE_CONFIG = """<?php
$config = [];
$config['db_dsnw'] = 'sqlite:///%(db)s?mode=0646';
$config['imap_host'] = ['127.0.0.1:%(imap)d'];
$config['smtp_host'] = '127.0.0.1:%(imap)d';
$config['support_url'] = '';
$config['product_name'] = 'Roundcube Webmail';
$config['des_key'] = '%(key)s';
$config['plugins'] = [];
$config['skin'] = 'elastic';
$config['temp_dir'] = '%(dir)s/temp/';
$config['log_dir'] = '%(dir)s/logs/';
$config['enable_spellcheck'] = false;
"""
PMA_ROUTER = """<?php
define('ROOT_PATH', '%(root)s/');
$path = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
if ($path === '/' || $path === '/index.php') {
    chdir('%(root)s');
    require '%(root)s/index.php';
    return true;
}
return false;  // a file, or the server's own 404
"""
PMA_CONFIG = """<?php
$cfg['blowfish_secret'] = '%(key)s';
$cfg['Servers'][1]['auth_type'] = 'cookie';
$cfg['Servers'][1]['host'] = '127.0.0.1';
$cfg['Servers'][1]['port'] = '%(mysql)d';
$cfg['Servers'][1]['AllowNoPassword'] = false;
$cfg['TempDir'] = '%(dir)s/tmp';
$cfg['VersionCheck'] = false;
"""
#: Debian's /etc/adminer/conf.php: Adminer with its version check (a request to adminer.org) off
ADMINER_INDEX = """<?php
function adminer_object() {
    include_once '%(root)s/plugins/plugin.php';
    include_once '%(root)s/plugins/version-noverify.php';
    return new AdminerPlugin(array(new AdminerVersionNoverify()));
}
include '%(root)s/adminer.php';
"""


def ensure_packages() -> str:
    """Install what is missing; the ``jupyter-lab`` command of the bench's virtual environment."""
    missing = [p for p, path in (("roundcube-core", ROUNDCUBE), ("phpmyadmin", PHPMYADMIN),
                                 ("adminer", os.path.join(ADMINER, "adminer.php"))) if not os.path.exists(path)]
    if missing or not shutil.which("php"):
        print("installing " + " ".join(APT), flush=True)
        subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *APT], check=True,
                       stdout=subprocess.DEVNULL, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    exe = os.path.join(VENV, "bin", "jupyter-lab")
    if not os.path.exists(exe):
        appbench.pip_install(VENV, [JUPYTERLAB])
    return exe


def write(path: str, text: str) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


def php(tmp: str, name: str, docroot: str, router: Optional[str] = None, ready: str = "/"):
    """``php -S`` on a free port with two workers and the instance's own session directory."""
    os.makedirs(os.path.join(tmp, "sessions"), exist_ok=True)
    port = servers.free_port()
    argv = ["php", "-d", f"session.save_path={os.path.join(tmp, 'sessions')}", "-S", f"127.0.0.1:{port}",
            "-t", docroot] + ([router] if router else [])
    return servers.app_server(argv, port, os.path.join(tmp, f"{name}.log"), ready,
                              env=dict(os.environ, PHP_CLI_SERVER_WORKERS="2"))


def jupyter(exe: str, tmp: str, files: str):
    env = dict(os.environ, HOME=os.path.join(tmp, "home"))
    for sub in ("config", "data", "runtime", "home"):
        os.makedirs(os.path.join(tmp, sub), exist_ok=True)
        if sub != "home":
            env[f"JUPYTER_{sub.upper()}_DIR"] = os.path.join(tmp, sub)
    port = servers.free_port()
    argv = [exe, "--no-browser", "--allow-root", "--ip", "127.0.0.1", "--port", str(port),
            f"--ServerApp.root_dir={files}", f"--IdentityProvider.token=bench-token-{port}",
            "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    return servers.app_server(argv, port, os.path.join(tmp, "jupyter.log"), "/login", env=env, timeout=180)


def roundcube(tmp: str, broken: bool = False):
    os.makedirs(os.path.join(tmp, "temp"), exist_ok=True)
    os.makedirs(os.path.join(tmp, "logs"), exist_ok=True)
    config = os.path.join(tmp, "config")
    os.makedirs(config, exist_ok=True)
    for name in ("defaults.inc.php", "mimetypes.php"):
        shutil.copy(os.path.join("/etc/roundcube", name), config)
    db = os.path.join(tmp, "missing" if broken else "", "roundcube.db")
    if not broken:
        with sqlite3.connect(db) as conn:
            with open("/usr/share/roundcube/SQL/sqlite.initial.sql", encoding="utf-8") as fh:
                conn.executescript(fh.read())
    write(os.path.join(config, "config.inc.php"), ROUNDCUBE_CONFIG % {
        "db": db, "imap": servers.free_port(), "key": os.urandom(12).hex(), "dir": tmp})
    router = write(os.path.join(tmp, "router.php"), ROUNDCUBE_ROUTER % {"config": config, "root": ROUNDCUBE})
    return php(tmp, "roundcube", ROUNDCUBE, router)


def phpmyadmin(tmp: str):
    """phpMyAdmin from a tree of links to Debian's, its ``vendor_config.php`` the instance's own."""
    root = os.path.join(tmp, "root")
    os.makedirs(os.path.join(root, "libraries"))
    os.makedirs(os.path.join(tmp, "tmp"))
    for path in glob.glob(os.path.join(PHPMYADMIN, "*")) + glob.glob(os.path.join(PHPMYADMIN, "libraries", "*")):
        rel = os.path.relpath(path, PHPMYADMIN)
        if rel not in ("libraries", os.path.join("libraries", "vendor_config.php")):
            os.symlink(path, os.path.join(root, rel))
    with open(os.path.join(PHPMYADMIN, "libraries", "vendor_config.php"), encoding="utf-8") as fh:
        vendor = fh.read()
    config = write(os.path.join(tmp, "config.inc.php"), PMA_CONFIG % {
        "key": os.urandom(16).hex(), "mysql": servers.free_port(), "dir": tmp})
    vendor = vendor.replace("'/var/lib/phpmyadmin/tmp/'", repr(os.path.join(tmp, "tmp") + "/"))
    vendor = vendor.replace("'/etc/phpmyadmin/config.inc.php'", repr(config))
    write(os.path.join(root, "libraries", "vendor_config.php"), vendor)
    router = write(os.path.join(tmp, "router.php"), PMA_ROUTER % {"root": root})
    return php(tmp, "phpmyadmin", root, router)


def adminer(tmp: str):
    root = os.path.join(tmp, "root")
    write(os.path.join(root, "index.php"), ADMINER_INDEX % {"root": ADMINER})
    return php(tmp, "adminer", root)


def notebook_files(root: str) -> List[str]:
    """A directory of real text files for Jupyter (Debian ``copyright`` files); their names."""
    os.makedirs(root, exist_ok=True)
    names = []
    for path in sorted(glob.glob("/usr/share/doc/*/copyright"))[:40:4]:
        name = path.split("/")[-2] + "-copyright.txt"
        shutil.copy(path, os.path.join(root, name))
        names.append(name)
    return names


def docs() -> List[str]:
    """phpMyAdmin's documentation pages (relative to ``/doc/html/``), its search page left out."""
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(PMA_DOCS, "*.html"))
                  if os.path.basename(p) != "search.html")


def build_truth(bases: Dict[str, List[str]], files: List[str]) -> appbench.Truth:
    truth: appbench.Truth = {}

    def group(name: str, urls: List[str], label: Optional[str] = None) -> None:
        for url in urls:
            assert url not in truth, url
            truth[url] = (name, label)

    def each(app: str, paths: List[str]) -> List[str]:
        """``paths`` on every instance of the app (a crawler of the fleet meets each link on each host)."""
        return [base + p for base in bases[app] for p in paths]

    q = urllib.parse.quote
    jupyter_login = ["/login", "/login?next=%2Flab", "/", "/lab", "/lab/tree", "/doc", "/lab/workspaces/auto-b"]
    jupyter_login += [f"/lab/tree/{q(f)}" for f in files[:3]] + [f"/files/{q(f)}" for f in files[3:5]]
    jupyter_login += [f"/view/{q(f)}" for f in files[5:7]] + [f"/login?next={q('/lab/tree/' + files[7], safe='')}"]
    group("jupyter-login", each("jupyter", jupyter_login), "L1")
    group("jupyter-404", each("jupyter", ["/tree", f"/notebooks/{q(files[0])}", "/nosuch", "/api/nosuch",
                                          "/static/app.js", "/edit/notes.txt"]), "E3")
    mail = ["/", "/index.php", "/?_task=mail", "/?_task=mail&_mbox=INBOX", "/?_task=mail&_mbox=Sent",
            "/?_task=mail&_action=compose", "/?_task=mail&_mbox=INBOX&_uid=12&_action=show",
            "/?_task=mail&_mbox=INBOX&_uid=4087&_action=show", "/?_task=addressbook",
            "/?_task=settings", "/?_task=settings&_action=preferences", "/?_task=login", "/?_task=logout",
            "/?_task=mail&_mbox=Drafts", "/?_task=mail&_mbox=Trash", "/?_task=addressbook&_action=add",
            "/?_task=settings&_action=folders", "/?_task=settings&_action=identities"]
    group("roundcube-login", each("roundcube", mail), "L1")
    group("roundcube-internal-error", [bases["roundcube-broken"][0] + p for p in mail[:5]], "E3")
    routes = ["/", "/index.php", "/index.php?route=/server/databases", "/index.php?route=/server/status",
              "/index.php?route=/server/variables", "/index.php?route=/server/privileges&viewing_mode=server",
              "/index.php?route=/database/structure&db=mail", "/index.php?route=/sql&db=mail&table=users",
              "/index.php?route=/table/structure&db=wordpress&table=wp_posts",
              "/index.php?route=/table/sql&db=wordpress&table=wp_users", "/?route=/server/sql",
              "/index.php?route=/import", "/index.php?route=/server/export", "/index.php?route=/server/replication",
              "/index.php?route=/database/sql&db=mail"]
    group("phpmyadmin-login", each("phpmyadmin", routes), "L1")
    group("adminer-login", each("adminer", [
        "/", "/index.php", "/?server=127.0.0.1", "/?server=db.internal", "/?server=127.0.0.1&username=root",
        "/?server=127.0.0.1&username=root&db=mysql", "/?server=127.0.0.1&username=root&db=mysql&table=user",
        "/?server=127.0.0.1&username=app&db=shop&select=orders", "/?server=127.0.0.1&username=root&db=mysql&sql=",
        "/?server=127.0.0.1&username=root&privileges="]), "L1")
    group("django-login", each("django", [
        "/admin/login/", "/admin/login/?next=/admin/", "/admin/", "/admin/auth/user/", "/admin/auth/group/",
        "/admin/auth/user/1/change/", "/admin/auth/user/add/", "/admin/password_change/",
        "/admin/login/?next=/admin/auth/user/"]), "L1")
    group("django-404", each("django", ["/", "/login/", "/static/admin/css/missing.css", "/accounts/"]), "E3")
    php_404 = ["/sitemap.xml", "/wp-login.php", "/config.php", "/backup.sql", "/admin.php", "/phpinfo.php"]
    group("php-404", [b + php_404[(i + k) % len(php_404)] for i, b in enumerate(
        bases["roundcube"] + bases["roundcube-broken"] + bases["phpmyadmin"] + bases["adminer"]) for k in range(2)],
        "E3")
    pma = bases["phpmyadmin"]
    for i, page in enumerate(docs()):
        urls = [f"{pma[0]}/doc/html/{page}"]
        if page == "index.html":
            urls += [f"{pma[0]}/doc/html/", f"{pma[1]}/doc/html/index.html"]
        elif i % 4 == 1:
            urls.append(f"{pma[1 + i % 2]}/doc/html/{page}")
        group(f"doc/{page}", urls)
    return truth


@contextlib.contextmanager
def build(args: argparse.Namespace, tmp: str) -> Iterator[appbench.Truth]:
    exe = ensure_packages()
    os.makedirs(tmp, exist_ok=True)
    files = notebook_files(os.path.join(tmp, "notebooks"))
    bases: Dict[str, List[str]] = {}
    with contextlib.ExitStack() as stack:
        def start(app: str, make) -> None:
            for i in range(INSTANCES.get(app, 1)):
                bases.setdefault(app, []).append(stack.enter_context(make(os.path.join(tmp, f"{app}-{i + 1}"))))

        start("jupyter", lambda d: jupyter(exe, d, os.path.join(tmp, "notebooks")))
        start("roundcube", roundcube)
        start("roundcube-broken", lambda d: roundcube(d, broken=True))
        start("phpmyadmin", phpmyadmin)
        start("adminer", adminer)
        for _ in range(INSTANCES["django"]):
            bases.setdefault("django", []).append(stack.enter_context(servers.django_server()))
        yield build_truth(bases, files)


if __name__ == "__main__":
    sys.exit(appbench.main("logins", build, __doc__))
