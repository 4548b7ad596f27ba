"""Browser discovery: the setting, then Playwright's own Chromium, then PATH; errors list what was tried."""

import os
import stat

import pytest

from scrapy_websim.render.browser import BrowserNotFound, find_browser, playwright_chromium_path


def _exe(path):
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_setting_wins(tmp_path):
    exe = _exe(tmp_path / "mychrome")
    assert find_browser(exe, playwright_path=lambda: "/pw/chrome", which=lambda n: "/usr/bin/" + n)[0] == exe


def test_setting_that_is_not_executable_is_an_error(tmp_path):
    with pytest.raises(BrowserNotFound, match="WEBSIM_BROWSER_EXECUTABLE='/no/such/chrome' is not an executable"):
        find_browser("/no/such/chrome")


def test_playwright_browser_before_path(tmp_path):
    exe = _exe(tmp_path / "chrome")
    path, tried = find_browser("", playwright_path=lambda: exe, which=lambda n: None)
    assert path == exe and "found" in tried[0]


def test_path_candidates_in_order(tmp_path):
    exe = _exe(tmp_path / "google-chrome")
    found = {"google-chrome": exe}
    path, tried = find_browser("", playwright_path=lambda: None, which=found.get)
    assert path == exe
    assert [t.split(" ")[0] for t in tried[1:]] == ["chromium", "chromium-browser", "google-chrome"]


def test_nothing_found_lists_everything_tried():
    with pytest.raises(BrowserNotFound) as err:
        find_browser("", playwright_path=lambda: None, which=lambda n: None)
    text = str(err.value)
    for name in ("Playwright's own Chromium", "chromium on PATH", "chromium-browser on PATH", "google-chrome on PATH",
                 "apt-get install -y chromium", "WEBSIM_BROWSER_EXECUTABLE"):
        assert name in text


def test_playwright_cache_is_found_without_starting_playwright(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path))
    assert playwright_chromium_path() is None
    old = tmp_path / "chromium-1100" / "chrome-linux"
    new = tmp_path / "chromium-1200" / "chrome-linux64"
    old.mkdir(parents=True)
    new.mkdir(parents=True)
    _exe(old / "chrome")
    newest = _exe(new / "chrome")
    assert playwright_chromium_path() == newest


def test_this_machine_has_a_browser():
    """The test command installs Chromium; the crawl tests need it."""
    path, _ = find_browser("")
    assert os.access(path, os.X_OK)


def _playwright_disabled_features():
    """The features the installed Playwright turns off (its chromiumSwitches), or None if not found."""
    import re

    import playwright

    root = os.path.join(os.path.dirname(playwright.__file__), "driver", "package", "lib")
    for name in ("coreBundle.js", os.path.join("server", "chromium", "chromiumSwitches.js")):
        path = os.path.join(root, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                match = re.search(r"disabledFeatures\s*=\s*\[(.*?)\]", fh.read(), re.S)
            if match:
                return set(re.findall(r'"(\w+)"', re.sub(r"//[^\n]*", "", match.group(1))))
    return None


def test_the_disabled_features_keep_playwrights_own():
    """Chromium honours only the last --disable-features of its command line, and websim's comes after
    Playwright's: it must name every feature the installed Playwright turns off."""
    from scrapy_websim.render.browser import DEFAULT_ARGS, DISABLED_FEATURES

    theirs = _playwright_disabled_features()
    if theirs is None:
        pytest.skip("the installed Playwright's list of disabled features was not found")
    assert theirs <= set(DISABLED_FEATURES), sorted(theirs - set(DISABLED_FEATURES))
    flags = [a for a in DEFAULT_ARGS if a.startswith("--disable-features=")]
    assert flags == ["--disable-features=" + ",".join(DISABLED_FEATURES)]
    assert "DnsOverHttps" in DISABLED_FEATURES
