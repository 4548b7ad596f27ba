"""Every private part of scrapy-playwright and Scrapy that websim relies on, in one place.

Public hooks are used wherever they exist: ``download_request`` and ``close`` (a download
handler's interface), ``PLAYWRIGHT_ABORT_REQUEST`` (set by the add-on: websim's network policy in
the browser, then the user's own), ``playwright_page_init_callback``, ``playwright_include_page``
and ``playwright_page`` (a kept tab), ``PLAYWRIGHT_LAUNCH_OPTIONS``. What has no public hook is
listed in :data:`PRIVATE`, each with the SHA-256 of the upstream source it was written against:
``tests/test_upstream.py`` fails, naming the part and what websim assumes of it, when an upgrade
changes one, so the assumption is checked again before the pin in ``setup.cfg`` moves.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
from dataclasses import dataclass
from typing import List

__all__ = ["Private", "PRIVATE", "changed"]


@dataclass(frozen=True)
class Private:
    """One private upstream part: ``module:Class.name``, how websim uses it, what it assumes."""

    where: str
    use: str  #: "overridden" or "called" (a method), "read" or "written" (an attribute)
    assumes: str
    sha256: str  #: of the upstream source (a method's code, or the class's for an attribute)

    def source(self) -> str:
        module, _, path = self.where.partition(":")
        obj = importlib.import_module(module)
        names = path.split(".")
        for name in names[:-1]:
            obj = getattr(obj, name)
        attr = getattr(obj, names[-1], None)
        target = attr if callable(attr) and not isinstance(attr, type) else obj
        return inspect.getsource(target)

    def current(self) -> str:
        return hashlib.sha256(self.source().encode()).hexdigest()


_HANDLER = "scrapy_playwright.handler:ScrapyPlaywrightDownloadHandler"

PRIVATE = (
    Private(f"{_HANDLER}._create_page", "overridden",
            "render/handler.py opens a page through it, or hands a kept tab instead; a request that "
            "finds a free page slot (the context's semaphore unlocked) takes it without yielding to "
            "another request",
            "e8894679d0feda1e6404991601d82a417e83e36a978dfe218de147d2c62f07a7"),
    Private(f"{_HANDLER}._create_browser_context", "overridden",
            "every context, the startup ones too, is created through it with its context kwargs (websim "
            "adds the pages' proxy and blocks service workers, and starts its proxies first)",
            "df448271082a6fb841f3f3c961165482a4fdfe2fb6db9611c5f5cd1dc074247b"),
    Private(f"{_HANDLER}._download_request", "called",
            "renders one request in a tab (page methods, the page init callback, the response) and "
            "closes it unless playwright_include_page; websim bounds it by the page budget",
            "c1f8b082549c82e41c6cd4f1f5705ee210d8dad0687e6d096390bf5ccc5dec2a"),
    Private(f"{_HANDLER}._browser_disconnected_callback", "called",
            "forgets a browser that was closed, so the next page launches a new one (websim calls it "
            "when a killed browser sends no disconnect event)",
            "91593df2c07eee5d51c94f7d14f36b8ab06a7c825ff74379e12227efdd26d5a9"),
    Private(f"{_HANDLER}._maybe_future_from_coro", "called",
            "runs a coroutine on the handler's loop (a thread's loop on Windows)",
            "6a4728c1aa0569e350968ddb9d5bb885ef326bdff11b36f4308c2a535a21df47"),
    Private(_HANDLER, "read",
            "the attributes config (launch_options, cdp_url, connect_url, target_closed_max_retries), "
            "context_wrappers (name -> wrapper with .context and .semaphore, one page slot per unit) "
            "and browser",
            "6deb6c7e9fff40764d8402711cfd865e9da64b1e774e2b9a99c797850b14c797"),
    Private("scrapy.core.downloader:Downloader._get_slot", "overridden",
            "returns (key, slot) for a request; websim counts a popped request as in flight at once",
            "5e928fd8ef75ed554d463fd1fceae2f5a9661630746b29c041e900296b7c6bfe"),
    Private("scrapy.core.scheduler:Scheduler._dqpush", "overridden",
            "pushes to the disk queue and returns whether it did; websim falls back to memory",
            "a64740cd0a9ff15d1c15d090d1cb94386b494d429a71c5bbb99d1a035d24e66b"),
    Private("scrapy.core.scheduler:Scheduler._dqpop", "overridden",
            "pops from the disk queue, closing a queue that empties; websim survives a full disk",
            "92c798f900cde95e5245581ccbd39d7c98583908b542e9733f02c103531ce924"),
)


def changed() -> List[Private]:
    """The parts whose upstream source is not the one websim was written against."""
    return [p for p in PRIVATE if p.current() != p.sha256]
