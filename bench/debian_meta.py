"""Real short texts from this machine's Debian metadata, for the application benches: the
packages of dpkg's status file and the newest entries of their changelogs."""

from __future__ import annotations

import glob
import gzip
import os
import re
from typing import Dict, Iterator, List, Optional

STATUS = "/var/lib/dpkg/status"
CHANGELOG = "/usr/share/doc/{}/changelog.Debian.gz"

HEAD = re.compile(r"^(\S+) \(([^)]+)\) ([^;]+); urgency=(\S+)")
TRAIL = re.compile(r"^ -- (.+?) <([^>]*)>\s+(.+)$")


def stanzas(path: str = STATUS) -> Iterator[Dict[str, str]]:
    """The paragraphs of a Debian control file as dicts, continuation lines joined; of dpkg's
    status file the installed packages only, each name once (the first architecture's)."""
    seen = set()
    with open(path, encoding="utf-8", errors="replace") as fh:
        for block in fh.read().split("\n\n"):
            rec: Dict[str, str] = {}
            key = ""
            for line in block.split("\n"):
                if line[:1] in (" ", "\t") and key:
                    rec[key] += "\n" + line[1:]
                elif ":" in line:
                    key, _, val = line.partition(":")
                    rec[key] = val.strip()
            name = rec.get("Package")
            if name and name not in seen and rec.get("Status", "installed").endswith(" installed"):
                seen.add(name)
                yield rec


def packages() -> List[Dict[str, str]]:
    """The installed packages, sorted by name."""
    return sorted(stanzas(), key=lambda r: r["Package"])


def description(rec: Dict[str, str]) -> tuple:
    """A package's summary line and its long description as paragraphs (Debian's ``.`` lines
    are paragraph breaks; lines starting with a space are kept as they are)."""
    summary, _, long = rec.get("Description", "").partition("\n")
    paras, cur = [], []
    for line in long.split("\n"):
        if line.strip() == ".":
            paras.append("\n".join(cur))
            cur = []
        elif line.strip():
            cur.append(line)
    paras.append("\n".join(cur))
    return summary.strip(), [p for p in paras if p.strip()]


def maintainer(rec: Dict[str, str]) -> tuple:
    """``(name, email)`` of a package's maintainer."""
    m = re.match(r"^(.*?)\s*<([^>]+)>", rec.get("Maintainer", ""))
    return (m[1], m[2]) if m else (rec.get("Maintainer", ""), "")


def changelog(package: str, limit: int = 3) -> List[dict]:
    """The newest ``limit`` entries of a package's Debian changelog (newest first): version,
    distribution, urgency, author, email, date and the entry's text; ``[]`` without one."""
    path = CHANGELOG.format(package)
    if not os.path.exists(path):
        return []
    out: List[dict] = []
    cur: Optional[dict] = None
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.rstrip("\n")
            head, trail = HEAD.match(line), TRAIL.match(line)
            if head:
                cur = {"version": head[2], "distribution": head[3], "urgency": head[4], "lines": []}
            elif trail and cur is not None:
                cur.update(author=trail[1], email=trail[2], date=trail[3].strip(),
                           text="\n".join(cur.pop("lines")).strip("\n"))
                out.append(cur)
                cur = None
                if len(out) >= limit:
                    break
            elif cur is not None:
                cur["lines"].append(line)
    return out


def changelog_packages() -> List[str]:
    """The names of the packages with a Debian changelog of their own (not one shared through a
    symbolic link with another package of the same source)."""
    out, seen = [], set()
    for path in sorted(glob.glob(CHANGELOG.format("*"))):
        real = os.path.realpath(path)
        if real not in seen and not os.path.islink(os.path.dirname(path)):
            seen.add(real)
            out.append(path.split("/")[-2])
    return out
