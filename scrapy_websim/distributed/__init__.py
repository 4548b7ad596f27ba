"""Distributed mode: many workers on many machines render one URL list through scrapy-redis.

``websim push`` puts the list in Redis, ``websim worker`` renders from the shared queue (scrapy-redis's
scheduler, with a lease on every request so a killed worker loses nothing), ``websim status`` shows
progress and ``websim collect`` clusters every record with the same stages as a single crawl.
See docs/distributed.md. Needs the ``redis`` extra: ``pip install 'scrapy-websim[redis]'``.
"""
