"""A spider that overrides scrapy-websim's rules for itself through ``custom_settings``."""

from scrapy_websim.spiders.urllist import UrlListSpider


class StrictLoginSpider(UrlListSpider):
    """The ``websim`` spider, with a site-specific login phrase added and the thin-page rule off."""

    name = "strict_login"
    custom_settings = {
        # extend the L1 keyword list (replace it with WEBSIM_RULE_KEYWORDS_REPLACE)
        "WEBSIM_RULE_KEYWORDS": {"L1": ["members area"]},
        # every rule but T1
        "WEBSIM_RULES_ENABLED": ["E1", "E3", "L1", "W1", "M1", "R1", "U1"],
    }
