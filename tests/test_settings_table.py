"""The settings table in config.py is the one list of WEBSIM_* settings: README, the core parameter
objects' defaults and the typo check all agree with it."""

import os
import re
import subprocess
import sys

import pytest

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


def test_the_table_is_the_declarations_and_each_range_is_the_one_enforced():
    """Each row is built from one field declaration (default, range, description); a value just
    outside a row's numeric range is refused with an error naming the setting and that range."""
    from scrapy_websim.core.params import parse_range
    from scrapy_websim.finalize import Finalizer

    kinds = {"text", "dom", "lcs", "decision", "urls", "rules", "cluster"}
    assert {s.param.split(".")[0] for s in SETTINGS if s.param} == kinds
    assert WebsimConfig.from_settings({}) == WebsimConfig()
    assert PredictSettings.from_settings({}) == PredictSettings()
    checked = 0
    for s in SETTINGS:
        if s.type.split()[0] not in ("int", "float") or not s.range.startswith(("[", "(")):
            continue
        valid = s.range.split(", >=")[0]
        outside = parse_range(valid).hi + (1 if s.type.startswith("int") else 0.5)
        with pytest.raises(ConfigError) as err:
            WebsimConfig.from_settings({s.name: outside})
            PredictSettings.from_settings({s.name: outside})
            Finalizer.params_from_settings({s.name: outside}, WebsimConfig())
        assert str(err.value).startswith(f"{s.name} must be "), str(err.value)
        assert f" in {valid}, got " in str(err.value), str(err.value)
        checked += 1
    assert checked >= 40


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
    for args in (["-l", str(urls), "-o", str(tmp_path / "r.json")],
                 ["cluster", str(tmp_path / "f.jsonl"), "-o", str(tmp_path / "c.json")]):
        proc = subprocess.run([sys.executable, "-m", "scrapy_websim.cli", *args, "-s", "WEBSIM_TEXT_TRESHOLD=0.5"],
                              capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "WEBSIM_TEXT_TRESHOLD" in proc.stderr and "WEBSIM_TEXT_THRESHOLD" in proc.stderr, proc.stderr
