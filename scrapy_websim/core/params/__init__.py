"""Every tunable of the core, declared once: the frozen parameter objects and how they declare a field.

* :mod:`.base`: :func:`~.base.param` (a field's default, valid range or choices, one-line
  description), :class:`~.base.Params` (the one ``validate()`` those declarations drive) and
  :class:`~.base.FieldError`.
* One module per core package, holding its parameter objects (fields, comments, ``validate()``)
  and the constants their defaults are made of: :mod:`.page` (``TextParams``, ``PageTypeParams``,
  ``DomParams``, ``LcsParams``), :mod:`.match` (``DecisionParams``, ``ClusterParams``, ``TemplateParams``),
  :mod:`.rules` (``RuleParams``, ``RULE_CODES``, the keyword lists) and :mod:`.urls`
  (``UrlParams``, ``UrlSimhashParams``, ``PredictorParams``).

Every module imports an object from the module that declares it (``from
scrapy_websim.core.params.page import TextParams``); ``config.py`` builds the
``WEBSIM_*`` settings table and the ``WEBSIM_PARAMS`` keys (``"text.max_link_density"``: the
object's key in ``config.PARAM_OBJECTS`` and the field's name) from these declarations. A new
tunable is one ``param(...)`` field in the module of its package; it is a ``WEBSIM_PARAMS`` key at
once, or its own setting with ``setting="WEBSIM_X"`` (see :func:`.base.param`).

Pure package: no Scrapy import, and no import of the algorithm modules (they import it).
"""
