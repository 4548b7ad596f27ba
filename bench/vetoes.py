"""Ablation of the decision's checks: which bench needs each check that can keep two pages apart
beyond the main similarity thresholds?

    python bench/vetoes.py --kept /work/kept                 # every check, every kept crawl, textsim
    python bench/vetoes.py --kept /work/kept --checks more items --no-textsim
    python bench/vetoes.py --kept /work/kept --checks none   # the figures as shipped

Each check is turned off in turn, by its parameter where it has one (``-s WEBSIM_PARAMS=...``) or
by replacing the function that works it out with one that never fires (in this process only),
and every kept crawl is clustered again from its features (``websim cluster``, in process) and
scored against its truth as ``bench/appbench.py`` (and, for a fleet-scale run, as
``bench/fleetscale.py --rescore``) scores it. The features are computed once per crawl from its
kept HTML with this code (``appbench.refeature``; the crawl's pHash kept), into ``--work``
(reused when there, ``--refeature`` to compute them again), never into the kept folder; a kept
run without HTML (a fleet-scale run) is clustered from its own features file.

``bench/textsim.py`` (8 templates of real documentation, each page against its noisy copy and
every other page of its template) runs with each check off too: "different" is the number of
pairs of different pages that the decision calls duplicates (must stay 0), "copies" the copies
that are duplicates of their page.

The table prints, per check, only the cells that change from the shipped decision (``none``):
``F1 lost false_pairs`` of the set with the check off, after the shipped figures.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import os
import sys
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _p in (REPO, os.path.join(REPO, "bench")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import appbench  # noqa: E402

from scrapy_websim.core.match import cluster as cluster_mod  # noqa: E402
from scrapy_websim.core.match import similarity  # noqa: E402
from scrapy_websim.result import finalize  # noqa: E402

#: The kept crawls re-scored, relative to ``--kept``.
SETS = ("trac fossil cgit2 c-datasette3 c-logins2 c-spa3 blog2 held-redmine held-hgweb held-roundup held-gitweb "
        "held2-mhonarc held2-phpmyadmin held2-spirit held3-devpi held3-helpdesk held3-wagtail wiki-short "
        "dokuwiki-short sites/docs sites/cjk platforms/javadoc platforms/doxygen platforms/mkdocs fleet/fleet "
        "s4/fleet").split()


def _never(*_args: Any, **_kw: Any) -> bool:
    return False


def _no_short_items(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapped(*args: Any, **kw: Any) -> Any:
        kw["short_items"] = frozenset()
        return fn(*args, **kw)
    return wrapped


#: name -> (what it is, WEBSIM_PARAMS that turn it off, [(module, attribute, replacement(old))]).
CHECKS: Dict[str, Tuple[str, Dict[str, Any], List[Tuple[Any, str, Callable[[Any], Any]]]]] = {
    "none": ("the decision as shipped", {}, []),
    "heading": ("the heading check (h1 words, decision.heading_min_jaccard)",
                {"decision.heading_min_jaccard": 0.0}, []),
    "prose": ("the prose length check (decision.prose_min_len_ratio)", {"decision.prose_min_len_ratio": 0.0}, []),
    "more": ('the "says much more" check (decision.max_more_shingles)', {"decision.max_more_shingles": 0}, []),
    "items": ("the item check (similarity.items_differ), also on identical text", {},
              [(similarity, "items_differ", lambda old: _never)]),
    "title_items": ("the title-item check (similarity.title_items_differ), also on identical text", {},
                    [(similarity, "title_items_differ", lambda old: _never)]),
    "fields": ("the form check (similarity.fields_differ), also on identical text", {},
               [(similarity, "fields_differ", lambda old: _never)]),
    "titles": ("the title check (decision.title_own_words)", {"decision.title_own_words": 0}, []),
    "identical_checks": ("the item/title-item/form checks on pages of identical judged text "
                         "(similarity._names_two_items)", {},
                         [(similarity, "_names_two_items", lambda old: _never)]),
    "exact_key_heading": ("the heading (h1, or title) in the exact-copy key (cluster.copy_keys)", {},
                          [(cluster_mod, "copy_keys", lambda old: (lambda keys: keys.exact))]),
    "short_exact": ("short items of a site join exact copies only (finalize.cluster_content)", {},
                    [(finalize, "cluster_content", _no_short_items)]),
    "templated": ("the stricter text threshold for templated pages (decision.rule1_templated)",
                  {"decision.rule1_templated": 0.0}, []),
    "rule2_floor": ("rule 2's text floor (decision.rule2_min_jaccard)", {"decision.rule2_min_jaccard": 0.0}, []),
}


@contextlib.contextmanager
def turned_off(check: str) -> Iterator[Dict[str, Any]]:
    """Apply ``check``'s replacements for the duration; yields its WEBSIM_PARAMS."""
    _, params, patches = CHECKS[check]
    saved = []
    try:
        for module, attr, make in patches:
            old = getattr(module, attr)
            saved.append((module, attr, old))
            setattr(module, attr, make(old))
        yield params
    finally:
        for module, attr, old in reversed(saved):
            setattr(module, attr, old)


def features_of(kept: str, name: str, work: str, again: bool) -> str:
    """The features file a set is clustered from: computed from its kept HTML with this code into
    ``work`` (once), or the run's own when it kept no HTML."""
    src = os.path.join(kept, name)
    if not os.path.exists(os.path.join(src, "pages.jsonl.gz")):
        for f in ("features.jsonl", "features-default.jsonl"):
            if os.path.exists(os.path.join(src, f)):
                return os.path.join(src, f)
        raise FileNotFoundError(f"{src}: no features")
    out = os.path.join(work, name.replace("/", "+"), "features.jsonl")
    if again or not os.path.exists(out):
        os.makedirs(os.path.dirname(out), exist_ok=True)
        tmp = os.path.join(os.path.dirname(out), "refeature")
        os.makedirs(tmp, exist_ok=True)
        for f in ("features.jsonl", "pages.jsonl.gz"):  # refeature() writes next to its input
            dst = os.path.join(tmp, f)
            if not os.path.exists(dst):
                os.symlink(os.path.join(src, f), dst)
        os.replace(appbench.refeature(tmp), out)
    return out


def score_set(kept: str, name: str, rows: Dict[str, dict]) -> Dict[str, Any]:
    src = os.path.join(kept, name)
    with open(os.path.join(src, "truth.json"), encoding="utf-8") as fh:
        data = json.load(fh)
    if data.get("name") == "fleetscale":
        import fleetscale
        truth = {u: (g, lab) for u, (g, lab) in data["truth"].items()}
        sc = fleetscale.score_run(truth, rows)
        urls = fleetscale.scored(truth)
        true_pairs = appbench._pairs({u: truth[u][0] for u in urls})
        got_pairs = appbench._pairs({u: rows[u]["cluster_id"] for u in urls if u in rows})
        return {"f1": round(sc["f1"], 4), "lost": sc["lost"], "false": len(got_pairs - true_pairs),
                "missed": len(true_pairs - got_pairs), "labels": f"{sc['labels_right']}/{sc['labels_total']}"}
    _, truth, family = appbench.load_truth(src)
    line = appbench.score(data.get("name", name), truth, rows, False, family)
    fields = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
    return {"f1": float(fields["f1"]), "lost": int(fields["lost"]), "false": int(fields["false_pairs"]),
            "missed": int(fields["missed_pairs"]), "labels": fields["rules"]}


def cluster_set(features: str, out: str, params: Dict[str, Any]) -> Dict[str, dict]:
    from scrapy_websim.commands import cluster as cluster_cmd

    argv = [features, "-O", out]
    if params:
        argv += ["-s", "WEBSIM_PARAMS=" + json.dumps(params)]
    os.makedirs(os.path.dirname(out), exist_ok=True)
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            code = cluster_cmd.main(argv)
    except SystemExit as exc:  # the command's usage errors
        code = exc.code if isinstance(exc.code, int) else 2
    if code not in (0, 1):
        raise RuntimeError(f"websim cluster {features}: exit {code}: {err.getvalue()[-2000:]}")
    return appbench.load_rows(out)


def textsim_run(params: Dict[str, Any], pages: int) -> Dict[str, Any]:
    """``bench/textsim.py`` with the shipped decision under ``params`` (and whatever
    :func:`turned_off` replaced): per template the copies that are duplicates and the different
    pairs that are."""
    import textsim

    decision = similarity.DEFAULT_DECISION_PARAMS
    if params:
        from dataclasses import replace
        decision = replace(decision, **{k.split(".", 1)[1]: v for k, v in params.items()})
    saved = textsim.compare
    textsim.compare = lambda a, b, template=None: similarity.compare(a, b, decision, template)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            textsim.main(["--pages", str(pages), "--no-install"])
    finally:
        textsim.compare = saved
    copies = different = 0
    per: Dict[str, str] = {}
    pending = ""
    for line in out.getvalue().splitlines():
        if "copies_duplicate=" in line:
            f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv and kv.split("=", 1)[0] in
                     ("copies_duplicate", "different_duplicate"))
            c, d = int(f["copies_duplicate"].split("/")[0]), int(f["different_duplicate"])
            copies, different = copies + c, different + d
            pending = f"copies {f['copies_duplicate']} different {d}"
        elif ": pages=" in line:
            per[line.split(":")[0]] = pending
    return {"copies": copies, "different": different, "per": per}


def _cache_textsim(path: str) -> Callable[[], None]:
    """Compute each textsim page's features once for all the checks, and each pair's text
    measure (neither depends on the checks), kept in ``path`` for the next run; returns the
    function that saves it."""
    import hashlib
    import pickle

    import textsim

    cache: Dict[Tuple[str, str], Any] = {}
    if os.path.exists(path):
        with open(path, "rb") as fh:
            cache = pickle.load(fh)
    old_features, old_sim = textsim.features, textsim.text_sim

    def features(url: str, html: str, params: Any) -> Any:
        key = (url, hashlib.blake2b(html.encode("utf-8", "replace"), digest_size=16).hexdigest())
        if key not in cache:
            cache[key] = old_features(url, html, params)
        return cache[key]

    sims: Dict[Tuple[str, str], float] = {}

    def text_sim(a: Any, b: Any, *args: Any, **kw: Any) -> float:
        key = (a.url, b.url)
        if key not in sims:
            sims[key] = old_sim(a, b, *args, **kw)
        return sims[key]
    textsim.features, textsim.text_sim = features, text_sim

    def save() -> None:
        with open(path + ".tmp", "wb") as fh:
            pickle.dump(cache, fh)
        os.replace(path + ".tmp", path)
    return save


def fmt(s: Dict[str, Any]) -> str:
    return f"F1 {s['f1']:.3f} lost {s['lost']} false {s['false']}"


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kept", default="/work/kept", help="the folder of kept crawls")
    ap.add_argument("--sets", nargs="*", default=list(SETS), help="kept crawls (relative to --kept)")
    ap.add_argument("--checks", nargs="*", default=list(CHECKS), help=f"checks to turn off: {' '.join(CHECKS)}")
    ap.add_argument("--work", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "websim-vetoes"),
                    help="where the features and results go")
    ap.add_argument("--refeature", action="store_true", help="compute the features again even when in --work")
    ap.add_argument("--no-textsim", action="store_true", help="leave bench/textsim.py out")
    ap.add_argument("--textsim-pages", type=int, default=150)
    ap.add_argument("--json", default="", help="also write every figure here")
    ap.add_argument("--merge", nargs="*", default=[],
                    help="print the table of figures --json wrote (runs split over processes); nothing is run")
    args = ap.parse_args(argv)
    if args.merge:
        merged: Dict[str, Dict[str, Any]] = {}
        for path in args.merge:
            with open(path, encoding="utf-8") as fh:
                for check, cells in json.load(fh).items():
                    merged.setdefault(check, {}).update(cells)
        return table(merged, [c for c in CHECKS if c in merged], [s for s in args.sets if s in merged["none"]])
    checks = args.checks  # "none" (the shipped decision) is the table's reference: leave it out only to --merge
    for c in checks:
        if c not in CHECKS:
            ap.error(f"unknown check {c!r}: {' '.join(CHECKS)}")
    os.makedirs(args.work, exist_ok=True)
    feats = {}
    for name in args.sets:
        t = time.process_time()
        feats[name] = features_of(args.kept, name, args.work, args.refeature)
        print(f"# features {name}: {time.process_time() - t:.1f} CPU s", file=sys.stderr, flush=True)
    save_textsim = _cache_textsim(os.path.join(args.work, "textsim-features.pickle")) if not args.no_textsim else None
    figures: Dict[str, Dict[str, Any]] = {}
    for check in checks:
        figures[check] = {}
        with turned_off(check) as params:
            for name in args.sets:
                out = os.path.join(args.work, name.replace("/", "+"), f"result-{check}.json")
                figures[check][name] = score_set(args.kept, name, cluster_set(feats[name], out, params))
                print(f"# {check} {name}: {fmt(figures[check][name])}", file=sys.stderr, flush=True)
            if not args.no_textsim:
                figures[check]["textsim"] = textsim_run(params, args.textsim_pages)
                if save_textsim is not None:
                    save_textsim()
                print(f"# {check} textsim: {figures[check]['textsim']}", file=sys.stderr, flush=True)
        if args.json:  # after each check: a long run stopped half-way keeps what it did
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump(figures, fh, indent=1)
    return table(figures, checks, args.sets) if "none" in figures else 0


def table(figures: Dict[str, Dict[str, Any]], checks: List[str], sets: List[str]) -> int:
    """Print the shipped figures, then per check the cells that change with it off."""
    base = figures["none"]
    print("| check | bench | shipped | check off |")
    print("| --- | --- | --- | --- |")
    for name in sets:
        print(f"| (none) | {name} | {fmt(base[name])} | |")
    if "textsim" in base:
        print(f"| (none) | textsim | copies {base['textsim']['copies']} different {base['textsim']['different']} | |")
    for check in (c for c in checks if c != "none"):
        changed = 0
        for name in sets:
            a, b = base[name], figures[check][name]
            if (a["f1"], a["lost"], a["false"], a["missed"]) != (b["f1"], b["lost"], b["false"], b["missed"]):
                changed += 1
                print(f"| {check} | {name} | {fmt(a)} | {fmt(b)} |")
        if "textsim" in base:
            a, b = base["textsim"], figures[check]["textsim"]
            if (a["copies"], a["different"]) != (b["copies"], b["different"]):
                changed += 1
                diff = " ".join(f"{t}: {b['per'][t]}" for t in b["per"] if b["per"][t] != a["per"].get(t))
                print(f"| {check} | textsim | copies {a['copies']} different {a['different']} | "
                      f"copies {b['copies']} different {b['different']} ({diff}) |")
        if not changed:
            print(f"| {check} | every bench | | no change |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
