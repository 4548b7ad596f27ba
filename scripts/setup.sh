#!/usr/bin/env bash
# Install what scrapy-websim needs on a Debian/Ubuntu machine: Chromium (never downloads a browser:
# Debian's package, or whatever Chromium/Chrome is already on the machine), then the package.
#   bash scripts/setup.sh          # runtime: Chromium + the package
#   bash scripts/setup.sh test     # also the test servers (nginx, Apache, lighttpd, Redis, tinyproxy), Debian documentation packages and test extras
#   bash scripts/setup.sh bench    # what `test` installs, plus the documentation bench/platforms.py crawls and the applications of bench/dokuwiki.py and bench/app_*.py (no test needs them)
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-run}"

need_apt=()
have_browser() {
  for b in chromium chromium-browser google-chrome google-chrome-stable; do command -v "$b" >/dev/null 2>&1 && return 0; done
  ls "${PLAYWRIGHT_BROWSERS_PATH:-$HOME/.cache/ms-playwright}"/chromium-*/chrome-linux*/chrome >/dev/null 2>&1
}
have_browser || need_apt+=(chromium)
if [ "$what" = test ] || [ "$what" = bench ]; then
  command -v nginx >/dev/null 2>&1 || need_apt+=(nginx-light)
  command -v apache2 >/dev/null 2>&1 || [ -x /usr/sbin/apache2 ] || need_apt+=(apache2)
  [ -d /usr/share/doc/python3.11/html ] || [ -d /usr/share/doc/python3-doc/html ] || need_apt+=(python3-doc)
  command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || need_apt+=(redis-server)
  command -v tinyproxy >/dev/null 2>&1 || need_apt+=(tinyproxy)   # the proxy test (tests/test_tls_proxy_e2e.py)
  command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)       # its self-signed certificate
  # a third real web server, and real Chinese/Japanese pages for the rule keyword lists
  command -v lighttpd >/dev/null 2>&1 || [ -x /usr/sbin/lighttpd ] || need_apt+=(lighttpd)
  [ -f /usr/share/debian-reference/ch04.zh-cn.html ] || need_apt+=(debian-reference-zh-cn)
  [ -f /usr/share/debian-reference/ch04.ja.html ] || need_apt+=(debian-reference-ja)
  [ -d /usr/share/doc/maint-guide-ja/html ] || need_apt+=(maint-guide-ja)
  # tests/test_content_e2e.py builds its multi-template site from these documentation packages
  [ -d /usr/share/doc/postgresql-doc-15/html ] || need_apt+=(postgresql-doc-15)
  [ -f /usr/share/doc/git-doc/git-fetch.html ] || need_apt+=(git-doc)
fi
if [ "$what" = bench ]; then
  # bench/platforms.py: rustdoc, Node's generator, javadoc, Doxygen; docsify and docute come from npm at run time,
  # MkDocs (its mkdocs set) from the test extra installed below
  [ -d /usr/share/doc/rust-doc/html ] || [ -d "$HOME/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/share/doc/rust/html" ] || need_apt+=(rust-doc)
  [ -d /usr/share/doc/nodejs/api ] || need_apt+=(nodejs-doc)
  [ -d /usr/share/doc/openjdk-17-jre-headless/api/java.base ] || need_apt+=(openjdk-17-doc)
  [ -d /usr/share/doc/libstdc++-12-doc/libstdc++/user ] || need_apt+=(libstdc++-12-doc)
  command -v npm >/dev/null 2>&1 || need_apt+=(npm)
  # bench/dokuwiki.py: a real DokuWiki served by PHP's built-in server
  [ -f /usr/share/dokuwiki/doku.php ] || need_apt+=(dokuwiki)
  command -v php >/dev/null 2>&1 || need_apt+=(php-cli php-xml php-mbstring php-intl)
  # bench/app_blog.py: Debian's WordPress on a MariaDB of its own; bench/app_cgit.py: cgit under lighttpd
  [ -f /usr/share/wordpress/wp-load.php ] || need_apt+=(wordpress)
  [ -d /usr/share/wordpress/wp-content/themes/twentytwentythree ] || need_apt+=(wordpress-theme-twentytwentythree)
  command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || need_apt+=(mariadb-server)
  php -m 2>/dev/null | grep -qx mysqli || need_apt+=(php-mysql)
  [ -x /usr/lib/cgit/cgit.cgi ] || need_apt+=(cgit)
  # bench/app_gitweb.py: git's own gitweb (a Perl CGI) under lighttpd
  [ -f /usr/share/gitweb/gitweb.cgi ] || need_apt+=(gitweb)
  # bench/app_redmine.py: Debian's Redmine on SQLite (rails server); bench/app_hgweb.py: Mercurial's hgweb
  [ -f /usr/share/redmine/config/application.rb ] || need_apt+=(redmine)
  [ -d /usr/share/doc/redmine-sqlite ] || need_apt+=(redmine-sqlite)
  command -v git >/dev/null 2>&1 || need_apt+=(git)
  command -v hg >/dev/null 2>&1 || need_apt+=(mercurial)
  # bench/app_trac.py: git history in Trac's repository browser (Trac itself goes into a virtual environment below);
  # bench/app_fossil.py: Fossil's own server
  command -v fossil >/dev/null 2>&1 || need_apt+=(fossil)
  # bench/app_logins.py: Roundcube (on SQLite), phpMyAdmin and Adminer served by PHP's built-in server;
  # JupyterLab and Datasette (bench/app_datasette.py) go into the benches' virtual environment below,
  # Verdaccio (bench/app_spa.py) comes from npm at run time
  [ -d /var/lib/roundcube/public_html ] || need_apt+=(roundcube-core roundcube-sqlite3 dbconfig-no-thanks)
  [ -f /usr/share/phpmyadmin/index.php ] || need_apt+=(phpmyadmin dbconfig-no-thanks)
  [ -f /usr/share/adminer/adminer.php ] || need_apt+=(adminer)
  php -m 2>/dev/null | grep -qx pdo_sqlite || need_apt+=(php-sqlite3)
  # bench/diff.py: phpMyAdmin's login page (per-request tokens, hidden inputs without a cookie) on two ports (above)
  # bench/app_mhonarc.py: a MHonArc list archive under nginx; bench/app_phpmyadmin.py: phpMyAdmin (above) over a
  # MariaDB of its own (above), its tables from iso-codes
  command -v mhonarc >/dev/null 2>&1 || need_apt+=(mhonarc)
  command -v nginx >/dev/null 2>&1 || need_apt+=(nginx)
  [ -f /usr/share/iso-codes/json/iso_3166-1.json ] || need_apt+=(iso-codes)
  # bench/app_nagios.py: Nagios 4's CGIs (under lighttpd, above) over a Nagios of its own, checked by the basic plugins
  [ -x /usr/sbin/nagios4 ] || need_apt+=(nagios4-core)
  [ -x /usr/lib/cgi-bin/nagios4/status.cgi ] || need_apt+=(nagios4-cgi)
  [ -x /usr/lib/nagios/plugins/check_http ] || need_apt+=(monitoring-plugins-basic)
  # bench/fleetscale.py: Tomcat 10 and its manager application, the Apache manual on Apache's doc hosts
  [ -f /usr/share/tomcat10/bin/catalina.sh ] || need_apt+=(tomcat10)
  [ -d /usr/share/tomcat10-admin/manager ] || need_apt+=(tomcat10-admin)
  [ -d /usr/share/doc/apache2-doc/manual ] || need_apt+=(apache2-doc)
  # bench/app_ikiwiki.py: ikiwiki, the C compiler that builds its CGI wrapper, the Perl modules its CGI and its
  # git back end load (Apache above serves it)
  command -v ikiwiki >/dev/null 2>&1 || need_apt+=(ikiwiki)
  command -v cc >/dev/null 2>&1 || need_apt+=(gcc libc6-dev)
  [ -f /usr/share/perl5/CGI.pm ] || need_apt+=(libcgi-pm-perl)
  [ -f /usr/share/perl5/CGI/FormBuilder.pm ] || need_apt+=(libcgi-formbuilder-perl)
  [ -f /usr/share/perl5/CGI/Session.pm ] || need_apt+=(libcgi-session-perl)
  [ -f /usr/share/perl5/Date/Parse.pm ] || need_apt+=(libtimedate-perl)
fi
if [ "${#need_apt[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing ${need_apt[*]} with apt-get"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
    # apache2, nginx, redis-server, tinyproxy, mariadb, tomcat10 and nagios4 (and exim4, which its mail client pulls in) start
    # system services on install; the tests and benches start their own
    (service apache2 stop; service nginx stop; service redis-server stop; service tinyproxy stop; service lighttpd stop; service mariadb stop; service tomcat10 stop; service nagios4 stop; service exim4 stop) >/dev/null 2>&1 || true
  else
    echo "setup: missing ${need_apt[*]}." >&2
    echo "  Install them with your package manager (Debian/Ubuntu: sudo apt-get install ${need_apt[*]})," >&2
    echo "  or point WEBSIM_BROWSER_EXECUTABLE at a Chromium or Google Chrome binary, then run this again." >&2
    have_browser || exit 1
  fi
fi

PY="${PYTHON:-python3}"
"$PY" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
if [ "$what" = test ] || [ "$what" = bench ]; then
  "$PY" -m pip install -q -e '.[test]'
  if [ "$what" = bench ]; then
    # bench/app_trac.py: Trac (its git plugin ships with it) in a virtual environment of its own, where the
    # bench looks for it (Trac takes any module named multipart, and python-multipart's breaks every request)
    trac_venv="${TRAC_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/scrapy-websim/trac-venv}"
    [ -x "$trac_venv/bin/python" ] || "$PY" -m venv "$trac_venv"
    "$trac_venv/bin/python" -m pip install -q 'Trac>=1.6'
    # bench/app_spirit.py: the Spirit forum (it pins its Django) in a virtual environment of its own
    spirit_venv="${TMPDIR:-/tmp}/websim-bench-spirit"
    [ -x "$spirit_venv/bin/pip" ] || "$PY" -m venv "$spirit_venv"
    "$spirit_venv/bin/pip" install -q django-spirit==0.14.3
    # bench/app_wagtail.py, bench/app_devpi.py, bench/app_helpdesk.py: Wagtail, devpi (server and web) and
    # django-helpdesk, each in a virtual environment of its own (their Django or Pyramid apart from the others')
    for app in "wagtail:wagtail==8.0.1" "devpi:devpi-server==6.20.3 devpi-web==5.1.1" "helpdesk:django-helpdesk==2.6.1"; do
      app_venv="${TMPDIR:-/tmp}/websim-bench-${app%%:*}"
      [ -x "$app_venv/bin/pip" ] || "$PY" -m venv "$app_venv"
      # shellcheck disable=SC2086
      "$app_venv/bin/pip" install -q ${app#*:}
    done
  fi
else
  "$PY" -m pip install -q -e .
fi
if [ "$what" = bench ]; then
  # the application benches' own virtual environment (bench/app_datasette.py, bench/app_logins.py,
  # bench/app_roundup.py), not the project's
  venv="${TMPDIR:-/tmp}/websim-bench-venv"
  [ -x "$venv/bin/pip" ] || "$PY" -m venv "$venv"
  "$venv/bin/pip" install -q datasette==0.65.5 sqlite-web==0.8.2 jupyterlab==4.6.6 roundup==2.6.0
fi
echo "setup: done ($("$PY" -c 'import scrapy_websim; print("scrapy-websim", scrapy_websim.__version__)'))"
