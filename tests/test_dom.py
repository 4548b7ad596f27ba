import lxml.html
import pytest

from scrapy_websim.core.page.dom import dom_features
from scrapy_websim.core.params.page import DomParams
from scrapy_websim.core.types import DOM_COUNT_NAMES

HTML = ("<html><head><script>x</script></head><body><div><p>hi <a href=x>x</a> tail</p><!-- c -->"
        "<img><input name=q></div><div>two</div></body></html>")


def test_counts_paths_depths():
    doc = lxml.html.fromstring(HTML)
    before = lxml.html.tostring(doc)
    f = dom_features(doc)
    assert set(f) == {"dom_counts", "tag_paths", "depth_hist"}
    counts = dict(zip(DOM_COUNT_NAMES, f["dom_counts"]))
    # html head script body div p a img input div = 10 elements; texts: x, hi, x, tail, two
    assert counts == {"nodes": 10, "text_nodes": 5, "div": 2, "a": 1, "img": 1, "input": 1, "script": 1}
    assert f["tag_paths"]["html>body>div"] == 2
    assert f["tag_paths"]["html>body>div>p>a"] == 1
    assert f["depth_hist"] == [1, 2, 3, 3, 1]
    assert sum(f["depth_hist"]) == counts["nodes"] == sum(f["tag_paths"].values())
    assert lxml.html.tostring(doc) == before


def test_bounded_on_huge_and_deep_pages():
    deep = "<div>" * 200 + "x" + "</div>" * 200  # libxml2 caps nesting at 256
    wide = "".join(f"<section><h{i % 6 + 1}>t</h{i % 6 + 1}></section>" for i in range(2000))
    doc = lxml.html.fromstring(f"<html><body>{deep}{wide}</body></html>")
    f = dom_features(doc, max_paths=5, params=DomParams(max_path_depth=16, max_depth=20))
    assert len(f["tag_paths"]) == 5
    assert max(len(p.split(">")) for p in f["tag_paths"]) <= 16
    assert len(f["depth_hist"]) == 21
    assert f["dom_counts"][0] == 2 + 200 + 4000


def test_deterministic_truncation():
    html = "<html><body>" + "".join(f"<{t}></{t}>" for t in ["b", "i", "u", "s", "q", "em"]) + "</body></html>"
    a = dom_features(lxml.html.fromstring(html), max_paths=3)
    b = dom_features(lxml.html.fromstring(html), max_paths=3)
    assert a == b and list(a["tag_paths"]) == ["html", "html>body", "html>body>b"]


@pytest.mark.parametrize("kwargs", [{"max_paths": 0}, {"max_path_depth": 0}, {"max_depth": 10**6}])
def test_params_validate(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        DomParams(**kwargs).validate()
    DomParams().validate()
