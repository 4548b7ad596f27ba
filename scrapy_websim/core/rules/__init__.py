"""Special-page rules (SPEC section 7): read per page, decided at the end of the crawl.

* :mod:`.signals`: the rule parameters and keyword lists, :func:`~.signals.page_signals` and the
  template fingerprint, read from the parsed page in the pipeline.
* :mod:`.label`: :func:`~.label.special_label`, the label decided from a stored record.

A new rule: its keywords or thresholds in ``RuleParams``, its code in ``RULE_CODES``, what it
reads of the page in :mod:`.signals`, its decision in :mod:`.label`.
"""
