"""What each site repeats on its pages: the template the duplicate decision looks past.

An application serves many items in one template: a ticket, a commit, a table row, a short post is
a sentence or a few lines inside menus, field labels, buttons and footers that every item repeats.
Compared whole, two items are mostly template and look like copies; what tells them apart, and
what two copies of one item share, is what each page says beyond its site's template (template
detection by frequency over a site's pages: Bar-Yossef and Rajagopalan 2002; Yi, Liu and Li
2003).

Per origin (``scheme://host:port`` of the final URL), the shingles of the judged text
(``PageRecord.shingle_set``) that at least :attr:`~TemplateParams.share` of the origin's distinct
pages carry are its template. The pages counted are a sample: the
:attr:`~TemplateParams.sample` eligible pages with the smallest exact-copy shape
(``PageRecord.text_shape``), so copies of one page count once, and the sample does not depend on
the order of the crawl or of the input. An origin with fewer than
:attr:`~TemplateParams.min_pages` distinct pages has no template of its own: its pages are judged
whole, unless the other page of a pair comes from an origin that has one (a mirror on another
port with a few pages of a large site). A pair is judged on its pages' shingles outside the union
of their origins' templates (:func:`scrapy_websim.core.match.similarity.text_sim`).

Built at the end of the crawl, after every page is known (so a distributed collect gets the same
templates): :class:`TemplateSampler` sees each eligible page's columns as the store is streamed
once, :func:`build_templates` reads the sampled pages' shingle sets.

Pure: no Scrapy import.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, List, Optional, Tuple

import numpy as np

from ..fingerprints import decode_shingle_set
from ..params.match import TemplateParams
from ..types import MASK64, PageRecord
from .assign import origin_of

__all__ = ["TemplateParams", "TemplateSampler", "Templates", "build_templates", "templates_of_records"]

_EMPTY = np.zeros(0, np.uint32)


def record_origin(record: PageRecord) -> str:
    """The origin whose template a page is judged against (of its final URL)."""
    return origin_of(record.final_url or record.url or "")


@dataclass
class Templates:
    """The template shingles (sorted distinct uint32) of each origin that has one."""

    by_origin: Dict[str, np.ndarray] = field(default_factory=dict)
    #: distinct pages sampled per origin (origins with a template only)
    pages: Dict[str, int] = field(default_factory=dict)

    def of(self, record: PageRecord) -> np.ndarray:
        return self.by_origin.get(record_origin(record), _EMPTY)

    def for_pair(self, a: PageRecord, b: PageRecord) -> np.ndarray:
        """The shingles a pair's text measure leaves out: the union of both origins' templates."""
        ta, tb = self.of(a), self.of(b)
        if ta is tb or not tb.shape[0]:
            return ta
        if not ta.shape[0]:
            return tb
        return np.union1d(ta, tb)

    def __bool__(self) -> bool:
        return bool(self.by_origin)

    def summary(self) -> Dict[str, int]:
        return {"origins": len(self.by_origin),
                "shingles": int(sum(t.shape[0] for t in self.by_origin.values()))}


class TemplateSampler:
    """The sample of each origin's distinct pages, from the store's records streamed once: per
    origin the :attr:`~TemplateParams.sample` smallest ``text_shape`` values among its eligible
    pages with a shingle set, with one page id each. Holds ~40 bytes per sampled page."""

    def __init__(self, params: TemplateParams) -> None:
        self.params = params
        #: origin -> max-heap (negated shape) of (-shape, -id, id)
        self._heaps: Dict[str, List[Tuple[int, int, int]]] = {}
        self._shapes: Dict[str, set] = {}

    def see(self, record: PageRecord) -> None:
        """One eligible page (call in any order; pages without a shingle set are not sampled)."""
        if not record.shingle_set or self.params.sample <= 0:
            return
        shape = record.text_shape if record.text_shape else record.text_hash
        if not shape:
            return
        shape &= MASK64
        origin = record_origin(record)
        heap = self._heaps.setdefault(origin, [])
        shapes = self._shapes.setdefault(origin, set())
        entry = (-shape, -record.id, record.id)
        if shape in shapes:
            # one page per shape: the smallest id (so the sample does not depend on order)
            for i, (neg, neg_id, _) in enumerate(heap):
                if neg == -shape and neg_id < -record.id:
                    heap[i] = entry
                    heapq.heapify(heap)
                    break
            return
        if len(heap) < self.params.sample:
            heapq.heappush(heap, entry)
            shapes.add(shape)
        elif entry > heap[0]:  # a smaller shape than the largest kept
            dropped = heapq.heapreplace(heap, entry)
            shapes.discard(-dropped[0])
            shapes.add(shape)

    def samples(self) -> Dict[str, List[int]]:
        """origin -> the sampled page ids (origins with at least ``min_pages`` distinct pages)."""
        return {origin: sorted(pid for _, _, pid in heap) for origin, heap in sorted(self._heaps.items())
                if len(heap) >= max(2, self.params.min_pages)}


def template_of(sets: Iterable[np.ndarray], params: TemplateParams) -> np.ndarray:
    """The shingles that at least ``params.share`` of these pages' sets hold (and at least two)."""
    arrays = [s for s in sets if s.shape[0]]
    if len(arrays) < max(2, params.min_pages):
        return _EMPTY
    values, counts = np.unique(np.concatenate(arrays), return_counts=True)
    need = max(2, math.ceil(params.share * len(arrays) - 1e-9))
    return values[counts >= need].astype(np.uint32)


def build_templates(samples: Dict[str, List[int]], shingle_sets: Callable[[List[int]], Iterable[str]],
                    params: TemplateParams) -> Templates:
    """Each sampled origin's template; ``shingle_sets(ids)`` gives the stored shingle sets of
    these page ids (any order)."""
    out = Templates()
    for origin, ids in samples.items():
        template = template_of((decode_shingle_set(s) for s in shingle_sets(ids)), params)
        if template.shape[0]:
            out.by_origin[origin] = template
            out.pages[origin] = len(ids)
    return out


def templates_of_records(records: Iterable[PageRecord], params: Optional[TemplateParams] = None,
                         eligible: Optional[Callable[[PageRecord], bool]] = None) -> Templates:
    """:func:`build_templates` on records in memory (tests, ``websim explain``, benches)."""
    params = params or TemplateParams()
    sampler = TemplateSampler(params)
    sets: Dict[int, str] = {}
    for r in records:
        if eligible is None or eligible(r):
            sampler.see(r)
            sets[r.id] = r.shingle_set
    return build_templates(sampler.samples(), lambda ids: (sets[i] for i in ids), params)
