"""Clusters and labels of a crawl of a real MHonArc mailing-list archive: messages, date and thread indexes.

    python bench/app_mhonarc.py [--devel 210] [--changes 140] [--check] [-v] [--keep DIR]

Held aside: run once the design is settled, its first figures reported as they came.

Installs Debian's ``mhonarc`` (the Perl mail-to-HTML converter behind many list archives) if
missing, writes two mailing lists' mail as one mbox per list and month in the temporary directory,
converts each with ``mhonarc`` (its default templates; ``IDXSIZE`` 50 and ``MULTIPG``: index pages
of 50 messages, ``maillist.html``, ``mail2.html``... by date and ``threads.html``, ``thrd2.html``...
by thread) into ``LIST/YYYY/MM/`` as list archives are laid out, and serves the tree with nginx on
127.0.0.1 (a month's directory shows its date index), plus a second nginx on another port over the
same tree (a mirror). The mail, none of it generated prose:

- ``bench-devel``, a discussion list over three months (``--devel`` messages): one thread per
  upload of a Debian changelog installed here (``appdata.changelog_items``), its first item the
  first message (subject ``SOURCE: first sentence``), each further item of the upload (up to three)
  a reply ``Re: SUBJECT`` by another uploader, hours to days later, that quotes the message it
  answers and adds the item: messages of one thread share their subject, their heading and a
  quoted sentence, and differ by one sentence of their own. Every message ends with the list's
  footer (unsubscribe address, archive link with its Message-ID), as Debian's lists add it.
- ``bench-changes``, an announce list over two months (``--changes`` messages): one "Accepted
  SOURCE VERSION (source) into DIST" message per other upload, the upload's ``.changes`` fields
  (Date, Source, Version, Distribution, Urgency, Changed-By) and its changelog entry: every message
  the same form, the fields and one or a few sentences apart.
- ``bench-private``: a third list behind HTTP basic authentication (nginx ``auth_basic``).

The truth (``{url: (group, label)}``, content label ``None``):

- one group per message (``LIST/YYYY/MM/msgNNNNN.html``) and per index page (each page of each
  month's date index and of bench-devel's thread indexes: replies come hours to days after the
  message they answer, between the messages of other threads, so a thread index lists the month's
  messages in another order and nesting than its date index: another page);
- the variants, each in its page's group: the mirror port; the month's directory with and without
  its slash (nginx's 301 to the slash; the directory shows ``maillist.html``); a doubled slash
  (nginx merges slashes); tracking and referrer parameters that a static server ignores
  (``utm_source``, ``ref=digest``). The pages are static: ``--check`` finds one visible text per
  group and no two groups with the same text;
- special pages: nginx's 404 (a message, a month, an index page, a list that does not exist), one
  group, ``E3``; nginx's 403 (a list's or a year's directory, which has no index and no listing),
  one group, ``E3``; nginx's 401 of the private list (any path under it), one group, ``L1``; nginx's
  502 of the archive's search CGI (``/cgi-bin/search``, its FastCGI backend not running), one group,
  ``E1``.

Left out as arguable: bench-changes' thread indexes (an announce list has no threads: the date
index's messages in the same order, the senders without their addresses), directory listings (a
year's months: thin or content?), the same message cross-posted to two lists (one message, two
archives with different neighbours), MHonArc's raw attachments and mbox files (not HTML). The URL
list is shuffled; the crawl is websim's shipped defaults. Last line (see ``bench/appbench.py``):

    set=mhonarc urls=N groups=G dup_share=D missing=M precision=P recall=R f1=F false_pairs=K
    missed_pairs=K lost=L rules=right/special (pct) content_as_junk=J
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import email.utils
import os
import shutil
import subprocess
import sys
import textwrap
from typing import Dict, Iterator, List, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import appbench  # noqa: E402
import appdata  # noqa: E402
from app_roundup import check_texts  # noqa: E402

from scrapy_websim.testing import servers  # noqa: E402

NAME = "mhonarc"
DOMAIN = "lists.bench.invalid"
#: source packages whose changelogs give the mail
SOURCES = ("nginx", "git", "curl", "sqlite3", "openssl", "systemd", "apache2", "lighttpd", "python3.11", "php8.2",
           "redis", "chromium", "perl", "coreutils", "gzip", "glibc", "mariadb", "vim", "openssh", "util-linux",
           "libxml2")
#: (list, year, month) of each list's archive, in order
DEVEL_MONTHS = ((2024, 1), (2024, 2), (2024, 3))
CHANGES_MONTHS = ((2024, 2), (2024, 3))
PAGE = 50
RCFILE = f"""<IDXSIZE>
{PAGE}
</IDXSIZE>
<MULTIPG>
"""
#: nginx: the archive tree at ``/``, a month's directory shows its date index; the private list
#: asks for a password; the search CGI's FastCGI backend is not running (a port nobody listens on)
LOCATIONS = """location / { root %(root)s; index maillist.html; }
location /bench-private/ { root %(root)s; index maillist.html; auth_basic "bench-private archive";
    auth_basic_user_file %(htpasswd)s; }
location /cgi-bin/ { fastcgi_pass 127.0.0.1:%(dead)d; }
"""

#: one message: (list, Message-ID, In-Reply-To or "", date, author name, author address, subject, body)
Mail = Tuple[str, str, str, dt.datetime, str, str, str, str]


def ensure_packages() -> None:
    if shutil.which("mhonarc") and servers.have("nginx"):
        return
    print("installing mhonarc nginx", flush=True)
    subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", "mhonarc", "nginx"], check=True,
                   stdout=subprocess.DEVNULL, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    subprocess.run(["service", "nginx", "stop"], capture_output=True, check=False)


def wrap(text: str, prefix: str = "") -> str:
    return "\n".join(textwrap.wrap(text, 72 - len(prefix), initial_indent=prefix, subsequent_indent=prefix))


def footer(lst: str, msgid: str) -> str:
    return (f"\n\n-- \nTo UNSUBSCRIBE, email to {lst}-REQUEST@{DOMAIN}\nwith a subject of \"unsubscribe\". "
            f"Trouble? Contact listmaster@{DOMAIN}\nArchive: https://{DOMAIN}/{msgid}\n")


def spread_dates(months, n: int) -> List[dt.datetime]:
    """``n`` times spread evenly over ``months`` (each (year, month) one share), in order."""
    out = []
    per = [n // len(months) + (1 if k < n % len(months) else 0) for k in range(len(months))]
    for (year, month), count in zip(months, per):
        start = dt.datetime(year, month, 1, 6, 0, tzinfo=dt.timezone.utc)
        span = 27 * 86400
        out.extend(start + dt.timedelta(seconds=k * span // max(1, count)) for k in range(count))
    return out


def mails(n_devel: int, n_changes: int) -> List[Mail]:
    """The two lists' messages: threads of bench-devel from uploads with several items, then one
    announcement per further upload on bench-changes."""
    uploads, _ = appdata.changelog_items(SOURCES, 4 * (n_devel + n_changes))
    seen: set = set()
    unique = []
    for entry, bullets in uploads:
        bullets = [b for b in bullets if b not in seen]
        seen.update(bullets)
        if bullets:
            unique.append((entry, bullets))
    people = sorted({(e.author, e.email) for e, _ in unique})
    threads, rest, count = [], [], 0
    for entry, bullets in unique:
        if count < n_devel:
            thread = bullets[: min(4, n_devel - count)]
            threads.append((entry, thread))
            count += len(thread)
        else:
            rest.append(entry)
    out: List[Mail] = []
    # bench-devel: the threads start in turn over the months
    starts = spread_dates(DEVEL_MONTHS, len(threads))
    for t, ((entry, items), start) in enumerate(zip(threads, starts)):
        subject = f"{entry.source}: {appdata.summary_of(items[0])}"
        parent_id, parent_text, parent_who, parent_at = "", "", None, None
        for k, item in enumerate(items):
            who = (entry.author, entry.email) if k == 0 else people[(t * 7 + k * 3) % len(people)]
            if k and who == parent_who:
                who = people[(people.index(who) + 1) % len(people)]
            # replies come hours to days later, between the messages of other threads
            at = start if k == 0 else parent_at + dt.timedelta(minutes=90 + 240 * ((t * 7 + k * 5) % 11))
            msgid = f"devel-{t}-{k}@{DOMAIN}"
            if k == 0:
                body = wrap(item)
            else:
                when = email.utils.format_datetime(parent_at)
                body = f"On {when}, {parent_who[0]} wrote:\n{wrap(parent_text, '> ')}\n\n{wrap(item)}"
            out.append(("bench-devel", msgid, parent_id, at, who[0], who[1], ("Re: " if k else "") + subject,
                        body + footer("bench-devel", msgid)))
            parent_id, parent_text, parent_who, parent_at = msgid, item, who, at
    for k, (entry, at) in enumerate(zip(rest[:n_changes], spread_dates(CHANGES_MONTHS, min(n_changes, len(rest))))):
        msgid = f"changes-{k}@{DOMAIN}"
        changes = "\n".join(wrap(b, "    ").replace("    ", "  * ", 1) for b in entry.bullets)
        body = (f"Format: 1.8\nDate: {email.utils.format_datetime(at)}\nSource: {entry.source}\n"
                f"Architecture: source\nVersion: {entry.version}\nDistribution: {entry.dist}\n"
                f"Urgency: {entry.urgency}\nChanged-By: {entry.author} <{entry.email}>\nChanges:\n"
                f" {entry.source} ({entry.version}) {entry.dist}; urgency={entry.urgency}\n .\n{changes}")
        out.append(("bench-changes", msgid, "", at, "Debian FTP Masters", f"ftpmaster@{DOMAIN}",
                    f"Accepted {entry.source} {entry.version} (source) into {entry.dist}",
                    body + footer("bench-changes", msgid)))
    return out


def mbox_text(messages: List[Mail]) -> str:
    parts = []
    for lst, msgid, reply_to, at, name, addr, subject, body in sorted(messages, key=lambda m: m[3]):
        head = [f"From {addr} {at.strftime('%a %b %d %H:%M:%S %Y')}",
                f"From: {email.utils.formataddr((name, addr))}", f"To: {lst}@{DOMAIN}", f"Subject: {subject}",
                f"Date: {email.utils.format_datetime(at)}", f"Message-ID: <{msgid}>"]
        if reply_to:
            head += [f"In-Reply-To: <{reply_to}>", f"References: <{reply_to}>"]
        head += ["MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8", "Content-Transfer-Encoding: 8bit"]
        lines = [(">" + ln if ln.startswith("From ") else ln) for ln in body.split("\n")]
        parts.append("\n".join(head) + "\n\n" + "\n".join(lines) + "\n")
    return "\n".join(parts)


def setup(tmp: str, n_devel: int, n_changes: int) -> Dict[str, Dict[str, List[str]]]:
    """The archive tree in ``tmp/archive``: ``{"LIST/YYYY/MM": {"msgs": [...], "date": [...],
    "thread": [...]}}`` (file names of the messages and of each index's pages)."""
    os.makedirs(tmp)
    root = os.path.join(tmp, "archive")
    rc = os.path.join(tmp, "mhonarc.rc")
    with open(rc, "w", encoding="utf-8") as fh:
        fh.write(RCFILE)
    by_month: Dict[str, List[Mail]] = {}
    for m in mails(n_devel, n_changes):
        by_month.setdefault(f"{m[0]}/{m[3]:%Y/%m}", []).append(m)
    # the private list: the first month of bench-devel's mail again, under another name
    first = min(k for k in by_month if k.startswith("bench-devel/"))
    by_month["bench-private/" + first.split("/", 1)[1]] = [("bench-private",) + m[1:] for m in by_month[first][:20]]
    out = {}
    for key, messages in sorted(by_month.items()):
        outdir = os.path.join(root, key)
        os.makedirs(outdir)
        mbox = os.path.join(tmp, key.replace("/", "-") + ".mbox")
        with open(mbox, "w", encoding="utf-8") as fh:
            fh.write(mbox_text(messages))
        subprocess.run(["mhonarc", "-rcfile", rc, "-outdir", outdir, "-quiet", mbox], check=True,
                       stdout=subprocess.DEVNULL)
        names = sorted(os.listdir(outdir))
        pages = (len(messages) + PAGE - 1) // PAGE
        out[key] = {"msgs": [n for n in names if n.startswith("msg")],
                    "date": ["maillist.html"] + [f"mail{p}.html" for p in range(2, pages + 1)],
                    "thread": ["threads.html"] + [f"thrd{p}.html" for p in range(2, pages + 1)]}
        assert len(out[key]["msgs"]) == len(messages), (key, len(messages))
        assert all(n in names for n in out[key]["date"] + out[key]["thread"]), (key, names)
    with open(os.path.join(tmp, "htpasswd"), "w", encoding="utf-8") as fh:
        fh.write(servers.htpasswd_line("subscriber", os.urandom(8).hex()))
    return out


def truth_of(archive: Dict[str, Dict[str, List[str]]], base: str, mirror: str) -> appbench.Truth:
    truth: appbench.Truth = {}

    add = appbench.truth_adder(truth)

    k = 0
    for key, files in archive.items():
        if key.startswith("bench-private/"):
            continue
        d = f"{base}/{key}"
        for name in files["msgs"]:
            urls = [f"{d}/{name}"]
            variant = k % 23
            if variant == 3:
                urls.append(f"{mirror}/{key}/{name}")
            elif variant == 9:
                urls.append(f"{d}/{name}?utm_source=digest&utm_medium=email")
            elif variant == 15:
                urls.append(f"{base}/{key.replace('/', '//', 1)}/{name}")
            elif variant == 20:
                urls.append(f"{d}/{name}?ref=digest")
            add(f"{key}/{name}", None, *urls)
            k += 1
        # an announce list has no threads: its thread index lists the date index's messages in the
        # same order (arguable: left out)
        for view in ("date", "thread") if key.startswith("bench-devel/") else ("date",):
            for p, name in enumerate(files[view]):
                urls = [f"{d}/{name}"]
                if view == "date" and p == 0:
                    urls += [f"{d}/", d, f"{mirror}/{key}/"]
                elif p == 1:
                    urls.append(f"{d}/{name}?utm_source=feed")
                add(f"{key}/{view}:{p}", None, *urls)

    devel = [k for k in archive if k.startswith("bench-devel/")]
    changes = [k for k in archive if k.startswith("bench-changes/")]
    private = next(k for k in archive if k.startswith("bench-private/"))
    last = archive[devel[-1]]["msgs"][-1]
    n_last = int(last[3:8])
    add("nginx-404", "E3", f"{base}/{devel[0]}/msg{n_last + 200:05d}.html",
        f"{base}/{devel[-1]}/msg{n_last + 1:05d}.html", f"{base}/{changes[0]}/msg99999.html",
        f"{base}/bench-devel/2023/12/", f"{base}/bench-devel/2024/07/maillist.html",
        f"{base}/{devel[1]}/mail9.html", f"{base}/{changes[-1]}/thrd7.html", f"{base}/bench-users/2024/01/",
        f"{base}/bench-devel/2024/01/msg1.html", f"{base}/bench-announce/", f"{mirror}/{devel[0]}/msg77777.html",
        f"{mirror}/bench-security/2024/02/threads.html")
    add("nginx-403", "E3", f"{base}/bench-devel/", f"{base}/bench-devel/2024/", f"{base}/bench-changes/",
        f"{base}/bench-changes/2024/", f"{base}/", f"{mirror}/bench-devel/2024/")
    add("nginx-401", "L1", f"{base}/{private}/", f"{base}/{private}/maillist.html", f"{base}/{private}/msg00003.html",
        f"{base}/{private}/threads.html", f"{base}/bench-private/", f"{base}/bench-private/2024/02/msg00001.html",
        f"{mirror}/{private}/msg00000.html")
    add("search-502", "E1", f"{base}/cgi-bin/search?q=segfault&list=bench-devel",
        f"{base}/cgi-bin/search?q=openssl&list=bench-changes", f"{base}/cgi-bin/search?list=bench-devel&q=CVE",
        f"{base}/cgi-bin/search", f"{mirror}/cgi-bin/search?q=nginx")
    return truth


def check(truth: appbench.Truth) -> str:
    """``--check``: see ``app_roundup.check_texts`` (no crawl: plain HTTP fetches)."""
    return check_texts(NAME, truth)


@contextlib.contextmanager
def build(args: argparse.Namespace, tmp: str) -> Iterator[appbench.Truth]:
    ensure_packages()
    archive = setup(tmp, args.devel, args.changes)
    locations = LOCATIONS % {"root": os.path.join(tmp, "archive"), "htpasswd": os.path.join(tmp, "htpasswd"),
                             "dead": servers.free_port()}
    with servers.nginx_server(locations) as base, servers.nginx_server(locations) as mirror:
        yield truth_of(archive, base, mirror)


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--devel", type=int, default=210, help="messages of the discussion list (threads)")
    parser.add_argument("--changes", type=int, default=140, help="messages of the announce list")


if __name__ == "__main__":
    sys.exit(appbench.main(NAME, build, __doc__, add_args, check))
