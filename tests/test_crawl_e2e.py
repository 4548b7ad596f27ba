"""End-to-end: real Chromium renders the bundled demo site; assertions on the output files."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys

import pytest

from scrapy_websim.core.types import OUTPUT_FIELDS
from scrapy_websim.testing.crawl import by_url, crawl, load, scrapy_env
from tests.crawl import REPO, demo_site

pytestmark = pytest.mark.crawl


def _refused_port() -> int:
    with socket.socket() as s:  # bound then closed: nothing listens there
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _features(path):
    rows = load(path)
    assert rows[0] == {"kind": "websim-features", "version": 1}  # the header websim cluster checks
    return rows[1:]


@pytest.fixture(scope="module")
def demo_crawl(tmp_path_factory):
    """One crawl of the demo site through `scrapy crawl websim` in example_project, three feeds."""
    tmp = tmp_path_factory.mktemp("demo")
    with demo_site(2) as (base, mirror):
        refused = f"http://127.0.0.1:{_refused_port()}/"
        paths = ["/", "/article/rivers", "/article/rivers?utm_source=x", "/mirror/rivers", "/article/bread",
                 "/article/comets", "/article/bees", "/js/bees", "/old/comets", "/login", "/account",
                 "/no-such-page", "/gone", "/broken", "/maintenance", "/admin", "/thin", "/index.html",
                 "/report.json", "/loop/a", "/hang"]
        lines = ["# demo list", ""] + [base + p for p in paths] + [
            mirror + "/article/rivers", refused, "this is not a url", "ftp://127.0.0.1/file", "# end"]
        listing = tmp / "urls.txt"
        listing.write_text("\n".join(lines) + "\n", encoding="utf-8")
        outs = {ext: str(tmp / f"result.{ext}") for ext in ("json", "csv", "jsonl")}
        feats = str(tmp / "features.jsonl")
        shots = str(tmp / "shots")
        cmd = [sys.executable, "-m", "scrapy", "crawl", "websim", "-a", f"urls={listing}",
               "-s", "WEBSIM_HTTP_TIMEOUT=4", "-s", "WEBSIM_PAGE_TIMEOUT=8", "-s", "WEBSIM_STABLE_TIMEOUT=4",
               "-s", f"WEBSIM_FEATURES_FILE={feats}", "-s", f"WEBSIM_SCREENSHOTS_DIR={shots}"]
        for path in outs.values():
            cmd += ["-o", path]
        env = scrapy_env(tmp)
        proc = subprocess.run(cmd, cwd=os.path.join(REPO, "example_project"), env=env,
                              capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-6000:]
    return {
        "base": base, "mirror": mirror, "refused": refused,
        "inputs": [ln for ln in lines if ln and not ln.startswith("#")],
        "outs": outs, "log": proc.stderr, "json": load(outs["json"]), "features": _features(feats), "shots": shots,
    }


def test_every_input_line_is_one_record_in_input_order(demo_crawl):
    rows = demo_crawl["json"]["urls"]
    assert [r["id"] for r in rows] == list(range(1, len(demo_crawl["inputs"]) + 1))
    assert [r["url"] for r in rows] == demo_crawl["inputs"]
    assert demo_crawl["json"]["meta"]["total_urls"] == len(demo_crawl["inputs"])


def test_json_shape_and_field_order(demo_crawl):
    data = demo_crawl["json"]
    assert list(data) == ["urls", "clusters", "meta"]
    for row in data["urls"]:
        assert tuple(row) == OUTPUT_FIELDS
    for key in ("total_urls", "eligible_html_urls", "total_clusters", "sim_threshold", "generated_at"):
        assert key in data["meta"]
    assert data["meta"]["sim_threshold"] == 0.85


def test_javascript_text_is_rendered(demo_crawl):
    base = demo_crawl["base"]
    feats = {f["url"]: f for f in demo_crawl["features"]}
    js, static = feats[base + "/js/bees"], feats[base + "/article/bees"]
    # the article text arrives by fetch() after the load event: a static fetch has only "Loading..."
    assert js["text_len"] > 400
    assert abs(js["text_len"] - static["text_len"]) < 0.1 * static["text_len"]
    assert js["rendered"] is True and len(js["timings"]) == 3


def test_redirect_chain_and_final_url(demo_crawl):
    base = demo_crawl["base"]
    row = by_url(demo_crawl["json"])[base + "/old/comets"]
    assert row["redirect_chain"] == [base + "/old/comets", base + "/moved/comets", base + "/article/comets"]
    assert row["final_url"] == base + "/article/comets"
    assert row["status_code"] == 200 and row["error"] == ""


def test_error_statuses_are_recorded_with_their_status(demo_crawl):
    rows = by_url(demo_crawl["json"])
    base = demo_crawl["base"]
    assert rows[base + "/broken"]["status_code"] == 500
    assert rows[base + "/no-such-page"]["status_code"] == 404
    assert rows[base + "/account"]["status_code"] == 401
    assert rows[base + "/maintenance"]["status_code"] == 503
    for path in ("/broken", "/no-such-page", "/account"):
        assert rows[base + path]["error"] == ""
        assert rows[base + path]["title"]


def test_failures_are_records_with_readable_errors(demo_crawl):
    rows = by_url(demo_crawl["json"])
    base = demo_crawl["base"]
    assert "connection refused" in rows[demo_crawl["refused"]]["error"]
    assert "timed out" in rows[base + "/hang"]["error"]
    assert "redirect" in rows[base + "/loop/a"]["error"]
    assert rows["this is not a url"]["error"].startswith("not a URL")
    assert "unsupported scheme 'ftp'" in rows["ftp://127.0.0.1/file"]["error"]
    for url in (demo_crawl["refused"], base + "/hang", "this is not a url"):
        assert rows[url]["is_canonical"] is True and rows[url]["cluster_id"] == ""


def test_non_html_is_recorded_not_rendered(demo_crawl):
    base = demo_crawl["base"]
    row = by_url(demo_crawl["json"])[base + "/report.json"]
    assert row["status_code"] == 200 and row["content_type"].startswith("application/json")
    assert row["error"] == ""
    feats = {f["url"]: f for f in demo_crawl["features"]}
    assert feats[base + "/report.json"]["rendered"] is False


def test_screenshots_saved_and_hashed(demo_crawl):
    feats = {f["url"]: f for f in demo_crawl["features"]}
    rec = feats[demo_crawl["base"] + "/article/rivers"]
    assert rec["phash"] and len(rec["phash"]) == 16
    with open(os.path.join(demo_crawl["shots"], f"{rec['id']}.png"), "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"


def test_csv_columns_booleans_and_rows(demo_crawl):
    rows = load(demo_crawl["outs"]["csv"])
    assert tuple(rows[0]) == OUTPUT_FIELDS
    assert len(rows) == 1 + len(demo_crawl["inputs"])
    col = OUTPUT_FIELDS.index("is_canonical")
    assert {r[col] for r in rows[1:]} <= {"true", "false"}
    assert json.loads(rows[1][OUTPUT_FIELDS.index("redirect_chain")])


def test_jsonl_one_record_per_line(demo_crawl):
    rows = load(demo_crawl["outs"]["jsonl"])
    assert [r["id"] for r in rows] == [r["id"] for r in demo_crawl["json"]["urls"]]
    assert all(tuple(r) == OUTPUT_FIELDS for r in rows)


def test_stats_and_progress(demo_crawl):
    log = demo_crawl["log"]
    assert "'websim/rendered':" in log and "'websim/failed':" in log
    assert "websim: " in log


def test_cli_comma_list_and_bad_output(tmp_path):
    with demo_site() as (base,):
        result = crawl(tmp_path, [base + "/article/bread", "not a url"], output="r.jsonl")
        rows = result["data"]
        assert [r["id"] for r in rows] == [1, 2]
        assert rows[0]["status_code"] == 200 and rows[1]["error"]
    from scrapy_websim.testing.crawl import run_websim

    bad = run_websim(["-l", "http://127.0.0.1:9/", "-o", str(tmp_path / "r.xml")], cwd=str(tmp_path))
    assert bad.returncode == 2 and ".json, .jsonl or .csv" in bad.stderr


def _cluster_of(rows, url):
    return rows[url]["cluster_id"]


def test_content_clusters_are_right(demo_crawl):
    """Noisy copies, a tracking variant, a redirect, a JS-rendered copy and a mirror on another
    origin merge with their original; different articles never merge."""
    rows = by_url(demo_crawl["json"])
    base, mirror = demo_crawl["base"], demo_crawl["mirror"]
    rivers = {base + "/article/rivers", base + "/article/rivers?utm_source=x", base + "/mirror/rivers",
              mirror + "/article/rivers"}
    groups = [rivers, {base + "/article/comets", base + "/old/comets"}, {base + "/article/bees", base + "/js/bees"}]
    seen = set()
    for group in groups:
        ids = {_cluster_of(rows, u) for u in group}
        assert len(ids) == 1 and ids != {""}, {u: rows[u]["cluster_id"] for u in group}
        cid = ids.pop()
        assert cid.startswith("cluster-") and cid not in seen
        seen.add(cid)
        canon = [u for u in group if rows[u]["is_canonical"]]
        assert len(canon) == 1
        for u in group - set(canon):
            assert rows[u]["match_rule"] in ("rule1", "rule2") and rows[u]["content_sim"] > 0
            assert rows[u]["cluster_kind"] == "content"
    assert rows[base + "/article/bread"]["cluster_id"] == ""  # unique content stays alone
    clusters = {c["cluster_id"]: c for c in demo_crawl["json"]["clusters"]}
    for cid in seen:
        assert clusters[cid]["kind"] == "content"
    # the canonical of the rivers cluster is the input page, not a variant
    assert clusters[rows[base + "/article/rivers"]["cluster_id"]]["canonical_url"] == base + "/article/rivers"


def test_special_pages_are_labelled(demo_crawl):
    rows = by_url(demo_crawl["json"])
    base = demo_crawl["base"]
    kinds = {p: rows[base + p]["cluster_kind"] for p in
             ("/broken", "/maintenance", "/no-such-page", "/gone", "/login", "/account", "/admin", "/thin")}
    assert kinds == {"/broken": "E1", "/maintenance": "E1", "/no-such-page": "E3", "/gone": "E3",
                     "/login": "L1", "/account": "L1", "/admin": "W1", "/thin": "T1"}
    assert re.fullmatch(r"err5xx-[0-9a-f]{16}", rows[base + "/broken"]["cluster_id"])  # one per template
    assert rows[base + "/login"]["cluster_id"] == rows[base + "/account"]["cluster_id"]
    clusters = {c["cluster_id"]: c for c in demo_crawl["json"]["clusters"]}
    assert clusters[rows[base + "/admin"]["cluster_id"]]["member_ids"] == [rows[base + "/admin"]["id"]]


def test_offline_recluster_from_features_file(demo_crawl, tmp_path):
    """`websim cluster` on the crawl's features file gives the crawl's clusters, and other
    thresholds give other clusters, without rendering."""
    from scrapy_websim.testing.crawl import run_websim

    feats = os.path.join(os.path.dirname(demo_crawl["outs"]["json"]), "features.jsonl")
    out = tmp_path / "again.json"
    proc = run_websim(["cluster", feats, "-o", str(out)], cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    again = load(str(out))
    assert again["urls"] == demo_crawl["json"]["urls"]
    assert again["clusters"] == demo_crawl["json"]["clusters"]
    per_host = tmp_path / "per_host.csv"
    proc = run_websim(["cluster", feats, "-o", str(per_host), "--same-host-only"], cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    rows = load(str(per_host))
    col = {name: OUTPUT_FIELDS.index(name) for name in ("url", "cluster_id", "cluster_kind")}
    by = {r[col["url"]]: r for r in rows[1:]}
    mirror, base = demo_crawl["mirror"], demo_crawl["base"]
    assert by[mirror + "/article/rivers"][col["cluster_id"]] == ""  # the mirror's host is compared alone
    assert by[base + "/mirror/rivers"][col["cluster_id"]] == by[base + "/article/rivers"][col["cluster_id"]] != ""
    bad = run_websim(["cluster", feats, "-o", str(tmp_path / "x.json"), "--text-threshold", "7"], cwd=str(tmp_path))
    assert bad.returncode == 2 and "WEBSIM_TEXT_JACCARD_THRESHOLD" in bad.stderr


def test_decision_flags_do_what_their_help_says(demo_crawl, tmp_path):
    """--text-threshold is rule 1's text threshold on the default path (the MinHash measure whose value
    is content_sim), and --structure-threshold / --visual-threshold its other two: re-clustered with
    each just above a pair that rule 1 joined, that pair is no longer joined by rule 1."""
    from scrapy_websim.testing.crawl import run_websim

    feats = os.path.join(os.path.dirname(demo_crawl["outs"]["json"]), "features.jsonl")
    joined = [r for r in demo_crawl["json"]["urls"] if r["match_rule"] == "rule1"]
    assert joined
    lowest = min(joined, key=lambda r: r["content_sim"])
    assert lowest["content_sim"] < 0.999
    for flags, holds in (
            (["--text-threshold", f"{lowest['content_sim'] + 0.0005:.4f}"],
             lambda r, x: r["content_sim"] >= x[0]),
            (["--structure-threshold", "0.9999", "--visual-threshold", "0.9999"],
             lambda r, x: r["structure_sim"] >= x[0] or r["visual_sim"] >= x[1])):
        out = tmp_path / f"{flags[0].strip('-')}.json"
        proc = run_websim(["cluster", feats, "-o", str(out), *flags], cwd=str(tmp_path))
        assert proc.returncode == 0, proc.stderr
        values = [float(v) for v in flags[1::2]]
        rows = load(str(out))["urls"]
        assert all(holds(r, values) for r in rows if r["match_rule"] == "rule1"), flags
        if flags[0] == "--text-threshold":
            again = {r["url"]: r for r in rows}[lowest["url"]]
            assert again["match_rule"] != "rule1", again


def test_any_spider_with_the_addon_is_rendered_and_clustered(tmp_path):
    """A plain user spider (example_project's `site`) gets every visited page as a record, its
    failures included, with the same clustering; ids follow URL order. Its -o holds its own items."""
    out = tmp_path / "site.json"
    items = tmp_path / "items.jsonl"
    with demo_site() as (base,):
        refused = f"http://127.0.0.1:{_refused_port()}/"
        env = scrapy_env(tmp_path)
        proc = subprocess.run(
            [sys.executable, "-m", "scrapy", "crawl", "site", "-a", f"start={base}/,{refused}", "-o", str(items),
             "-s", f"WEBSIM_OUTPUT={out}", "-s", "WEBSIM_HTTP_TIMEOUT=4", "-s", "WEBSIM_PAGE_TIMEOUT=8"],
            cwd=os.path.join(REPO, "example_project"), env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-4000:]
    own = load(str(items))
    assert own and all(set(item) == {"url", "title"} for item in own)
    data = load(str(out))
    rows = {r["url"]: r for r in data["urls"]}
    assert [r["id"] for r in data["urls"]] == list(range(1, len(rows) + 1))
    assert [r["url"] for r in data["urls"]] == sorted(rows)
    assert base + "/" in rows and base + "/article/bread" in rows
    assert "connection refused" in rows[refused]["error"]
    group = {base + "/article/rivers", base + "/mirror/rivers",
             base + "/article/rivers?utm_source=newsletter&utm_medium=email"}
    assert len({rows[u]["cluster_id"] for u in group}) == 1 and rows[base + "/article/rivers"]["cluster_id"]
    assert rows[base + "/js/bees"]["cluster_id"] == rows[base + "/article/bees"]["cluster_id"] != ""


def test_structure_measure_setting_shows_in_output(demo_crawl, tmp_path):
    """--structure-measure lcs (``decision.structure_measure``): structure_sim is the tag-sequence LCS
    similarity, not the path measure."""
    from scrapy_websim.core.page.lcs import lcs_similarity
    from scrapy_websim.testing.crawl import run_websim

    feats = os.path.join(os.path.dirname(demo_crawl["outs"]["json"]), "features.jsonl")
    out = tmp_path / "lcs.json"
    proc = run_websim(["cluster", feats, "-o", str(out), "--structure-measure", "lcs"], cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    rows = by_url(load(str(out)))
    records = {f["url"]: f for f in demo_crawl["features"]}
    base = demo_crawl["base"]
    js, canon = rows[base + "/js/bees"], rows[base + "/article/bees"]
    assert js["cluster_id"] == canon["cluster_id"] and canon["is_canonical"]
    expected = lcs_similarity(records[base + "/js/bees"]["tag_seq"], records[base + "/article/bees"]["tag_seq"])
    assert js["structure_sim"] == round(expected, 6)
    assert js["structure_sim"] != by_url(demo_crawl["json"])[base + "/js/bees"]["structure_sim"]
    assert {r["page_type"] for r in rows.values()} >= {"detail"}
