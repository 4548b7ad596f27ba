"""A distributed job's records clustered into one result: what ``websim collect`` writes.

The records go from Redis into a temporary :class:`~scrapy_websim.core.store.FeatureStore`, with
the record a single crawl would have of every list line that is no URL and of every URL no worker
recorded (``--partial``), then through the same :class:`~scrapy_websim.result.finalize.Finalizer`
as a single crawl (the store's discovered pages renumbered first, its last write).
"""

from __future__ import annotations

from typing import List

from scrapy_websim.config import WebsimParams
from scrapy_websim.core.features import fill_normalized_url
from scrapy_websim.core.store import FeatureStore
from scrapy_websim.core.types import PageRecord
from scrapy_websim.distributed.job import Job
from scrapy_websim.result.finalize import Finalizer, Result, renumber_discovered

#: ``error`` of a URL no worker recorded, in a ``collect --partial`` result.
NOT_RECORDED = "not recorded: no worker had finished this URL when 'websim collect --partial' ran"


def collect(job: Job, params: WebsimParams, missing: List[int]) -> Result:
    """The job's records in a FeatureStore, then the same Finalizer as a single crawl."""
    store = FeatureStore(batch_size=params.config.batch_size)  # a temporary file, removed on close
    try:
        for record in job.iter_records():
            store.add(record)
        missing_set = set(missing)
        total = 0
        for page_id, raw, _url, error in job.iter_inputs():
            total += 1
            if error:  # a line that is not a URL: the record a single crawl's spider yields for it
                record = PageRecord(id=page_id, url=raw, error=error)
                fill_normalized_url(record, params.features)
                store.add(record)
            elif page_id in missing_set:
                store.add(PageRecord(id=page_id, url=raw, error=NOT_RECORDED))
        store.flush()
        renumber_discovered(store)
        return Finalizer(params).run(store, total)
    except BaseException:
        store.close()
        raise
