"""Real content for the application benches (``bench/app_*.py``): short entries of the Debian
changelogs installed here, the true texts of the article-extraction benchmark, and the commits of
this repository's own history, smallest diffs first.

Nothing here is generated prose: a ticket's description is one entry of a real changelog, a wiki
page one real article, a changeset one real commit.
"""

from __future__ import annotations

import collections
import contextlib
import datetime as dt
import glob
import gzip
import json
import os
import re
import subprocess
import urllib.parse
from email.utils import parsedate_to_datetime
from typing import Dict, List, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: next to the repository (or to the directory of git worktrees the repository is in)
ARTICLES = next((p for p in (os.path.join(up, "shared", "data", "article-extraction-benchmark", "ground-truth.json")
                             for up in (os.path.dirname(REPO), os.path.dirname(os.path.dirname(REPO))))
                 if os.path.exists(p)), "")
#: Debian releases: (code name, release date); the last one is not released yet
RELEASES = (("buster", "2019-07-06"), ("bullseye", "2021-08-14"), ("bookworm", "2023-06-10"),
            ("trixie", "2025-08-09"), ("forky", "2027-06-01"))

#: one upload of a Debian changelog: its source package, version, distribution, urgency,
#: uploader (name, e-mail), date and the text of each ``*`` item
Entry = collections.namedtuple("Entry", "source version dist urgency author email date bullets")


def changelog_entries(source: str) -> List[Entry]:
    """The entries of source package ``source``'s Debian changelog (from the first installed binary
    package that carries it), newest first; ``[]`` when none is installed."""
    for path in sorted(glob.glob("/usr/share/doc/*/changelog.Debian.gz")):
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        if not text.startswith(source + " "):
            continue
        out = []
        for block in re.split(r"\n(?=\S)", text):
            head = re.match(r"(\S+) \(([^)]+)\) ([^;]+); urgency=(\w+)", block)
            tail = re.search(r"\n -- (.+?) <([^>]+)>  (.+)", block)
            if not head or not tail:
                continue
            bullets = [re.sub(r"\s+", " ", b).strip() for b in re.findall(r"\n  \* (.+(?:\n    .+)*)", block)]
            with contextlib.suppress(ValueError, TypeError):
                date = parsedate_to_datetime(tail.group(3).strip())
                out.append(Entry(source, head.group(2), head.group(3).split()[0], head.group(4).lower(),
                                 tail.group(1).strip(), tail.group(2), date, bullets))
        return out
    return []


def usable(bullet: str) -> bool:
    """A changelog item that says something of its own in a sentence or two (not "New upstream
    release", "Rebuild", "Non-maintainer upload"...)."""
    return (40 <= len(bullet) <= 260 and not re.match(r"(?i)(new upstream|non-maintainer|team upload|upload to|"
                                                      r"rebuild|no-change|release to|merge from)", bullet))


def changelog_items(sources, n: int) -> Tuple[List[Tuple[Entry, List[str]]], List[str]]:
    """Up to ``n`` uploads with their usable items (each item text once), taken in turn from each
    of ``sources`` that has ten such uploads or more, newest first; and those sources."""
    per: Dict[str, list] = {}
    for source in sources:
        seen: set = set()
        items = []
        for entry in changelog_entries(source):
            good = [b for b in entry.bullets if usable(b) and b not in seen]
            seen.update(good)
            if good:
                items.append((entry, good))
        if len(items) >= 10:
            per[source] = items
    chosen: List[Tuple[Entry, List[str]]] = []
    depth = 0
    while len(chosen) < n and any(depth < len(v) for v in per.values()):
        chosen.extend(v[depth] for v in per.values() if depth < len(v) and len(chosen) < n)
        depth += 1
    return chosen, list(per)


def summary_of(text: str, limit: int = 80) -> str:
    """A one-line title for a changelog item: its first sentence, cut at a word under ``limit``."""
    first = re.split(r"(?<=[a-z0-9)])[.;] ", text, maxsplit=1)[0].rstrip(".")
    if len(first) <= limit:
        return first
    return first[:limit].rsplit(" ", 1)[0] + "..."


def release_of(entry: Entry) -> str:
    """The Debian release an upload went to (a stable update names it), else the next release after its date."""
    dist = entry.dist.split("-")[0]
    if any(dist == name for name, _ in RELEASES):
        return dist
    day = entry.date.strftime("%Y-%m-%d")
    return next((name for name, released in RELEASES if day < released), RELEASES[-1][0])


def released(name: str) -> bool:
    return dict(RELEASES)[name] < dt.date.today().isoformat()


def articles(n: int) -> List[Tuple[str, str]]:
    """Up to ``n`` (title, body) pairs of real articles of 1,500+ characters in a fixed order, the
    title made of the first words of the article's URL; ``[]`` without the benchmark's data."""
    if not ARTICLES:
        return []
    with open(ARTICLES, encoding="utf-8") as fh:
        data = json.load(fh)
    out = []
    for _, v in sorted(data.items()):
        body = v.get("articleBody", "")
        if len(body) < 1500:
            continue
        slug = urllib.parse.urlsplit(v.get("url", "")).path.rstrip("/").rsplit("/", 1)[-1]
        words = [w for w in re.split(r"[^A-Za-z]+", slug.rsplit(".", 1)[0]) if w.isalpha() and len(w) > 1][:5]
        if len(words) < 2:
            continue
        out.append((" ".join(words).capitalize(), body))
        if len(out) == n:
            break
    return out


def paragraphs(body: str, share: float = 1.0) -> List[str]:
    """The first ``share`` of an article's paragraphs (at least two)."""
    paras = [p.strip() for p in body.split("\n") if p.strip()]
    return paras[: max(2, int(len(paras) * share))]


def clone(dest: str, bare: bool = False) -> str:
    """A single-branch clone of this repository (its checked-out branch) at ``dest``. A checkout
    on a detached HEAD (a worktree at a commit) gives a clone with no branch, whose commits a
    repository browser that reads branches (Trac's git connector) does not know: the clone's
    HEAD then becomes a ``main`` branch."""
    subprocess.run(["git", "clone", "-q", "--single-branch", *(["--bare"] if bare else []), REPO, dest], check=True)
    branches = subprocess.run(["git", "-C", dest, "for-each-ref", "refs/heads"], capture_output=True, text=True,
                              check=True).stdout
    if not branches.strip():
        subprocess.run(["git", "-C", dest, "update-ref", "refs/heads/main", "HEAD"], check=True)
        subprocess.run(["git", "-C", dest, "symbolic-ref", "HEAD", "refs/heads/main"], check=True)
    return dest


def commits(repo: str, n: int, small: int = 20, large: int = 300) -> List[str]:
    """``n`` non-merge commits of ``repo`` (full hashes): every one that changes ``small`` lines or
    fewer (newest first), then larger ones up to ``large`` lines."""
    log = subprocess.run(["git", "-C", repo, "log", "--no-merges", "--format=@%H", "--numstat"],
                         capture_output=True, text=True, check=True).stdout
    sizes: Dict[str, int] = {}
    cur = ""
    for line in log.splitlines():
        if line.startswith("@"):
            cur = line[1:]
            sizes[cur] = 0
        elif line.strip():
            added, removed, _ = line.split("\t", 2)
            sizes[cur] += int(added) + int(removed) if added != "-" else 0
    tiny = [h for h, s in sizes.items() if s <= small]
    rest = [h for h, s in sizes.items() if small < s <= large]
    return (tiny + rest)[:n]


def files(repo: str) -> List[str]:
    """The files of ``repo``'s HEAD."""
    return subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.split()
