"""Settings: defaults, parsing, and errors that name the setting and its valid range."""

import pytest
from scrapy.settings import Settings

from scrapy_websim.config import WebsimConfig, WebsimParams
from scrapy_websim.config_values import ConfigError, parse_viewport


def test_defaults_match_the_spec():
    c = WebsimConfig.from_settings(Settings())
    assert (c.http_timeout, c.page_timeout, c.stable_timeout) == (10.0, 20.0, 10.0)
    assert c.viewport == (1280, 800) and c.batch_size == 1000 and c.sim_threshold == 0.85
    assert c.network_idle_ms == 500 and c.dom_stable_checks == 3 and c.same_host_only is False


def test_values_from_strings_as_given_on_the_command_line():
    c = WebsimConfig.from_settings(Settings({"WEBSIM_HTTP_TIMEOUT": "3.5", "WEBSIM_PAGE_TIMEOUT": "7",
                                             "WEBSIM_SAME_HOST_ONLY": "true", "WEBSIM_VIEWPORT": "800x600",
                                             "WEBSIM_PARAMS": {"crawl.batch_size": "50"}}))
    assert ((c.http_timeout, c.page_timeout, c.same_host_only, c.viewport, c.batch_size)
            == (3.5, 7.0, True, (800, 600), 50))


@pytest.mark.parametrize("name, value, message", [
    ("WEBSIM_HTTP_TIMEOUT", 0, "WEBSIM_HTTP_TIMEOUT must be a number in (0, 600]"),
    ("WEBSIM_HTTP_TIMEOUT", "fast", "WEBSIM_HTTP_TIMEOUT must be a number in (0, 600]"),
    ("WEBSIM_STABLE_TIMEOUT", -1, "WEBSIM_STABLE_TIMEOUT must be a number in [0, 600]"),
    ("WEBSIM_PARAMS", {"crawl.batch_size": 0}, "WEBSIM_PARAMS['crawl.batch_size'] must be an integer in [1, 10000000]"),
    ("WEBSIM_PARAMS", {"crawl.batch_size": "1.5"}, "WEBSIM_PARAMS['crawl.batch_size'] must be an integer"),
    ("WEBSIM_PARAMS", {"crawl.sim_threshold": 1.5}, "WEBSIM_PARAMS['crawl.sim_threshold'] must be a number in [0, 1]"),
    ("WEBSIM_SAME_HOST_ONLY", "perhaps", "WEBSIM_SAME_HOST_ONLY must be a boolean"),
    ("WEBSIM_VIEWPORT", "wide", "WEBSIM_VIEWPORT must look like '1280x800'"),
    ("WEBSIM_VIEWPORT", "100x100", "WEBSIM_VIEWPORT sides must be in [200, 4096]"),
    ("WEBSIM_PARAMS", {"crawl.network_idle_ms": True}, "WEBSIM_PARAMS['crawl.network_idle_ms'] must be an integer"),
])
def test_bad_values_name_the_setting_and_range(name, value, message):
    with pytest.raises(ConfigError) as err:
        WebsimConfig.from_settings(Settings({name: value}))
    assert message in str(err.value)


def test_page_timeout_must_cover_http_timeout():
    with pytest.raises(ConfigError, match="WEBSIM_PAGE_TIMEOUT .* must be >= WEBSIM_HTTP_TIMEOUT"):
        WebsimConfig.from_settings(Settings({"WEBSIM_HTTP_TIMEOUT": 30}))


@pytest.mark.parametrize("settings, message", [
    ({"WEBSIM_TEXT_THRESHOLD": 2}, "WEBSIM_TEXT_THRESHOLD must be in [0, 1]"),
    ({"WEBSIM_PARAMS": {"decision.structure_measure": "tree"}},
     "WEBSIM_PARAMS['decision.structure_measure'] must be 'paths', 'lcs' or 'both'"),
    ({"WEBSIM_RULES_ENABLED": ["E1", "X9"]}, "WEBSIM_RULES_ENABLED must be a subset"),
    ({"WEBSIM_RULE_KEYWORDS": {"Z1": ["x"]}}, "WEBSIM_RULE_KEYWORDS"),
    ({"WEBSIM_RULE_KEYWORDS": ["login"]}, "WEBSIM_RULE_KEYWORDS must be a dict"),
    ({"WEBSIM_PARAMS": {"rules.thin_text_chars": -5}},
     "WEBSIM_PARAMS['rules.thin_text_chars'] must be an integer in [0, 10000000], got -5"),
    ({"WEBSIM_TEXT_EXTRACTOR": "lynx"}, "WEBSIM_TEXT_EXTRACTOR must be one of 'websim', 'trafilatura', got 'lynx'"),
    ({"WEBSIM_PARAMS": {"urls.index_files": "a/index.html"}},
     "WEBSIM_PARAMS['urls.index_files'] must be file names without '/'"),
    ({"WEBSIM_PARAMS": {"urls.keep_params": [""]}},
     "WEBSIM_PARAMS['urls.keep_params'] must be a sequence of non-empty strings"),
    ({"WEBSIM_PARAMS": {"text.max_link_density": 0}},
     "WEBSIM_PARAMS['text.max_link_density'] must be in (0, 1], got 0"),
])
def test_decision_and_rule_settings_are_validated(settings, message):
    with pytest.raises(ConfigError) as err:
        WebsimParams.from_settings(Settings(settings), WebsimConfig())
    assert message in str(err.value)


def test_rule_keywords_extend_or_replace_and_rules_switch_off():
    p = WebsimParams.from_settings(Settings({
        "WEBSIM_RULE_KEYWORDS": {"L1": ["members area"]},
        "WEBSIM_RULE_KEYWORDS_REPLACE": {"M1": ["closed today"]},
        "WEBSIM_RULES_ENABLED": "E1,E3,L1",
    }), WebsimConfig())
    assert "members area" in p.features.rules.login_keywords and "login" in p.features.rules.login_keywords
    assert p.features.rules.maintenance_keywords == ("closed today",)
    assert p.assign.rules.enabled_rules == ("E1", "E3", "L1")


def test_prefilter_widens_to_cover_rule1_and_visual_candidates_follow_rule2():
    p = WebsimParams.from_settings(Settings({"WEBSIM_TEXT_THRESHOLD": 0.4}), WebsimConfig())
    assert p.cluster.simhash_distance == 9  # (1 - 0.4) * 16 = 9.6 -> every accepted pair is a candidate
    # --text-threshold (the MinHash threshold rule 1 uses on the default path) widens it too
    p = WebsimParams.from_settings(Settings({"WEBSIM_TEXT_JACCARD_THRESHOLD": 0.3}), WebsimConfig())
    assert p.cluster.simhash_distance == 11
    p = WebsimParams.from_settings(Settings({"WEBSIM_PARAMS": {"decision.rule2_visual": 0.95}}), WebsimConfig())
    assert p.cluster.visual_distance == 1
    p = WebsimParams.from_settings(Settings({"WEBSIM_PARAMS": {"decision.rule2_visual": 1.01}}), WebsimConfig())
    assert p.cluster.visual_distance == -1


def test_parse_viewport_accepts_pairs():
    assert parse_viewport("X", (1024, 768)) == (1024, 768)
