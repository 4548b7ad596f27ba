"""DupePredictor: learns ignorable URL components, keeps meaningful ones, order independent."""

import random

import pytest

from scrapy_websim.core.params.urls import PredictorParams
from scrapy_websim.core.urls.predictor import DupePredictor, boilerplate_shingles, shingles, wilson_bounds

CHROME_TOP = "Example Forum Home Latest Topics Members Search Log in\nSkip to the content of the page"
CHROME_BOTTOM = "Copyright 2024 Example Forum all rights reserved\nPrivacy policy terms of use contact us"
WORDS = [f"word{i}" for i in range(3000)]


def body(seed: int, n: int = 120) -> str:
    rng = random.Random(seed)
    lines = [" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(n // 12)]
    return "\n".join(lines)


def page(seed: int) -> str:
    return f"{CHROME_TOP}\n{body(seed)}\n{CHROME_BOTTOM}"


def forum_site(n_topics: int = 150, seed: int = 7):
    """(url, text) pairs: topics with ignorable-parameter variants."""
    rng = random.Random(seed)
    pages = []
    for t in range(n_topics):
        text = page(t)
        pages.append((f"http://forum.test/view.php?topicId={t}", text))
        pages.append((f"http://forum.test/view.php?topicId={t}&start=0", text))
        pages.append((f"http://forum.test/view.php?topicId={t}&sid={rng.getrandbits(64):016x}", text))
        pages.append((f"http://forum.test/view.php?topicId={t}&utm_source=feed{t % 5}", text))
    return pages


def trained(pages, order_seed=None):
    pages = list(pages)
    if order_seed is not None:
        random.Random(order_seed).shuffle(pages)
    dp = DupePredictor(texts_sample=[t for _, t in pages[:100]])
    for url, text in pages:
        dp.update_model(url, text)
    return dp


@pytest.fixture(scope="module")
def forum():
    return trained(forum_site())


@pytest.mark.parametrize(
    "url, base",
    [
        ("http://forum.test/view.php?topicId=999&start=0", "http://forum.test/view.php?topicId=999"),
        ("http://forum.test/view.php?topicId=999&sid=0123abcd", "http://forum.test/view.php?topicId=999"),
        ("http://forum.test/view.php?topicId=999&utm_source=mail", "http://forum.test/view.php?topicId=999"),
        ("http://forum.test/view.php?utm_source=x&topicId=5", "http://forum.test/view.php?topicId=5"),
    ],
)
def test_ignorable_parameter_is_learned(forum, url, base):
    # before its base page is known there is nothing to duplicate
    if "999" in url:
        assert forum.get_dupe_prob(url) < 0.1
        dp = trained(forum_site())
        dp.update_model(base, page(999))
    else:
        dp = forum
    assert dp.get_dupe_prob(url) > 0.97
    assert dp.get_dupe_url(url) == base


def test_meaningful_parameter_stays_low(forum):
    for url in ("http://forum.test/view.php?topicId=1000", "http://forum.test/view.php?topicId=2"):
        prob = forum.get_dupe_prob(url)
        if url.endswith("=2"):
            assert prob == 1.0  # already fetched: same URL
        else:
            assert prob < 0.1, url


def test_id_parameter_low_on_item_site():
    pages = [(f"http://shop.test/item?id={i}", page(i)) for i in range(200)]
    dp = trained(pages)
    assert dp.get_dupe_prob("http://shop.test/item?id=1") == 1.0
    assert dp.get_dupe_prob("http://shop.test/item?id=2000") < 0.1
    assert dp.get_dupe_prob("http://shop.test/item") < 0.1


def test_order_independent():
    pages = forum_site(60)
    probe = [
        "http://forum.test/view.php?topicId=3&start=0&sid=42",
        "http://forum.test/view.php?topicId=4&utm_source=zzz",
        "http://forum.test/view.php?topicId=500",
        "http://forum.test/view.php?topicId=7&start=10",
        "http://forum.test/view.php",
    ]
    # the boilerplate sample is the same set for all orders: only the update order changes
    sample = [t for _, t in pages[:100]]

    def run(seed):
        shuffled = list(pages)
        random.Random(seed).shuffle(shuffled)
        dp = DupePredictor(texts_sample=sample, params=PredictorParams(sample_size=8))
        for url, text in shuffled:
            dp.update_model(url, text)
        stats = sorted((kind, repr(key), s.dup, s.total) for kind, key, s, _ in dp.hypotheses())
        return stats, [dp.predict(u) for u in probe]

    reference = run(0)
    for seed in (1, 2, 3):
        assert run(seed) == reference


def test_a_handful_of_observations_does_not_make_a_rule():
    pages = forum_site(4)
    dp = trained(pages)
    assert dp.get_dupe_prob("http://forum.test/view.php?topicId=1&start=0&utm_source=q") < 0.9


def test_specific_counter_evidence_blocks_general_rule():
    # start=0 is ignorable everywhere, but start=20 shows a different page (on half the topics,
    # so `start` in general is not ignorable while `start=0` is)
    pages = []
    for t in range(150):
        pages.append((f"http://forum.test/view.php?topicId={t}", page(t)))
        pages.append((f"http://forum.test/view.php?topicId={t}&start=0", page(t)))
    for t in range(75):
        pages.append((f"http://forum.test/view.php?topicId={t}&start=20", page(10_000 + t)))
    dp = trained(pages)
    dp.update_model("http://forum.test/view.php?topicId=999", page(999))
    assert dp.get_dupe_prob("http://forum.test/view.php?topicId=999&start=0") > 0.97
    assert dp.get_dupe_prob("http://forum.test/view.php?topicId=999&start=20") < 0.5
    assert dp.param_stats["start"].dup < 0.7 * dp.param_stats["start"].total


def test_boilerplate_removed_so_chrome_does_not_make_duplicates():
    # tiny bodies inside heavy chrome: without boilerplate removal they all look alike
    chrome = "\n".join(" ".join(f"nav{i}x{j}" for j in range(10)) for i in range(30))
    texts = [f"{chrome}\nthe price of item number {i} is {i * 7} euros today" for i in range(100)]
    bp = boilerplate_shingles(texts)
    assert "nav0x0 nav0x1 nav0x2 nav0x3" in bp
    assert not any("number 1 is" in s or "euros" in s for s in bp)
    with_sample = DupePredictor(texts_sample=texts)
    without = DupePredictor()
    for dp in (with_sample, without):
        dp.update_model("http://a.test/p?id=1", texts[1])
        dp.update_model("http://a.test/p?id=2", texts[2])
    assert with_sample.content_similarity("http://a.test/p?id=1", "http://a.test/p?id=2") < 0.5
    assert without.content_similarity("http://a.test/p?id=1", "http://a.test/p?id=2") > 0.9


def test_shingles_do_not_span_lines_and_split_cjk():
    sh = shingles("one two three four five\nsix")
    assert sh == {"one two three four", "two three four five", "six"}
    assert "重 复 页 面" in shingles("重复页面检测")


def test_wilson_bounds():
    lo, hi = wilson_bounds(0, 0, 1.645)
    assert (lo, hi) == (0.0, 1.0)
    lo, hi = wilson_bounds(5, 5, 1.645)
    assert lo < 0.7 and hi == pytest.approx(1.0)
    lo, _ = wilson_bounds(200, 200, 1.645)
    assert lo > 0.98


def test_bounded_update_cost_on_one_huge_group():
    dp = DupePredictor(params=PredictorParams(sample_size=10))
    text = page(1)
    for i in range(400):
        dp.update_model(f"http://big.test/list?session={i}", text)
    # counts only come from pairs inside the bottom-k samples
    assert dp.path_stats["big.test/list"].total == 10 * 9 // 2
    assert dp.param_stats["session"].total == 10 * 9 // 2


def test_params_validate():
    with pytest.raises(ValueError, match="jaccard_threshold"):
        PredictorParams(jaccard_threshold=1.5).validate()
    with pytest.raises(ValueError, match="sample_size"):
        DupePredictor(params=PredictorParams(sample_size=1))
