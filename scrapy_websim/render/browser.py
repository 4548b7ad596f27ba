"""Find a Chromium-family browser without downloading one."""

from __future__ import annotations

import glob
import os
import re
import shutil
import sys
from typing import Callable, List, Optional, Sequence, Tuple

#: Names looked up on PATH, in order, when neither the setting nor Playwright's own browser is there.
PATH_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

#: The features Playwright turns off for automation (its ``chromiumSwitches``, Playwright 1.65):
#: Chromium honours only the last ``--disable-features`` of its command line, so websim's list
#: (:data:`DISABLED_FEATURES`) repeats them (``tests/test_browser.py`` checks the installed
#: Playwright's list against this one).
PLAYWRIGHT_DISABLED_FEATURES = (
    "AvoidUnnecessaryBeforeUnloadCheckSync", "DestroyProfileOnBrowserClose", "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable", "LensOverlay", "MediaRouter", "PaintHolding", "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect", "TcpPortRandomizationWin", "OptimizationHints",
    "NetworkTimeServiceQuerying", "AimEnabled", "PreconnectToSearch", "msForceBrowserSignIn",
    "msEdgeUpdateLaunchServicesPreferredVersion",
)
#: Playwright's, and DNS over HTTPS: in its default "automatic" mode Chromium sends its lookups to a
#: public resolver over HTTPS (dns.google when the system's resolver is 8.8.8.8), past any proxy,
#: and probes it on its own; a scanner must not announce its targets to a third party.
DISABLED_FEATURES = (*PLAYWRIGHT_DISABLED_FEATURES, "DnsOverHttps")

#: Flags that keep Chromium quiet on a closed network and make it start as root in a container.
DEFAULT_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    # WebRTC sends no UDP of its own (STUN, TURN over UDP, host candidates): only TCP through the
    # pages' proxy, which WEBSIM_DENY_NETWORKS checks
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--disable-features=" + ",".join(DISABLED_FEATURES),
    # a tab that allocates memory until it dies stops at 512 MB of JS heap, not at the machine's RAM
    "--js-flags=--max-old-space-size=512",
)


class BrowserNotFound(RuntimeError):
    """No usable browser; the message lists every place that was tried."""


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def playwright_chromium_path() -> Optional[str]:
    """The newest Chromium that ``playwright install chromium`` put in Playwright's browser cache.

    Looks at ``PLAYWRIGHT_BROWSERS_PATH`` (else the per-OS default cache) without starting
    Playwright's driver, so it is cheap and safe inside a running event loop.
    """
    root = os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or ""
    if root in ("", "0"):
        home = os.path.expanduser("~")
        if sys.platform == "darwin":
            root = os.path.join(home, "Library", "Caches", "ms-playwright")
        elif sys.platform.startswith("win"):
            root = os.path.join(os.environ.get("LOCALAPPDATA", home), "ms-playwright")
        else:
            root = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.join(home, ".cache")), "ms-playwright")
    patterns = (
        "chromium-*/chrome-linux*/chrome",
        "chromium-*/chrome-mac*/Chromium.app/Contents/MacOS/Chromium",
        "chromium-*/chrome-mac*/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing",
        "chromium-*/chrome-win*/chrome.exe",
    )
    found = [p for pat in patterns for p in glob.glob(os.path.join(root, pat)) if _is_executable(p)]

    def revision(path: str) -> int:
        match = re.search(r"chromium-(\d+)", path)
        return int(match.group(1)) if match else -1

    return max(found, key=revision) if found else None


def find_browser(
    configured: str = "",
    playwright_path: Callable[[], Optional[str]] = playwright_chromium_path,
    which: Callable[[str], Optional[str]] = shutil.which,
    candidates: Sequence[str] = PATH_CANDIDATES,
) -> Tuple[str, List[str]]:
    """Return ``(executable, tried)``.

    Order: ``configured`` (``WEBSIM_BROWSER_EXECUTABLE``: a path or a name on PATH), then
    Playwright's own Chromium, then each of ``candidates`` on PATH. Raises
    :class:`BrowserNotFound` naming everything tried.
    """
    tried: List[str] = []
    if configured:
        path = configured if os.sep in configured else (which(configured) or configured)
        if _is_executable(path):
            return path, tried
        raise BrowserNotFound(
            f"WEBSIM_BROWSER_EXECUTABLE={configured!r} is not an executable file. "
            "Set it to the path of a Chromium or Google Chrome binary, or leave it empty to search."
        )
    pw = playwright_path()
    tried.append("Playwright's own Chromium (playwright install chromium): " + ("found" if pw else "not installed"))
    if pw:
        return pw, tried
    for name in candidates:
        found = which(name)
        tried.append(f"{name} on PATH: {found or 'not found'}")
        if found and _is_executable(found):
            return found, tried
    raise BrowserNotFound(
        "No Chromium-family browser found. Tried:\n  - "
        + "\n  - ".join(tried)
        + "\nInstall one (Debian/Ubuntu: apt-get install -y chromium) or set "
        "WEBSIM_BROWSER_EXECUTABLE to the path of Chromium or Google Chrome."
    )
