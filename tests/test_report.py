"""The report writer without a browser: data files, escaping, layout, summary, thumbnails, CLI errors.

What the page does with these files is tested in a real browser in ``test_report_browser.py``.
"""

from __future__ import annotations

import io
import json
import os
import re

import pytest
from PIL import Image
from scrapy.settings import Settings

from scrapy_websim import cli
from scrapy_websim.config import WebsimConfig
from scrapy_websim.config_values import ConfigError
from scrapy_websim.result.output import write_csv, write_json, write_jsonl
from scrapy_websim.result.report import writer
from scrapy_websim.result.report.thumbs import make_thumbnail, save_thumbnail, thumbnail_stem
from scrapy_websim.result.report.writer import STATIC_DIR, ReportError, js_payload, load_result, split_url, write_report

HOSTILE = '</script><script>window.__pwned=1</script><!-- \u2028'


def read_payload(path):
    """The payload of one data file, checked to be exactly the one statement the writer emits."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    prefix, suffix = "(window.WEBSIM_Q=window.WEBSIM_Q||[]).push(", ");\n"
    assert text.startswith(prefix) and text.endswith(suffix)
    return json.loads(text[len(prefix):-len(suffix)])


def row(i, url, **kw):
    base = {"id": i, "url": url, "normalized_url": url, "final_url": url, "redirect_chain": [url], "status_code": 200,
            "content_length": 2000, "content_type": "text/html", "error": "", "title": f"page {i}", "cluster_id": "",
            "is_canonical": True, "similarity_to_canonical": 0.0, "content_sim": 0.0, "structure_sim": 0.0,
            "visual_sim": 0.0, "behavior_sim": 0.0, "cluster_kind": "", "match_rule": "", "page_type": "detail"}
    base.update(kw)
    return base


def sample():
    """Two content clusters (3 and 2 pages), an E3 cluster over two hosts, a lone page, two failures."""
    rows = [
        row(1, "http://a.test/x", cluster_id="cluster-00001", cluster_kind="content", match_rule="canonical"),
        row(2, "http://a.test/x?utm_source=1", cluster_id="cluster-00001", cluster_kind="content", is_canonical=False,
            match_rule="rule1", content_sim=0.98, structure_sim=0.97, visual_sim=1.0, behavior_sim=0.9),
        row(3, "https://b.test:8443/x", cluster_id="cluster-00001", cluster_kind="content", is_canonical=False,
            match_rule="rule2", visual_sim=1.0),
        row(4, "http://a.test/404", status_code=404, title=HOSTILE, cluster_id="errtpl-1", cluster_kind="E3",
            match_rule="E3"),
        row(5, "http://c.test:80/404", status_code=404, cluster_id="errtpl-1", cluster_kind="E3", is_canonical=False,
            match_rule="E3", tls_error="self-signed certificate", render_from="http://a.test/404"),
        row(6, "http://a.test/alone", title="alone"),
        row(7, "javascript:window.__pwned=2", status_code=0, error="not a URL: <img src=x onerror=alert(1)>",
            final_url="", normalized_url="", title=""),
        row(8, "http://d.test/", status_code=0, error="net::ERR_CONNECTION_REFUSED", final_url="", title=""),
        row(9, "http://a.test/y", cluster_id="cluster-00002", cluster_kind="content", match_rule="canonical"),
        row(10, "http://a.test/y/", cluster_id="cluster-00002", cluster_kind="content", is_canonical=False,
            match_rule="rule1", content_sim=1.0, structure_sim=1.0, visual_sim=1.0, behavior_sim=1.0),
    ]
    clusters = [
        {"cluster_id": "cluster-00002", "canonical_url": "http://a.test/y", "member_ids": [9, 10], "kind": "content"},
        {"cluster_id": "errtpl-1", "canonical_url": "http://a.test/404", "member_ids": [4, 5], "kind": "E3"},
        {"cluster_id": "cluster-00001", "canonical_url": "http://a.test/x", "member_ids": [1, 2, 3], "kind": "content"},
    ]
    meta = {"total_urls": 10, "eligible_html_urls": 5, "total_clusters": 3, "generated_at": "2026-01-01T00:00:00+00:00"}
    return rows, clusters, meta


def png(width=1280, height=800, color=(200, 30, 30)):
    buf = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buf, "PNG")
    return buf.getvalue()


def load_report(out):
    meta = read_payload(os.path.join(out, "data", "meta.js"))
    full = read_payload(os.path.join(out, meta["clusters_file"]))
    assert full["clusters"][:len(meta["clusters"])] == meta["clusters"]
    meta.update(clusters=full["clusters"], hosts=full["hosts"])
    rows = []
    for name, count in meta["chunks"]:
        part = read_payload(os.path.join(out, name))
        assert part["start"] == len(rows) and len(part["rows"]) == count
        rows.extend(part["rows"])
    return meta, rows


def test_js_payload_leaves_no_tag_opener_and_round_trips():
    payload = {"title": HOSTILE, "url": "http://x/?a=<b>&c=\\<"}
    text = js_payload(payload)
    assert "<" not in text and "\u2028" not in text
    assert "</script" not in text.lower() and "<!--" not in text
    assert read_payload_text(text) == payload


def read_payload_text(text):
    return json.loads(text[len("(window.WEBSIM_Q=window.WEBSIM_Q||[]).push("):-len(");\n")])


def test_report_folder_layout_summary_and_order(tmp_path):
    rows, clusters, meta = sample()
    info = write_report(str(tmp_path), rows, clusters, meta, source="result.json")
    assert info.path == str(tmp_path / "index.html") and info.urls == 10 and info.clusters == 3
    assert info.thumbnails == 0
    for name in ("index.html", "report.js", "report.css", "data/meta.js", "data/rows-000.js"):
        assert (tmp_path / name).is_file()
    m, data = load_report(str(tmp_path))
    s = m["summary"]
    assert (s["urls"], s["clusters"], s["content_clusters"], s["rule_clusters"]) == (10, 3, 2, 1)
    assert (s["kept"], s["saved"], s["alone"], s["failed"]) == (6, 4, 1, 2)  # 3 canonicals + 1 lone + 2 failed
    assert s["took_render"] == 1  # the page that took another page's render
    assert s["by_status"] == [["2xx", 6], ["4xx", 2], ["none", 2]]
    assert [k[0] for k in s["by_kind"]] == ["content", "E3"] and s["by_kind"][0][3] == 5
    # clusters by size; the first rows are each cluster's head, canonical first
    assert [c[0] for c in m["clusters"]] == ["cluster-00001", "cluster-00002", "errtpl-1"]
    assert [r[0] for r in data] == [1, 2, 3, 9, 10, 4, 5, 6, 7, 8]
    assert m["alone_start"] == 7
    # origins derived from the members (default port dropped), the count exact
    assert m["clusters"][0][5] == ["http://a.test", "https://b.test:8443"] and m["clusters"][2][5:] == [
        ["http://a.test", "http://c.test"], 2]
    by_id = {r[0]: r for r in data}
    assert by_id[4][2] == HOSTILE  # kept as data: the page shows it as text
    # fields other versions add are shown
    assert by_id[5][14] == {"tls_error": "self-signed certificate", "render_from": "http://a.test/404"}
    assert by_id[7][10].startswith("not a URL") and by_id[7][11] == m["hosts"].index("")
    assert m["source"] == "result.json" and m["meta"]["total_urls"] == "10"


def test_cluster_origins_field_is_used_when_present(tmp_path):
    rows, clusters, meta = sample()
    clusters[1]["origins"] = ["http://a.test", "http://c.test", "http://e.test"]
    clusters[2]["origins"] = 7  # a count only: the listed origins come from the members
    write_report(str(tmp_path), rows, clusters, meta)
    m, _ = load_report(str(tmp_path))
    got = {c[0]: (c[5], c[6]) for c in m["clusters"]}
    assert got["errtpl-1"] == (["http://a.test", "http://c.test", "http://e.test"], 3)
    assert got["cluster-00001"] == (["http://a.test", "https://b.test:8443"], 7)


def test_clusters_rebuilt_from_rows_of_a_jsonl_or_csv_result(tmp_path):
    rows, clusters, meta = sample()

    class Result:
        def url_rows(self):
            return iter(rows)

        def cluster_rows(self):
            return iter(clusters)

    Result.meta = meta
    for name, writer_fn in (("r.json", write_json), ("r.jsonl", write_jsonl), ("r.csv", write_csv)):
        path = tmp_path / name
        with open(path, "w", encoding="utf-8", newline="") as fh:
            writer_fn(fh.write, Result())
        got_rows, got_clusters, _meta = load_result(str(path))
        out = tmp_path / ("rep-" + name)
        write_report(str(out), got_rows, got_clusters, _meta)
        m, data = load_report(str(out))
        assert (sorted((c[0], c[2]) for c in m["clusters"])
                == [("cluster-00001", 3), ("cluster-00002", 2), ("errtpl-1", 2)])
        assert [r[0] for r in data[:3]] == [1, 2, 3]
        assert {r[0]: r[2] for r in data}[4] == HOSTILE


@pytest.mark.parametrize("content, message", [
    (None, "result file not found"),
    ("[1, 2]", "is not a scrapy-websim result"),
    ("{not json", "cannot be read as a result file"),
])
def test_bad_result_files_are_clear_errors(tmp_path, content, message):
    path = tmp_path / "result.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(ReportError, match=message):
        load_result(str(path))
    other = tmp_path / "result.xml"
    other.write_text("<x/>", encoding="utf-8")
    with pytest.raises(ReportError, match="must end in .json, .jsonl or .csv"):
        load_result(str(other))


def test_thumbnails_are_small_named_by_url_and_copied_into_the_report(tmp_path):
    data = make_thumbnail(png(), 320, "webp", 60)
    with Image.open(io.BytesIO(data)) as img:
        assert img.format == "WEBP" and img.size == (320, 200)
    with Image.open(io.BytesIO(make_thumbnail(png(), 160, "jpeg", 70))) as img:
        assert img.format == "JPEG" and img.size == (160, 100)
    with Image.open(io.BytesIO(make_thumbnail(png(200, 300)))) as img:  # narrower: kept as is
        assert img.size == (200, 300)
    rgba = io.BytesIO()
    Image.new("RGBA", (640, 400), (0, 0, 0, 0)).save(rgba, "PNG")
    with Image.open(io.BytesIO(make_thumbnail(rgba.getvalue()))) as img:
        assert img.size == (320, 200) and img.mode == "RGB"
    with pytest.raises(ValueError, match="not a decodable image"):
        make_thumbnail(b"not an image")
    assert thumbnail_stem("http://a.test/x") == thumbnail_stem("http://a.test/x") != thumbnail_stem("http://a.test/y")
    shots = tmp_path / "shots"
    shots.mkdir()
    path = save_thumbnail(str(shots), "http://a.test/x", png())
    assert os.path.basename(path) == thumbnail_stem("http://a.test/x") + ".webp"
    save_thumbnail(str(shots), "http://a.test/404", png(color=(0, 0, 0)), fmt="jpeg")
    rows, clusters, meta = sample()
    out = tmp_path / "report"
    info = write_report(str(out), rows, clusters, meta, thumbs_dir=str(shots))
    assert info.thumbnails == 2
    _m, data = load_report(str(out))
    names = {r[0]: r[12] for r in data}
    assert names[1] == thumbnail_stem("http://a.test/x") + ".webp"
    assert names[4].endswith(".jpg") and names[2] == ""
    assert sorted(os.listdir(out / "thumbs")) == sorted([names[1], names[4]])
    # writing again in place keeps them (the default source is the report's own thumbs/)
    assert write_report(str(out), rows, clusters, meta).thumbnails == 2


def test_static_page_loads_nothing_from_outside_and_never_parses_data_as_html():
    with open(os.path.join(STATIC_DIR, "index.html"), encoding="utf-8") as fh:
        html = fh.read()
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    assert "default-src 'none'" in csp and "script-src 'self'" in csp and "style-src 'self'" in csp
    assert "unsafe" not in csp
    assert "<script>" not in html and "style=" not in html  # no inline script or style for the CSP to allow
    for name in writer.STATIC_FILES:
        with open(os.path.join(STATIC_DIR, name), encoding="utf-8") as fh:
            text = fh.read()
        assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", text), name  # nothing fetched from outside
        assert "@import" not in text and "url(" not in text, name
    with open(os.path.join(STATIC_DIR, "report.js"), encoding="utf-8") as fh:
        js = fh.read()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
        assert sink not in js, sink


def test_split_url_hosts_and_origins():
    assert split_url("http://a.test:80/x") == ("a.test", "http://a.test")
    assert split_url("https://[::1]:8443/p") == ("::1", "https://[::1]:8443")
    assert split_url("javascript:alert(1)") == ("", "")
    assert split_url("http://[::1") == ("", "")


def test_thumbnail_settings(tmp_path):
    c = WebsimConfig.from_settings(Settings({"WEBSIM_REPORT_DIR": str(tmp_path / "rep")}))
    assert c.thumbnails_path == str(tmp_path / "rep" / "thumbs")
    assert (c.thumbnail_width, c.thumbnail_format, c.thumbnail_quality) == (320, "webp", 60)
    c = WebsimConfig.from_settings(Settings({"WEBSIM_THUMBNAILS_DIR": str(tmp_path / "t")}))
    assert c.thumbnails_path == str(tmp_path / "t") and c.report_dir == ""
    assert WebsimConfig.from_settings(Settings()).thumbnails_path == ""
    a_file = tmp_path / "f"
    a_file.write_text("x")
    for settings, message in (
            ({"WEBSIM_THUMBNAIL_FORMAT": "gif"}, "WEBSIM_THUMBNAIL_FORMAT must be one of 'webp', 'jpeg'"),
            ({"WEBSIM_THUMBNAIL_WIDTH": 5000}, "WEBSIM_THUMBNAIL_WIDTH must be an integer in [32, 1280]"),
            ({"WEBSIM_THUMBNAIL_QUALITY": 0}, "WEBSIM_THUMBNAIL_QUALITY must be an integer in [1, 100]"),
            ({"WEBSIM_REPORT_DIR": str(a_file)},
             "WEBSIM_REPORT_DIR='" + str(a_file) + "' exists and is not a directory")):
        with pytest.raises(ConfigError) as err:
            WebsimConfig.from_settings(Settings(settings))
        assert message in str(err.value)


def test_cli_report_errors_and_success(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["report", str(tmp_path / "missing.json"), "-o", str(tmp_path / "r")])
    assert exc.value.code == 2 and "result file not found" in capsys.readouterr().err
    rows, clusters, meta = sample()
    result = tmp_path / "result.json"
    result.write_text(json.dumps({"urls": rows, "clusters": clusters, "meta": meta}), encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        cli.main(["report", str(result), "-o", str(tmp_path / "r"), "--thumbnails", str(tmp_path / "nope")])
    assert exc.value.code == 2 and "--thumbnails" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"rows": []}', encoding="utf-8")
    assert cli.main(["report", str(bad), "-o", str(tmp_path / "r")]) == 2
    assert "is not a scrapy-websim result" in capsys.readouterr().err
    assert cli.main(["report", str(result), "-o", str(tmp_path / "r")]) == 0
    err = capsys.readouterr().err
    assert "10 URLs, 3 clusters, no thumbnails" in err and (tmp_path / "r" / "index.html").as_uri() in err
