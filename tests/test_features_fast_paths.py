"""The fast paths of the feature code give what the plain definitions give, on any text.

The plain definitions are kept here as the reference: ``mask_tokens`` as five substitutions over
the whole text, ``tokens`` as one regex walk with a CJK test per token, ``page_body`` as the first
``.//body``.
"""

from __future__ import annotations

import re

import lxml.html
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_websim.core import fingerprints
from scrapy_websim.core.page import digest
from scrapy_websim.core.page.visible import page_body
from scrapy_websim.core.params.rules import RuleParams
from scrapy_websim.core.rules import signals


def reference_mask_tokens(text: str) -> str:
    text = signals._SERVER_AT.sub(r"\1 host port 0", text)
    text = signals._URL_TOKEN.sub("/", text)
    text = signals._HOST_TOKEN.sub("host", text)
    text = signals._DIGIT_TOKEN.sub("0", text)
    text = signals._RANDOM_TOKEN.sub("0", text)
    return re.sub(r"\s+", " ", text).strip().lower()


def reference_tokens(text: str) -> list:
    out = []
    for match in fingerprints._TOKEN_RE.finditer(text.lower()):
        tok = match.group()
        if fingerprints._CJK_RUN.match(tok):
            out.extend([tok] if len(tok) == 1 else [tok[i:i + 2] for i in range(len(tok) - 1)])
        else:
            out.append(tok)
    return out


#: Pieces the token patterns look at, glued at random: hosts, URLs, paths, ids, numbers, server
#: signatures, CJK, odd white space and case.
PIECES = ["at", "on", "AT", " port ", "Port", "8080", "localhost", "LocalHost", "www.example.org", "a.b",
          "/x/y.html", "page.php", ".HTML", "\\", "@", "user@host.io", "kQzPwXvBnMaa", "abcdefghijklmnopqrstuvwxyz",
          "Error", "not found", "2024-01-02T10:11:12Z", "0xdeadbeef", "-", "_", ".", ":", "+", " ", "  ", "\t",
          "\n", "\u00a0", "\u2003", "\x1c", "\u4e2d\u6587", "\u30e1\u30f3", "\u00e9", "\u0130", "K", "\u017f",
          "'", '"', "(", ")", "x", "Z9", "nginx/1.22.1", "https://h.example/p?q=1"]
texts = st.one_of(
    st.lists(st.sampled_from(PIECES), max_size=40).map("".join),
    st.text(max_size=80),
    st.text(alphabet=st.sampled_from("aZ9./\\@_-: \t\u00a0\u4e2dport"), max_size=60),
)


@settings(max_examples=3000)
@given(texts)
def test_mask_tokens_is_the_five_substitutions(text):
    assert signals.mask_tokens(text) == reference_mask_tokens(text)


@settings(max_examples=1000)
@given(texts)
def test_tokens_are_the_regex_walk(text):
    assert fingerprints.tokens(text) == reference_tokens(text)
    toks = fingerprints.tokens(text)
    assert fingerprints.simhash_of_tokens(toks) == fingerprints.simhash64(text)
    assert fingerprints.text_hash_of_tokens(toks) == fingerprints.text_hash(text)


BODIES = ["<html><head></head><body><p>x</p></body></html>", "<p>fragment</p>", "<html><frameset></frameset></html>",
          "<html><head><title>t</title></head></html>", "<!-- c --><html><body>b</body></html>",
          "<div>no html</div><body>late</body>"]


def test_page_body_is_the_first_body_in_document_order():
    for html in BODIES:
        doc = lxml.html.document_fromstring(html)
        found = doc.find(".//body")
        assert page_body(doc) is (found if found is not None else doc)
    head = lxml.html.Element("head")
    nested = lxml.html.Element("body")
    head.append(nested)
    root = lxml.html.Element("html")
    root.append(head)
    root.append(lxml.html.Element("body"))
    assert page_body(root) is nested  # a body inside the head comes first in document order


def reference_hits(keywords, text) -> int:
    if not text:
        return 0
    found = []
    for word, before, after, _chars in signals._prepared(keywords):
        start = text.find(word)
        while start >= 0:
            end = start + len(word)
            # a hyphen between two letters or digits joins one word ("error-prone", "waf-403")
            if (not before or start == 0 or not signals._is_word(text[start - 1])
                    and not signals._compound(text, start - 1, -1)) and (
                not after or end == len(text) or not signals._is_word(text[end])
                and not signals._compound(text, end, 1)
            ):
                found.append((word, start, end))
                break
            start = text.find(word, start + 1)
    kept = []
    for word, start, end in sorted(found, key=lambda f: -len(f[0])):
        if not any(word in k or (start < k_end and k_start < end) for k, k_start, k_end in kept):
            kept.append((word, start, end))
    return len(kept)


#: Keywords of every rule, and text made of their pieces: CJK and accented keywords, which the
#: screen of non-ASCII characters skips when the text lacks one of their characters.
KEYWORDS = {rule: tuple(RuleParams().keywords(rule)) for rule in signals.KEYWORD_RULES}
KEYWORD_PIECES = sorted({w for words in KEYWORDS.values() for w in words}) + [
    " ", "x", "\u00e9", "\u4e2d", "-", "404", "\u30e1\u30f3\u30c6", "\u00b6"]
keyword_texts = st.one_of(
    st.lists(st.sampled_from(KEYWORD_PIECES), max_size=12).map(" ".join),
    st.lists(st.sampled_from(KEYWORD_PIECES), max_size=12).map("".join),
    st.text(max_size=40),
)


@settings(max_examples=1500)
@given(keyword_texts)
def test_keyword_hits_are_the_plain_search(text):
    text = text.lower()
    for words in KEYWORDS.values():
        assert signals._hits(words, text) == reference_hits(words, text)


@settings(max_examples=300)
@given(st.lists(st.sampled_from(["Owl", "owl", "'owl'", "Owl (bird)", "see \u201cOwl\u201d here", "x", "Foo Bar",
                                 " owl. ", "talk", "Talk:Owl"]), max_size=12))
def test_echoes_dropped_once_per_piece_are_dropped_alike(pieces):
    url = "http://h.example/wiki/Talk:Owl?x=Foo_Bar"
    memo: dict = {}
    for part in (pieces, pieces[::2], pieces):
        assert signals._drop_echoes(part, url, memo) == signals._drop_echoes(part, url)


def reference_masked_words(text: str) -> list:
    out: list = []
    last = ""
    for word in digest._TOKEN.findall(text):
        if word.isalpha():
            if digest._CJK.match(word):
                out.extend([word[i:i + 2] for i in range(len(word) - 1)] if len(word) > 1 else [word])
                last = word
                continue
            word = "0" if len(word) >= 10 and not word.islower() and digest._RANDOM.fullmatch(word) else word.lower()
        elif any(ch.isdigit() for ch in word):
            word = "0"
        else:
            word = word.lower()
        if word == "0" and last == "0":
            continue
        out.append(word)
        last = word
    return out


def reference_line_words(text: str) -> list:
    out: list = []
    for line in text.split("\n"):
        words = reference_masked_words(line)
        if words:
            if out:
                out.append("\n")
            out.extend(words)
    return out


@settings(max_examples=2000)
@given(st.one_of(texts, st.lists(st.sampled_from(PIECES + ["\n", "\n\n", "12", "0", "kQzPwXvBnMaa x"]),
                                 max_size=40).map("".join)))
def test_digest_words_are_the_word_by_word_masking(text):
    assert digest.masked_words(text) == reference_masked_words(text)
    assert digest.line_words(text) == reference_line_words(text)
