"""Which pages are one page: the candidate join, the clustering and the final assignment.

* :mod:`.candidates`: the exact Hamming join of 64-bit keys (multi-index hashing) and the
  union-find; :mod:`.hamming_kernel` its optional compiled probe loop.
* :mod:`.similarity`: the four pairwise similarities and the duplicate decision of a pair.
* :mod:`.cluster`: canonical-centred clustering of the eligible pages' candidate pairs.
* :mod:`.assign`: one cluster per page, rule clusters and content clusters combined.
"""
