"""Exact copies in the clustering (docs/clustering.md: exact copies always merge).

Pages whose judged text has the same exact-copy hash (``PageRecord.text_hash``) are represented by
their best-ranked page while :func:`scrapy_websim.core.match.cluster.cluster` runs, and each copy
joins the cluster its representative ends in. Pure numpy, no Scrapy import.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from ..types import PairResult

__all__ = ["copy_counts", "exact_representatives", "attach_exact_copies"]


def copy_counts(exact: Optional[np.ndarray], n: int) -> np.ndarray:
    """Per node, how many of the ``n`` eligible pages share its exact-copy hash (1 without one). A noisy copy
    of a page has the longest text of its family (its banner, its stamp) but no copy of its own:
    the version most servers serve is the better canonical, and the one its mirrors match."""
    copies = np.ones(n, np.int64)
    if exact is None or not n:
        return copies
    has = exact != 0
    _, inverse, counts = np.unique(exact[has], return_inverse=True, return_counts=True)
    copies[has] = counts[inverse]
    return copies


def exact_representatives(exact: Optional[np.ndarray], host: np.ndarray, rank: np.ndarray,
                          same_host: bool) -> np.ndarray:
    """Node -> the best-ranked node (lowest ``rank``) with the same non-zero exact-copy hash (and
    host index, with ``same_host``); a node without a hash, or the best of its copies, represents
    itself."""
    n = rank.shape[0]
    rep = np.arange(n, dtype=np.int64)
    if exact is None:
        return rep
    nodes = np.nonzero(exact != 0)[0]
    if nodes.shape[0] < 2:
        return rep
    hk = host[nodes] if same_host else np.zeros(nodes.shape[0], np.int32)
    order = np.lexsort((rank[nodes], hk, exact[nodes]))
    nodes, ex, hk = nodes[order], exact[nodes][order], hk[order]
    new = np.ones(nodes.shape[0], bool)
    new[1:] = (ex[1:] != ex[:-1]) | (hk[1:] != hk[:-1])
    first = np.maximum.accumulate(np.where(new, np.arange(nodes.shape[0]), 0))
    rep[nodes] = nodes[first]
    return rep


def attach_exact_copies(members: Dict[int, List[Tuple[int, PairResult]]], rep: np.ndarray,
                        followers: np.ndarray, ids: np.ndarray,
                        compare: Callable[[int, int], PairResult]) -> int:
    """Each exact copy joins the cluster its representative ended in (a representative left alone
    becomes the canonical of its copies). The pair is compared with that cluster's canonical for
    the reported similarities; where the decision does not call it a duplicate (other page
    chrome around the same content) the rule is ``exact``. Returns the number of compares."""
    cluster_of: Dict[int, int] = {}
    for c, ms in members.items():
        cluster_of[c] = c
        for m, _ in ms:
            cluster_of[m] = c
    for f in followers.tolist():
        r = int(rep[f])
        if r not in cluster_of:
            cluster_of[r] = r
            members[r] = []
        c = cluster_of[r]
        result = compare(int(ids[c]), int(ids[f]))
        if not result.is_duplicate:
            result = replace(result, is_duplicate=True, rule="exact")
        members[c].append((f, result))
    return int(followers.shape[0])
