"""Wrong inputs get clear errors (exit 2) before anything starts; the network policy's pieces."""

from __future__ import annotations

import asyncio
import json

import pytest

from scrapy_websim import __version__
from scrapy_websim.config import WebsimConfig
from scrapy_websim.config_values import ConfigError, parse_networks
from scrapy_websim.render.handler import check_url
from scrapy_websim.testing.crawl import run_websim


def test_output_onto_existing_file_is_refused_and_O_overwrites(tmp_path):
    existing = tmp_path / "result.json"
    existing.write_text('{"urls": []}')
    proc = run_websim(["-l", "http://127.0.0.1:9/", "-o", str(existing)], cwd=str(tmp_path))
    assert proc.returncode == 2
    assert "exists already" in proc.stderr and f"-O {existing}" in proc.stderr
    assert existing.read_text() == '{"urls": []}'  # untouched
    proc = run_websim(["-l", "http://127.0.0.1:9/"], cwd=str(tmp_path))
    assert proc.returncode == 2 and "-o result.json" in proc.stderr
    proc = run_websim(["cluster", str(existing), "-o", str(existing)], cwd=str(tmp_path))
    assert proc.returncode == 2 and "exists already" in proc.stderr


def test_cluster_refuses_what_is_not_a_features_file(tmp_path):
    result = tmp_path / "result.jsonl"
    result.write_text(json.dumps({"id": 1, "url": "http://a/", "cluster_id": "", "is_canonical": True}) + "\n")
    proc = run_websim(["cluster", str(result), "-O", str(tmp_path / "out.json")], cwd=str(tmp_path))
    assert proc.returncode == 2
    assert "not a websim features file" in proc.stderr and "--features-file" in proc.stderr
    assert not (tmp_path / "out.json").exists()


def test_version_and_bad_deny_networks(tmp_path):
    proc = run_websim(["--version"], cwd=str(tmp_path))
    assert proc.returncode == 0 and proc.stdout.strip() == f"websim {__version__}"
    proc = run_websim(["-l", "http://127.0.0.1:9/", "-o", str(tmp_path / "r.json"),
                       "-s", "WEBSIM_DENY_NETWORKS=10.0.0.0/8,not-a-net"], cwd=str(tmp_path))
    assert proc.returncode == 2 and "WEBSIM_DENY_NETWORKS: 'not-a-net' is not a CIDR network" in proc.stderr


def test_resume_dir_refuses_another_list(tmp_path):
    job = tmp_path / "job"
    job.mkdir()
    (job / "websim-list.jsonl").write_text('{"id": 1, "raw": "http://127.0.0.1:9/a", "url": "http://127.0.0.1:9/a"}\n')
    proc = run_websim(["-l", "http://127.0.0.1:9/b", "-o", str(tmp_path / "r.json"), "--resume", str(job)],
                      cwd=str(tmp_path))
    assert proc.returncode == 2 and "belongs to another URL list" in proc.stderr


def test_parse_networks():
    nets = parse_networks("WEBSIM_DENY_NETWORKS", "10.0.0.0/8, 169.254.169.254 ,fd00::/8")
    assert [str(n) for n in nets] == ["10.0.0.0/8", "169.254.169.254/32", "fd00::/8"]
    assert parse_networks("N", "") == () and parse_networks("N", None) == ()
    assert parse_networks("N", ["127.0.0.2/32"])
    for bad in ({"a": 1}, 42, "42", [42], "10.0.0.0/33", 1.5):
        with pytest.raises(ConfigError, match="WEBSIM_DENY_NETWORKS"):
            parse_networks("WEBSIM_DENY_NETWORKS", bad)


def test_deny_networks_is_checked_with_the_settings():
    assert [str(n) for n in WebsimConfig.from_settings({"WEBSIM_DENY_NETWORKS": "127.0.0.2/32"}).deny_networks] == \
        ["127.0.0.2/32"]
    with pytest.raises(ConfigError, match="WEBSIM_DENY_NETWORKS.*42"):
        WebsimConfig.from_settings({"WEBSIM_DENY_NETWORKS": 42})


def test_check_url_blocks_schemes_and_denied_addresses():
    nets = parse_networks("WEBSIM_DENY_NETWORKS", ["169.254.0.0/16", "10.0.0.0/8"])

    def check(url):
        return asyncio.run(check_url(url, nets))

    assert check("http://169.254.169.254/latest/meta-data/").startswith("blocked: 169.254.169.254")
    assert check("http://[::ffff:10.1.2.3]/").startswith("blocked")  # IPv4-mapped IPv6 too
    assert check("file:///etc/passwd").startswith("blocked: scheme 'file'")
    assert check("http://127.0.0.1:8000/") is None
    assert check("http://localhost/") is None  # resolves to loopback, not denied
    assert asyncio.run(check_url("ftp://x/", [])).startswith("blocked: scheme")


def test_the_websim_spiders_result_feeds_become_websim_output(tmp_path):
    """The websim spider's -o/-O files are its result, written by the extension (WEBSIM_OUTPUT); -o
    onto an existing result, or in a format that is no result's, is refused before the crawl."""
    from scrapy.settings import Settings

    from scrapy_websim.crawler.addon import result_feeds_to_output

    existing = tmp_path / "result.json"
    existing.write_text('{"urls": []}')

    def moved(feeds):
        settings = Settings()
        settings.set("FEEDS", feeds, priority="cmdline")
        problems = result_feeds_to_output(settings)
        return problems, settings.getdict("FEEDS"), settings.getlist("WEBSIM_OUTPUT")

    problems, feeds, output = moved({str(existing): {"format": "json"}})
    assert len(problems) == 1 and "Use -O" in problems[0] and output == []
    assert moved({str(existing): {"format": "json", "overwrite": True}}) == ([], {}, [str(existing)])  # -O
    assert moved({str(tmp_path / "new.csv"): {"format": "csv"}}) == ([], {}, [str(tmp_path / "new.csv")])
    problems, feeds, output = moved({str(tmp_path / "r.xml"): {"format": "xml"}})
    assert "is its result" in problems[0] and list(feeds) == [str(tmp_path / "r.xml")] and output == []
