"""The servers of ``bench/fleetscale.py``: Debian's nginx, Apache httpd, lighttpd and Tomcat, each one
process listening on many ``127.0.0.N:PORT`` origins, and two Verdaccio registries.

Every origin is one ``Origin`` of the plan (``bench/fleetscale.py``): its profile says what it
serves. What a server shows is its own software's answer (default pages, error pages, directory
listings, HTTP auth walls, proxy errors) or real pages: documentation from Debian packages
(python3-doc, postgresql-doc-15, debian-reference, apache2-doc, git-doc), the login pages of
phpMyAdmin, Roundcube, Adminer and Django's admin as the packages serve them (captured from a live
instance started once, see :func:`capture_logins`), and a few pages written here (a parked domain,
a hosting company's placeholder, a WAF block page, a maintenance page, a client-rendered console).
Per-request noise is the servers' own: nginx SSI echoes a request id, the date, the host and port
into a page; Apache prints "Server at 127.0.0.N Port P"; Tomcat echoes the path.
"""

from __future__ import annotations

import contextlib
import difflib
import glob
import html
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import textwrap
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from scrapy_websim.testing import servers  # noqa: E402

ADDRS = [f"127.0.0.{i}" for i in range(2, 255)]

PYDOC = "/usr/share/doc/python3.11/html"
PGDOC = "/usr/share/doc/postgresql-doc-15/html"
DEBREF = "/usr/share/debian-reference"
APACHEDOC = "/usr/share/doc/apache2-doc/manual"
GITDOC = "/usr/share/doc/git-doc"
PHPMYADMIN = "/usr/share/phpmyadmin"
ROUNDCUBE = "/var/lib/roundcube/public_html"
TOMCAT_HOME = "/usr/share/tomcat10"
TOMCAT_ROOT = "/var/lib/tomcat10/webapps/ROOT"
TOMCAT_MANAGER = "/etc/tomcat10/Catalina/localhost/manager.xml"


@dataclass
class DocSet:
    """A documentation set served by doc-site hosts: its pages (relative paths), its index, and
    what the pages load besides (stylesheets, images) linked into every host's root."""

    name: str
    src: str
    pages: Sequence[str]
    index: str
    statics: Sequence[str] = ()


def doc_sets() -> Dict[str, DocSet]:
    def rel(pattern: str, src: str) -> List[str]:
        return sorted(os.path.relpath(p, src) for p in glob.glob(os.path.join(src, pattern)))

    py = [p for sub in ("library", "howto", "tutorial", "reference", "using", "faq", "extending", "c-api")
          for p in rel(f"{sub}/*.html", PYDOC) if not p.endswith("index.html")]
    return {
        "python": DocSet("python", PYDOC, py, "index.html", ("_static", "_images")),
        "postgres": DocSet("postgres", PGDOC, [p for p in rel("*.html", PGDOC) if p != "index.html"],
                           "index.html", ("stylesheet.css",)),
        "debref": DocSet("debref", DEBREF, rel("ch*.html", DEBREF) + rel("ap*.html", DEBREF), "index.en.html",
                         ("debian-reference.css", "images")),
        "apache": DocSet("apache", APACHEDOC, [p for p in rel("en/*.html", APACHEDOC) + rel("en/*/*.html", APACHEDOC)
                                                if not p.endswith("index.html")], "en/index.html", ("style", "images")),
        "git": DocSet("git", GITDOC, [p for p in rel("git-*.html", GITDOC)], "git.html", ()),
    }


# ---------------------------------------------------------------------------------------------
# Pages written here (nginx SSI: request id, date, host and port filled in per request)

SSI_ID = '<!--# echo var="request_id" -->'
SSI_DATE = '<!--# config timefmt="%Y-%m-%d %H:%M:%S" --><!--# echo var="date_gmt" -->'
SSI_HOST = '<!--# echo var="host" -->'
SSI_PORT = '<!--# echo var="server_port" -->'

PARKED = f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{SSI_HOST} - parked domain</title>
<style>body{{font-family:Arial,sans-serif;background:#f4f6f8;margin:0}}
.wrap{{max-width:760px;margin:40px auto;background:#fff;padding:30px;border-radius:6px}}
h1{{color:#234}}li{{margin:6px 0}}footer{{color:#888;font-size:12px}}</style>
</head><body><div class="wrap"><h1>{SSI_HOST}</h1>
<p class="sub">This domain is registered, but the owner has not set up a website for it yet.</p>
<p>The domain <b>{SSI_HOST}</b> was registered through Parkway Domains and is parked free of charge. If you
own it, sign in to your registrar's control panel to point it at your web hosting or to forward its
e-mail. Parked domains renew automatically unless their owner cancels them.</p>
<h2>Related searches</h2><ul>
<li><a href="/search?q=web+hosting&amp;click={SSI_ID}">Web hosting</a></li>
<li><a href="/search?q=domain+names&amp;click={SSI_ID}">Domain names</a></li>
<li><a href="/search?q=email+accounts&amp;click={SSI_ID}">E-mail accounts</a></li>
<li><a href="/search?q=website+builder&amp;click={SSI_ID}">Website builder</a></li>
<li><a href="/search?q=ssl+certificates&amp;click={SSI_ID}">SSL certificates</a></li></ul>
<p>Interested in this domain? <a href="/inquire?ref={SSI_ID}">Make an offer to its owner</a>.</p>
<footer>Page generated {SSI_DATE} UTC &middot; Parkway Domains &middot; <a href="/privacy">Privacy policy</a></footer>
</div></body></html>
"""

HOSTING = f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Default Web Site Page</title>
<style>body{{font-family:Helvetica,Arial,sans-serif;margin:0;color:#333}}header{{background:#2c5f8a;color:#fff;padding:24px}}
main{{max-width:800px;margin:auto;padding:20px}}</style></head><body>
<header><h1>Welcome to {SSI_HOST}!</h1></header><main>
<p>If you are seeing this page, the web hosting account for <b>{SSI_HOST}</b> (port {SSI_PORT}) is set up, but no
website has been published to it yet.</p>
<p>The owner of this site can publish a website by uploading files to the <code>public_html</code> folder of the
account, with the file manager of the control panel or over SFTP. A file named <code>index.html</code> or
<code>index.php</code> in that folder replaces this page.</p>
<h2>Are you the owner of this site?</h2><ul><li>Log in to the control panel with the credentials of your welcome
e-mail.</li><li>Install an application (WordPress, Joomla, Drupal) with the one-click installer.</li>
<li>Point your domain's DNS records at this server if they do not point here yet.</li></ul>
<p>Need help? Our support team answers around the clock through the ticket system of the control panel.</p>
</main><footer><small>Served by {SSI_HOST}:{SSI_PORT} on {SSI_DATE} UTC</small></footer></body></html>
"""

WAF = (f"<!doctype html><html><head><title>Request blocked</title></head><body><h1>Request blocked</h1>"
       f"<p>This request was blocked by the web application firewall of this site.</p>"
       f"<p>Incident ID: {SSI_ID}</p><p>Time: {SSI_DATE}</p><p>Client: <!--# echo var=\"remote_addr\" --></p>"
       f"</body></html>\n")

MAINT = (f"<!doctype html><html><head><meta charset=utf-8><title>Down for maintenance</title></head>"
         f"<body><h1>We'll be back soon</h1><p>Sorry for the inconvenience: the site is down for "
         f"scheduled maintenance since {SSI_DATE} UTC. Please try again in a few minutes.</p></body></html>\n")

#: A client-rendered console: the same shell on every host; the script fetches the host's own data
#: (``/api/host.json``) and renders the overview (``/``), the package list (``/packages``) or a
#: not-found view for any other path.
SPA_SHELL = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Fleet Console</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;margin:0}header{background:#1d3557;color:#fff;padding:12px 20px}
header a{color:#fff;margin-left:16px}main{padding:20px;max-width:960px}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}</style></head>
<body><header><b>Fleet Console</b><a href="/">Overview</a><a href="/packages">Packages</a></header>
<main id="app"><p>Loading&hellip;</p></main>
<script>
function esc(s) {
  return String(s).replace(/[&<>"]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})[c]);
}
function overview(d) {
  document.title = d.hostname + " - Fleet Console";
  let h = "<h1>" + esc(d.hostname) + "</h1>";
  h += "<p>" + esc(d.role) + " in " + esc(d.site) + ", running " + esc(d.os) + ".</p>";
  h += "<h2>Featured services</h2>";
  for (const p of d.featured) { h += "<h3>" + esc(p.name) + "</h3><p><b>" + esc(p.summary) + "</b></p>";
    for (const para of p.description) h += "<p>" + esc(para) + "</p>"; }
  return h;
}
function packages(d) {
  document.title = "Packages of " + d.hostname + " - Fleet Console";
  let h = "<h1>Packages installed on " + esc(d.hostname) + "</h1>";
  h += "<table><tr><th>Package</th><th>Version</th><th>Summary</th></tr>";
  for (const p of d.packages) {
    h += "<tr><td>" + esc(p.name) + "</td><td>" + esc(p.version) + "</td><td>" + esc(p.summary) + "</td></tr>";
  }
  return h + "</table>";
}
function notFound() {
  document.title = "Page not found - Fleet Console";
  return "<h1>Page not found</h1><p>Sorry, the page you requested does not exist.</p>" +
    "<p><a href=\\"/\\">Back to the overview</a></p>";
}
fetch("/api/host.json").then(r => r.json()).then(d => {
  const path = location.pathname.replace(/\\/+$/, "") || "/";
  const view = path === "/" ? overview : path === "/packages" ? packages : notFound;
  document.getElementById("app").innerHTML = view(d);
});
</script></body></html>
"""


def pkg_page(rec: Dict[str, str]) -> str:
    """A package page of a package mirror (``--memory``'s small pages): its Debian metadata and the
    mirror's host and port in the footer (SSI)."""
    sys.path.insert(0, HERE)
    import debian_meta

    summary, paras = debian_meta.description(rec)
    esc = html.escape
    body = "".join(f"<p>{esc(p)}</p>" for p in paras)
    rows = "".join(f"<tr><th>{k}</th><td>{esc(rec.get(k, ''))}</td></tr>"
                   for k in ("Version", "Section", "Maintainer", "Installed-Size", "Depends") if rec.get(k))
    return (f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{esc(rec['Package'])} - package"
            f"</title></head><body><header><a href=\"/\">Package mirror</a></header><main><h1>Package: "
            f"{esc(rec['Package'])}</h1><p class=\"summary\">{esc(summary)}</p>{body}<table>{rows}</table></main>"
            f"<footer>Mirror {SSI_HOST}:{SSI_PORT} &middot; {SSI_DATE} UTC</footer></body></html>\n")


# ---------------------------------------------------------------------------------------------
# Login pages of admin applications, as the Debian packages serve them


@dataclass
class Captured:
    """One application's login page as an SSI template (its per-request tokens replaced by nginx's
    request id), the assets it loads (request URI -> (extension, bytes)) and other pages of it."""

    html: str
    assets: Dict[str, Tuple[str, bytes]] = field(default_factory=dict)
    pages: Dict[str, str] = field(default_factory=dict)


_TOKEN = re.compile(r"[A-Za-z0-9+/=_%-]+|[^A-Za-z0-9+/=_%-]+")
_WORD = re.compile(r"[A-Za-z0-9+/=_%-]{4,}")
_REF = re.compile(r"<(?:script|link|img)\b[^>]*?\b(?:src|href)\s*=\s*([\"'])([^\"']+)\1", re.I)
_EXT = {"javascript": "js", "css": "css", "icon": "ico", "svg": "svg", "png": "png", "gif": "gif", "jpeg": "jpg",
        "html": "html", "json": "json"}


def noise_template(a: str, b: str) -> str:
    """``a`` with every token that differs between two fetches of one page (``a`` and ``b``) replaced
    by nginx's per-request id (SSI): the page's CSRF tokens, nonces and session ids."""
    ta, tb = _TOKEN.findall(a), _TOKEN.findall(b)
    out: List[str] = []
    for op, i1, i2, _j1, _j2 in difflib.SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes():
        if op == "equal":
            out += ta[i1:i2]
        else:
            out += [SSI_ID if _WORD.fullmatch(t) else t for t in ta[i1:i2]]
    return "".join(out)


def _get(url: str) -> Tuple[int, str, bytes]:
    req = urllib.request.Request(url, headers={"User-Agent": "websim-bench"})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.headers.get("Content-Type", ""), resp.read()
    except urllib.error.HTTPError as err:
        with err:
            return err.code, err.headers.get("Content-Type", ""), err.read()


def _capture(base: str, path: str) -> Captured:
    status, _ctype, first = _get(base + path)
    _status, _ctype, second = _get(base + path)
    if status != 200:
        raise RuntimeError(f"{base}{path} answered {status}")
    page = first.decode("utf-8")
    out = Captured(noise_template(page, second.decode("utf-8")))
    for _q, ref in _REF.findall(page):
        ref = html.unescape(ref)
        absolute = urllib.parse.urljoin(base + "/", ref)
        if not absolute.startswith(base + "/"):
            continue
        uri = absolute[len(base):]
        code, ctype, body = _get(absolute)
        if code == 200:
            kind = next((ext for key, ext in _EXT.items() if key in ctype), "bin")
            out.assets[uri] = (kind, body)
    return out


def capture_logins(tmp: str) -> Dict[str, Captured]:
    """Start phpMyAdmin, Roundcube and Adminer (``php -S``, as ``bench/app_logins.py`` does) and a
    Django admin once, and capture each one's login page (and Django's 404 page)."""
    import app_logins

    out: Dict[str, Captured] = {}
    for name, make in (("phpmyadmin", app_logins.phpmyadmin), ("roundcube", app_logins.roundcube),
                       ("adminer", app_logins.adminer)):
        with make(os.path.join(tmp, name)) as base:
            out[name] = _capture(base, "/")
    with servers.django_server() as base:
        out["django"] = _capture(base, "/admin/login/?next=/admin/")
        out["django"].assets.clear()  # runserver without DEBUG serves no static files: nginx does
        out["django"].pages["404"] = _get(base + "/no/such/page/")[2].decode("utf-8")
    return out


def have_login_apps() -> bool:
    return all(os.path.exists(p) for p in (PHPMYADMIN, ROUNDCUBE, "/usr/share/adminer/adminer.php")) \
        and shutil.which("php") is not None


# ---------------------------------------------------------------------------------------------
# Ports and processes


def pick_port(addrs: Sequence[str], taken: set) -> int:
    """A port free on 127.0.0.1 and on every one of ``addrs`` (and not in ``taken``)."""
    for _ in range(200):
        port = servers.free_port()
        if port in taken:
            continue
        try:
            for addr in addrs:
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                    s.bind((addr, port))
        except OSError:
            continue
        taken.add(port)
        return port
    raise RuntimeError("no port free on every address")


def wait_origins(origins: Sequence[Tuple[str, int]], timeout: float = 60.0) -> None:
    """Until every ``(address, port)`` accepts a connection."""
    import time

    deadline = time.monotonic() + timeout
    pending = list(origins)
    while pending:
        still = []
        for addr, port in pending:
            try:
                with socket.create_connection((addr, port), timeout=0.5):
                    pass
            except OSError:
                still.append((addr, port))
        pending = still
        if pending and time.monotonic() > deadline:
            raise RuntimeError(f"{len(pending)} origins do not listen, e.g. {pending[:3]}")
        if pending:
            time.sleep(0.2)


def _write(path: str, data, mode: int = 0o644) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb" if isinstance(data, bytes) else "w", **({} if isinstance(data, bytes) else
                                                                  {"encoding": "utf-8"})) as fh:
        fh.write(data)
    os.chmod(path, mode)


def _link(src: str, dst: str) -> None:
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if not os.path.lexists(dst):
        os.symlink(src, dst)


def _listen(origins: Sequence[Tuple[str, int]]) -> str:
    return "\n".join(f"    listen {a}:{p};" for a, p in origins)


def doc_root(www: str, key: str) -> str:
    return os.path.join(www, "hosts", key)


def write_doc_host(www: str, key: str, docset: DocSet, pages: Sequence[str], robots: bool) -> None:
    """A doc-site host's root: links to its pages, the set's index as ``index.html``, its statics."""
    root = doc_root(www, key)
    for rel in pages:
        _link(os.path.join(docset.src, rel), os.path.join(root, rel))
    _link(os.path.join(docset.src, docset.index), os.path.join(root, "index.html"))
    for rel in docset.statics:
        _link(os.path.join(docset.src, rel), os.path.join(root, rel))
    if robots:
        _write(os.path.join(root, "robots.txt"), "User-agent: *\nDisallow: /search\n")


# nginx ------------------------------------------------------------------------------------------


def nginx_conf(tmp: str, www: str, by_profile: Dict[str, List[Tuple[str, int]]], ready: int, dead: int,
               captured: Dict[str, Captured]) -> str:
    """One nginx for every nginx origin: one ``server`` per profile listening on its origins."""
    htpasswd = os.path.join(tmp, "htpasswd")
    _write(htpasswd, servers.htpasswd_line("admin", "secret"))
    files = {"nginx-default/index.html": open("/usr/share/nginx/html/index.html", encoding="utf-8").read(),
             "hosting/index.html": HOSTING, "pages/parked.html": PARKED, "pages/waf.html": WAF,
             "pages/maint.html": MAINT, "spa/index.html": SPA_SHELL}
    for rel, text in files.items():
        _write(os.path.join(www, rel), text)
    maps, blocks = [], []
    for app, cap in captured.items():
        _write(os.path.join(www, "login", f"{app}.html"), cap.html)
        for name, text in cap.pages.items():
            _write(os.path.join(www, "login", f"{app}-{name}.html"), text)
        entries = []
        for i, (uri, (ext, body)) in enumerate(sorted(cap.assets.items())):
            _write(os.path.join(www, "assets", app, f"{i:04d}.{ext}"), body)
            entries.append(f'        "{uri}" "/assets/{app}/{i:04d}.{ext}";')
        maps.append(f"    map $request_uri $asset_{app} {{\n        default \"\";\n" + "\n".join(entries) + "\n    }")

    def block(profile: str, body: str) -> None:
        origins = by_profile.get(profile) or []
        if origins:
            root = "" if body.startswith("root ") else f"    root {www};\n"
            blocks.append(f"server {{  # {profile}\n{_listen(origins)}\n{root}"
                          + textwrap.indent(textwrap.dedent(body).strip(), "    ") + "\n}")

    internal = "".join(f"location ^~ /{d}/ {{ internal; }}\n" for d in ("pages", "login", "assets"))
    block("nginx-default", "root " + www + "/nginx-default;\nlocation / { try_files $uri $uri/ =404; }")
    block("hosting", "root " + www + "/hosting;\nssi on;\nlocation ~ /\\. { deny all; }\n"
          "location / { try_files $uri $uri/ =404; }")
    block("parked", internal + "ssi on;\nlocation / { rewrite ^ /pages/parked.html last; }")
    block("waf", internal + "ssi on;\nerror_page 403 /pages/waf.html;\nlocation / { return 403; }")
    block("maint-503", internal + "ssi on;\nerror_page 503 /pages/maint.html;\n"
          "location / { add_header Retry-After 1800 always; return 503; }")
    block("maint-200", internal + "ssi on;\nlocation / { rewrite ^ /pages/maint.html last; }")
    block("bad-gateway", f"location / {{ proxy_pass http://127.0.0.1:{dead}; }}")
    block("basic-auth", f'auth_basic "Restricted area";\nauth_basic_user_file {htpasswd};\n'
          "location / { try_files $uri =404; }")
    login_common = internal + "ssi on;\nlocation ~ /\\. { deny all; }\n" \
        "location ~ \\.php$ { default_type text/html; return 404 \"File not found.\\n\"; }\n"
    static = {"phpmyadmin": (PHPMYADMIN, ("js", "themes")), "roundcube": (ROUNDCUBE, ("skins", "program", "plugins"))}
    for app in ("phpmyadmin", "roundcube", "adminer"):
        if app not in captured:
            continue
        src, dirs = static.get(app, ("", ()))
        statics = "".join(f"location ^~ /{d}/ {{ root {src}; }}\n" for d in dirs)
        block(app, f"if ($asset_{app}) {{ rewrite ^ $asset_{app}? last; }}\n" + login_common + statics
              + f"location = / {{ rewrite ^ /login/{app}.html last; }}\n"
              + f"location = /index.php {{ rewrite ^ /login/{app}.html last; }}\n"
              + "location / { return 404; }")
    if "django" in captured:
        import django

        admin_static = os.path.join(os.path.dirname(django.__file__), "contrib", "admin", "static", "admin")
        block("django", internal + "ssi on;\nerror_page 404 /login/django-404.html;\n"
              f"location ^~ /static/admin/ {{ alias {admin_static}/; }}\n"
              "location = /admin/login/ { rewrite ^ /login/django.html last; }\n"
              "location = / { return 302 /admin/login/?next=/; }\n"
              "location ~ ^/admin/ { return 302 /admin/login/?next=$uri; }\n"
              "location / { return 404; }")
    block("docs", f"root {www}/hosts/${{server_addr}}_${{server_port}};\nlocation / {{ try_files $uri $uri/ =404; }}")
    block("spa", f"root {www}/spa;\nadd_header Cache-Control no-store;\n"
          f"location = /api/host.json {{ root {www}/spa-data/${{server_addr}}_${{server_port}}; }}\n"
          "location / { try_files $uri /index.html; }")
    block("pkgsite", f"root {www}/pkgsite;\nssi on;\n"
          "location /pkg/ { default_type text/html; try_files $uri.html =404; }\n"
          "location / { try_files $uri $uri/ =404; }")
    n_listen = sum(len(v) for v in by_profile.values()) + 1
    user = "user root;" if os.geteuid() == 0 else ""
    return f"""{user}
worker_processes 1;
worker_rlimit_nofile {n_listen + 8192};
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log error;
events {{ worker_connections {n_listen + 4096}; }}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    log_format fleet '$msec $server_addr:$server_port $status "$request_uri"';
    access_log {tmp}/access.log fleet;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    variables_hash_max_size 4096;
    map_hash_max_size 4096;
    map_hash_bucket_size 256;
{chr(10).join(maps)}
    server {{ listen 127.0.0.1:{ready}; location / {{ return 200 "ready\\n"; }} }}
{textwrap.indent(chr(10).join(blocks), "    ")}
}}
"""


@contextlib.contextmanager
def nginx_fleet(tmp: str, www: str, by_profile: Dict[str, List[Tuple[str, int]]], ready: int, dead: int,
                captured: Dict[str, Captured]) -> Iterator[str]:
    """nginx serving every nginx origin; yields its access log's path."""
    os.makedirs(tmp, exist_ok=True)
    conf = os.path.join(tmp, "nginx.conf")
    _write(conf, nginx_conf(tmp, www, by_profile, ready, dead, captured))
    argv = ["nginx", "-p", tmp, "-e", f"{tmp}/error.log", "-c", conf]
    with servers.app_server(argv, ready, os.path.join(tmp, "stdout.log"), "/", cwd=tmp):
        wait_origins([o for v in by_profile.values() for o in v])
        yield os.path.join(tmp, "access.log")


# Apache httpd ------------------------------------------------------------------------------------

_APACHE_MODULES = ("mpm_event", "authz_core", "authz_host", "dir", "mime", "unixd", "alias", "autoindex")


@contextlib.contextmanager
def apache_fleet(tmp: str, www: str, by_profile: Dict[str, List[Tuple[str, int]]], ready: int) -> Iterator[None]:
    """Apache httpd on every Apache origin: Debian's default page (the main server), the manual
    (a virtual host per doc-site origin) and directory listings (a virtual host per listing origin)."""
    os.makedirs(tmp, exist_ok=True)
    mods = "/usr/lib/apache2/modules"
    loads = "\n".join(f"LoadModule {m}_module {mods}/mod_{m}.so" for m in _APACHE_MODULES
                      if os.path.exists(f"{mods}/mod_{m}.so"))
    default_root = os.path.join(www, "apache-default")
    _write(os.path.join(default_root, "index.html"),
           open("/usr/share/apache2/default-site/index.html", encoding="utf-8").read())
    origins = [o for v in by_profile.values() for o in v]
    listens = "\n".join(f"Listen {a}:{p}" for a, p in origins)
    vhosts = "\n".join(f"<VirtualHost {a}:{p}>\n    DocumentRoot {doc_root(www, f'{a}_{p}')}\n</VirtualHost>"
                       for prof in ("docs-apache", "listing") for a, p in by_profile.get(prof, []))
    user = "User nobody\nGroup nogroup\n" if os.geteuid() == 0 else ""
    conf = f"""{loads}
ServerRoot {tmp}
{user}ServerName localhost
Listen 127.0.0.1:{ready}
{listens}
PidFile {tmp}/httpd.pid
DefaultRuntimeDir {tmp}
ErrorLog {tmp}/error.log
LogLevel error
TypesConfig /etc/mime.types
ServerTokens OS
ServerSignature On
DocumentRoot {default_root}
DirectoryIndex index.html
<Directory />
    Options FollowSymLinks
    AllowOverride None
    Require all denied
</Directory>
<Directory {www}>
    Options FollowSymLinks
    Require all granted
</Directory>
<Directory {www}/hosts>
    Options FollowSymLinks Indexes
</Directory>
IndexOptions FancyIndexing VersionSort HTMLTable NameWidth=* DescriptionWidth=* Charset=UTF-8
<FilesMatch "^\\.ht">
    Require all denied
</FilesMatch>
{vhosts}
"""
    path = os.path.join(tmp, "httpd.conf")
    _write(path, conf)
    for dirpath, _dirs, _names in os.walk(www):
        os.chmod(dirpath, 0o755)
    os.chmod(tmp, 0o755)
    with servers.app_server(["apache2", "-f", path, "-D", "FOREGROUND"], ready, os.path.join(tmp, "stdout.log"), "/",
                            cwd=tmp):
        wait_origins(origins)
        yield None


# lighttpd ----------------------------------------------------------------------------------------


@contextlib.contextmanager
def lighttpd_fleet(tmp: str, www: str, by_profile: Dict[str, List[Tuple[str, int]]], ready: int) -> Iterator[None]:
    """lighttpd on every lighttpd origin: Debian's placeholder page, or git's documentation (a
    document root per doc-site origin)."""
    os.makedirs(tmp, exist_ok=True)
    default_root = os.path.join(www, "lighttpd-default")
    _write(os.path.join(default_root, "index.html"), open("/usr/share/lighttpd/index.html", encoding="utf-8").read())
    sockets = []
    for prof, origins in by_profile.items():
        for a, p in origins:
            inner = f'server.document-root = "{doc_root(www, f"{a}_{p}")}"' if prof == "docs-git" else ""
            sockets.append(f'$SERVER["socket"] == "{a}:{p}" {{ {inner} }}')
    conf = f"""server.modules = ( "mod_indexfile", "mod_access", "mod_alias" )
server.document-root = "{default_root}"
server.bind = "127.0.0.1"
server.port = {ready}
server.errorlog = "{tmp}/error.log"
server.pid-file = "{tmp}/lighttpd.pid"
server.upload-dirs = ( "{tmp}" )
server.max-fds = 16384
index-file.names = ( "index.html" )
mimetype.assign = ( ".html" => "text/html", ".txt" => "text/plain", ".css" => "text/css", ".js" => "text/javascript",
                    ".png" => "image/png", ".svg" => "image/svg+xml", ".gif" => "image/gif", ".jpg" => "image/jpeg" )
{chr(10).join(sockets)}
"""
    path = os.path.join(tmp, "lighttpd.conf")
    _write(path, conf)
    with servers.app_server(["lighttpd", "-D", "-f", path], ready, os.path.join(tmp, "stdout.log"), "/", cwd=tmp):
        wait_origins([o for v in by_profile.values() for o in v])
        yield None


# Tomcat ------------------------------------------------------------------------------------------


def have_tomcat() -> bool:
    return os.path.exists(os.path.join(TOMCAT_HOME, "bin", "catalina.sh")) and os.path.isdir(TOMCAT_ROOT)


def ensure_tomcat() -> bool:
    """Install Debian's tomcat10 and tomcat10-admin if missing (as root); whether Tomcat is there."""
    if not have_tomcat() and os.geteuid() == 0 and shutil.which("apt-get"):
        print("installing tomcat10 tomcat10-admin with apt-get", flush=True)
        subprocess.run(["flock", "/tmp/apt.lock", "apt-get", "install", "-y", "-qq", "--no-install-recommends",
                        "tomcat10", "tomcat10-admin"], check=False, stdout=subprocess.DEVNULL,
                       env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"), timeout=900)
    return have_tomcat()


@contextlib.contextmanager
def tomcat_fleet(tmp: str, origins: Sequence[Tuple[str, int]], ready: int) -> Iterator[None]:
    """Debian's Tomcat 10 (its ROOT page and the manager application, whose users file is empty)
    with one connector per origin, in a CATALINA_BASE of its own."""
    base = os.path.join(tmp, "base")
    for sub in ("conf/Catalina/localhost", "logs", "work", "temp", "webapps"):
        os.makedirs(os.path.join(base, sub), exist_ok=True)
    for name in ("web.xml", "context.xml", "tomcat-users.xml", "logging.properties", "catalina.properties"):
        shutil.copy(os.path.join("/etc/tomcat10", name), os.path.join(base, "conf", name))
    if os.path.exists(TOMCAT_MANAGER):
        shutil.copy(TOMCAT_MANAGER, os.path.join(base, "conf", "Catalina", "localhost"))
    shutil.copytree(TOMCAT_ROOT, os.path.join(base, "webapps", "ROOT"))
    connectors = "\n".join(f'    <Connector executor="pool" address="{a}" port="{p}" protocol="HTTP/1.1" '
                           f'connectionTimeout="20000"/>' for a, p in [("127.0.0.1", ready), *origins])
    _write(os.path.join(base, "conf", "server.xml"), f"""<?xml version="1.0" encoding="UTF-8"?>
<Server port="-1" shutdown="SHUTDOWN">
  <GlobalNamingResources>
    <Resource name="UserDatabase" auth="Container" type="org.apache.catalina.UserDatabase"
              factory="org.apache.catalina.users.MemoryUserDatabaseFactory" pathname="conf/tomcat-users.xml"/>
  </GlobalNamingResources>
  <Service name="Catalina">
    <Executor name="pool" namePrefix="exec-" maxThreads="24" minSpareThreads="2"/>
{connectors}
    <Engine name="Catalina" defaultHost="localhost">
      <Realm className="org.apache.catalina.realm.LockOutRealm">
        <Realm className="org.apache.catalina.realm.UserDatabaseRealm" resourceName="UserDatabase"/>
      </Realm>
      <Host name="localhost" appBase="webapps" unpackWARs="false" autoDeploy="false"/>
    </Engine>
  </Service>
</Server>
""")
    env = dict(os.environ, CATALINA_HOME=TOMCAT_HOME, CATALINA_BASE=base, CATALINA_TMPDIR=os.path.join(base, "temp"),
               JAVA_OPTS="-Xmx256m -XX:TieredStopAtLevel=1")
    argv = [os.path.join(TOMCAT_HOME, "bin", "catalina.sh"), "run"]
    with servers.app_server(argv, ready, os.path.join(tmp, "catalina.log"), "/", env=env, cwd=tmp, timeout=120):
        wait_origins(origins)
        _get(f"http://{origins[0][0]}:{origins[0][1]}/manager/html")  # compile the manager's 401 page once
        yield None


# Verdaccio ---------------------------------------------------------------------------------------


@contextlib.contextmanager
def verdaccio_pair(tmp: str, packages: int) -> Iterator[Tuple[str, str, List[str]]]:
    """Two Verdaccio registries on one storage (``bench/app_spa.py``) with ``packages`` packages
    published; yields both base URLs and the packages' npm names."""
    import app_spa

    exe = app_spa.ensure_packages()
    os.makedirs(tmp, exist_ok=True)
    config = os.path.join(tmp, "config.yaml")
    _write(config, app_spa.CONFIG.format(storage=os.path.join(tmp, "storage"), htpasswd=os.path.join(tmp, "htpasswd")))
    app_spa.PACKAGES = packages
    recs = app_spa.choose()

    def serve(name: str):
        port = servers.free_port()
        return servers.app_server([exe, "--config", config, "--listen", f"127.0.0.1:{port}"], port,
                                  os.path.join(tmp, f"verdaccio-{name}.log"), "/-/ping", cwd=tmp)

    with contextlib.ExitStack() as stack:
        a = stack.enter_context(serve("a"))
        reg = app_spa.Registry(a)
        reg.add_user()
        published = app_spa.publish_all(reg, recs)
        app_spa.wait_for_list(os.path.join(tmp, "storage", ".verdaccio-db.json"), len(published))
        b = stack.enter_context(serve("b"))
        yield a, b, [name for name, _versions in published]


def write_spa_data(www: str, key: str, data: dict) -> None:
    _write(os.path.join(www, "spa-data", key, "api", "host.json"), json.dumps(data, indent=1))
