"""What each site repeats on its pages: the template the duplicate decision looks past.

An application serves many items in one template: a ticket, a commit, a table row, a short post is
a sentence or a few lines inside menus, field labels, buttons and footers that every item repeats.
Compared whole, two items are mostly template and look like copies; what tells them apart, and
what two copies of one item share, is what each page says beyond its site's template (template
detection by frequency over a site's pages: Bar-Yossef and Rajagopalan 2002; the site style tree
of Yi, Liu and Li 2003 finds it per kind of page).

Per site (``host[:port]`` of the final URL), a sample of its distinct pages (the
:attr:`~TemplateParams.sample` HTML pages with text whose exact-copy hashes are smallest: copies
count once, and the sample does not depend on the order of the crawl or of the input) is split
into **kinds**: pages whose tag paths are alike (``kind_similarity``, Jaccard of the path sets), a
wiki's articles, its revision histories, an app's tickets, its commits. The shingles of the judged
text (``PageRecord.shingle_set``) that at least :attr:`~TemplateParams.share` of the site's sampled
pages carry are the site's template; those that ``share`` of one kind's pages carry are that
kind's. A page's template is its site's and its kind's (the kind whose first page shares most of
its tag paths); a pair is judged on its pages' shingles outside the union of their two templates
(:func:`scrapy_websim.core.match.similarity.text_sim`), so a mirror with a few pages of a large
site is judged against the large site's template. A site or kind with fewer than
:attr:`~TemplateParams.min_pages` distinct pages has no template: its pages are judged whole.

A page of a kind with at least :attr:`~TemplateParams.item_pages` distinct pages on its site is an
**item** of its site: a ticket, a row, a post with one sentence, one of a small tracker's three
project pages is content however short, not a thin page (:func:`Templates.is_item`). Fewer pages
than ``min_pages`` teach no template, but three pages of one structure with different texts are
already the site's kind of page, where a placeholder is one page (its copies count once).

Built at the end of the crawl, before the pages are labelled, after every page is known (so a
distributed collect gets the same templates): :class:`TemplateSampler` sees each page's key
columns (no record is parsed), :func:`build_templates` reads the sampled pages' shingle sets and
tag paths.

Pure: no Scrapy import.
"""

from __future__ import annotations

import heapq
import math
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from ..fingerprints import decode_shingle_set
from ..params.match import TemplateParams
from ..types import MASK64, PageRecord, is_html_type
from .cluster import host_of

__all__ = ["TemplateSampler", "Templates", "Kind", "build_templates", "templates_of_records",
           "page_kinds", "path_set"]

_EMPTY = np.zeros(0, np.uint32)


def path_set(tag_paths: Any) -> FrozenSet[str]:
    """The tag paths a page has (``PageRecord.tag_paths``' keys): the shape of its template."""
    return frozenset(tag_paths) if isinstance(tag_paths, dict) else frozenset()


def _path_jaccard(a: FrozenSet[str], b: FrozenSet[str]) -> float:
    if not a and not b:
        return 1.0
    both = len(a & b)
    return both / (len(a) + len(b) - both)


@dataclass
class Kind:
    """Pages of one structure on one site: the tag paths of its first sampled page, how many
    sampled pages it has, and its template (empty below ``min_pages``); ``estimate``: its pages
    on the whole site (``pages`` scaled by the site's pages per sampled page)."""

    paths: FrozenSet[str]
    pages: int
    template: np.ndarray
    estimate: float = 0.0


@dataclass
class Templates:
    """The template shingles (sorted distinct uint32) of each site and of each kind of its pages."""

    by_site: Dict[str, np.ndarray] = field(default_factory=dict)
    kinds: Dict[str, List[Kind]] = field(default_factory=dict)
    params: TemplateParams = field(default_factory=TemplateParams)
    _cache: "OrderedDict[int, Tuple[np.ndarray, int]]" = field(default_factory=OrderedDict, repr=False)

    def _lookup(self, record: PageRecord) -> Tuple[np.ndarray, int]:
        """(the page's template, the sampled pages of its kind: 0 without one)."""
        cached = self._cache.get(record.id)
        if cached is not None:
            self._cache.move_to_end(record.id)
            return cached
        site = host_of(record)
        template = self.by_site.get(site, _EMPTY)
        pages = 0
        kinds = self.kinds.get(site)
        if kinds:
            paths = path_set(record.tag_paths)
            best, found = self.params.kind_similarity, None
            for kind in kinds:
                j = _path_jaccard(kind.paths, paths)
                if j >= best:
                    best, found = j, kind
            if found is not None:
                pages = max(found.pages, int(found.estimate))
                if found.template.shape[0]:
                    template = np.union1d(template, found.template) if template.shape[0] else found.template
        self._cache[record.id] = (template, pages)
        if len(self._cache) > 8192:
            self._cache.popitem(last=False)
        return template, pages

    def of(self, record: PageRecord) -> np.ndarray:
        """The shingles a page's site repeats: its site's template and its kind's."""
        return self._lookup(record)[0]

    def for_pair(self, a: PageRecord, b: PageRecord) -> np.ndarray:
        """The shingles a pair's text measure leaves out: the union of both pages' templates."""
        ta, tb = self.of(a), self.of(b)
        if ta is tb or not tb.shape[0]:
            return ta
        if not ta.shape[0]:
            return tb
        return np.union1d(ta, tb)

    def is_item(self, record: PageRecord) -> bool:
        """The page is one of several pages of one structure on its site (a ticket, a row, a post):
        at least ``item_pages`` of the site's distinct pages are of its kind (estimated from the
        sample)."""
        return self._lookup(record)[1] >= max(2, self.params.item_pages)

    def __bool__(self) -> bool:
        return bool(self.by_site) or bool(self.kinds)

    def summary(self) -> Dict[str, int]:
        return {"sites": len(set(self.by_site) | set(self.kinds)),
                "kinds": int(sum(1 for ks in self.kinds.values() for k in ks if k.pages >= self.params.min_pages)),
                "shingles": int(sum(t.shape[0] for t in self.by_site.values())
                                + sum(k.template.shape[0] for ks in self.kinds.values() for k in ks))}


def can_sample(status: int, content_type: str, html_len: int, text_len: int, error: str,
               min_html_len: int) -> bool:
    """A page the sample may hold: a 2xx HTML page with text, big enough not to be thin by its HTML."""
    return (200 <= (status or 0) <= 299 and is_html_type(content_type) and (text_len or 0) > 0
            and (html_len or 0) >= min_html_len and not error)


class TemplateSampler:
    """The sample of each site's distinct pages, from the store's key columns streamed once: per
    site the :attr:`~TemplateParams.sample` smallest exact-copy hashes with one page id each (the
    smallest). Holds ~40 bytes per sampled page."""

    def __init__(self, params: TemplateParams) -> None:
        self.params = params
        #: site -> max-heap of (-hash, -id, id)
        self._heaps: Dict[str, List[Tuple[int, int, int]]] = {}
        self._hashes: Dict[str, Dict[int, int]] = {}
        #: site -> pages seen (copies included)
        self._seen: Dict[str, int] = {}

    def see(self, page_id: int, site: str, text_hash: Optional[int]) -> None:
        """One page that :func:`can_sample` accepts (in any order)."""
        if not text_hash or self.params.sample <= 0:
            return
        value = text_hash & MASK64
        self._seen[site] = self._seen.get(site, 0) + 1
        heap = self._heaps.setdefault(site, [])
        kept = self._hashes.setdefault(site, {})
        if value in kept:
            if page_id < kept[value]:  # one page per text: the smallest id, whatever the order
                heap[heap.index((-value, -kept[value], kept[value]))] = (-value, -page_id, page_id)
                heapq.heapify(heap)
                kept[value] = page_id
            return
        entry = (-value, -page_id, page_id)
        if len(heap) < self.params.sample:
            heapq.heappush(heap, entry)
        elif entry > heap[0]:  # a smaller hash than the largest kept
            dropped = heapq.heapreplace(heap, entry)
            del kept[-dropped[0]]
        else:
            return
        kept[value] = page_id

    def samples(self) -> Dict[str, List[int]]:
        """site -> its sampled page ids in the order of their hashes (sites with at least
        ``min_pages`` distinct pages, or ``item_pages``: enough to tell its items, too few for a
        template)."""
        return {site: [pid for _, _, pid in sorted(heap, reverse=True)] for site, heap in sorted(self._heaps.items())
                if len(heap) >= max(2, min(self.params.min_pages, self.params.item_pages))}

    def scales(self) -> Dict[str, float]:
        """site -> the pages it has per sampled page: 1 when the sample holds all of its texts
        (what it saw is what there is: a placeholder served at four URLs is one page); else its
        pages seen per sampled page (copies count, so an estimate of a site with many copies runs
        high)."""
        return {site: (1.0 if len(heap) < self.params.sample else max(1.0, self._seen[site] / len(heap)))
                for site, heap in self._heaps.items() if heap}


def template_of(sets: Iterable[np.ndarray], params: TemplateParams) -> np.ndarray:
    """The shingles that at least ``params.share`` of these pages' sets hold, and at least
    ``params.min_pages`` of them (a small site's article shown on its home page and copied is on
    half of its pages)."""
    arrays = [s for s in sets if s.shape[0]]
    if len(arrays) < max(2, params.min_pages):
        return _EMPTY
    values, counts = np.unique(np.concatenate(arrays), return_counts=True)
    need = max(2, params.min_pages, math.ceil(params.share * len(arrays) - 1e-9))
    return values[counts >= need].astype(np.uint32)


def page_kinds(paths: Sequence[FrozenSet[str]], params: TemplateParams) -> List[List[int]]:
    """Sampled pages of one site (their tag-path sets, in sample order) grouped into kinds: a page
    joins the first kind whose first page shares ``params.kind_similarity`` of its tag paths
    (Jaccard), else starts one. Lists of positions."""
    kinds: List[List[int]] = []
    for i, p in enumerate(paths):
        for kind in kinds:
            if _path_jaccard(paths[kind[0]], p) >= params.kind_similarity:
                kind.append(i)
                break
        else:
            kinds.append([i])
    return kinds


def build_templates(samples: Dict[str, List[int]],
                    pages_of: Callable[[List[int]], Iterable[Tuple[int, str, Any]]],
                    params: TemplateParams, scales: Optional[Dict[str, float]] = None) -> Templates:
    """Each sampled site's template and its kinds; ``pages_of(ids)`` gives ``(id, shingle_set,
    tag_paths)`` of these page ids (any order); ``scales``: each site's pages per sampled page
    (:meth:`TemplateSampler.scales`), for each kind's estimated size."""
    out = Templates(params=params)
    for site, ids in samples.items():
        pages = _sampled_pages(ids, pages_of)
        with_text = [p[0] for p in pages if p[0].shape[0]]
        template = template_of(with_text, params) if len(with_text) >= params.min_pages else _EMPTY
        if template.shape[0]:
            out.by_site[site] = template
        kinds = _site_kinds(pages, params, (scales or {}).get(site, 1.0))
        if kinds:
            out.kinds[site] = kinds
    return out


def _sampled_pages(ids: List[int], pages_of: Callable[[List[int]], Iterable[Tuple[int, str, Any]]]
                   ) -> List[Tuple[Any, Any]]:
    """``(shingle set, tag paths)`` of the sampled pages that could be read, in ``ids``' order."""
    got = {pid: (decode_shingle_set(shingles), path_set(paths)) for pid, shingles, paths in pages_of(ids)}
    return [got[pid] for pid in ids if pid in got]


def _site_kinds(pages: List[Tuple[Any, Any]], params: TemplateParams, scale: float) -> List[Kind]:
    """The kinds of a site's sampled pages (``(shingle set, tag paths)`` each) seen at least twice,
    each with its own template when it is not all the pages (``scale``: the site's pages per
    sampled page)."""
    kinds = []
    for kind in page_kinds([p[1] for p in pages], params):
        if len(kind) < 2:
            continue
        sets = [pages[i][0] for i in kind if pages[i][0].shape[0]]
        kind_template = template_of(sets, params) if len(kind) < len(pages) else _EMPTY
        kinds.append(Kind(pages[kind[0]][1], len(kind), kind_template, len(kind) * scale))
    return kinds


def templates_of_records(records: Iterable[PageRecord], params: Optional[TemplateParams] = None,
                         min_html_len: int = 0) -> Templates:
    """:func:`build_templates` on records in memory (tests, ``websim explain``, benches)."""
    params = params or TemplateParams()
    sampler = TemplateSampler(params)
    pages: Dict[int, Tuple[str, Any]] = {}
    for r in records:
        if not r.probe_for and can_sample(r.status_code, r.content_type, r.html_len, r.text_len, r.error,
                                          min_html_len):
            sampler.see(r.id, host_of(r), r.text_hash)
            pages[r.id] = (r.shingle_set, r.tag_paths)
    return build_templates(sampler.samples(), lambda ids: ((i, *pages[i]) for i in ids if i in pages), params,
                           sampler.scales())
