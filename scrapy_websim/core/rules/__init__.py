"""Special-page rules: read per page, decided at the end of the crawl.

* :mod:`.signals`: :func:`~.signals.page_signals` and the template fingerprint, read from the
  parsed page in the pipeline (the rule parameters, codes and keyword lists are declared in
  :mod:`scrapy_websim.core.params.rules`).
* :mod:`.label`: :func:`~.label.special_label`, the label decided from a stored record.

A new rule: its keywords or thresholds in ``RuleParams`` and its code in ``RULE_CODES`` (both in
``core/params/rules.py``), what it reads of the page in :mod:`.signals`, its decision in
:mod:`.label`.
"""
