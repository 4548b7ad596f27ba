"""URLs: the user's URL list, normalisation, URL-pattern SimHash and the duplicate predictor.

* :mod:`.url_list`: reading the URL list a user hands in, once per entry.
* :mod:`.normalize`: ``normalize_url`` (the U1 rule and the ``normalized_url`` field).
* :mod:`.simhash`: the URL-structure SimHash (``websim urls``).
* :mod:`.predictor`: predicting from a URL alone whether its page duplicates one already seen.
"""
