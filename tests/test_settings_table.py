"""The settings table in config.py is the one list of WEBSIM_* settings: the documentation's table
(docs/settings.md), the core parameter objects' defaults and the typo check all agree with it."""

import importlib.util
import os
import re
import subprocess
import sys

import pytest

from scrapy_websim.config import (
    PARAM_KEYS,
    PARAMS,
    SETTINGS,
    SETTINGS_BY_NAME,
    PredictSettings,
    WebsimConfig,
    params_markdown,
)
from scrapy_websim.config_values import ConfigError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def table_script():
    """scripts/settings_table.py, the one that writes docs/settings.md's table."""
    spec = importlib.util.spec_from_file_location("settings_table", os.path.join(ROOT, "scripts", "settings_table.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def docs_table():
    with open(os.path.join(ROOT, "docs", "settings.md"), encoding="utf-8") as fh:
        return table_script().split(fh.read())[1]


def test_docs_table_is_the_one_written_from_the_code():
    """docs/settings.md holds exactly what scripts/settings_table.py writes from SETTINGS
    (after changing a setting: python scripts/settings_table.py)."""
    assert docs_table() == table_script().render(SETTINGS, params_markdown()), "run python scripts/settings_table.py"


def test_docs_lists_exactly_the_table_with_its_types_and_defaults():
    rows = re.findall(r"^\| `(WEBSIM_\w+)` \| ([^|]+) \| ([^|]+) \|", docs_table(), re.M)
    names = [name for name, _, _ in rows]
    assert len(names) == len(set(names))
    assert set(names) == set(SETTINGS_BY_NAME)
    for name, typ, shown in rows:
        setting = SETTINGS_BY_NAME[name]
        assert (typ.strip(), shown.strip()) == (setting.type, setting.readme_default()), name


def test_the_settings_script_check_mode_fails_on_a_stale_table(tmp_path):
    """--check exits 1 when the page's table is not the code's, and 0 when it is."""
    script = table_script()
    page = tmp_path / "settings.md"
    stale = "| `WEBSIM_GONE` | int | `1` |  | old |"
    page.write_text(f"# Settings\n\n{script.START}\n{stale}\n{script.END}\n", encoding="utf-8")
    script.PAGE = str(page)
    assert script.main(["--check"]) == 1
    assert script.main([]) == 0
    assert script.main(["--check"]) == 0
    text = page.read_text(encoding="utf-8")
    assert "WEBSIM_GONE" not in text and text.startswith("# Settings\n") and "`WEBSIM_PAGE_TIMEOUT`" in text


def test_the_table_is_the_declarations_and_each_range_is_the_one_enforced():
    """Each row (a setting or a WEBSIM_PARAMS key) is built from one field declaration (default,
    range, description); a value just outside a row's numeric range is refused with an error
    naming the setting or the key and that range."""
    from scrapy_websim.config import WebsimParams
    from scrapy_websim.core.params.base import parse_range

    assert {s.param.split(".")[0] for s in SETTINGS if s.param} == {"text", "decision", "rules"}
    assert WebsimConfig.from_settings({}) == WebsimConfig()
    assert PredictSettings.from_settings({}) == PredictSettings()
    checked = 0
    for s in SETTINGS + PARAMS:
        if s.type.split()[0] not in ("int", "float") or not s.range.startswith(("[", "(")):
            continue
        valid = s.range.split(", >=")[0].split(" (")[0]
        outside = parse_range(valid).hi + (1 if s.type.startswith("int") else 0.5)
        settings = {s.name: outside} if s.name.startswith("WEBSIM_") else {"WEBSIM_PARAMS": {s.name: outside}}
        label = s.name if s.name.startswith("WEBSIM_") else f"WEBSIM_PARAMS[{s.name!r}]"
        with pytest.raises(ConfigError) as err:
            WebsimConfig.from_settings(settings)
        assert str(err.value).startswith(f"{label} must be "), str(err.value)
        assert f" in {valid}" in str(err.value), str(err.value)
        # the object that reads the value checks it too
        if s.name.startswith(("predict.", "WEBSIM_PREDICT_")):
            with pytest.raises(ConfigError, match=re.escape(label)):
                PredictSettings.from_settings(settings)
        elif s.param or not s.name.startswith(("crawl.", "WEBSIM_")):
            with pytest.raises(ConfigError, match=re.escape(label)):
                WebsimParams.from_settings(settings, WebsimConfig())
        checked += 1
    assert checked >= 60


def test_settings_are_few_and_the_internals_are_keys():
    """What a user sets is a setting; the algorithm's internals are keys of WEBSIM_PARAMS."""
    assert len(SETTINGS) <= 37
    assert {"dom.max_paths", "cluster.passes", "text.max_link_density", "decision.rule2_visual",
            "crawl.batch_size", "predict.warmup"} <= set(PARAM_KEYS)


def test_params_reach_the_objects_and_python_objects_still_work():
    from scrapy_websim.config import WebsimParams
    from scrapy_websim.core.params.match import ClusterParams
    from scrapy_websim.core.params.page import DomParams, TextParams

    p = WebsimParams.from_settings({"WEBSIM_PARAMS": {"cluster.passes": 2, "dom.max_paths": 100,
                                                          "text.max_link_density": "0.4",
                                                          "urls.keep_params": "a, b"}}, WebsimConfig())
    assert (p.cluster.passes, p.features.dom.max_paths, p.features.text.max_link_density) == (2, 100, 0.4)
    assert p.features.urls.keep_params == ("a", "b")
    # -s WEBSIM_PARAMS='{...}' on a command line is the dict's JSON text
    c = WebsimConfig.from_settings({"WEBSIM_PARAMS": '{"crawl.batch_size": 7, "crawl.stable_early": "false"}'})
    assert (c.batch_size, c.stable_early) == (7, False)
    assert PredictSettings.from_settings({"WEBSIM_PARAMS": {"predict.warmup": 5}}).warmup == 5
    # the Python API: the objects are built directly, with the same checks
    assert ClusterParams(passes=2).validate().passes == 2 and DomParams(max_paths=3).max_paths == 3
    with pytest.raises(ValueError, match="max_link_density must be in"):
        TextParams(max_link_density=0).validate()


@pytest.mark.parametrize("params, message", [
    ({"text.max_link_densty": 0.5}, "unknown WEBSIM_PARAMS key 'text.max_link_densty'; did you mean "
                                    "'text.max_link_density'?"),
    ({"max_paths": 5}, "did you mean 'dom.max_paths'?"),
    ({"cluster.pases": 2}, "did you mean 'cluster.passes'?"),
    ({"decision.rule1_text": 0.5}, "WEBSIM_PARAMS key 'decision.rule1_text' is the setting WEBSIM_TEXT_THRESHOLD"),
    ({"cluster.min_html_len": 5}, "cannot be set: it follows rules.thin_html_bytes"),
    ({"rules.login_keywords": ["x"]}, "it follows WEBSIM_RULE_KEYWORDS / WEBSIM_RULE_KEYWORDS_REPLACE"),
    ({"dom.max_paths": 0}, "WEBSIM_PARAMS['dom.max_paths'] must be an integer in [1, 100000], got 0"),
    ("[1, 2]", "WEBSIM_PARAMS must be a dict like {'cluster.passes': 2}"),
])
def test_a_bad_params_key_or_value_stops_the_crawl_at_start(params, message):
    with pytest.raises(ConfigError) as err:
        WebsimConfig.from_settings({"WEBSIM_PARAMS": params})
    assert message in str(err.value)


@pytest.mark.parametrize("name, message", [
    ("WEBSIM_TEXT_TRESHOLD", "unknown setting WEBSIM_TEXT_TRESHOLD; did you mean WEBSIM_TEXT_THRESHOLD?"),
    ("WEBSIM_PREDICT_WARMUP", "unknown setting WEBSIM_PREDICT_WARMUP; did you mean WEBSIM_PREDICT_ENABLED?"),
    ("WEBSIM_QQQQQ_ZZZZ", "unknown setting WEBSIM_QQQQQ_ZZZZ (docs/settings.md lists them all)"),
])
def test_an_unknown_setting_stops_the_crawl_at_start(name, message):
    with pytest.raises(ConfigError) as err:
        WebsimConfig.from_settings({name: 1})
    assert str(err.value) == message


def test_the_docs_list_the_params_keys_as_the_code_does():
    text = open(os.path.join(ROOT, "docs", "settings.md"), encoding="utf-8").read()
    assert params_markdown() in text, (
        "docs/settings.md's WEBSIM_PARAMS table differs from the code; run python scripts/settings_table.py")


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
