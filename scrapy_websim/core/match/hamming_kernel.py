"""Compiled probe loop of the exact Hamming join (optional: ``pip install scrapy-websim[fast]``).

:func:`scrapy_websim.core.match.candidates.hamming_pairs` finds the pairs within distance k by
multi-index hashing. In numpy every probe and every chance hit of a part's table costs a few
array operations; their number grows as n^2 / 2^21 (about 10^10 chance hits at 10M values), so
on large inputs the same join runs here, compiled by numba when it is installed: one part at a
time, bucket against bucket for each flip mask, pairs tested in a tight loop and written to
fixed buffers. The pairs it yields are exactly those of the numpy join (each pair once, in the
first part where it is within that part's radius); only their order differs. Without numba the
numpy join is used: same result, slower.
"""

from __future__ import annotations

from typing import Callable, Iterator, List, Optional, Tuple

import numpy as np

try:  # optional dependency
    import numba
except ImportError:  # pragma: no cover - exercised where numba is absent
    numba = None  # type: ignore[assignment]  # the module or None: available() tells which

#: Output buffer of one kernel call (pairs within k and not skipped); the caller unions them and
#: refreshes the labels between calls.
_BUFFER_PAIRS = 1 << 20


def available() -> bool:
    return numba is not None


def _popcount(x):  # SWAR popcount of a uint64 (LLVM turns it into one instruction)
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


def _first_within(x, k64, shifts, widths, radii, p):
    """The xor ``x`` of a pair is within k, and within no earlier part's radius (the pair is then
    this part's: each pair is yielded once)."""
    if _popcount(x) > k64:
        return False
    for r in range(p):
        if radii[r] >= 0:
            part = (x >> np.uint64(shifts[r])) & np.uint64((1 << widths[r]) - 1)
            if _popcount(part) <= np.uint64(radii[r]):
                return False
    return True


def _scan(bkeys, tstart, sv, sidx, masks, modes, state, k, shifts, widths, radii, p, lab, out_i, out_j):
    """Resume the probes of one part at ``state`` = (mask index, bucket index, position) and fill
    ``out_i``/``out_j`` until the masks are done or the next bucket might not fit. Bucket a is
    probed with mask m only where a < a ^ m (the other bucket would find the same pairs); with
    mask 0 a bucket is paired with itself, positions t < s: ``modes`` 1 = only its first value
    queries, 2 = only the others do (0 = all). Returns after a mask of mode 1, or after any mask
    once an eighth of the buffer is used, so that the caller refreshes the labels then. Returns
    the number of pairs written; ``state`` is updated (mask index = len(masks) when done)."""
    cap = out_i.shape[0]
    n_out = 0
    mi, b, t0 = state[0], state[1], state[2]
    k64 = np.uint64(k)
    while mi < masks.shape[0]:
        m = masks[mi]
        while b < bkeys.shape[0]:
            a = bkeys[b]
            q = a ^ m
            if m != 0 and q < a:
                b += 1
                t0 = -1
                continue
            qs, qe = tstart[q], tstart[q + 1]
            as_, ae = tstart[a], tstart[a + 1]
            t = max(t0, as_)  # t0: -1, or a position in bucket a to resume at
            if modes[mi] == 2 and t == as_:
                t += 1
            end = min(ae, as_ + 1 + ae * (modes[mi] != 1))  # mode 1: the first value only
            while t < end:
                if cap - n_out < qe - qs:
                    state[0], state[1], state[2] = mi, b, t
                    return n_out
                vi = sv[t]
                s = max(qs, (t + 1) * (m == 0))  # mask 0 (q = a): after t
                while s < qe:
                    if _first_within(vi ^ sv[s], k64, shifts, widths, radii, p):
                        ii, jj = sidx[t], sidx[s]
                        if lab[jj] != lab[ii]:
                            out_i[n_out] = min(ii, jj)
                            out_j[n_out] = max(ii, jj)
                            n_out += 1
                    s += 1
                t += 1
            b += 1
            t0 = -1
        mi += 1
        b = 0
        if modes[mi - 1] == 1 or n_out >= cap >> 3:
            break
    state[0], state[1], state[2] = mi, 0, -1
    return n_out


if numba is not None:
    _popcount = numba.njit(inline="always", cache=True)(_popcount)
    _first_within = numba.njit(inline="always", cache=True)(_first_within)
    _scan = numba.njit(cache=True, nogil=True)(_scan)


def part_pairs(values: np.ndarray, key: np.ndarray, width: int, masks: np.ndarray, k: int, radii: List[int],
               shifts: List[int], widths: List[int], p: int,
               labels: Optional[Callable[[], np.ndarray]]) -> Iterator[Tuple[np.ndarray, np.ndarray]]:
    """The pairs (i < j) of one part (index ``p``; ``key`` its bits of ``values``), within k and
    within this part's radius but no earlier part's. ``labels``: as in ``hamming_pairs``, called
    before the first probe and after each full buffer."""
    n = values.shape[0]
    sidx = np.argsort(key, kind="stable").astype(np.int64, copy=False)
    sv = np.ascontiguousarray(values[sidx], dtype=np.uint64)
    counts = np.bincount(key, minlength=1 << width)
    tstart = np.zeros((1 << width) + 1, np.int64)
    np.cumsum(counts, out=tstart[1:])
    bkeys = np.flatnonzero(counts).astype(np.int64)
    cap = max(_BUFFER_PAIRS, n // 2, int(counts.max()) if n else 0)  # refreshes (O(n) each) stay rare
    out_i, out_j = np.empty(cap, np.int64), np.empty(cap, np.int64)
    state = np.array([0, 0, -1], np.int64)
    no_labels = np.arange(n, dtype=np.int64)
    masks = np.asarray(masks, np.int64)
    modes = np.zeros(masks.shape[0], np.int64)
    if labels is not None and masks.shape[0] and masks[0] == 0:
        # the exact probe twice: each bucket's first value joins its near values, the labels are
        # read again, then the others query, skipping what that joined (a family costs its size)
        masks, modes = np.concatenate(([0], masks)), np.concatenate(([1, 2], modes[1:]))
    parts = (np.asarray(shifts, np.int64), np.asarray(widths, np.int64), np.asarray(radii, np.int64))
    while state[0] < masks.shape[0]:
        lab = no_labels if labels is None else np.ascontiguousarray(labels(), dtype=np.int64)
        got = _scan(bkeys, tstart, sv, sidx, masks, modes, state, k, *parts, p, lab, out_i, out_j)
        if got:
            yield out_i[:got].copy(), out_j[:got].copy()
