"""``websim diff`` on result files made here: cluster matching by membership, what counts as a
change, every format and older versions, the exit status; and the pair decision's figures
(``similarity.judge``) against ``compare``."""

from __future__ import annotations

import csv
import json
import random

import pytest

from scrapy_websim import cli
from scrapy_websim.core.match import reasons, similarity
from scrapy_websim.core.types import OUTPUT_FIELDS, Assignment, PageRecord, PairResult
from scrapy_websim.result.diff import DiffError, diff_scans, load_scan, scan_from_rows, summary_lines
from scrapy_websim.result.output import csv_cell


def row(i, url, cid="", canon=True, kind="", rule="", status=200, error=""):
    return {"id": i, "url": url, "cluster_id": cid, "is_canonical": canon, "cluster_kind": kind, "match_rule": rule,
            "status_code": status, "error": error, "title": f"page {i}"}


def scan(rows):
    return scan_from_rows("x", rows)


OLD = [
    row(1, "http://a/1", "cluster-00001", True, "content", "canonical"),
    row(2, "http://a/2", "cluster-00001", False, "content", "rule1"),
    row(3, "http://a/3", "cluster-00002", True, "content", "canonical"),
    row(4, "http://a/4", "cluster-00002", False, "content", "rule1"),
    row(5, "http://a/5", "errtpl-00000000000000aa", True, "E3", "canonical", 404),
    row(6, "http://a/6", "errtpl-00000000000000aa", False, "E3", "E3", 404),
    row(7, "http://a/7"),
]


def test_a_result_against_itself_and_against_its_renumbering_has_no_changes():
    assert diff_scans(scan(OLD), scan(OLD))["changed"] is False
    # a new scan that numbers the same clusters the other way round (a page added before them would)
    renumbered = [dict(r, cluster_id={"cluster-00001": "cluster-00002", "cluster-00002": "cluster-00001"}.get(
        r["cluster_id"], r["cluster_id"])) for r in OLD]
    d = diff_scans(scan(OLD), scan(renumbered))
    assert d["changed"] is False and d["urls"]["changed"] == [] and d["urls"]["collateral"] == []
    assert d["clusters"] == {"appeared": [], "vanished": [], "changed": []} and d["canonicals"] == []


def test_an_old_result_without_digests_falls_back_on_clusters_and_says_so():
    new = [
        row(1, "http://a/1", "cluster-00001", False, "content", "rule1"),
        row(2, "http://a/2", "cluster-00001", True, "content", "canonical"),  # canonical moved: noise
        row(3, "http://a/3", "cluster-00001", False, "content", "rule1"),  # a/3 joined the first cluster
        row(4, "http://a/4", "loginwall-00000000000000bb", True, "L1", "canonical"),  # content -> L1
        row(5, "http://a/5", "errtpl-00000000000000aa", True, "E3", "canonical", 404),
        row(6, "http://a/6", "", True, "", "", 200),  # E3 -> content, alone
        row(7, "http://a/7", "errtpl-00000000000000aa", False, "E3", "E3", 404),  # content -> E3
        row(8, "http://a/8"),
    ]
    d = diff_scans(scan(OLD), scan(new))
    assert d["changed"] is True and d["counts"]["urls_added"] == 1 and d["urls"]["added"] == ["http://a/8"]
    urls = {u["url"]: u["kinds"] for u in d["urls"]["changed"]}
    assert urls == {"http://a/3": ["cluster"], "http://a/4": ["locked"], "http://a/6": ["back"],
                    "http://a/7": ["gone"]}
    assert d["counts"]["unchecked"] == 7 and "not compared" in d["notes"][0]
    # a/1 and a/2 did not change: a/3 joining their cluster is collateral to them; so is a/7 to a/5
    assert {x["url"]: x["because"] for x in d["urls"]["collateral"]} == {
        "http://a/1": ["http://a/3"], "http://a/2": ["http://a/3"], "http://a/5": ["http://a/6", "http://a/7"]}
    # clusters are named old:ID / new:ID, and only those a URL's own change touched are listed
    assert [x["cluster_id"] for x in d["clusters"]["appeared"]] == ["new:loginwall-00000000000000bb"]
    assert [x["cluster_id"] for x in d["clusters"]["vanished"]] == ["old:cluster-00002"]
    assert d["canonicals"] == []


def test_a_rule_cluster_with_a_new_template_id_is_no_change_and_a_failure_is():
    new = [dict(r, cluster_id="errtpl-00000000000000cc") if r["cluster_id"].startswith("errtpl") else r for r in OLD]
    new[-1] = dict(new[-1], error="timeout", status_code=0)
    d = diff_scans(scan(OLD), scan(new))
    assert d["clusters"]["changed"] == [] and d["clusters"]["appeared"] == []
    assert [(u["url"], u["kinds"], u["old"]["label"], u["new"]["label"]) for u in d["urls"]["changed"]] == [
        ("http://a/7", ["failed"], "content", "error")]


def _page(seed: int, title: str) -> str:
    rnd = random.Random(seed)
    vocab = ["".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(3, 9))) for _ in range(300)]
    text = " ".join(rnd.choice(vocab) for _ in range(250))
    return f"<html><head><title>{title}</title></head><body><main><h1>{title}</h1><p>{text}</p></main></body></html>"


def digest_row(i, url, html, cid="", canon=True, kind="", rule="", status=200, final=""):
    from scrapy_websim.core.features import FeatureParams, compute_features
    from scrapy_websim.result.rows import output_row

    rec = PageRecord(id=i, url=url, final_url=final or url, status_code=status, content_type="text/html",
                     html_len=len(html), title=f"page {i}", rendered=True)
    compute_features(rec, html, None, FeatureParams())
    return dict(output_row(rec, Assignment(cid, canon, kind, rule) if cid else None))


def test_each_url_is_compared_with_itself_and_collateral_is_apart():
    a, b, c = _page(1, "A"), _page(2, "B"), _page(3, "C")
    old = [digest_row(1, "http://a/1", a, "cluster-00001", True, "content", "canonical"),
           digest_row(2, "http://a/2", a, "cluster-00001", False, "content", "rule1"),
           digest_row(3, "http://a/3", b),
           digest_row(4, "http://a/4", c),
           digest_row(5, "http://a/5", c, "errtpl-00000000000000aa", True, "E3", "canonical", 404)]
    new = [digest_row(1, "http://a/1", b, "cluster-00009", True, "content", "canonical"),  # now a copy of a/3
           digest_row(2, "http://a/2", a),  # unchanged; its copy changed
           digest_row(3, "http://a/3", b, "cluster-00009", False, "content", "rule1"),  # unchanged, gained a copy
           digest_row(4, "http://a/4", c, final="http://a/elsewhere"),  # a new redirect
           digest_row(5, "http://a/5", c, "errtpl-00000000000000cc", True, "E3", "canonical", 404)]  # renamed only
    d = diff_scans(scan(old), scan(new))
    assert [(u["url"], u["kinds"]) for u in d["urls"]["changed"]] == [("http://a/1", ["content"]),
                                                                       ("http://a/4", ["moved"])]
    first = d["urls"]["changed"][0]
    assert first["old"]["cluster"] == "old:cluster-00001" and first["new"]["cluster"] == "new:cluster-00009"
    assert first["old"]["excerpt"] and first["old"]["excerpt"] != first["new"]["excerpt"]
    assert "now redirects to http://a/elsewhere" in d["urls"]["changed"][1]["what"]
    assert sorted(x["url"] for x in d["urls"]["collateral"]) == ["http://a/2", "http://a/3"]
    assert d["counts"]["unchecked"] == 0 and d["notes"] == []
    # a template id that changed while the page did not is no change
    assert "http://a/5" not in {u["url"] for u in d["urls"]["changed"]}
    assert not any(c["kind"] == "E3" for c in d["clusters"]["appeared"] + d["clusters"]["vanished"])
    lines = "\n".join(summary_lines(d))
    assert "http://a/1  [content] text replaced" in lines and "old:cluster-00001" in lines
    assert "collateral (these pages did not change" in lines


def test_results_of_older_versions_and_other_formats(tmp_path):
    # an old result: no cluster_kind, match_rule, normalized_url or newer fields; kinds from the id prefix
    old_rows = [{"id": r["id"], "url": r["url"], "cluster_id": r["cluster_id"], "is_canonical": r["is_canonical"],
                 "status_code": r["status_code"], "error": r["error"]} for r in OLD]
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"urls": old_rows}))
    new_jsonl = tmp_path / "new.jsonl"
    new_jsonl.write_text("".join(json.dumps(r) + "\n" for r in OLD))
    new_csv = tmp_path / "new.csv"
    with open(new_csv, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(OUTPUT_FIELDS)
        for r in OLD:
            w.writerow([csv_cell(r.get(name, "")) for name in OUTPUT_FIELDS])
    for other in (new_jsonl, new_csv):
        d = diff_scans(load_scan(str(old)), load_scan(str(other)))
        assert d["changed"] is False, (other, d["counts"])
    assert load_scan(str(old)).kind["errtpl-00000000000000aa"] == "E3"


def test_exit_status_and_clear_errors(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"urls": OLD}))
    b.write_text(json.dumps({"urls": OLD[:-1]}))
    assert cli.main(["diff", str(a), str(a)]) == 0
    assert "no changes" in capsys.readouterr().out
    out = tmp_path / "d.json"
    assert cli.main(["diff", str(a), str(b), "-o", str(out)]) == 1
    assert "- URL http://a/7" in capsys.readouterr().out
    assert json.loads(out.read_text())["urls"]["removed"] == ["http://a/7"]
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "norl.jsonl").write_text('{"id": 1}\n')
    (tmp_path / "garbage.json").write_text("{not json")
    (tmp_path / "x.txt").write_text("http://a/1\n")
    for bad, words in (("missing.json", "not found"), ("list.json", "not a scrapy-websim result"),
                       ("norl.jsonl", "has no 'url' field"), ("garbage.json", "cannot be read"),
                       ("x.txt", "must end in .json")):
        assert cli.main(["diff", str(a), str(tmp_path / bad)]) == 2
        assert words in capsys.readouterr().err, bad
    assert cli.main(["diff", str(a)]) == 2
    capsys.readouterr()
    for bad, words in ((["-p", "foo=1"], "NAME one of text_similarity"), (["-p", "text_similarity=2"], "in [0, 1]"),
                       (["-p", "min_changed_pairs=x"], "takes an integer")):
        assert cli.main(["diff", str(a), str(a), *bad]) == 2
        assert words in capsys.readouterr().err
    assert cli.main(["diff", str(a), str(b), "-p", "text_similarity=0.9", "-p", "min_changed_pairs=5"]) == 1
    with pytest.raises(DiffError):
        load_scan(str(tmp_path))


# --- the decision's figures -----------------------------------------------------------------

def _record(i, words, h1, phash=None, seed=0):
    from scrapy_websim.core.features import FeatureParams, compute_features

    rnd = random.Random(seed)
    body = " ".join(rnd.choice(words) for _ in range(300))
    html = (f"<html><head><title>{h1}</title></head><body><h1>{h1}</h1><p>{body}</p>"
            f"<div><a href='/x'>x</a></div></body></html>")
    rec = PageRecord(id=i, url=f"http://t/{i}", status_code=200, content_type="text/html",
                     html_len=len(html), title=h1)
    compute_features(rec, html, None, FeatureParams())
    rec.phash = phash
    return rec


def test_judge_is_compare_with_its_figures():
    words = [f"w{n}" for n in range(60)]
    recs = [_record(1, words, "Alpha page", seed=1), _record(2, words, "Alpha page", seed=1),
            _record(3, words, "Beta thing", seed=2), _record(4, [f"v{n}" for n in range(60)], "Alpha page", seed=3)]
    for a in recs:
        for b in recs:
            d = similarity.judge(a, b, full=True)
            assert d.result == similarity.compare(a, b)
            lines = reasons.decision_words(d)
            assert lines[-1].startswith("decision: duplicates" if d.result.is_duplicate else "decision: not")
    d = similarity.judge(recs[0], recs[2], full=True)  # same words, other h1: the heading check
    assert d.heading is not None and d.heading < 0.6


def test_match_reason_names_the_canonical_and_the_thresholds():
    rec = PageRecord(id=5, url="http://t/5", minhash="00" * 8, fingerprint=0xAB, status_code=404)
    member = Assignment("cluster-00001", False, "content", "rule1", PairResult(0.9, 0.95, 0.5, 1.0, True, "rule1"))
    assert (reasons.match_reason(rec, member, 2)
            == "rule1 with canonical #2: text 0.900 >= 0.7 and structure 0.950 >= 0.85")
    rule = Assignment("errtpl-00000000000000ab", False, "E3", "E3")
    assert reasons.match_reason(rec, rule, 3).startswith(
        "E3 error page / soft 404: status 404, template fingerprint 00000000000000ab; grouped")
    assert reasons.match_reason(rec, None).startswith("alone: not eligible for content clustering (status 404;")


def test_the_report_data_carries_the_changes_cut_to_a_bound(tmp_path):
    from scrapy_websim.result.report import writer

    n = writer.MAX_CHANGES + 7
    old = [row(i, f"http://a/{i}") for i in range(1, n + 1)]
    new = [row(i, f"http://a/{i}", f"loginwall-{i:016x}", True, "L1", "canonical") for i in range(1, n + 1)]
    d = diff_scans(scan(old), scan(new))
    assert d["counts"]["urls_changed"] == n and d["by_kind"] == {"locked": n}
    writer.write_report(str(tmp_path / "r"), new, None, {}, changes=d)
    text = (tmp_path / "r" / "data" / "meta.js").read_text()
    payload = json.loads(text[text.index("push(") + 5: text.rindex(");")])
    changes = payload["changes"]
    assert changes["counts"]["clusters_appeared"] == n
    assert len(changes["lists"]["urls_changed"]) == writer.MAX_CHANGES and changes["more"]["urls_changed"] == 7
    first = changes["lists"]["urls_changed"][0]
    assert first["new"]["label"] == "L1" and first["kinds"] == ["locked"] and first["old_thumb"] == ""
    # without a diff there is no Changes view
    writer.write_report(str(tmp_path / "plain"), new, None, {})
    text = (tmp_path / "plain" / "data" / "meta.js").read_text()
    assert json.loads(text[text.index("push(") + 5: text.rindex(");")])["changes"] is None


def test_a_redirect_shows_its_target_and_session_ids_in_it_are_noise():
    a, b, c, e = _page(11, "A"), _page(12, "B"), _page(13, "C"), _page(14, "E")
    old = [digest_row(1, "http://a/y", a),
           digest_row(2, "http://a/x", a, final="http://a/y"),  # redirects to a listed page
           digest_row(3, "http://a/z", c, final="http://a/landing?sid=a8f3"),  # to a page outside the list
           digest_row(4, "http://a/w", e, final="http://a/home?t=1700000000&lang=en")]
    new = [digest_row(1, "http://a/y", b),  # the listed target changed
           digest_row(2, "http://a/x", b, final="http://a/y"),
           digest_row(3, "http://a/z", e, final="http://a/landing?sid=b9c1"),  # its unlisted target changed
           digest_row(4, "http://a/w", e, final="http://a/home?t=1700000321&lang=en")]
    d = diff_scans(scan(old), scan(new))
    assert [(u["url"], u["kinds"]) for u in d["urls"]["changed"]] == [("http://a/y", ["content"]),
                                                                       ("http://a/z", ["content"])]
    assert [(x["url"], x["because"]) for x in d["urls"]["collateral"]] == [("http://a/x", ["http://a/y"])]
    new[3] = digest_row(4, "http://a/w", e, final="http://a/home?t=1700000321&lang=de")
    kinds = {u["url"]: u["kinds"] for u in diff_scans(scan(old), scan(new))["urls"]["changed"]}
    assert kinds["http://a/w"] == ["moved"]
