"""Clusters and labels of a crawl of a real Nagios 4 web interface over a monitored fleet of its own.

    python bench/app_nagios.py [--check] [-v] [--keep DIR]
    python bench/appbench.py DIR [--refeature]   # re-score a kept crawl with the current code

Held aside: run once the design is settled, its first figures reported as they came.

Installs Debian's ``nagios4-core``, ``nagios4-cgi`` (4.4.6), ``monitoring-plugins-basic`` and
lighttpd if missing (``scripts/setup.sh bench`` does too) and stops the system services they start
(Nagios, and exim4, which comes with Nagios's mail client).
Nagios runs in the foreground as a child process (its own process group) on a configuration of its
own: 42 hosts in seven hostgroups (web, database, mail, DNS, storage, application, office), each on
an address of its own, 127.0.0.10 to 127.0.0.51, each with four services, all checked once at start
by real plugins (forced through Nagios's external command file; the next checks are an hour away):

- the host check: ``check_tcp`` on the address and a port where a lighttpd of the bench (the
  "monitored server") listens on every host's address but four: those hosts are DOWN
  ("Connection refused");
- ``PING``: ``check_ping`` to the address (loopback: OK, the round trip differs per check);
- ``Disk /`` and ``Load``: ``check_dummy`` with a state and a line per host (free space, load
  averages: a few WARNING and CRITICAL), and so are ``DNS``, ``RAID`` (one degraded array) and
  ``Uptime`` (one switch waiting for firmware);
- ``HTTP`` (web hosts): ``check_http`` of the host's site on the monitored server (two sites
  missing: 404, WARNING); ``App status`` (application hosts): ``check_http`` of a readiness file
  that must say "ready" (two draining: CRITICAL); ``MySQL`` and ``SMTP``: ``check_tcp``.

The CGIs (``/usr/lib/cgi-bin/nagios4``) are served by two lighttpd processes on two ports of
127.0.0.1 (a fleet of two over one Nagios) as Debian's Apache configuration lays them out:
``/nagios4/cgi-bin/`` and its alias ``/cgi-bin/nagios4/``, the style sheets and images. The CGI
configuration switches authentication off (``use_authentication=0``, every page "Logged in as
nagiosadmin") and the "Page Tour" (its box embeds a YouTube player in every page: no page may
reach past 127.0.0.1); as Debian's Apache configuration does, the command CGI ``cmd.cgi`` asks
for HTTP digest authentication. Every page prints times that change between requests ("Last Updated", check
times, durations): noise a copy must survive.

The truth (``{url: (group, label)}``, content label ``None``; about 500 URLs, about 370 groups):

- one group per host's page (``extinfo.cgi?type=1&host=H``) and per service's page
  (``extinfo.cgi?type=2&host=H&service=S``): pages of one template that differ by a host name,
  a service name and a status line, 210 of them; per host's services list (``status.cgi?host=H``,
  every other host); per hostgroup view (``status.cgi?hostgroup=G`` in the styles overview,
  detail, summary, grid and host detail, and the same for ``all`` but its service detail) and per
  hostgroup's page (``extinfo.cgi?type=5``); the service list of all hosts (``status.cgi``, its
  first 100 rows), the service and host problems; the tactical overview, the process and
  performance information, the scheduling queue; the configuration listings (hosts, services,
  hostgroups, contacts, contact groups, time periods, commands) and one host's configuration
  (``config.cgi?type=hosts&expand=H``, every other chosen host); for the hosts with a problem and
  a few without, their availability report or trends and the alert histogram of some; the alert
  history of each host with a problem and the notifications of every other one; the history and the
  notifications of all hosts, the notifications of a contact, the event log, the status map and
  the event summary's report form;
- the variants, each in its page's group: the second port; the ``/cgi-bin/nagios4/`` alias;
  the parameters in another order (``extinfo.cgi?host=H&type=1``, ``?service=S&host=H&type=2``);
  a service name spelled ``Disk%20/`` rather than ``Disk+%2F``; ``utm_source``; the defaults
  made explicit or left out (``status.cgi`` for ``status.cgi?host=all``, ``limit=100``, which
  changes only the links' query strings; ``status.cgi?hostgroup=G`` for its overview style;
  ``extinfo.cgi`` for ``extinfo.cgi?type=0``);
- special pages, one group per template and status, whatever name the message echoes: ``E3``:
  extinfo.cgi's answer for a host, service or hostgroup it does not know (200, "It appears as
  though you do not have permission to view information for this host... If you believe this is
  an error, ...": Nagios answers an unknown name with its authorisation message, a soft 404, not
  a WAF's wall), status.cgi's overview of a hostgroup it does not know (200, "Sorry, but host
  group 'x' doesn't seem to exist..." under the status frame, its totals all zero), lighttpd's
  404 (an unknown CGI or file) and its 403 (a directory without an index: ``/nagios4/`` itself,
  whose ``index.php`` this bench does not run, and the images and style sheets); ``L1``: the
  command CGI's 401 with ``WWW-Authenticate: Digest`` (every ``cmd.cgi`` link: the forms to
  re-schedule a check, acknowledge a problem, schedule a downtime).

Left out as arguable: what the CGIs answer with an empty result and no error words for a name they
do not know (``status.cgi?host=x``: "Results 1 - 0 of 0 Matching Services"; the history,
notifications, availability and trends of an unknown host: a report with nothing in it); the
alert history of a host without alerts (the process's start and nothing else, as for an unknown
host: the same empty report with another name in its heading); the grid and summary styles of an
unknown hostgroup (the same sentence under other headings and other links: one template or
three?); the empty lists (comments, downtimes, network outages: an answer
or a thin page?); ``config.cgi`` without a type or with an unknown one (the form to choose one: the
same page, or a soft 404?); ``status.cgi?hostgroup=all&style=detail`` (the list of
``status.cgi?host=all`` under another heading); an availability report with its log entries
(``show_log_entries``: the report plus a table); the front page (``index.php``, a PHP frame set that
this bench does not serve); the JSON, WML and VRML CGIs and the images the trends, histogram and
map CGIs draw (not HTML pages). Setup takes well under a minute; ``--check`` fetches every URL once
(plain HTTP, no browser): statuses per label, content groups whose pages differ in more than times,
groups that show the same text, the titles of the special pages. Last line (see
``bench/appbench.py``):

    set=nagios urls=N groups=G dup_share=D missing=M precision=P recall=R f1=F false_pairs=K
    missed_pairs=K lost=L rules=right/special (pct) content_as_junk=J
"""
from __future__ import annotations

import argparse
import contextlib
import grp
import hashlib
import os
import pwd
import random
import re
import signal
import subprocess
import sys
import time
import urllib.parse
from typing import Dict, Iterator, List, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import appbench  # noqa: E402  (bench/appbench.py)

from scrapy_websim.testing import servers  # noqa: E402

NAME = "nagios"
NAGIOS = "/usr/sbin/nagios4"
CGI_BIN = "/usr/lib/cgi-bin/nagios4"
HTDOCS = "/usr/share/nagios4/htdocs"
PLUGINS = "/usr/lib/nagios/plugins"
PACKAGES = ("nagios4-core", "nagios4-cgi", "monitoring-plugins-basic", "lighttpd")

#: hostgroup -> (alias, its hosts); each host gets an address 127.0.0.N of its own
GROUPS: Tuple[Tuple[str, str, Tuple[str, ...]], ...] = (
    ("web", "Web servers", ("web-fra-01", "web-fra-02", "web-fra-03", "web-ams-01", "web-ams-02", "web-lon-01",
                            "web-lon-02", "web-par-01")),
    ("db", "Database servers", ("db-fra-01", "db-fra-02", "db-ams-01", "db-lon-01", "db-lon-02", "db-par-01")),
    ("mail", "Mail relays", ("mx1", "mx2", "mx3", "smtp-out-01", "smtp-out-02")),
    ("dns", "Name servers", ("ns1", "ns2", "ns3", "ns4")),
    ("storage", "Storage and backup", ("nas-fra-01", "nas-fra-02", "backup-01", "backup-02", "ceph-01", "ceph-02")),
    ("app", "Application servers", ("app-01", "app-02", "app-03", "app-04", "app-05", "app-06", "app-07", "app-08")),
    ("office", "Office network", ("printer-hq", "switch-core-01", "switch-core-02", "ap-floor-1", "ap-floor-2")),
)
#: hosts whose address nothing answers on (their host check fails: DOWN, their port checks CRITICAL)
DOWN = ("web-par-01", "db-lon-02", "backup-02", "ap-floor-2")
#: web hosts whose site is missing (check_http: 404, WARNING) and application hosts that are draining
#: (check_http finds no "ready": CRITICAL)
NO_SITE = ("web-lon-02", "web-ams-02")
DRAINING = ("app-04", "app-07")
#: the role-specific fourth service of each hostgroup
ROLE_SERVICE = {"web": "HTTP", "db": "MySQL", "mail": "SMTP", "dns": "DNS", "storage": "RAID", "app": "App status",
                "office": "Uptime"}
SERVICES = ("PING", "Disk /", "Load")


def hosts() -> List[Tuple[str, str, str]]:
    """(host name, hostgroup, address) of every host."""
    out = []
    n = 10
    for group, _, names in GROUPS:
        for name in names:
            out.append((name, group, f"127.0.0.{n}"))
            n += 1
    return out


def ensure_packages() -> None:
    have = (os.path.exists(NAGIOS) and os.path.exists(f"{CGI_BIN}/status.cgi")
            and all(os.path.exists(f"{PLUGINS}/{p}") for p in ("check_ping", "check_tcp", "check_http", "check_dummy"))
            and servers.have("/usr/sbin/lighttpd"))
    if not have:
        print("installing " + " ".join(PACKAGES), flush=True)
        subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *PACKAGES], check=True,
                       stdout=subprocess.DEVNULL, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    # the packages start (or would start) Nagios, Apache, lighttpd and the mail server that bsd-mailx pulls in
    # (exim4) as system services: the bench runs its own Nagios and lighttpd, and needs no mail server
    for service in ("nagios4", "apache2", "lighttpd", "exim4"):
        subprocess.run(["service", service, "stop"], capture_output=True, check=False)


# --- the monitored fleet and Nagios's configuration ------------------------------------------------

def dummy_results(seed: int = 11) -> Dict[Tuple[str, str], Tuple[int, str]]:
    """The state and output check_dummy reports for each (host, service) it checks: disk space, load,
    and the role checks that need no network (DNS, RAID, uptime); a few warnings and criticals."""
    rnd = random.Random(seed)
    out: Dict[Tuple[str, str], Tuple[int, str]] = {}
    for k, (host, group, _) in enumerate(hosts()):
        size = rnd.choice((20480, 40960, 102400, 204800))
        pct = {5: 11, 17: 3, 29: 14, 33: 2}.get(k, rnd.randint(22, 81))
        free = size * pct // 100
        state = 2 if pct < 5 else 1 if pct < 15 else 0
        out[(host, "Disk /")] = (state, f"free space: / {free} MiB ({pct}% inode={rnd.randint(70, 99)}%)")
        loads = [round(rnd.uniform(0.05, 2.5), 2) for _ in range(3)]
        if k in (8, 21, 37):
            loads = [round(x + 9.0, 2) for x in loads]
        state = 2 if loads[0] > 10 else 1 if loads[0] > 6 else 0
        out[(host, "Load")] = (state, "load average: " + ", ".join(f"{x:.2f}" for x in loads))
        if group == "dns":
            out[(host, "DNS")] = (0, f"0.0{rnd.randint(10, 99)} seconds response time. "
                                     f"example.org returns 192.0.2.{rnd.randint(2, 250)}")
        elif group == "storage":
            disks = rnd.choice((4, 6, 8, 12))
            out[(host, "RAID")] = ((2, f"/dev/md0 degraded: {disks - 1}/{disks} disks, sdc failed")
                                   if host == "nas-fra-02" else (0, f"/dev/md0 clean: {disks}/{disks} disks"))
        elif group == "office":
            days = rnd.randint(2, 400)
            out[(host, "Uptime")] = ((1, f"uptime {days} days, firmware update pending")
                                     if host == "switch-core-02" else (0, f"uptime {days} days"))
    return out


def _define(kind: str, **fields: object) -> str:
    return f"define {kind} {{\n" + "".join(f"    {k} {v}\n" for k, v in fields.items()) + "}\n"


def objects_cfg(port: int) -> str:
    """Nagios's object configuration: the fleet's hosts (checked by check_tcp on their address, the
    monitored server's ``port``), four services each, hostgroups, a contact, the commands."""
    plugins = PLUGINS
    parts = [
        _define("timeperiod", timeperiod_name="24x7", alias="24 Hours A Day, 7 Days A Week",
                **{d: "00:00-24:00" for d in ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday",
                                             "saturday")}),
        _define("timeperiod", timeperiod_name="workhours", alias="Normal Work Hours",
                **{d: "09:00-17:00" for d in ("monday", "tuesday", "wednesday", "thursday", "friday")}),
        _define("command", command_name="check-host-alive",
                command_line=f"{plugins}/check_tcp -H $HOSTADDRESS$ -p {port} -t 5"),
        _define("command", command_name="check_ping",
                command_line=f"{plugins}/check_ping -H $HOSTADDRESS$ -w 3000.0,80% -c 5000.0,100% -p 1"),
        _define("command", command_name="check_tcp",
                command_line=f"{plugins}/check_tcp -H $HOSTADDRESS$ -p {port} -t 5"),
        _define("command", command_name="check_http_site",
                command_line=f"{plugins}/check_http -H $HOSTADDRESS$ -p {port} -u /sites/$HOSTNAME$/ -t 5"),
        _define("command", command_name="check_http_ready",
                command_line=f"{plugins}/check_http -H $HOSTADDRESS$ -p {port} -u /ready/$HOSTNAME$.txt -s ready -t 5"),
        _define("command", command_name="check_dummy", command_line=f"{plugins}/check_dummy $ARG1$ \"$ARG2$\""),
        _define("command", command_name="notify-by-log", command_line="/bin/true"),
        _define("contact", contact_name="ops", alias="Operations on call", email="ops@example.org",
                host_notification_period="24x7", service_notification_period="24x7",
                host_notification_options="d,u,r", service_notification_options="w,u,c,r",
                host_notification_commands="notify-by-log", service_notification_commands="notify-by-log"),
        _define("contact", contact_name="dba", alias="Database administrators", email="dba@example.org",
                host_notification_period="workhours", service_notification_period="workhours",
                host_notification_options="d,r", service_notification_options="c,r",
                host_notification_commands="notify-by-log", service_notification_commands="notify-by-log"),
        _define("contactgroup", contactgroup_name="admins", alias="Nagios administrators", members="ops,dba"),
        _define("host", name="fleet-host", register=0, check_command="check-host-alive", max_check_attempts=1,
                check_interval=60, retry_interval=1, check_period="24x7", notification_period="24x7",
                notification_interval=0, contact_groups="admins", active_checks_enabled=1),
        _define("service", name="fleet-service", register=0, max_check_attempts=1, check_interval=60,
                retry_interval=1, check_period="24x7", notification_period="24x7", notification_interval=0,
                contact_groups="admins", active_checks_enabled=1),
    ]
    members: Dict[str, List[str]] = {}
    for host, group, address in hosts():
        members.setdefault(group, []).append(host)
        alias = dict((g, a) for g, a, _ in GROUPS)[group]
        parts.append(_define("host", use="fleet-host", host_name=host, alias=f"{host} ({alias.lower()})",
                             address=address))
    dummy = dummy_results()
    for host, group, _ in hosts():
        checks = {"PING": "check_ping"}
        for service in ("Disk /", "Load"):
            state, text = dummy[(host, service)]
            checks[service] = f"check_dummy!{state}!{text}"
        role = ROLE_SERVICE[group]
        if (host, role) in dummy:
            state, text = dummy[(host, role)]
            checks[role] = f"check_dummy!{state}!{text}"
        else:
            checks[role] = {"web": "check_http_site", "app": "check_http_ready"}.get(group, "check_tcp")
        for service, command in checks.items():
            parts.append(_define("service", use="fleet-service", host_name=host, service_description=service,
                                 check_command=command))
    for group, alias, _ in GROUPS:
        parts.append(_define("hostgroup", hostgroup_name=group, alias=alias, members=",".join(members[group])))
    return "\n".join(parts)


def site_files() -> Dict[str, str]:
    """The monitored server's files: a page per web host (but those with no site) and a readiness
    file per application host ("ready", or "draining")."""
    files = {}
    for host, group, _ in hosts():
        if group == "web" and host not in NO_SITE:
            files[f"sites/{host}/index.html"] = f"<html><title>{host}</title><body>{host} is serving</body></html>\n"
        if group == "app":
            files[f"ready/{host}.txt"] = "draining\n" if host in DRAINING else "ready\n"
    return files


def setup(tmp: str, port: int) -> Dict[str, str]:
    """Nagios's main, object and CGI configuration in ``tmp``; their paths."""
    os.makedirs(os.path.join(tmp, "checkresults"), exist_ok=True)
    os.makedirs(os.path.join(tmp, "archives"), exist_ok=True)
    paths = {k: os.path.join(tmp, f) for k, f in (("main", "nagios.cfg"), ("objects", "objects.cfg"),
                                                  ("cgi", "cgi.cfg"), ("cmd", "nagios.cmd"),
                                                  ("status", "status.dat"), ("log", "nagios.log"))}
    for stale in ("cmd", "status", "log"):  # a kept directory's last run: Nagios starts afresh
        with contextlib.suppress(FileNotFoundError):
            os.remove(paths[stale])
    with open(paths["objects"], "w", encoding="utf-8") as fh:
        fh.write(objects_cfg(port))
    main = {
        "log_file": paths["log"], "cfg_file": paths["objects"],
        "object_cache_file": f"{tmp}/objects.cache", "precached_object_file": f"{tmp}/objects.precache",
        "status_file": paths["status"], "status_update_interval": 2,
        # Nagios started by root drops to this user: the bench's own, who can write the bench's directory
        "nagios_user": pwd.getpwuid(os.getuid()).pw_name, "nagios_group": grp.getgrgid(os.getgid()).gr_name,
        "check_external_commands": 1, "command_file": paths["cmd"], "lock_file": f"{tmp}/nagios.lock",
        "temp_file": f"{tmp}/nagios.tmp", "temp_path": tmp, "log_archive_path": f"{tmp}/archives",
        "check_result_path": f"{tmp}/checkresults", "query_socket": f"{tmp}/nagios.qh",
        "retain_state_information": 0, "use_syslog": 0, "log_initial_states": 1, "enable_notifications": 1,
        "date_format": "iso8601", "illegal_macro_output_chars": "`~$&|'\"<>",
        "check_for_updates": 0,
    }
    with open(paths["main"], "w", encoding="utf-8") as fh:
        fh.write("".join(f"{k}={v}\n" for k, v in main.items()))
    cgi = {
        "main_config_file": paths["main"], "physical_html_path": HTDOCS, "url_html_path": "/nagios4",
        "show_context_help": 0, "use_pending_states": 1, "use_authentication": 0, "use_ssl_authentication": 0,
        "default_user_name": "nagiosadmin", "refresh_rate": 90, "result_limit": 100, "escape_html_tags": 1,
        "action_url_target": "_blank", "notes_url_target": "_blank", "lock_author_names": 1,
        "navbar_search_for_addresses": 1, "navbar_search_for_aliases": 1,
        # no "Page Tour": its box embeds a YouTube player on every page, and no page may reach past 127.0.0.1
        "enable_page_tour": 0,
    }
    with open(paths["cgi"], "w", encoding="utf-8") as fh:
        fh.write("".join(f"{k}={v}\n" for k, v in cgi.items()))
    return paths


@contextlib.contextmanager
def nagios(tmp: str, paths: Dict[str, str], timeout: float = 150.0) -> Iterator[None]:
    """Nagios itself (foreground, its own process group), every host and service checked once at
    start through its external command file; returns once the status file shows them all checked."""
    log = open(os.path.join(tmp, "nagios.out"), "ab")  # closed below
    proc = subprocess.Popen([NAGIOS, paths["main"]], stdout=log, stderr=subprocess.STDOUT, cwd=tmp,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while not os.path.exists(paths["cmd"]) or not os.path.exists(paths["status"]):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"nagios did not start: see {tmp}/nagios.out")
            time.sleep(0.2)
        now = int(time.time())
        lines = [f"[{now}] SCHEDULE_FORCED_HOST_CHECK;{h};{now}\n[{now}] SCHEDULE_FORCED_HOST_SVC_CHECKS;{h};{now}\n"
                 for h, _, _ in hosts()]
        with open(paths["cmd"], "w", encoding="utf-8") as fifo:
            fifo.write("".join(lines))
        want = len(hosts()) * (len(SERVICES) + 1) + len(hosts())
        while True:
            with open(paths["status"], encoding="utf-8", errors="replace") as fh:
                checked = fh.read().count("has_been_checked=1")
            if checked >= want:
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"nagios checked {checked} of {want} in {timeout:.0f} s: see {tmp}/nagios.out")
            time.sleep(0.5)
        time.sleep(3)  # the status file written once more, with every state as it settled
        yield
    finally:
        servers.stop_group(proc, 20)
        log.close()


#: lighttpd serving the CGIs as Debian's Apache configuration does (``/nagios4/cgi-bin/``)
CGI_LIGHTTPD = """mimetype.assign += ( ".png" => "image/png", ".gif" => "image/gif", ".js" => "text/javascript",
                     ".ico" => "image/x-icon", ".php" => "text/plain" )
alias.url = ( "/nagios4/cgi-bin/" => "%(cgibin)s/", "/cgi-bin/nagios4/" => "%(cgibin)s/",
              "/nagios4/stylesheets/" => "/etc/nagios4/stylesheets/", "/nagios4/" => "%(htdocs)s/" )
$HTTP["url"] =~ "^(/nagios4/cgi-bin|/cgi-bin/nagios4)/" { cgi.assign = ( ".cgi" => "" ) }
setenv.add-environment = ( "NAGIOS_CGI_CONFIG" => "%(cgi)s" )
auth.backend = "htdigest"
auth.backend.htdigest.userfile = "%(users)s"
$HTTP["url"] =~ "/cmd\\.cgi$" {
    auth.require = ( "" => ( "method" => "digest", "realm" => "%(realm)s", "require" => "valid-user" ) )
}
"""
#: the realm and the user of the command CGI's digest authentication (Debian's ``htdigest.users``)
REALM, USER = "Nagios4", "nagiosadmin"


def monitored_config(port: int) -> str:
    """The monitored server answers on ``port`` of every host's address but the down hosts'."""
    return "".join(f'$SERVER["socket"] == "{address}:{port}" {{ }}\n'
                   for host, _, address in hosts() if host not in DOWN)


@contextlib.contextmanager
def build(args: argparse.Namespace, tmp: str) -> Iterator[appbench.Truth]:
    ensure_packages()
    # a SIGTERM unwinds like an interrupt, so that Nagios (a process group of its own) is stopped too
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    os.makedirs(tmp, exist_ok=True)
    port = servers.free_port()
    paths = setup(tmp, port)
    users = os.path.join(tmp, "htdigest.users")
    with open(users, "w", encoding="utf-8") as fh:  # the password is never used: no crawl sends one
        fh.write(f"{USER}:{REALM}:{hashlib.md5(f'{USER}:{REALM}:not-for-crawlers'.encode()).hexdigest()}\n")
    cgi_config = CGI_LIGHTTPD % {"cgibin": CGI_BIN, "htdocs": HTDOCS, "cgi": paths["cgi"], "users": users,
                                 "realm": REALM}
    modules = ("mod_setenv", "mod_cgi", "mod_auth", "mod_authn_file")
    # the monitored server listens on 127.0.0.1 too (lighttpd_server's own socket), on another port
    with servers.lighttpd_server(monitored_config(port), files=site_files()), \
            nagios(tmp, paths), \
            servers.lighttpd_server(cgi_config, modules=modules) as base, \
            servers.lighttpd_server(cgi_config, modules=modules) as mirror:
        print(f"nagios: set up in {time.monotonic() - started:.0f} s: {base} and {mirror}", file=sys.stderr, flush=True)
        yield truth_of(base, mirror)


def truth_of(base: str, mirror: str) -> appbench.Truth:
    """The truth over the two CGI servers' base URLs (see the module's docstring)."""
    truth: appbench.Truth = {}
    cgi, alt, mcgi = f"{base}/nagios4/cgi-bin", f"{base}/cgi-bin/nagios4", f"{mirror}/nagios4/cgi-bin"

    add = appbench.truth_adder(truth)

    def q(name: str) -> str:  # as Nagios's own links spell a name ("Disk+%2F")
        return urllib.parse.quote_plus(name)

    fleet = hosts()
    dummy = dummy_results()
    services = {h: [*SERVICES, ROLE_SERVICE[g]] for h, g, _ in fleet}
    # a host's page, a service's page, the status of a host's services: one group each
    for k, (host, _, _) in enumerate(fleet):
        urls = [f"{cgi}/extinfo.cgi?type=1&host={host}"]
        urls += {0: [f"{mcgi}/extinfo.cgi?type=1&host={host}"], 1: [f"{cgi}/extinfo.cgi?host={host}&type=1"],
                 2: [f"{cgi}/extinfo.cgi?type=1&host={host}&utm_source=alert-mail"],
                 3: [f"{alt}/extinfo.cgi?type=1&host={host}"]}.get(k % 9, [])
        add(f"host:{host}", None, *urls)
        if k % 2 == 0:
            urls = [f"{cgi}/status.cgi?host={host}"]
            urls += {0: [f"{mcgi}/status.cgi?host={host}"],
                     6: [f"{cgi}/status.cgi?host={host}&limit=100"]}.get(k % 14, [])
            add(f"services-of:{host}", None, *urls)
        for j, service in enumerate(services[host]):
            urls = [f"{cgi}/extinfo.cgi?type=2&host={host}&service={q(service)}"]
            n = 4 * k + j
            if n % 12 == 0:
                urls.append(f"{mcgi}/extinfo.cgi?type=2&host={host}&service={q(service)}")
            elif n % 12 == 4:
                urls.append(f"{cgi}/extinfo.cgi?service={q(service)}&host={host}&type=2")
            elif n % 12 == 8 and " " in service:
                urls.append(f"{cgi}/extinfo.cgi?type=2&host={host}&service={urllib.parse.quote(service, safe='/')}")
            elif n % 12 == 8:
                urls.append(f"{cgi}/extinfo.cgi?type=2&host={host}&service={q(service)}&utm_source=alert-mail")
            add(f"service:{host}/{service}", None, *urls)
    # the status views of each hostgroup and of all of them
    for g, (group, _, _) in enumerate((*GROUPS, ("all", "", ()))):
        for style in ("overview", "detail", "summary", "grid", "hostdetail"):
            if group == "all" and style == "detail":
                continue  # the list of status.cgi?host=all under another heading: left out
            urls = [f"{cgi}/status.cgi?hostgroup={group}&style={style}"]
            if style == "overview":
                urls.append(f"{cgi}/status.cgi?hostgroup={group}")
                if g % 2 == 0:
                    urls.append(f"{mcgi}/status.cgi?hostgroup={group}&style=overview")
            if style == "grid" and g % 3 == 1:
                urls.append(f"{alt}/status.cgi?hostgroup={group}&style=grid")
            add(f"hostgroup:{group}:{style}", None, *urls)
        if group != "all":
            add(f"hostgroup-info:{group}", None, f"{cgi}/extinfo.cgi?type=5&hostgroup={group}")
    add("status:all", None, f"{cgi}/status.cgi?host=all", f"{cgi}/status.cgi", f"{cgi}/status.cgi?host=all&limit=100",
        f"{mcgi}/status.cgi?host=all")
    add("status:service-problems", None, f"{cgi}/status.cgi?host=all&servicestatustypes=28")
    add("status:host-problems", None, f"{cgi}/status.cgi?hostgroup=all&style=hostdetail&hoststatustypes=12")
    add("tac", None, f"{cgi}/tac.cgi", f"{mcgi}/tac.cgi", f"{alt}/tac.cgi", f"{cgi}/tac.cgi?utm_source=dashboard")
    add("process-info", None, f"{cgi}/extinfo.cgi?type=0", f"{cgi}/extinfo.cgi", f"{mcgi}/extinfo.cgi?type=0")
    add("performance-info", None, f"{cgi}/extinfo.cgi?type=4")
    add("scheduling-queue", None, f"{cgi}/extinfo.cgi?type=7")
    for kind in ("hosts", "services", "hostgroups", "contacts", "contactgroups", "timeperiods", "commands"):
        add(f"config:{kind}", None, f"{cgi}/config.cgi?type={kind}",
            *([f"{mcgi}/config.cgi?type={kind}"] if kind in ("hosts", "commands") else []))
    # reports over chosen hosts: the hosts with a problem and a few without
    problems = [h for h, _, _ in fleet
                if h in DOWN + NO_SITE + DRAINING or any(dummy.get((h, s), (0, ""))[0] for s in services[h])]
    quiet = [h for h, _, _ in fleet if h not in problems]
    chosen = problems + quiet[::6]
    for k, host in enumerate(chosen):
        if k % 2 == 0:
            add(f"config-host:{host}", None, f"{cgi}/config.cgi?type=hosts&expand={host}")
        if host in problems:  # a host without alerts has a history of the process's start only: left out
            add(f"history:{host}", None, f"{cgi}/history.cgi?host={host}",
                *([f"{mcgi}/history.cgi?host={host}"] if k % 5 == 0 else []))
        if k % 2 == 1:
            add(f"avail:{host}", None, f"{cgi}/avail.cgi?host={host}")
        else:
            add(f"trends:{host}", None, f"{cgi}/trends.cgi?host={host}")
        if k % 3 == 0:
            add(f"histogram:{host}", None, f"{cgi}/histogram.cgi?host={host}")
    for host in problems[::2]:
        add(f"notifications:{host}", None, f"{cgi}/notifications.cgi?host={host}")
    add("history:all", None, f"{cgi}/history.cgi?host=all", f"{mcgi}/history.cgi?host=all")
    add("notifications:all", None, f"{cgi}/notifications.cgi?host=all", f"{alt}/notifications.cgi?host=all")
    add("notifications:ops", None, f"{cgi}/notifications.cgi?contact=ops")
    add("event-log", None, f"{cgi}/showlog.cgi", f"{mcgi}/showlog.cgi")
    add("status-map", None, f"{cgi}/statusmap.cgi")
    add("event-summary", None, f"{cgi}/summary.cgi")

    # special pages, one group per template and status
    add("extinfo-denied", "E3", *[f"{cgi}/extinfo.cgi?type=1&host={h}" for h in ("web-fra-04", "db01", "localhost")],
        f"{cgi}/extinfo.cgi?type=2&host=web-fra-01&service=HTTPS",
        f"{cgi}/extinfo.cgi?type=2&host=db-fra-01&service=Disk+%2Fvar",
        f"{cgi}/extinfo.cgi?type=2&host=old-mx&service=SMTP", f"{cgi}/extinfo.cgi?type=5&hostgroup=linux-servers",
        f"{mcgi}/extinfo.cgi?type=1&host=web-fra-09", f"{alt}/extinfo.cgi?type=2&host=ns1&service=PING6")
    add("no-such-hostgroup", "E3",
        *[f"{cgi}/status.cgi?hostgroup={g}" for g in ("linux-servers", "webservers", "db-fra")],
        f"{cgi}/status.cgi?hostgroup=printers&style=overview", f"{mcgi}/status.cgi?hostgroup=switches")
    add("server-404", "E3", f"{cgi}/status.php", f"{cgi}/nagios.cgi", f"{base}/nagios4/docs/index.html",
        f"{base}/nagios4/stylesheets/theme.css", f"{mcgi}/avail.cgi.bak", f"{alt}/outage.cgi")
    add("server-403", "E3", f"{base}/nagios4/", f"{base}/nagios4/images/", f"{mirror}/nagios4/",
        f"{base}/nagios4/stylesheets/")
    add("cmd-auth", "L1", *[f"{cgi}/cmd.cgi?cmd_typ={t}&host={h}" for t, h in ((96, "web-fra-01"), (55, "db-lon-02"),
                                                                               (47, "mx1"), (1, "app-04"))],
        f"{cgi}/cmd.cgi?cmd_typ=7&host=nas-fra-02&service=RAID",
        f"{cgi}/cmd.cgi?cmd_typ=34&host=app-07&service=App+status",
        f"{cgi}/cmd.cgi", f"{mcgi}/cmd.cgi?cmd_typ=96&host=ns2", f"{alt}/cmd.cgi?cmd_typ=55&host=web-par-01")
    return truth


TIMES = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d|\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \w+ \d{4}"
                   r"|\d+d +\d+h +\d+m +\d+s|\d+:\d\d:\d\d")


def check(truth: appbench.Truth) -> str:
    """``--check``: the statuses per label; then every group of content URLs whose visible text (the
    times and durations Nagios prints blanked) is not the same, two groups that show the same text,
    and every content URL that is not a 200 HTML page; then the titles of each group of special pages."""
    from app_roundup import visible_text

    odd = []
    texts: Dict[str, Dict[str, str]] = {}
    for url, (group, label) in truth.items():
        if label is None:
            got = servers.fetch(url, timeout=60)
            if got.status != 200 or "html" not in got.content_type:
                odd.append(f"  {got.status} {got.content_type} {url} ({group})")
            texts.setdefault(group, {})[url] = TIMES.sub("T", visible_text(got.body))
    seen: Dict[str, str] = {}
    for group, by_url in texts.items():
        if len(set(by_url.values())) > 1:
            first, *others = set(by_url.values())
            at = min(next((i for i, (x, y) in enumerate(zip(first, o)) if x != y), len(first)) for o in others)
            odd.append(f"  group {group} shows {len(others) + 1} different texts ({first[max(0, at - 40):at + 40]!r}"
                       f" ...): {', '.join(by_url)}")
        for text in set(by_url.values()):
            if seen.setdefault(text, group) != group:
                odd.append(f"  groups {seen[text]} and {group} show the same text")
    return "\n".join([appbench.check_truth(NAME, truth), *odd, appbench.special_titles(truth)])


if __name__ == "__main__":
    sys.exit(appbench.main(NAME, build, __doc__, check=check))
