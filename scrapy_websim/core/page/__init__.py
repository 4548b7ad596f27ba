"""One page, read from its parsed HTML and its screenshot: the per-page features.

* :mod:`.visible`: the one walk of what a person sees (visible text, headings, forms, page
  chrome vs content), the page body and the one skip-tag set (``NON_TEXT_TAGS``).
* :mod:`.text`: main-text extraction and the visible text of list pages.
* :mod:`.prose`: the prose (visible text without link lists).
* :mod:`.dom`: DOM counts and tag paths; :mod:`.lcs`: the tag sequence and its LCS similarity.
* :mod:`.pagetype`: the ``list`` / ``detail`` / ``unknown`` label.
* :mod:`.visual`: the screenshot's perceptual hash.
* :mod:`.digest`: the content digest ``websim diff`` compares a URL by between two scans.

:mod:`scrapy_websim.core.features` calls them on one parsed document; hashes of the text
(SimHash, MinHash) are in :mod:`scrapy_websim.core.fingerprints`.
"""
