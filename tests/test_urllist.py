"""URL lists: files, comments, comma lists, scheme-less entries and garbage, one entry per line."""

import pytest

from scrapy_websim.core.urls.url_list import UrlListError, check_url, looks_like_a_file, read_entries


def test_file_with_comments_blank_lines_and_garbage(tmp_path):
    path = tmp_path / "urls.txt"
    path.write_text("\ufeff# header\n\nhttps://a.example/x\n  example.org/path?q=1  \n# note\n"
                    "http://b.example/ # trailing note\nnot a url\nftp://c.example/\nhttp://\n"
                    "https://a.example/x\n", encoding="utf-8")
    entries = read_entries(str(path))
    assert [e.id for e in entries] == list(range(1, 8))
    assert [e.url for e in entries] == ["https://a.example/x", "http://example.org/path?q=1", "http://b.example/",
                                       "", "", "", "https://a.example/x"]
    assert entries[3].raw == "not a url" and "white space" in entries[3].error
    assert "unsupported scheme 'ftp'" in entries[4].error
    assert "no valid host" in entries[5].error


@pytest.mark.parametrize("value, is_file", [
    ("urls.txtt", True), ("hosts.lst", True), ("lists/urls", True), ("/tmp/urls", True), ("~/u", True),
    ("example.com", False), ("example.com/robots.txt", False), ("localhost:8000/a", False), ("[::1]:80/x", False),
    ("127.0.0.1:8080/x", False), ("a.example,b.example", False), ("http://x/list.txt", False), ("data", False),
])
def test_a_value_that_names_a_file_is_told_from_a_url(value, is_file):
    assert looks_like_a_file(value) is is_file


def test_comma_list():
    entries = read_entries("https://a.example, b.example:8080/x ,,javascript:alert(1)")
    assert [(e.url, bool(e.error)) for e in entries] == [
        ("https://a.example/", False), ("http://b.example:8080/x", False), ("", True)]


def test_missing_and_empty_lists_are_errors(tmp_path):
    with pytest.raises(UrlListError, match="no such file"):
        read_entries(str(tmp_path / "nope.txt"))
    for typo in ("urls.txtt", "hosts.lst", "lists/urls", "./urls", "~/no-such-websim-list"):  # a file's name, mistyped
        with pytest.raises(UrlListError, match="no such file"):
            read_entries(typo, base_dir=str(tmp_path))
    with pytest.raises(UrlListError, match="empty"):
        read_entries("  ")
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("http://\xe9.example/\n".encode("latin-1"))
    with pytest.raises(UrlListError, match="not UTF-8"):
        read_entries(str(bad))


@pytest.mark.parametrize("raw, url", [
    ("127.0.0.1:8080", "http://127.0.0.1:8080/"),
    ("//cdn.example/a", "http://cdn.example/a"),
    ("http://[::1]:8000/x", "http://[::1]:8000/x"),
    ("HTTPS://Example.COM/A", "https://Example.COM/A"),
    ("例子.中国/路径", "http://例子.中国/路径"),
])
def test_valid_urls(raw, url):
    assert check_url(raw) == (url, "")


@pytest.mark.parametrize("raw, error", [
    ("http://999.1.1.1/", "no valid host"),
    ("localhost:99999", "not a URL"),
    ("mailto:a@b.example", "unsupported scheme 'mailto'"),
    ("http://a b.example/", "white space"),
    ("http://-bad-.example/", "no valid host"),
])
def test_invalid_urls(raw, error):
    url, message = check_url(raw)
    assert url == "" and error in message
