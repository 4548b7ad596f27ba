"""URL normalisation (U1 and the normalized_url output field)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_websim.core.params.urls import UrlParams
from scrapy_websim.core.urls.normalize import is_tracking_param, normalize_url, url_origin


@pytest.mark.parametrize("a, b", [
    ("http://example.com/", "HTTP://EXAMPLE.com:80"),
    ("https://example.com/docs/", "https://example.com:443/docs"),
    ("https://example.com/docs/index.html", "https://example.com/docs"),
    ("https://example.com/index.php", "https://example.com/"),
    ("https://example.com/a/index.htm", "https://example.com/a/"),
    ("https://example.com/p?utm_source=x&utm_medium=y&id=3", "https://example.com/p?id=3"),
    ("https://example.com/p?fbclid=abc&gclid=1", "https://example.com/p"),
    ("https://example.com/p?b=2&a=1", "https://example.com/p?a=1&b=2"),
    ("https://example.com/p#section", "https://example.com/p"),
    ("https://example.com/a/./b/../c", "https://example.com/a/c"),
    ("https://例子.com/路径", "https://xn--fsqu00a.com/%E8%B7%AF%E5%BE%84"),
])
def test_equal_after_normalisation(a, b):
    assert normalize_url(a) == normalize_url(b)


@pytest.mark.parametrize("a, b", [
    ("https://example.com/view?id=1", "https://example.com/view?id=2"),
    ("https://example.com/list?cid=3", "https://example.com/list?cid=4"),
    ("https://example.com/search?keyword=a", "https://example.com/search?keyword=b"),
    ("https://example.com/p?page=2", "https://example.com/p"),
    ("http://example.com/", "https://example.com/"),
    ("https://example.com:8443/", "https://example.com/"),
    ("https://www.example.com/", "https://example.com/"),
    ("https://example.com/Docs", "https://example.com/docs"),
    ("https://example.com/main.html", "https://example.com/"),
])
def test_different_after_normalisation(a, b):
    assert normalize_url(a) != normalize_url(b)


def test_form_of_the_output():
    assert normalize_url("HTTP://Example.COM:80/a/index.html?utm_campaign=x&b=2&a=1#f") == \
        "http://example.com/a?a=1&b=2"
    assert normalize_url("  ") == ""
    assert normalize_url("not a url") == "not a url"
    assert url_origin("https://Example.com:443/x?y") == "https://example.com"
    assert url_origin("http://127.0.0.1:8080/x") == "http://127.0.0.1:8080"
    assert url_origin("junk") == ""


def test_tracking_params_are_settings():
    assert is_tracking_param("utm_source") and is_tracking_param("FBCLID")
    assert not is_tracking_param("ref") and not is_tracking_param("id")
    broad = UrlParams(use_courlan_trackers=True)
    assert is_tracking_param("ref", broad)
    keep = UrlParams(keep_params=("utm_source",))
    assert normalize_url("https://e.com/?utm_source=a", keep) == "https://e.com/?utm_source=a"
    extra = UrlParams(tracking_params=("sessionid",))
    assert normalize_url("https://e.com/p?sessionid=9&x=1", extra) == "https://e.com/p?x=1"
    with pytest.raises(ValueError, match="index_files"):
        UrlParams(index_files=("a/index.html",)).validate()
    with pytest.raises(ValueError, match="tracking_params"):
        UrlParams(tracking_params="utm").validate()


segment = st.text(alphabet="abcXYZ019-_.~%é中", min_size=0, max_size=6)


@settings(max_examples=200, deadline=None)
@given(
    scheme=st.sampled_from(["http", "https", "HTTP"]),
    host=st.sampled_from(["example.com", "Example.COM", "127.0.0.1", "例子.com"]),
    port=st.sampled_from(["", ":80", ":443", ":8080"]),
    path=st.lists(segment, max_size=4),
    query=st.lists(st.tuples(st.sampled_from(["id", "utm_source", "q", "fbclid"]), segment),
                   max_size=3),
    fragment=segment,
)
def test_normalisation_is_idempotent(scheme, host, port, path, query, fragment):
    url = f"{scheme}://{host}{port}/" + "/".join(path)
    if query:
        url += "?" + "&".join(f"{k}={v}" for k, v in query)
    url += "#" + fragment
    once = normalize_url(url)
    assert normalize_url(once) == once
    assert "utm_source" not in once and "fbclid" not in once and "#" not in once
