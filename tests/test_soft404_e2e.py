"""Soft-404 calibration and the favicon pivot, end to end: real Chromium, the ``websim`` CLI in a
subprocess, a fleet of servers on 127.0.0.1 each with its own "not found" answer
(``scrapy_websim/testing/soft404_fleet.py``)."""

from __future__ import annotations

import os

import pytest

from scrapy_websim.render.capture import favicon_hash
from scrapy_websim.testing.crawl import load, run_websim
from scrapy_websim.testing.soft404_fleet import fleet, score, url_list

pytestmark = pytest.mark.crawl

KINDS = ["soft", "hard", "spa", "home", "soft"]


def _crawl(tmp_path, name, extra):
    out = os.path.join(str(tmp_path), f"{name}.json")
    proc = run_websim(["-l", os.path.join(str(tmp_path), "urls.txt"), "-o", out, "--loglevel", "INFO", *extra],
                      cwd=str(tmp_path), timeout=400)
    assert proc.returncode == 0, proc.stderr[-6000:]
    return load(out)


def test_custom_404_templates_are_e3_only_with_calibration(tmp_path):
    with fleet(KINDS, pages=4) as servers:
        urls, truth = url_list(servers, 3)
        with open(os.path.join(str(tmp_path), "urls.txt"), "w", encoding="utf-8") as fh:
            fh.write("\n".join(urls) + "\n")
        # 8 URLs per origin: below crawl.soft404_min_urls (WEBSIM_PARAMS), so the default crawl makes no probe
        plain = _crawl(tmp_path, "plain", [])
        calibrated = _crawl(tmp_path, "calibrated", ["--calibrate-404"])

    assert "soft404" not in plain["meta"]
    for data in (plain, calibrated):
        assert [row["url"] for row in data["urls"]] == urls  # probes are never url records
    bases = {str(info["base"]): info for info in servers}
    soft_dead = [u for u, t in truth.items() if t == "e3" and bases[u[:u.index("/", 8)]]["kind"] == "soft"]
    rows = {row["url"]: row for row in calibrated["urls"]}
    plain_rows = {row["url"]: row for row in plain["urls"]}
    # the soft servers' dead links answer 200 with a template that has no error word: E3 only calibrated
    assert soft_dead and all(rows[u]["cluster_kind"] == "E3" for u in soft_dead), [rows[u] for u in soft_dead]
    assert all(plain_rows[u]["cluster_kind"] != "E3" for u in soft_dead)
    assert score(calibrated["urls"], truth)["recall"] == 1.0
    # no home or content page is E3, in particular not on the catch-all server (home page for every path)
    for data in (plain, calibrated):
        assert score(data["urls"], truth)["content_as_e3"] == 0

    info = calibrated["meta"]["soft404"]
    by_origin = {o["origin"]: o for o in info["origins"]}
    assert set(by_origin) == set(bases)
    for base, server in bases.items():
        origin = by_origin[base]
        assert len(origin["probes"]) == 1 and origin["probes"][0]["url"].startswith(base + "/")
        assert origin["probes"][0]["url"] not in rows
        if server["kind"] == "soft":
            assert origin["calibrated"] and origin["labelled_e3"] == 3, origin
        elif server["kind"] == "spa":
            assert not origin["calibrated"] and "home page" in origin["not_calibrated"], origin
        elif server["kind"] == "home":
            assert not origin["calibrated"] and "redirect" in origin["not_calibrated"], origin

    # the favicon pivot: each server's /favicon.ico, hashed the way Shodan does, on its rendered pages
    for base, server in bases.items():
        expected = favicon_hash(f"icon-of-site-{server['site']}".encode())
        page = rows[f"{base}/doc/{server['slugs'][0]}"]
        assert page["favicon_url"] == f"{base}/favicon.ico" and page["favicon_hash"] == expected, page
    assert len({rows[f"{b}/"]["favicon_hash"] for b in bases}) == len(bases)
