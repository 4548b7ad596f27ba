"""Clusters and labels of a crawl of a real client-rendered application: Verdaccio, a private npm
registry whose web UI (React) fills an empty shell from the registry's API.

    python bench/app_spa.py --check            # set up, fetch every truth URL once (the shell: all 200)
    python bench/app_spa.py [-v] [--keep DIR]  # set up, crawl with the shipped defaults, score
    python bench/app_spa.py --versions         # also old versions' pages, each a page of its own
    python bench/appbench.py DIR [--refeature] # re-score a kept crawl with the current code

Installs Verdaccio 6.8.0 (npm; the last release that runs on Node 20) into
``$TMPDIR/websim-bench-npm-verdaccio`` if missing (``node-fetch`` pinned to 2.7.0 through an npm
override: a dependency asks for the ``cjs`` dist-tag, which a registry mirror may not carry).
Runs it with a configuration of its own (storage, users file, no uplinks: nothing leaves
127.0.0.1; gravatars off) and publishes 280 small packages through the registry's own publish API
(what ``npm publish`` sends: a user created through ``/-/user/``, a packument with the tarball
attached), one per installed Debian package with a changelog of its own: its README is the
package's summary, its long description and its newest changelog entry; its two newest
changelog entries are its versions, published oldest first; its dependencies are the package's
Depends that are published too; ``lib*`` packages are scoped (``@debian/libfoo``). A second Verdaccio
process serves the same storage on another port. Every URL answers with the same 800-byte shell;
the page is what the scripts render.

The truth (``{url: (group, label)}``, ~315 URLs; each URL its own group unless said):

- every package's page (``/-/web/detail/NAME``: the README tab, the install commands of the
  latest version, its licence, keywords, author);
- the home page, listing every package, on both ports: one group;
- the duplicates it really produces, each in the group of its package page: the latest version
  made explicit (``/v/LATEST``), a trailing slash, tracking parameters, the scoped name with its
  ``@`` percent-encoded, the page on the second port;
- its "Sorry, we couldn't find it..." page, served with status 200 for a missing package, a
  missing scoped package, a name in capitals (npm names are lower case) and an unknown UI path:
  one group, ``E3`` (a soft 404).

The page of an older version (``/v/VERSION``) is left out as arguable: Verdaccio shows the
package's README on every version's page, so all it shows of its own is the version's number,
install commands, date and author (the package page, or a page of its own?). ``--versions``
adds the older version's page of three packages in five, each as a page of its own (set
``spa-versions``, ~480 URLs), for the stricter reading.

The README, dependencies, versions and uplinks tabs of a package page are one URL (the UI keeps
the tab in its state, not in the URL), and the search is a drop-down of the header, with no URL:
neither is in the list. Also left out as arguable: the page of a version that does not exist (the
package page with "Not available" for its version) and ``/-/web/login`` (the not-found page: the
login is a dialog). The URL list is shuffled; the crawl is websim's shipped defaults. Last line
(see ``bench/appbench.py``):

    set=spa urls=N groups=G dup_share=D missing=M precision=P recall=R f1=F false_pairs=K
    missed_pairs=K lost=L rules=right/special (pct) content_as_junk=J
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures
import contextlib
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from typing import Dict, Iterator, List, Optional, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import appbench  # noqa: E402  (bench/appbench.py)
import debian_meta  # noqa: E402  (bench/debian_meta.py)

from scrapy_websim.testing import servers  # noqa: E402

NPM_DIR = os.path.join(tempfile.gettempdir(), "websim-bench-npm-verdaccio")
VERDACCIO = "6.8.0"
PACKAGE_JSON = {"name": "websim-bench-verdaccio", "private": True, "dependencies": {"verdaccio": VERDACCIO},
                "overrides": {"node-fetch": "2.7.0"}}
PACKAGES = 280
CONFIG = """storage: {storage}
auth:
  htpasswd:
    file: {htpasswd}
    max_users: 10
uplinks: {{}}
packages:
  '@*/*':
    access: $all
    publish: $authenticated
  '**':
    access: $all
    publish: $authenticated
middlewares:
  audit:
    enabled: false
web:
  title: Bench Registry
  gravatar: false
log: {{ type: stdout, format: pretty, level: warn }}
"""
USER, PASSWORD = "bench", "bench-password-1"


def ensure_packages() -> str:
    """The ``verdaccio`` command of the bench's npm directory (installed if missing)."""
    exe = os.path.join(NPM_DIR, "node_modules", ".bin", "verdaccio")
    if not os.path.exists(exe):
        print(f"installing verdaccio@{VERDACCIO} into {NPM_DIR}", flush=True)
        os.makedirs(NPM_DIR, exist_ok=True)
        with open(os.path.join(NPM_DIR, "package.json"), "w", encoding="utf-8") as fh:
            json.dump(PACKAGE_JSON, fh)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=NPM_DIR, check=True,
                       stdout=subprocess.DEVNULL)
    return exe


def npm_name(package: str) -> str:
    """The npm name of a Debian package (``+`` is not allowed in npm names)."""
    name = package.replace("+", "plus")
    return f"@debian/{name}" if name.startswith("lib") else name


def semver(debian_version: str, taken: set) -> str:
    """A semver version for a Debian version: its upstream numbers, the Debian revision as a
    pre-release (``1:1.2.13.dfsg-1`` is ``1.2.13-1``); unique among ``taken``."""
    upstream, _, revision = debian_version.split(":")[-1].rpartition("-")
    upstream = upstream or revision
    nums = [str(int(n)) for n in re.findall(r"\d+", upstream)[:3]] + ["0", "0", "0"]
    parts = re.findall(r"[0-9A-Za-z]+", revision if upstream != revision else "")
    pre = ".".join(str(int(p)) if p.isdigit() else p for p in parts)
    out = ".".join(nums[:3]) + (f"-{pre}" if pre else "")
    while out in taken:
        out += "-b" if "-" not in out else ".b"
    taken.add(out)
    return out


def readme(rec: Dict[str, str], entry: Optional[dict]) -> str:
    summary, paras = debian_meta.description(rec)
    out = [f"# {rec['Package']}", summary, *paras]
    if rec.get("Homepage"):
        out.append(f"Homepage: <{rec['Homepage']}>")
    if entry:
        out += [f"## Changes in {entry['version']}", "```\n" + entry["text"] + "\n```"]
    return "\n\n".join(out) + "\n"


def tarball(files: Dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo("package/" + name)
            info.size, info.mtime, info.mode = len(data), 499162500, 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class Registry:
    """Publishes through the registry's own API what ``npm publish`` sends."""

    def __init__(self, base: str):
        self.base = base
        self.token = ""

    def call(self, method: str, path: str, body: object) -> dict:
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        req = urllib.request.Request(self.base + path, method=method, data=json.dumps(body).encode(), headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                return json.loads(resp.read() or b"{}")
        except urllib.error.HTTPError as err:
            raise RuntimeError(f"{method} {path}: {err.code} {err.read()[:300]!r}") from err

    def add_user(self) -> None:
        user = {"name": USER, "password": PASSWORD, "type": "user", "roles": [], "date": "2024-01-01T00:00:00.000Z"}
        self.token = self.call("PUT", f"/-/user/org.couchdb.user:{USER}", user)["token"]

    def publish(self, manifest: dict, text: str) -> None:
        name, version = manifest["name"], manifest["version"]
        tgz = tarball({"package.json": json.dumps(manifest, indent=2), "README.md": text,
                       "index.js": "module.exports = {};\n"})
        filename = f"{name.split('/')[-1]}-{version}.tgz"
        meta = dict(manifest, _id=f"{name}@{version}", readme=text, dist={
            "shasum": hashlib.sha1(tgz).hexdigest(),
            "integrity": "sha512-" + base64.b64encode(hashlib.sha512(tgz).digest()).decode(),
            "tarball": f"{self.base}/{name}/-/{filename}"})
        self.call("PUT", "/" + name.replace("/", "%2f"), {
            "_id": name, "name": name, "description": manifest["description"], "dist-tags": {"latest": version},
            "versions": {version: meta}, "readme": text, "access": None,
            "_attachments": {filename: {"content_type": "application/octet-stream",
                                        "data": base64.b64encode(tgz).decode(), "length": len(tgz)}}})


def choose() -> List[Dict[str, str]]:
    """``PACKAGES`` installed packages with a changelog of their own, spread over the alphabet."""
    own = set(debian_meta.changelog_packages())
    recs = [r for r in debian_meta.packages() if r["Package"] in own and r.get("Description")]
    step = max(1, len(recs) / PACKAGES)
    return [recs[int(i * step)] for i in range(min(PACKAGES, len(recs)))]


def publish_package(reg: Registry, rec: Dict[str, str], names: Dict[str, str]) -> Tuple[str, List[str]]:
    """Publish a package's versions, oldest first; ``(npm name, [versions, oldest first])``."""
    entries = list(reversed(debian_meta.changelog(rec["Package"], limit=2))) or [None]
    deps = {}
    for dep in rec.get("Depends", "").split(","):
        dep_name = dep.strip().split(" ")[0].split(":")[0]
        if dep_name in names and dep_name != rec["Package"]:
            deps[names[dep_name]] = "*"
    summary, _ = debian_meta.description(rec)
    taken: set = set()
    versions = []
    for entry in entries:
        version = semver(entry["version"] if entry else rec.get("Version", "1.0.0"), taken)
        section = rec.get("Section", "misc").split("/")[-1]
        manifest = {"name": names[rec["Package"]], "version": version, "description": summary, "main": "index.js",
                    "license": "SEE LICENSE IN copyright", "keywords": ["debian", section],
                    "homepage": rec.get("Homepage") or None, "dependencies": deps,
                    "author": {"name": entry["author"], "email": entry["email"]} if entry else None}
        reg.publish({k: v for k, v in manifest.items() if v is not None}, readme(rec, entry))
        versions.append(version)
    return names[rec["Package"]], versions


def publish_all(reg: Registry, recs: List[Dict[str, str]]) -> List[Tuple[str, List[str]]]:
    """Publish every package (four at a time, each one's versions in order)."""
    names = {r["Package"]: npm_name(r["Package"]) for r in recs}
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        return list(pool.map(lambda rec: publish_package(reg, rec, names), recs))


def build_truth(published: List[Tuple[str, List[str]]], a: str, b: str,
                with_versions: bool = False) -> appbench.Truth:
    truth: appbench.Truth = {}

    def group(name: str, urls: List[str], label: Optional[str] = None) -> None:
        for url in urls:
            assert url not in truth, url
            truth[url] = (name, label)

    group("home", [f"{a}/", f"{b}/"])
    for i, (name, versions) in enumerate(published):
        page = f"{a}/-/web/detail/{name}"
        variants = []
        if i % 12 == 4:
            variants = [(f"{page}/v/{versions[-1]}", f"{page}/", f"{page}?utm_source=newsletter&utm_medium=email",
                         page.replace("/@", "/%40", 1) if "@" in name else f"{page}?utm_campaign=release",
                         page.replace(a, b, 1))[(i // 12) % 5]]
        group(name, [page] + variants)
        if with_versions and len(versions) > 1 and i % 5 < 3:
            group(f"{name}@{versions[0]}", [f"{page}/v/{versions[0]}"])
    missing = ("left-pad-deb", "nosuchpackage", "@debian/libnosuch1", "zlib-ng-runtime", "@debian/libfoo-dev")
    group("not-found", [f"{a}/-/web/detail/{m}" for m in missing]
          + [f"{b}/-/web/detail/{missing[1]}", f"{a}/-/web/detail/{published[3][0].upper()}",
             f"{a}/-/web/detail/{published[9][0].upper()}", f"{a}/-/web/settings", f"{a}/-/web/packages",
             f"{b}/-/web/about"], "E3")
    return truth


def wait_for_list(path: str, n: int, timeout: float = 60) -> None:
    """Until Verdaccio's package list (``.verdaccio-db.json``, written after each publish) names ``n`` packages."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError, ValueError):
            with open(path, encoding="utf-8") as fh:
                if len(json.load(fh)["list"]) >= n:
                    return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{path} does not list the {n} packages published")
        time.sleep(0.2)


@contextlib.contextmanager
def build(args: argparse.Namespace, tmp: str) -> Iterator[appbench.Truth]:
    exe = ensure_packages()
    os.makedirs(tmp, exist_ok=True)
    config = os.path.join(tmp, "config.yaml")
    with open(config, "w", encoding="utf-8") as fh:
        fh.write(CONFIG.format(storage=os.path.join(tmp, "storage"), htpasswd=os.path.join(tmp, "htpasswd")))
    recs = choose()

    def serve(name: str):
        port = servers.free_port()
        return servers.app_server([exe, "--config", config, "--listen", f"127.0.0.1:{port}"], port,
                                  os.path.join(tmp, f"verdaccio-{name}.log"), "/-/ping", cwd=tmp)

    with contextlib.ExitStack() as stack:
        a = stack.enter_context(serve("a"))
        reg = Registry(a)
        reg.add_user()
        published = publish_all(reg, recs)
        # the second process reads the storage's package list once, when it starts: after the first wrote it all
        wait_for_list(os.path.join(tmp, "storage", ".verdaccio-db.json"), len(published))
        b = stack.enter_context(serve("b"))
        listed = json.loads(servers.fetch(b + "/-/verdaccio/data/packages", timeout=60).body)
        if len(listed) != len(published):
            raise RuntimeError(f"the second Verdaccio lists {len(listed)} packages of {len(published)}")
        yield build_truth(published, a, b, args.versions)


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--versions", action="store_true",
                        help="also the older version's page of three packages in five, each a page of its own")


if __name__ == "__main__":
    sys.exit(appbench.main("spa-versions" if "--versions" in sys.argv else "spa", build, __doc__, add_args))
