"""URL-structure SimHash, similarity and the `websim urls --dedupe` command."""

import pytest

from scrapy_websim.core.params.urls import UrlSimhashParams
from scrapy_websim.core.urls.simhash import dedupe_urls, generalise, main, url_features, url_simhash, url_similarity


def test_pattern_examples_share_a_hash():
    assert url_simhash("http://ex.com/item/123?page=2") == url_simhash("http://ex.com/item/456?page=3")
    assert url_similarity("http://ex.com/item/123?page=2", "http://ex.com/item/456?page=3") == 100.0
    # long hex ids and UUIDs
    a = "https://cdn.ex.com/img/23A3BC8599427454366B53FA/100/bf3a6519525562d2a7092a20.jpeg"
    b = "https://cdn.ex.com/img/9F00BC8599427454366B53FA/100/4e7510ab78bac3b54c0de1ce.jpeg"
    assert url_similarity(a, b) == 100.0
    assert url_simhash("http://ex.com/u/3f2b8c1e-0a4d-4c1b-9e2f-1a2b3c4d5e6f") == url_simhash(
        "http://ex.com/u/00000000-1111-2222-3333-444444444444"
    )
    # CJK runs
    assert url_simhash("http://ex.com/新闻/国内") == url_simhash("http://ex.com/体育/足球赛事")


def test_query_order_does_not_matter():
    assert url_simhash("http://ex.com/a?x=1&y=2") == url_simhash("http://ex.com/a?y=2&x=1")


def test_similarity_ranks_structure():
    base = "http://baidu.com:8080/1/2/3/4.php?a=1&b=2#123"
    same_but_fragment = url_similarity(base, "http://baidu.com:8080/1/2/3/4.php?a=1&b=2")
    other_path = url_similarity(base, "http://baidu.com:8080/about/team.php?a=1&b=2#123")
    other_host = url_similarity(base, "http://qq.com/1/2/3/4.php?a=1&b=2#123")
    unrelated = url_similarity(base, "https://qq.com/news/today")
    assert same_but_fragment >= 90
    assert other_host < same_but_fragment
    assert unrelated < other_path
    assert unrelated < 80
    for s in (same_but_fragment, other_path, other_host, unrelated):
        assert 0.0 <= s <= 100.0


def test_weights_split_over_segments():
    feats = dict(url_features("https://a.b.ex.com/x/y/z?q=1&r=2#frag"))
    hosts = [w for f, w in feats.items() if f.startswith("h:")]
    paths = [w for f, w in feats.items() if f.startswith("p")]
    queries = [w for f, w in feats.items() if f.startswith("q:")]
    assert hosts == [1.0] * 4 and paths == [1.0] * 3 and queries == [1.0, 1.0]
    assert feats["s:https"] == 0.5 and feats["f:frag"] == 0.5
    assert sum(feats.values()) == pytest.approx(10.0)


def test_generalise():
    assert generalise("page-12.html") == "page-{n}.html"
    assert generalise("deadbeef99") == "{id}"
    assert generalise("about") == "about"


def test_dedupe_keeps_first_n_per_pattern():
    urls = [f"http://shop.test/item/{i}?ref=home" for i in range(30)]
    urls += [f"http://shop.test/blog/2024/post-{i}" for i in range(5)]
    urls += ["http://shop.test/about", "http://shop.test/item/3?ref=home"]
    kept = dedupe_urls(urls, keep=3)
    assert kept[:3] == urls[:3]
    assert [u for u in kept if "/item/" in u] == urls[:3]
    assert [u for u in kept if "/blog/" in u] == urls[30:33]
    assert "http://shop.test/about" in kept
    assert len(kept) == 7
    with pytest.raises(ValueError, match="keep"):
        dedupe_urls(urls, keep=0)


def test_dedupe_command(tmp_path, capsys):
    src = tmp_path / "urls.txt"
    lines = ["# exported list", ""]
    lines += [f"https://news.test/article/{i}.html" for i in range(40)]
    lines += [f"https://news.test/tag/t{i}?page={i}" for i in range(40)]
    lines += ["https://news.test/contact"]
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    assert main(["--dedupe", str(src), "--keep", "2", "-o", str(out)]) == 0
    kept = out.read_text(encoding="utf-8").splitlines()
    assert kept == [
        "https://news.test/article/0.html",
        "https://news.test/article/1.html",
        "https://news.test/tag/t0?page=0",
        "https://news.test/tag/t1?page=1",
        "https://news.test/contact",
    ]
    # default keep is 15, stdout output
    assert main(["--dedupe", str(src)]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 15 + 15 + 1


def test_dedupe_command_errors(tmp_path, capsys):
    assert main(["--dedupe", str(tmp_path / "missing.txt")]) == 2
    assert "cannot read" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--dedupe", "x", "--keep", "0"])


def test_params_validate():
    with pytest.raises(ValueError, match="host_weight"):
        UrlSimhashParams(host_weight=-1).validate()
    with pytest.raises(ValueError, match="dedupe_threshold"):
        UrlSimhashParams(dedupe_threshold=20).validate()
