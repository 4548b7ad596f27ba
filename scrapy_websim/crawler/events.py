"""Signals scrapy-websim sends (connect with ``crawler.signals.connect``).

The components talk to the one that owns the end of the crawl
(:class:`~scrapy_websim.crawler.extension.WebsimExtension`) only through these signals: a rendered page
goes to the recorder with :data:`page_captured`, a page's record goes in with
:data:`page_recorded`, the input list with :data:`inputs_declared`, and the result comes out with
:data:`result_wanted`. :func:`ask` sends a signal that has an answer. None of websim's pages or
records travels as a Scrapy item: the user's item pipelines, feeds and item log lines see only
the spider's own items.
"""

from __future__ import annotations

from typing import Any

from scrapy.exceptions import NotConfigured
from twisted.python.failure import Failure

#: Sent with every rendered or fetched page (by the ``websim`` spider, and by the render spider
#: middleware for any other spider's responses). Arguments: ``page``
#: (:class:`~scrapy_websim.crawler.items.PageItem`), ``spider``. The recorder
#: (:class:`~scrapy_websim.crawler.recorder.WebsimRecorder`) computes its features and records it.
page_captured = object()

#: Sent by the recorder once a rendered page's features are computed, before its HTML is dropped.
#: Arguments: ``record`` (:class:`~scrapy_websim.core.types.PageRecord`), ``main_text`` (str),
#: ``spider``. The URL-level duplicate predictor learns from it.
page_featured = object()

#: Sent with every page's finished record (rendered, fetched, failed, predicted or a soft-404
#: probe): by the recorder for captured pages, by the ``websim`` spider for list lines that are no
#: URL, by the failure middleware for failed downloads of any spider and by the duplicate
#: predictor for the requests it skips. Argument: ``record``. The extension stores it.
page_recorded = object()

#: Sent by a spider with an input list, before its first request. Argument: ``entries`` (a list of
#: :class:`~scrapy_websim.core.urls.url_list.Entry`). Answered with a
#: :class:`~scrapy_websim.crawler.extension.Registered`: the ids and soft-404 origins done by an
#: earlier run of the same ``JOBDIR``, which the spider does not request again.
inputs_declared = object()

#: Sent to get the end-of-crawl :class:`~scrapy_websim.result.finalize.Result` (the ``websim`` command
#: does). Answered with the result, computed once, on the first ask.
result_wanted = object()

#: Sent by a distributed worker spider at its start. Argument: ``sink``, where its records go
#: instead of the local store (a :class:`~scrapy_websim.distributed.spider.RecordSink`), and
#: ``total_inputs``. Nothing is clustered at the end of such a crawl.
sink_opened = object()

NOT_ENABLED = ("scrapy-websim is not enabled: add ADDONS = {'scrapy_websim.Addon': 500} to your settings "
               "(or keep EXTENSIONS['scrapy_websim.crawler.extension.WebsimExtension'])")


def ask(crawler: Any, signal: Any, **kwargs: Any) -> Any:
    """Send ``signal`` and return its one answer; an error of the answering handler is raised
    here, and no answer at all (the extension is not enabled) raises ``NotConfigured``."""
    for _receiver, answer in crawler.signals.send_catch_log(signal, **kwargs):
        if isinstance(answer, Failure):
            answer.raiseException()
        if answer is not None:
            return answer
    raise NotConfigured(NOT_ENABLED)
