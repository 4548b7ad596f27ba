"""Soft-404 calibration at the end of a crawl (core/match/soft404.py through Finalizer.run), and
the pivots' hashes (certificate SHA-256 and SANs, Shodan's favicon hash). No browser: records are
built from HTML with the real feature code; tests/test_soft404_e2e.py crawls real servers."""

import base64
import copy
import datetime
import hashlib
import json

import mmh3
import pytest

from scrapy_websim.config import WebsimConfig, WebsimParams
from scrapy_websim.core.features import FeatureParams, compute_features
from scrapy_websim.core.match.soft404 import Soft404Calibration, is_root_url, probe_urls
from scrapy_websim.core.store import FeatureStore, iter_jsonl
from scrapy_websim.core.types import PageRecord
from scrapy_websim.render.capture import favicon_hash
from scrapy_websim.render.scan import der_identity
from scrapy_websim.result import finalize
from scrapy_websim.result.rows import ResultRows

BASE = "http://127.0.0.1:8123"


def _html(title, body):
    return (f"<!doctype html><html><head><title>{title}</title></head><body><nav><a href='/'>Home</a></nav>"
            f"{body}<footer>Shop footer</footer></body></html>")


def _shelf(path, rid):
    # a custom "not found" answer without any word of the E3 list, echoing the path and a request id
    return _html("Shelf empty", f"<div><h2>This shelf is empty</h2><p>The aisle {path} holds no items "
                                f"today (ticket {rid}). Browse the catalogue from the front desk.</p></div>")


def _article(n):
    paras = "".join(f"<p>Article {n} paragraph {k}: the lantern keeper of harbour {n} trims the wicks, "
                    f"logs the ships passing the reef and writes to the council about the weather.</p>"
                    for k in range(6))
    return _html(f"Article {n}", f"<main><h1>Harbour story {n}</h1>{paras}</main>")


HOME = _html("Shop", "<main><h1>Welcome to the shop</h1><p>" + "Lanterns, ropes and charts for sailors. " * 12
             + "</p></main>")
LOGIN = _html("Sign in", "<main><h1>Sign in</h1><form><input name='u'><input type='password' name='p'>"
              "<button>Log in</button></form></main>")


def _page(page_id, url, html, status=200, final_url=None, probe_for=""):
    final_url = final_url or url
    rec = PageRecord(id=page_id, url=url, final_url=final_url, redirect_chain=[url] if final_url == url else
                     [url, final_url], status_code=status, content_type="text/html",
                     html_len=len(html.encode()), rendered=True, probe_for=probe_for)
    compute_features(rec, html, b"", FeatureParams())
    return rec


def _run(records, probes):
    store = FeatureStore()
    for rec in records:
        store.add(copy.deepcopy(rec))
    for probe in probes:
        store.add_probe(copy.deepcopy(probe))
    store.flush()
    params = WebsimParams.from_settings({}, WebsimConfig())
    result = finalize.Finalizer(params).run(store)
    rows = {row["url"]: row for row in ResultRows(result).url_rows()}
    return rows, result.meta, store


def _site(probe_html, probe_status=200, probe_final=None, home=HOME):
    records = [_page(1, f"{BASE}/", home)] + [_page(1 + n, f"{BASE}/doc/{n}", _article(n)) for n in range(1, 5)]
    records += [_page(10 + n, f"{BASE}/old/{n}", _shelf(f"/old/{n}", 4000 + n)) for n in range(3)]
    probe_url = probe_urls(BASE, 1)[0]
    probe = _page(0, probe_url, probe_html, probe_status, probe_final, probe_for=BASE)
    return records, probe


def test_pages_answering_the_origins_probe_template_are_e3_and_content_is_not():
    records, probe = _site(_shelf("/0123456789abcdef", 77))
    rows, meta, _store = _run(records, [probe])
    # without the probe these are thin pages at best: no word of theirs is an error word
    rows_plain, meta_plain, _ = _run(records, [])
    assert "soft404" not in meta_plain
    for n in range(3):
        assert rows[f"{BASE}/old/{n}"]["cluster_kind"] == "E3"
        assert rows_plain[f"{BASE}/old/{n}"]["cluster_kind"] != "E3"
    for url, row in rows.items():
        if "/old/" not in url:
            assert row["cluster_kind"] != "E3", url
    assert len(rows) == len(records)  # the probe is no url record
    assert probe.url not in rows
    info = meta["soft404"]
    assert info["origins_calibrated"] == 1 and info["labelled_e3"] == 3
    assert info["origins"][0]["probes"][0]["url"] == probe.url


def test_an_origin_serving_its_home_page_for_unknown_paths_is_not_calibrated():
    records, probe = _site(HOME)  # a catch-all route / SPA shell: the random path answers the home page
    rows, meta, _store = _run(records, [probe])
    assert rows[f"{BASE}/"]["cluster_kind"] != "E3"
    assert not any(row["cluster_kind"] == "E3" for row in rows.values())
    origin = meta["soft404"]["origins"][0]
    assert origin["calibrated"] is False and "home page" in origin["not_calibrated"]


def test_a_probe_redirected_home_or_answered_by_a_login_wall_is_not_used():
    records, probe = _site(HOME, probe_final=f"{BASE}/")
    rows, meta, _store = _run(records, [probe])
    assert "redirect" in meta["soft404"]["origins"][0]["not_calibrated"]
    assert not any(row["cluster_kind"] == "E3" for row in rows.values())

    records, probe = _site(LOGIN)
    records.append(_page(20, f"{BASE}/account", LOGIN))
    rows, meta, _store = _run(records, [probe])
    assert rows[f"{BASE}/account"]["cluster_kind"] == "L1"
    assert "L1" in meta["soft404"]["origins"][0]["not_calibrated"]


def test_a_404_probe_calibrates_its_template_on_200_pages_too():
    records, probe = _site(_shelf("/feedbeeffeedbeef", 1), probe_status=404)
    rows, meta, _store = _run(records, [probe])
    assert all(rows[f"{BASE}/old/{n}"]["cluster_kind"] == "E3" for n in range(3))


def test_probes_travel_in_the_features_file(tmp_path):
    records, probe = _site(_shelf("/0123456789abcdef", 77))
    _rows, _meta, store = _run(records, [probe])
    path = tmp_path / "features.jsonl"
    assert store.save_jsonl(str(path)) == len(records)
    lines = list(iter_jsonl(str(path)))
    assert sum(1 for r in lines if r.probe_for) == 1
    params = WebsimParams.from_settings({}, WebsimConfig())
    again = finalize.recluster_file(str(path), params)
    rows = {row["url"]: row for row in ResultRows(again).url_rows()}
    assert len(rows) == len(records)
    assert all(rows[f"{BASE}/old/{n}"]["cluster_kind"] == "E3" for n in range(3))
    assert again.meta["soft404"]["labelled_e3"] == 3


def test_probe_urls_and_roots():
    one, two = probe_urls("https://a.example:8443", 2)
    assert one.startswith("https://a.example:8443/") and len(one.rsplit("/", 1)[1]) == 16
    assert two.endswith(".html") and one[:-1] != two[:40]
    assert probe_urls("http://a", 1) != probe_urls("http://a", 1)  # random each time
    assert is_root_url("http://a/") and is_root_url("http://a") and is_root_url("http://a/index.html")
    assert not is_root_url("http://a/doc") and not is_root_url("http://a/?page=2")


def test_relabel_leaves_other_labels_and_failures_alone():
    records, probe = _site(_shelf("/0123456789abcdef", 77))
    calibration = Soft404Calibration([probe])
    page = records[-1]
    assert calibration.relabel(page, None) == "E3"
    assert calibration.relabel(page, "T1") == "E3"
    assert calibration.relabel(page, "L1") == "L1"
    failed = copy.deepcopy(page)
    failed.error = "connection reset"
    assert calibration.relabel(failed, None) is None
    other_origin = copy.deepcopy(page)
    other_origin.url = other_origin.final_url = "http://127.0.0.1:9999/old/1"
    other_origin.redirect_chain = [other_origin.url]
    assert calibration.relabel(other_origin, None) is None


# --- pivots ---


def test_der_identity_is_the_certificates_sha256_and_its_sans():
    pytest.importorskip("cryptography")
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "appliance.lan")])
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(7).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("appliance.lan"), x509.DNSName("*.appliance.lan"),
                                                        x509.IPAddress(ipaddress.ip_address("10.0.3.17"))]), False)
            .sign(key, hashes.SHA256()))
    der = cert.public_bytes(serialization.Encoding.DER)
    fields = der_identity(der)
    assert fields["tls_sha256"] == cert.fingerprint(hashes.SHA256()).hex() == hashlib.sha256(der).hexdigest()
    assert fields["tls_sans"] == ["DNS:appliance.lan", "DNS:*.appliance.lan", "IP:10.0.3.17"]
    assert der_identity(b"not a certificate") == {"tls_sha256": hashlib.sha256(b"not a certificate").hexdigest()}


def test_favicon_hash_is_shodans_convention():
    icon = bytes(range(256)) * 3  # long enough for encodebytes' line breaks every 76 characters
    value = favicon_hash(icon)
    assert value == mmh3.hash(base64.encodebytes(icon))
    assert b"\n" in base64.encodebytes(icon)[:-1]
    assert value != mmh3.hash(base64.b64encode(icon))  # the newlines are part of what Shodan hashes
    assert -2 ** 31 <= value < 2 ** 31  # signed 32-bit, as Shodan's http.favicon.hash
    assert favicon_hash(b"icon-of-site-0") == -839214753
    json.dumps(value)
