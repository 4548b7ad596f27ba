"""Pure algorithms of scrapy-websim.

Nothing under ``scrapy_websim.core`` imports Scrapy or Twisted: these modules can be read,
tested, benchmarked and reused offline (``websim cluster`` on a features file).

Layout, by concern (a package imports only the ones above it; no cycles):

* :mod:`.types` (the records and their JSON form, the one "is HTML"), :mod:`.params` (every
  tunable of the core: the parameter objects of each package and the one range check of their
  ``validate()``), :mod:`.fingerprints` (tokens, the one token hash, SimHash, MinHash, Jaccard).
* :mod:`.page`: one page's features from its parsed HTML and screenshot.
* :mod:`.rules`: the special-page rules (signals per page, label at the end).
* :mod:`.urls`: the URL list, URL normalisation, URL SimHash, the duplicate predictor.
* :mod:`.match`: the candidate join, clustering and the final cluster of every page.
* :mod:`.features` (all of a page's features, parsing once) and :mod:`.store` (the on-disk
  SQLite feature store).
"""
