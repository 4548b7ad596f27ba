"""Helpers shared across core/: one definition per concept.

One BLAKE2b-64 helper (core.types.blake2b64) for every token/URL hash: the values stored in
features files, thumbnail names and cluster ids must not move when callers share it. The expected
values were computed with each caller's own hashlib code before they were folded into the helper."""

from scrapy_websim.core import fingerprints
from scrapy_websim.core.fingerprints import blake2b64
from scrapy_websim.core.match import assign
from scrapy_websim.core.params.base import parse_range
from scrapy_websim.core.types import hex64
from scrapy_websim.result.report.thumbs import thumbnail_stem

URL = "http://127.0.0.1/a?b=1"


def test_little_endian_text_hashes_keep_their_stored_values():
    # SimHash and text_hash are stored (features files): built from little-endian token hashes.
    assert fingerprints._token_hash("fox") == 13218999603221225746 == blake2b64("fox", "little")
    assert blake2b64("fox") != blake2b64("fox", "little")
    s = "The quick brown fox jumps over the lazy dog"
    assert hex64(fingerprints.simhash64(s)) == "373a56907083d01a"
    assert hex64(fingerprints.text_hash(s)) == "f2fbfdde2008b52b"
    cjk = "数据中心 维护公告 hello world"
    assert hex64(fingerprints.simhash64(cjk)) == "7f04900522e92018"
    assert hex64(fingerprints.text_hash(cjk)) == "491b2ecab501fc11"


def test_big_endian_hex_names_keep_their_values():
    assert thumbnail_stem(URL) == "3ebfe94d7c47983d"
    assert assign.content_cluster_id(URL) == "content-3ebfe94d7c47983d"
    # a URL with a lone surrogate is hashed (as the thumbnail and cluster id code always did)
    assert len(thumbnail_stem("http://127.0.0.1/\udcff")) == 16


def test_range_specs_read_as_the_error_message():
    rng = parse_range("[0.5, 1)")
    assert rng.holds(0.5) and rng.holds(0.99) and not rng.holds(1.0) and not rng.holds("x")
    assert parse_range("int [1, 64]").text == "an integer in [1, 64]"
    assert not parse_range("int [1, 64]").holds(True) and not parse_range("int [1, 64]").holds(2.0)
    assert parse_range(">= 1").holds(10**9) and not parse_range(">= 1").holds(0)
    assert parse_range("(0, 1]").text == "in (0, 1]" and not parse_range("(0, 1]").holds(0)


def test_cluster_parameter_errors_name_the_key():
    # ClusterParams raises the shared FieldError form, which build_params rewrites to the name the
    # user wrote (here the WEBSIM_PARAMS key).
    from scrapy_websim.config import build_params
    from scrapy_websim.config_values import ConfigError
    from scrapy_websim.core.params.match import ClusterParams

    try:
        build_params({"WEBSIM_PARAMS": {"cluster.simhash_distance": 20}}, ClusterParams)
    except ConfigError as exc:
        assert str(exc) == "WEBSIM_PARAMS['cluster.simhash_distance'] must be an integer in [0, 11], got 20"
    else:
        raise AssertionError("no error")
