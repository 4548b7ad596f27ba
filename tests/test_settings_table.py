"""The settings table in config.py is the one list of WEBSIM_* settings: README, the core parameter
objects' defaults and the typo check all agree with it."""

import dataclasses
import os
import re
import subprocess
import sys

import pytest

from scrapy_websim import config
from scrapy_websim.config import SETTINGS, SETTINGS_BY_NAME, ConfigError, PredictSettings, WebsimConfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def readme_rows():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    section = text.split("\n## Settings\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `(WEBSIM_\w+)` \| ([^|]+) \| ([^|]+) \|", section, re.M)


def test_readme_lists_exactly_the_table_with_its_types_and_defaults():
    rows = readme_rows()
    names = [name for name, _, _ in rows]
    assert len(names) == len(set(names))
    assert set(names) == set(SETTINGS_BY_NAME)
    for name, typ, shown in rows:
        setting = SETTINGS_BY_NAME[name]
        assert (typ.strip(), shown.strip()) == (setting.type, setting.readme_default()), name


def test_core_parameter_defaults_are_the_table_defaults():
    from scrapy_websim.core.match import cluster, similarity
    from scrapy_websim.core.page.dom import DomParams
    from scrapy_websim.core.page.lcs import LcsParams
    from scrapy_websim.core.rules.signals import RuleParams
    from scrapy_websim.core.page.text import TextParams
    from scrapy_websim.core.urls.normalize import UrlParams

    pairs = [(TextParams, config.TEXT_SETTINGS), (DomParams, config.DOM_SETTINGS), (LcsParams, config.LCS_SETTINGS),
             (similarity.DecisionParams, config.DECISION_SETTINGS), (UrlParams, config.URL_SETTINGS),
             (RuleParams, config.RULE_SETTINGS), (cluster.ClusterParams, config.CLUSTER_SETTINGS)]
    mapped = set()
    for cls, mapping in pairs:
        fields = {f.name: f for f in dataclasses.fields(cls)}
        for fname, sname in mapping.items():
            mapped.add(sname)
            table = SETTINGS_BY_NAME[sname].default
            if table is not config.CORE_DEFAULT:
                assert fields[fname].default == table, sname
    # the settings WebsimConfig and PredictSettings read: their dataclass defaults are the table's
    for obj, prefix in ((WebsimConfig(), "WEBSIM_"), (PredictSettings(), "WEBSIM_PREDICT_")):
        for f in dataclasses.fields(obj):
            name = prefix + f.name.upper()
            if name in SETTINGS_BY_NAME and name != "WEBSIM_VIEWPORT":
                assert getattr(obj, f.name) == SETTINGS_BY_NAME[name].default or (
                    getattr(obj, f.name) == () and SETTINGS_BY_NAME[name].default == {}), name
    assert WebsimConfig.from_settings({}) == WebsimConfig()
    assert PredictSettings.from_settings({}) == PredictSettings()


def test_every_setting_has_a_description_and_a_group():
    for s in SETTINGS:
        assert s.doc and s.group and s.type.split()[0] in ("str", "int", "float", "bool", "list", "dict"), s.name


@pytest.mark.parametrize("typo,meant", [("WEBSIM_TEXT_TRESHOLD", "WEBSIM_TEXT_THRESHOLD"),
                                        ("WEBSIM_PAGE_TIMOUT", "WEBSIM_PAGE_TIMEOUT"),
                                        ("WEBSIM_MAX_PAGES", None)])
def test_an_unknown_setting_is_an_error_naming_the_closest(typo, meant):
    with pytest.raises(ConfigError) as err:
        WebsimConfig.from_settings({typo: "0.5"})
    assert typo in str(err.value)
    if meant:
        assert f"did you mean {meant}?" in str(err.value)


def test_a_spider_custom_setting_is_checked_too():
    from scrapy import Spider
    from scrapy.utils.test import get_crawler

    class Typo(Spider):
        name = "typo"
        custom_settings = {"WEBSIM_STRUCTURE_TRESHOLD": 0.5}

    crawler = get_crawler(Typo, {})
    with pytest.raises(ConfigError, match="did you mean WEBSIM_STRUCTURE_THRESHOLD"):
        WebsimConfig.from_settings(crawler.settings)


def test_cli_exits_2_on_a_misspelt_setting(tmp_path):
    urls = tmp_path / "urls.txt"
    urls.write_text("http://127.0.0.1:9/\n")
    (tmp_path / "f.jsonl").write_text("")
    env = dict(os.environ, PYTHONPATH=ROOT)
    for args in (["-l", str(urls), "-o", str(tmp_path / "r.json")], ["cluster", str(tmp_path / "f.jsonl"), "-o", str(tmp_path / "c.json")]):
        proc = subprocess.run([sys.executable, "-m", "scrapy_websim.cli", *args, "-s", "WEBSIM_TEXT_TRESHOLD=0.5"],
                              capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "WEBSIM_TEXT_TRESHOLD" in proc.stderr and "WEBSIM_TEXT_THRESHOLD" in proc.stderr, proc.stderr
