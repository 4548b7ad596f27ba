"""Render each distinct page once: the renders a page may take instead of its own.

The handler fetches a page's document with Scrapy's client first
(:meth:`~scrapy_websim.render.handler.WebsimPlaywrightHandler._fetch_first`). A response whose key
(:func:`scrapy_websim.core.served.response_key`) is the key of a page rendered before takes that
render when it said what its HTML says (:func:`~scrapy_websim.core.served.renders_as_served`), or
when a script changed the page without fetching data and a second render, on another host, said
the same (or the very same scripts did so with another document: the share remembers which script
sets were seen doing the same on two hosts, and which were not); any other is rendered, with its
document served to the browser from the fetch (the host sees one request for it).
:class:`RenderShare` holds the renders by key, bounded in bytes (the least recently used go
first), and makes requests with a key being rendered wait for that render rather than
render it too. Renders that do not fit in memory go to files in a temporary directory (bounded
in bytes too, and only while the disk keeps a reserve free); a render that fits nowhere is dropped
and made again when a page needs it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import pickle
import shutil
import tempfile
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple, Union

logger = logging.getLogger(__name__)

__all__ = ["CANDIDATE", "DATA", "NEVER", "SHARED", "UNJUDGED", "Render", "RenderShare"]

#: Bytes of renders kept (HTML and screenshot); a fleet shows a few hundred things.
MAX_BYTES = 64 * 1024 * 1024
#: Keys remembered as "must render" (a marker of a few dozen bytes each).
MAX_KEYS = 200_000
#: Script sets remembered as doing the same on two hosts, or not (20 bytes each).
MAX_SCRIPT_SETS = 10_000
#: Bytes of renders kept in files once memory is full (a fleet's first renders of its things,
#: a site crawl's unjudged ones); 0: none.
MAX_SPILL_BYTES = 1024 * 1024 * 1024
#: Free bytes the disk keeps: no render goes to a file that would leave less (the crawl's own
#: files come first).
DISK_RESERVE = 2 * 1024 * 1024 * 1024


#: What pages with one key do: take the render kept under it; render each (their renders differ,
#: or a script fetched data); render once more (the first render's script changed what the HTML
#: says without fetching data: a second render on another host tells whether it always does the same);
#: judge the first render, kept with the document it was given, when a second page with the key
#: comes (most keys of a site crawl never see a second page: their render is never judged);
#: check the data first (the first render's script filled the page in from data it fetched, all of
#: it fetchable again: a page with the key is keyed by its own host's answers to those requests too,
#: and pages whose data is the first's take the first render as a script's render without data).
SHARED, NEVER, CANDIDATE, UNJUDGED, DATA = "shared", "never", "candidate", "unjudged", "data"


@dataclass
class Render:
    """A page's render another page may take: the capture result (rendered HTML, screenshot,
    title, favicon...), the URL and the host spellings it was made for, its signature once worked
    out (what it says, its host masked: two renders of one document compare by it), and until it
    is judged the document it was given (``served``) and whether its scripts fetched data."""

    url: str
    hosts: Tuple[str, ...]
    capture: Dict[str, Any] = field(default_factory=dict)
    signature: bytes = b""
    served: str = ""
    scripted_data: bool = False
    #: its script changed what its HTML says: pages at another path or query may show another
    #: view of the same document (a client-side router), so only its own path and query take it
    scripted: bool = False
    #: the code its document runs (:func:`~scrapy_websim.core.served.script_set`), once it is
    #: known to have changed the page
    scripts: bytes = b""
    #: the data its scripts fetched, when all of it can be fetched again
    #: (:class:`~scrapy_websim.render.pagedata.DataLog`); None when it cannot (or none was fetched)
    data: Optional[Tuple[Tuple[str, bytes], ...]] = None

    @property
    def size(self) -> int:
        return (len(self.capture.get("html") or "") + len(self.capture.get("screenshot") or b"")
                + len(self.served) + 256)


@dataclass
class _Spilled:
    """A render kept in a file: its path and size."""

    path: str
    size: int


class RenderShare:
    """What is known of each response key: ``(UNJUDGED, render)``, ``(SHARED, render)``,
    ``(CANDIDATE, render)`` or ``(NEVER, None)``; keys in flight are claimed by one request and the
    others wait for it. ``max_bytes`` of renders are kept in memory, the least recently used beyond
    it in files (``max_spill_bytes``, ``disk_reserve``); :meth:`close` removes the files."""

    def __init__(self, max_bytes: int = MAX_BYTES, max_keys: int = MAX_KEYS,
                 max_spill_bytes: int = MAX_SPILL_BYTES, disk_reserve: int = DISK_RESERVE) -> None:
        self.max_bytes = max_bytes
        self.max_keys = max_keys
        self.max_spill_bytes = max_spill_bytes
        self.disk_reserve = disk_reserve
        self._known: "OrderedDict[bytes, Tuple[str, Union[None, Render, _Spilled]]]" = OrderedDict()
        #: keys whose render is in memory, least recently used first (the ones to spill)
        self._in_memory: "OrderedDict[bytes, None]" = OrderedDict()
        #: keys whose render is in a file, oldest first (the ones to drop)
        self._on_disk: "OrderedDict[bytes, None]" = OrderedDict()
        self._pending: Dict[bytes, asyncio.Future] = {}
        self._bytes = 0
        self._spill_bytes = 0
        self._dir: Optional[str] = None
        self._spill_failed = False
        #: script sets two renders on two hosts showed doing the same (True) or not (False)
        self._script_sets: "OrderedDict[bytes, bool]" = OrderedDict()

    def known(self, key: bytes) -> Tuple[str, Optional[Render]]:
        """``(state, render)`` of ``key``; ``("", None)`` for a key never rendered (or whose
        render was dropped)."""
        if key not in self._known:
            return "", None
        self._known.move_to_end(key)
        state, held = self._known[key]
        if isinstance(held, _Spilled):
            render = self._unspill(key, held)
            if render is None:
                return "", None
            self._known[key] = (state, render)
            self._remember(key, render)
            return state, render
        if held is not None:
            self._in_memory.move_to_end(key)
        return state, held

    async def wait(self, key: bytes, timeout: float) -> bool:
        """Wait (at most ``timeout`` seconds) for the render of ``key`` in flight to be judged;
        False when it was not within ``timeout`` (the caller renders itself)."""
        future = self._pending.get(key)
        if future is None:
            return True
        try:
            await asyncio.wait_for(asyncio.shield(future), timeout)
        except asyncio.TimeoutError:
            return False
        return True

    def rendering(self, key: bytes) -> bool:
        """Whether a request renders ``key`` now."""
        return key in self._pending

    def begin(self, key: bytes) -> bool:
        """Claim the render of ``key``; False when another request renders it now."""
        if key in self._pending:
            return False
        self._pending[key] = asyncio.get_running_loop().create_future()
        return True

    def finish(self, key: bytes, state: str = NEVER, render: Optional[Render] = None, judged: bool = True) -> None:
        """The claimed render of ``key`` is done and judged: ``state`` (and the render kept with it).
        ``judged`` False: the render failed and nothing more is known of the key."""
        if judged:
            self._put(key, state, render if state != NEVER else None)
        future = self._pending.pop(key, None)
        if future is not None and not future.done():
            future.set_result(None)

    def settle(self, key: bytes, state: str, render: Optional[Render]) -> None:
        """An unjudged render of ``key`` judged: ``state``; the document it was given is let go."""
        if render is None:
            return
        entry = self._known.get(key)
        kept = entry is not None and entry[1] is render
        if kept:
            self._forget(key, render)
        render.served = ""
        if not kept:
            return
        self._known[key] = (state, render if state != NEVER else None)
        if state != NEVER:
            self._remember(key, render)

    def adopt(self, key: bytes, render: Render) -> None:
        """``render`` is the first render of ``key`` too, unless ``key`` is known already (a page
        whose data is that of the render's own page)."""
        if key not in self._known and key not in self._pending:
            self._put(key, UNJUDGED, render)

    def trusts(self, scripts: bytes) -> bool:
        """Whether two renders on two hosts showed ``scripts`` doing the same, and none showed
        them differ: a first render of another document running them is taken as is."""
        return bool(scripts) and self._script_sets.get(scripts, False)

    def found(self, scripts: bytes, same: bool) -> None:
        """Two renders of one document running ``scripts`` said the same (``same``) or not; once
        they differ, the set is never trusted again."""
        if not scripts:
            return
        self._script_sets[scripts] = same and self._script_sets.get(scripts, True)
        self._script_sets.move_to_end(scripts)
        while len(self._script_sets) > MAX_SCRIPT_SETS:
            self._script_sets.popitem(last=False)

    def close(self) -> None:
        """Remove the files of spilled renders (the share keeps working in memory)."""
        for key in list(self._on_disk):
            self._known.pop(key, None)
        self._on_disk.clear()
        self._spill_bytes = 0
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def _put(self, key: bytes, state: str, render: Optional[Render]) -> None:
        old = self._known.pop(key, None)
        if old is not None:
            self._forget(key, old[1])
        self._known[key] = (state, render)
        if render is not None:
            self._remember(key, render)
        while len(self._known) > self.max_keys:
            dropped_key, (_, dropped) = self._known.popitem(last=False)
            self._forget(dropped_key, dropped)

    def _remember(self, key: bytes, render: Render) -> None:
        """``render`` of ``key`` is in memory now; the least recently used others go to files."""
        self._in_memory[key] = None
        self._in_memory.move_to_end(key)
        self._bytes += render.size
        while self._bytes > self.max_bytes and len(self._in_memory) > 1:
            old_key = next(iter(self._in_memory))
            state, old = self._known[old_key]
            assert isinstance(old, Render)
            del self._in_memory[old_key]
            self._bytes -= old.size
            spilled = self._spill(old_key, old)
            if spilled is None:
                del self._known[old_key]
            else:
                self._known[old_key] = (state, spilled)

    def _forget(self, key: bytes, held: Union[None, Render, _Spilled]) -> None:
        """``key``'s render ``held`` is let go (memory or file)."""
        if isinstance(held, Render) and key in self._in_memory:
            del self._in_memory[key]
            self._bytes -= held.size
        elif isinstance(held, _Spilled):
            self._on_disk.pop(key, None)
            self._spill_bytes -= held.size
            _remove(held.path)

    def _spill(self, key: bytes, render: Render) -> Optional[_Spilled]:
        """``render`` written to a file (the oldest files go when over ``max_spill_bytes``); None
        when it cannot be (no room, the disk's reserve, an error: it is dropped)."""
        if self._spill_failed or render.size > self.max_spill_bytes:
            return None
        while self._spill_bytes + render.size > self.max_spill_bytes and self._on_disk:
            old_key = next(iter(self._on_disk))
            self._forget(old_key, self._known.pop(old_key)[1])
        try:
            if self._dir is None:
                self._dir = tempfile.mkdtemp(prefix="websim-renders-")
            if shutil.disk_usage(self._dir).free < self.disk_reserve + render.size:
                return None
            path = os.path.join(self._dir, key.hex())
            data = pickle.dumps(render, protocol=pickle.HIGHEST_PROTOCOL)
        except OSError as exc:
            logger.warning("websim: renders kept for other pages stay in memory only (%s)", exc)
            self._spill_failed = True
            return None
        except Exception as exc:  # noqa: BLE001 - a capture that cannot be written: this render is dropped
            logger.debug("websim: a render kept for other pages could not be written (%s)", exc)
            return None
        try:
            with open(path, "wb") as f:
                f.write(data)
        except OSError as exc:
            _remove(path)
            logger.warning("websim: renders kept for other pages stay in memory only (%s)", exc)
            self._spill_failed = True
            return None
        self._on_disk[key] = None
        self._spill_bytes += render.size
        return _Spilled(path, render.size)

    def _unspill(self, key: bytes, spilled: _Spilled) -> Optional[Render]:
        """The render in ``spilled``'s file, the file removed; None (``key`` forgotten) when it
        cannot be read."""
        self._on_disk.pop(key, None)
        self._spill_bytes -= spilled.size
        try:
            with open(spilled.path, "rb") as f:
                render = pickle.load(f)
        except Exception as exc:  # noqa: BLE001 - a file that cannot be read back: made again when needed
            logger.debug("websim: a kept render could not be read back (%s)", exc)
            render = None
        _remove(spilled.path)
        if not isinstance(render, Render):
            del self._known[key]
            return None
        return render

    @property
    def bytes(self) -> int:
        """Bytes of renders in memory."""
        return self._bytes

    @property
    def spilled_bytes(self) -> int:
        """Bytes of renders in files."""
        return self._spill_bytes


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass
