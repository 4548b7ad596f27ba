"""Inputs from scanning tools (bare hosts + --ports, httpx JSON lines, nmap XML, stdin) and the
scanning settings (proxy, cookies; Scrapy's headers and UA as the browser gets them): parsing and the
error messages."""

import io

import pytest
from scrapy.settings.default_settings import DEFAULT_REQUEST_HEADERS as SCRAPY_DEFAULT_HEADERS

from scrapy_websim.config import WebsimConfig
from scrapy_websim.config_values import ConfigError, proxy_parts
from scrapy_websim.core.urls.url_list import UrlListError, parse_ports, read_entries
from scrapy_websim.render.scan import WebsimScanDownloaderMiddleware, context_kwargs, iso_time, tls_error_of_failure

NMAP = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE nmaprun>
<nmaprun scanner="nmap" args="nmap -sV -oX scan.xml 10.0.0.5 [::1]">
<host><status state="up"/><address addr="10.0.0.5" addrtype="ipv4"/>
<hostnames><hostname name="web.example.lan" type="user"/><hostname name="ptr.example" type="PTR"/></hostnames>
<ports>
<port protocol="tcp" portid="22"><state state="open"/><service name="ssh"/></port>
<port protocol="tcp" portid="80"><state state="open"/><service name="http"/></port>
<port protocol="tcp" portid="443"><state state="open"/><service name="http" tunnel="ssl"/></port>
<port protocol="tcp" portid="8443"><state state="open"/><service name="https-alt"/></port>
<port protocol="tcp" portid="8080"><state state="closed"/><service name="http-proxy"/></port>
<port protocol="tcp" portid="9000"><state state="filtered"/><service name="http"/></port>
</ports></host>
<host><status state="up"/><address addr="::1" addrtype="ipv6"/><address addr="00:11:22:33:44:55" addrtype="mac"/>
<ports><port protocol="tcp" portid="8000"><state state="open"/><service name="http-alt"/></port></ports></host>
</nmaprun>
"""


def test_bare_hosts_expand_with_ports_in_input_order():
    lines = "web.lan\n10.0.0.1:8080\nlocalhost:9000\n[::1]:9001\nhttps://x.example/a\n"
    entries = read_entries("-", ports=parse_ports("80,443,8080,8443,9000,https:9001"), stdin=io.StringIO(lines))
    got = [(e.id, e.url, e.expanded_from, e.fallback_url) for e in entries]
    assert got == [
        (1, "http://web.lan/", "web.lan", ""),
        (2, "https://web.lan/", "web.lan", ""),
        (3, "http://web.lan:8080/", "web.lan", ""),
        (4, "https://web.lan:8443/", "web.lan", ""),
        (5, "https://web.lan:9000/", "web.lan", "http://web.lan:9000/"),  # unknown port: https, then http
        (6, "https://web.lan:9001/", "web.lan", ""),  # https:9001 forces the scheme
        (7, "http://10.0.0.1:8080/", "10.0.0.1:8080", ""),  # host:port: its own port only
        (8, "https://localhost:9000/", "localhost:9000", "http://localhost:9000/"),
        (9, "https://[::1]:9001/", "[::1]:9001", ""),
        (10, "https://x.example/a", "", ""),  # a URL line is left alone
    ]


def test_without_ports_bare_hosts_stay_http_as_before():
    entries = read_entries("web.lan,web.lan:8443")
    assert [(e.url, e.expanded_from) for e in entries] == [("http://web.lan/", ""), ("http://web.lan:8443/", "")]


def test_httpx_json_lines_and_broken_lines_are_records():
    lines = ('{"url":"https://h.example:8443","title":"Admin #1","input":"h.example"}\n'
             '{"title":"no url here"}\n{"url": broken\n[1, 2]\nnot a url\n')
    entries = read_entries("-", stdin=io.StringIO(lines))
    assert [e.id for e in entries] == [1, 2, 3, 4, 5]
    assert entries[0].url == "https://h.example:8443/" and entries[0].raw == "https://h.example:8443"
    assert "without a 'url' field" in entries[1].error
    assert "broken JSON line" in entries[2].error and entries[2].url == ""
    assert entries[3].error and entries[3].url == ""  # not a JSON object: not a URL either
    assert "white space" in entries[4].error


def test_nmap_xml_open_http_services(tmp_path):
    path = tmp_path / "scan.xml"
    path.write_text(NMAP, encoding="utf-8")
    entries = read_entries(str(path))
    assert [(e.id, e.url, e.expanded_from) for e in entries] == [
        (1, "http://web.example.lan/", "nmap web.example.lan:80/http"),
        (2, "https://web.example.lan/", "nmap web.example.lan:443/ssl/http"),
        (3, "https://web.example.lan:8443/", "nmap web.example.lan:8443/https-alt"),
        (4, "http://[::1]:8000/", "nmap [::1]:8000/http-alt"),
    ]
    assert read_entries("-", stdin=io.StringIO(NMAP)) == entries


def test_broken_nmap_xml_and_bad_ports_are_usage_errors(tmp_path):
    path = tmp_path / "scan.xml"
    path.write_text('<?xml version="1.0"?><nmaprun><host>', encoding="utf-8")
    with pytest.raises(UrlListError, match="nmap XML report cannot be read"):
        read_entries(str(path))
    with pytest.raises(UrlListError, match=r"--ports '80,http:x': 'http:x' is not a port"):
        parse_ports("80,http:x")
    with pytest.raises(UrlListError, match="no port given"):
        parse_ports(" , ")
    with pytest.raises(UrlListError, match="not a port"):
        parse_ports("70000")


def test_scan_settings_are_parsed_and_checked():
    config = WebsimConfig.from_settings({
        "WEBSIM_PROXY": "http://user:p%40ss@127.0.0.1:3128", "WEBSIM_COOKIES": "a=b;c = d",
        "WEBSIM_STRICT_TLS": "true", "USER_AGENT": "scanner/1",
        "DEFAULT_REQUEST_HEADERS": {"Accept": SCRAPY_DEFAULT_HEADERS["Accept"], "Accept-Language": "de", "X-A": "1"}})
    assert proxy_parts(config.proxy) == {"server": "http://127.0.0.1:3128", "username": "user", "password": "p@ss"}
    assert config.cookies == "a=b; c=d" and config.strict_tls and config.user_agent == "scanner/1"
    # the browser gets the headers the user added or changed, not Scrapy's document Accept
    assert config.headers == (("Accept-Language", "de"), ("X-A", "1"))
    assert context_kwargs(config) == {"ignore_https_errors": False, "user_agent": "scanner/1",
                                      "extra_http_headers": {"Accept-Language": "de", "X-A": "1"}}
    # Scrapy's defaults (a Settings object holds them) leave the browser its own User-Agent and headers
    from scrapy.settings import Settings

    assert WebsimConfig.from_settings(Settings()) == WebsimConfig()
    assert context_kwargs(WebsimConfig()) == {"ignore_https_errors": True}
    assert WebsimConfig.from_settings({"DEFAULT_REQUEST_HEADERS": {b"X-B": b"2"}}).headers == (("X-B", "2"),)


@pytest.mark.parametrize("settings, message", [
    ({"WEBSIM_PROXY": "ftp://h:1"}, "WEBSIM_PROXY='ftp://h:1': the scheme must be one of http, https, socks5"),
    ({"WEBSIM_PROXY": "http://h"}, "needs a host and a port"),
    ({"WEBSIM_PROXY": "http://h:1/path"}, "no path, query or fragment"),
    ({"WEBSIM_PROXY": "socks5://u:p@h:1"}, "Chromium cannot authenticate to a SOCKS5 proxy"),
    ({"DEFAULT_REQUEST_HEADERS": {"bad name": "x"}}, "'bad name' is not a valid header name"),
    ({"DEFAULT_REQUEST_HEADERS": {"X-A": "a\r\nInjected: 1"}}, "must be one line"),
    ({"DEFAULT_REQUEST_HEADERS": 5}, "DEFAULT_REQUEST_HEADERS must be a dict"),
    ({"WEBSIM_COOKIES": "justtext"}, "WEBSIM_COOKIES: 'justtext' is not a cookie"),
    ({"USER_AGENT": "a\nb"}, "USER_AGENT must be one line"),
    ({"WEBSIM_STRICT_TLS": "maybe"}, "WEBSIM_STRICT_TLS must be a boolean"),
])
def test_scan_setting_errors_name_the_setting(settings, message):
    with pytest.raises(ConfigError, match=None) as info:
        WebsimConfig.from_settings(settings)
    assert message in str(info.value)


def test_middleware_puts_cookies_and_proxy_on_scrapy_requests():
    from scrapy import Request
    from scrapy.exceptions import IgnoreRequest

    config = WebsimConfig.from_settings({"WEBSIM_COOKIES": "s=1", "WEBSIM_PROXY": "http://127.0.0.1:3128"})
    mw = WebsimScanDownloaderMiddleware(config)
    plain, rendered = Request("http://h.example/"), Request("http://h.example/", meta={"playwright": True})
    for request in (plain, rendered):
        mw.process_request(request)
        assert request.cookies == {"s": "1"}
    assert plain.meta["proxy"] == "http://127.0.0.1:3128" and "proxy" not in rendered.meta  # Chromium has its own
    socks = WebsimScanDownloaderMiddleware(WebsimConfig.from_settings({"WEBSIM_PROXY": "socks5://127.0.0.1:1080"}))
    with pytest.raises(IgnoreRequest, match="cannot use the SOCKS proxy"):
        socks.process_request(Request("http://h.example/"))


def test_cli_flags_map_to_scrapy_settings():
    """--user-agent is Scrapy's USER_AGENT, -H adds to Scrapy's DEFAULT_REQUEST_HEADERS (replacing a
    default of any case), --calibrate-404 and --batch-size set WEBSIM_PARAMS keys next to -s ones."""
    from scrapy_websim.commands.crawl import build_parser, crawl_settings, scan_settings_from_args
    from scrapy_websim.commands.options import merged, settings_from_args

    parser = build_parser()
    args = parser.parse_args(["-l", "u.txt", "-o", "r.json", "--user-agent", "ua/2", "-H", "accept-language: de",
                              "-H", "X-Scan: 1", "--calibrate-404", "--batch-size", "50", "--visual-fallback-threshold",
                              "1.01", "-s", 'WEBSIM_PARAMS={"cluster.passes": 2}'])
    settings = merged(crawl_settings(args, None), scan_settings_from_args(parser, args),
                      settings_from_args(parser, args))
    assert settings["USER_AGENT"] == "ua/2"
    assert settings["DEFAULT_REQUEST_HEADERS"] == {"Accept": SCRAPY_DEFAULT_HEADERS["Accept"],
                                                   "accept-language": "de", "X-Scan": "1"}
    assert settings["WEBSIM_PARAMS"] == {"crawl.batch_size": 50, "crawl.soft404_min_urls": 1,
                                         "decision.rule2_visual": 1.01, "cluster.passes": 2}
    assert "WEBSIM_HTTP_TIMEOUT" not in settings  # unset flags leave the declared defaults
    config = WebsimConfig.from_settings(settings)
    assert (config.user_agent, config.headers, config.batch_size) == ("ua/2", (("accept-language", "de"),
                                                                              ("X-Scan", "1")), 50)


def test_tls_helpers():
    assert iso_time(1795417741) == "2026-11-23T07:09:01Z" and iso_time(None) == ""
    assert tls_error_of_failure("Page.goto: net::ERR_CERT_DATE_INVALID at https://x/") == "ERR_CERT_DATE_INVALID"
    assert tls_error_of_failure("net::ERR_CONNECTION_REFUSED") == ""


def test_addon_sets_proxy_strict_tls_and_politeness_and_the_user_wins():
    from scrapy.settings import Settings

    from scrapy_websim.crawler.addon import Addon

    settings = Settings({"WEBSIM_PROXY": "http://u:p@127.0.0.1:3128", "WEBSIM_STRICT_TLS": True})
    Addon().update_settings(settings)
    # websim's handler gives the proxy to the pages' contexts (the browser's own requests never use it)
    assert "proxy" not in settings["PLAYWRIGHT_LAUNCH_OPTIONS"]
    base = Settings({"WEBSIM_PROXY": "http://u:p@127.0.0.1:3128"})
    base.set("DOWNLOAD_HANDLERS", {"https": "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"},
             priority="project")
    Addon().update_settings(base)  # scrapy-playwright's own handler: the proxy of the whole browser
    assert base["PLAYWRIGHT_LAUNCH_OPTIONS"]["proxy"] == {"server": "http://127.0.0.1:3128", "username": "u",
                                                          "password": "p"}
    assert settings["DOWNLOADER_CLIENTCONTEXTFACTORY"].endswith("BrowserLikeContextFactory")
    assert settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN") == 2
    assert settings["DOWNLOADER"] == "scrapy_websim.crawler.downloader.WebsimDownloader"
    assert "scrapy_websim.render.scan.WebsimScanDownloaderMiddleware" in str(settings.getdict("DOWNLOADER_MIDDLEWARES"))

    mine = Settings()
    mine.set("CONCURRENT_REQUESTS_PER_DOMAIN", 5, priority="project")
    mine.set("DOWNLOADER", "my.Downloader", priority="project")
    Addon().update_settings(mine)
    assert mine.getint("CONCURRENT_REQUESTS_PER_DOMAIN") == 5 and mine["DOWNLOADER"] == "my.Downloader"
    assert "proxy" not in mine["PLAYWRIGHT_LAUNCH_OPTIONS"]
    assert not str(mine.get("DOWNLOADER_CLIENTCONTEXTFACTORY")).endswith("BrowserLikeContextFactory")
