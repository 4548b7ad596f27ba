"""The end of a crawl on columns gives the rows the PageRecord-based version gave.

A store of a few thousand synthetic records (near-duplicate families, special pages of several
templates and lengths, redirects, URL variants, predicted pages with chains, cycles and missing
targets, failures, PDFs) is finalized by ``Finalizer.run``; the reference re-does the same stages
the way they were written before (light records in memory, ``tests/reference_assign.py``) and
every url row, cluster row and meta value must be equal.
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from scrapy_websim.config import WebsimConfig, WebsimParams
from scrapy_websim.core.match import cluster, reasons, similarity
from scrapy_websim.core.rules.label import special_label
from scrapy_websim.core.store import FeatureStore
from scrapy_websim.core.types import PageRecord
from scrapy_websim.result import finalize, rows
from tests import reference_assign

HOSTS = ["http://a.test", "https://b.test", "http://c.test:8080", "https://d.test:8443"]
TAGS = ["div", "p", "a", "span", "li", "ul", "h2", "img", "section", "table"]


def _minhash(rnd_table, simhash: int) -> str:
    return "".join(rnd_table[b][(simhash >> (4 * (b & 15))) & 15] for b in range(128))


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rnd = random.Random(seed)
        self.table = [[f"{self.rnd.getrandbits(32):08x}" for _ in range(16)] for _ in range(128)]
        self.structures = [{"html>body>" + ">".join(self.rnd.choices(TAGS, k=self.rnd.randint(2, 6))):
                            self.rnd.randint(1, 9) for _ in range(25)} for _ in range(6)]
        self.records: list = []

    def page(self, url: str, simhash: int, text_len: int, **kw) -> PageRecord:
        rnd = self.rnd
        mh = _minhash(self.table, simhash or 0)
        rec = PageRecord(
            id=len(self.records) + 1, url=url, normalized_url=url, final_url=url, status_code=200,
            content_type="text/html", title="t", html_len=text_len * 3 + 1500, rendered=True, text_len=text_len,
            simhash=simhash, text_hash=None if simhash is None else simhash ^ 99, minhash=mh, prose_len=text_len,
            prose_minhash=mh, dom_counts=[100, 50, 20, 10, 2, 0, 3],
            tag_paths=dict(self.structures[(simhash or 0) % 6]), depth_hist=[1, 2, 3],
            tag_seq="abcabd" * 20, phash=rnd.getrandbits(64), fingerprint=rnd.getrandbits(64),
            signals={"vis": text_len + 100, "mv": text_len, "kw": {}, "pw": 0, "inputs": 0, "forms": 0, "fs": 0.0},
        )
        for key, value in kw.items():
            setattr(rec, key, value)
        self.records.append(rec)
        return rec

    def url(self) -> str:
        return f"{self.rnd.choice(HOSTS)}/p/{len(self.records)}"

    def family(self) -> None:
        rnd = self.rnd
        base, length, phash = rnd.getrandbits(64), rnd.randint(300, 5000), rnd.getrandbits(64)
        for _ in range(rnd.randint(2, 25)):
            s = base
            if rnd.random() < 0.5:
                for bit in rnd.sample(range(64), rnd.randint(1, 3)):
                    s ^= 1 << bit
            rec = self.page(self.url(), s, max(200, int(length * rnd.uniform(0.85, 1.15))), phash=phash)
            rec.status_code = rnd.choice([200, 200, 200, 203])

    def special(self) -> None:
        rnd = self.rnd
        status = rnd.choice([404, 404, 410, 403, 401, 500, 503, 200])
        rec = self.page(self.url(), rnd.getrandbits(64), 60, status_code=status,
                        fingerprint=rnd.choice([11, 12, 13, 14]), html_len=rnd.choice([900, 1000, 1150, 2000, 2600]))
        rec.signals = dict(rec.signals, vis=80, mv=60)
        if status == 200:
            rec.signals.update(pw=1, forms=1, inputs=2, fs=0.9)  # a login wall
            rec.html_len = 3000
        if status == 401 and rnd.random() < 0.5:
            rec.www_authenticate = "Basic"

    def other(self) -> None:
        rnd = self.rnd
        kind = rnd.randrange(6)
        if kind == 0 and self.records:  # redirected to another page's URL or a landing page
            target = (rnd.choice(self.records).url if rnd.random() < 0.5
                      else f"{rnd.choice(HOSTS)}/landing/{rnd.randrange(15)}")
            self.page(self.url(), rnd.getrandbits(64), rnd.randint(300, 3000), final_url=target,
                      redirect_chain=["x", target])
        elif kind == 1 and self.records:  # a URL variant; its normalized form written or left to compute
            target = rnd.choice(self.records)
            self.page(target.url + "?utm_source=x", rnd.getrandbits(64), rnd.randint(300, 3000),
                      normalized_url=target.url if rnd.random() < 0.5 else "")
        elif kind == 2 and self.records:  # predicted: of an URL, a final URL, a missing URL, itself
            target = rnd.choice(self.records)
            dup = rnd.choice([target.url, target.final_url, "http://elsewhere.test/x", target.url])
            rec = self.page(self.url(), None, 0, rendered=False, status_code=0, html_len=0, final_url="",
                            phash=None, minhash="", prose_minhash="", tag_paths={}, signals={},
                            text_hash=None, fingerprint=None, predicted_duplicate_of=dup)
            if rnd.random() < 0.1:
                rec.predicted_duplicate_of = rec.url  # itself: a cycle
        elif kind == 3:  # a failure
            self.page(self.url(), None, 0, status_code=0, error="timeout", final_url="", rendered=False,
                      phash=None)
        elif kind == 4:  # a PDF (and a missing one)
            self.page(self.url(), None, 0, content_type="application/pdf", rendered=False, html_len=0,
                      status_code=self.rnd.choice([200, 404]), content_length=self.rnd.choice([0, 5000]),
                      phash=None, fingerprint=None)
        else:  # a unique page, sometimes with the URL of an earlier one
            url = rnd.choice(self.records).url if self.records and rnd.random() < 0.05 else self.url()
            self.page(url, rnd.getrandbits(64), rnd.randint(150, 8000))

    def generate(self, n: int) -> list:
        while len(self.records) < n:
            r = self.rnd.random()
            (self.family if r < 0.08 else self.special if r < 0.3 else self.other)()
        # a predicted cycle of two pages
        a = self.page(self.url(), None, 0, rendered=False, status_code=0, final_url="")
        b = self.page(self.url(), None, 0, rendered=False, status_code=0, final_url="")
        a.predicted_duplicate_of, b.predicted_duplicate_of = b.url, a.url
        return self.records


def _light(r: PageRecord) -> PageRecord:
    return dataclasses.replace(r, tag_paths={}, tag_seq="", depth_hist=[], dom_counts=[])


def _reference(store: FeatureStore, p: WebsimParams):
    """The stages as they were: light records of the eligible pages in memory, content clustering
    on them, then the PageRecord-based combine over every page's light record."""
    eligible = [_light(r) for r in store.iter_records()
                if special_label(r, p.assign.rules) is None and cluster.is_eligible(r, p.cluster)]

    def compare(a_id, b_id):
        return similarity.compare(store.get(a_id), store.get(b_id), p.decision)

    content = cluster.cluster(eligible, compare, p.cluster, url_of={r.id: r.final_url or r.url for r in eligible}.get)
    assignments, clusters = reference_assign.combine([_light(r) for r in store.iter_records()],
                                                     content.assignments, content.clusters, p.assign)
    canonical_of = {c.cluster_id: c.canonical_id for c in clusters}

    def row(r):
        a = assignments.get(r.id)
        why = reasons.match_reason(r, a, canonical_of.get(a.cluster_id, 0) if a else 0, p.decision, p.cluster)
        return dict(rows.output_row(r, a, why))

    urls = [row(r) for r in store.iter_records()]
    meta = finalize.summary(store, len(eligible), [c.kind for c in clusters], p)
    return urls, [dict(row) for row in rows.cluster_rows(clusters)], meta


def _rows(result: finalize.Result):
    made = rows.ResultRows(result)
    return [dict(r) for r in made.url_rows()], [dict(r) for r in made.cluster_rows()], result.meta


@pytest.mark.parametrize("scope", ["template", "origin"])
def test_columns_give_the_rows_of_the_record_version(scope):
    records = _Gen(seed=17 if scope == "template" else 18).generate(3000)
    params = WebsimParams.from_settings({}, WebsimConfig())
    # the reference predates the sites' templates and the grouping of alike rule templates (tested
    # in tests/test_template.py): both off here, the columns must give the reference's rows
    params = dataclasses.replace(params, assign=dataclasses.replace(
        params.assign, rules=dataclasses.replace(params.assign.rules, scope=scope, template_text_similarity=1.01,
                                                 error_template_text_similarity=1.01)),
        template=dataclasses.replace(params.template, sample=0))
    with FeatureStore() as store:
        store.add_many(records)
        store.flush()
        got = _rows(finalize.Finalizer(params).run(store))
        expected = _reference(store, params)
    for g, e in zip(got[:2], expected[:2]):
        assert len(g) == len(e)
        for row_g, row_e in zip(g, e):
            assert row_g == row_e
    drop = {"generated_at"}
    assert {k: v for k, v in got[2].items() if k not in drop} == {k: v for k, v in expected[2].items() if k not in drop}
    # the sample covers every step: content, rule (with E3 bands), R1, U1 and predicted clusters
    kinds = {row["cluster_kind"] for row in got[0]}
    rules = {row["match_rule"] for row in got[0]}
    assert {"content", "E1", "E3", "L1", "R1", "U1"} <= kinds
    assert {"predicted", "R1", "U1", "rule1"} <= rules
    assert any(row["cluster_id"].startswith("errtpl-") and row["cluster_id"].count("-") >= 2 + (scope == "origin")
               and row["cluster_id"].rsplit("-", 1)[1].isdigit() for row in got[0])  # a second length band
