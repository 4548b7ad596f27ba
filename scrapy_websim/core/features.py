"""One page's features, from its rendered HTML and screenshot, parsing the HTML once.

Calls each feature module on the same parsed document (none of them mutates it) and fills the
feature fields of a :class:`~scrapy_websim.core.types.PageRecord` in place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain, islice
from typing import Any, Optional

import lxml.etree
import lxml.html

from . import fingerprints
from .page import digest, dom, lcs, pagetype, text, visible, visual
from .page.prose import list_and_prose_text
from .params.page import DomParams, LcsParams, PageTypeParams, TextParams
from .params.rules import RuleParams
from .params.urls import UrlParams
from .rules import signals
from .types import PageRecord
from .urls import normalize

#: Elements whose proxies :func:`compute_features` keeps alive (bounds its memory on huge pages).
KEEP_ALIVE_ELEMENTS = 50_000


@dataclass(frozen=True)
class FeatureParams:
    text: TextParams = field(default_factory=TextParams)
    dom: DomParams = field(default_factory=DomParams)
    lcs: LcsParams = field(default_factory=LcsParams)
    pagetype: PageTypeParams = field(default_factory=PageTypeParams)
    rules: RuleParams = field(default_factory=RuleParams)
    urls: UrlParams = field(default_factory=UrlParams)


def _html_parser() -> lxml.html.HTMLParser:
    """``lxml.html``'s parser with every element an ``HtmlElement`` (comments, PIs and entities
    their ``lxml.html`` classes), chosen in C: ``lxml.html``'s own lookup is a Python call per
    element proxy (for its form classes, which no feature uses)."""
    parser = lxml.html.HTMLParser()
    parser.set_element_class_lookup(lxml.etree.ElementDefaultClassLookup(
        element=lxml.html.HtmlElement, comment=lxml.html.HtmlComment, pi=lxml.html.HtmlProcessingInstruction,
        entity=lxml.html.HtmlEntity))
    return parser


_PARSER = _html_parser()


def parse_html(html: str) -> Optional[lxml.html.HtmlElement]:
    """Parse rendered HTML; ``None`` for an empty or unparseable document."""
    if not html or not html.strip():
        return None
    try:
        return lxml.html.document_fromstring(html, parser=_PARSER)
    except (lxml.etree.ParserError, ValueError):
        try:  # an XML declaration with a str input, or a stray encoding: parse the bytes
            return lxml.html.document_fromstring(html.encode("utf-8"), parser=_PARSER)
        except (lxml.etree.ParserError, ValueError):
            return None


def fill_normalized_url(record: PageRecord, params: FeatureParams) -> None:
    """``normalized_url`` of the URL that was fetched (the input with its scheme added)."""
    source = record.redirect_chain[0] if record.redirect_chain else record.url
    try:
        record.normalized_url = normalize.normalize_url(source, params.urls) if source else ""
    except ValueError:
        record.normalized_url = ""


def content_text(doc, main_text: str, page_type: str, params: TextParams,
                 measured: Optional[text.Measured] = None, listed: Optional[str] = None) -> str:
    """The text a page is judged by (length, SimHash, MinHash, exact-copy hash, rules' main length).

    A detail page is judged by its article (``main_text``). A list page (index, table of contents,
    directory listing) has no article: its entries are what tell it from another list, so it is
    judged by its visible text outside page furniture, link texts included
    (:func:`text.list_text`). So is any page whose article is shorter than
    ``params.list_fallback_chars`` or holds less than ``params.article_min_share`` of that visible
    text: the extractor then caught a fragment (one section of a page cut into many, a table of
    contents' intro), and which fragment flips with a few changed words. Eligibility and the thin
    rule then do not hinge on the article extractor finding an article. ``measured``:
    :func:`text.measure` of ``doc`` when the caller has it already; ``listed``: the list text,
    when the caller has it already.
    """
    if page_type == "list" or len(main_text) < params.list_fallback_chars:
        listed = text.list_text(doc, measured) if listed is None else listed
    elif params.article_min_share > 0.0:
        listed = text.list_text(doc, measured) if listed is None else listed
        if len(main_text) >= params.article_min_share * len(listed):
            return main_text
    else:
        listed = None
    if listed is not None and len(listed) > len(main_text):
        return listed
    return main_text


def compute_features(record: PageRecord, html: str, screenshot: Any, params: FeatureParams) -> str:
    """Fill ``record``'s features in place; return the main text (for the URL predictor).

    ``screenshot``: image bytes, or the image decoded once (:func:`visual.decode_image`), or None.
    """
    if screenshot is not None and (len(screenshot) if isinstance(screenshot, (bytes, bytearray)) else True):
        record.phash = visual.phash_png(screenshot)
    doc = parse_html(html)
    if doc is None:
        return ""
    # Hold a Python proxy of every element (the first KEEP_ALIVE_ELEMENTS) while the features run:
    # lxml then hands the same proxies to each module's walk instead of building new ones (and
    # calling lxml.html's Python class lookup) seven times over. ~10% of this function's time.
    alive = list(islice(doc.iter(), KEEP_ALIVE_ELEMENTS))  # noqa: F841
    measured = text.measure(doc)
    main_text = text.extract_main_text(doc, params.text, measured)
    record.page_type = pagetype.page_type(doc, len(main_text), params.pagetype)
    # the list text and the prose in one walk (the list text is always read with the default
    # article_min_share)
    listed, prose = list_and_prose_text(doc, params.text.max_link_density, measured)
    main_text = content_text(doc, main_text, record.page_type, params.text, measured, listed)
    record.text_len = len(main_text)
    tokens = fingerprints.tokens(main_text)
    record.simhash = fingerprints.simhash_of_tokens(tokens)
    record.text_hash = fingerprints.text_hash_of_tokens(tokens)
    masked: dict = {}  # words masked: the judged text and the template texts share most
    record.text_shape = fingerprints.text_hash(signals.mask_tokens(main_text, masked))
    shingles = fingerprints.shingle_hashes_of_tokens(tokens)
    record.minhash = fingerprints.minhash_hex(fingerprints.minhash_of(shingles))
    record.shingles = int(shingles.shape[0])
    record.shingle_set = fingerprints.encode_shingle_set(fingerprints.shingle_set(shingles))
    record.prose_len = len(prose)
    record.prose_minhash, record.prose_shingles = (fingerprints.minhash_summary(prose)
                                                   if len(prose) >= params.text.list_fallback_chars else ("", 0))
    features = dom.dom_features(doc, params.dom.max_paths, params.dom)
    record.dom_counts = features["dom_counts"]
    record.tag_paths = features["tag_paths"]
    record.depth_hist = features["depth_hist"]
    record.tag_seq = lcs.tag_sequence(doc, params.lcs.max_tags, include_head=params.lcs.include_head)
    record.signals, record.fingerprint, template_text = signals.rule_features_and_text(
        doc, record.title, params.rules, url=record.final_url or record.url, masked=masked)
    record.fingerprint_shingles = fingerprints.encode_shingle_set(fingerprints.shingle_set(
        fingerprints.shingle_hashes(template_text[:TEMPLATE_TEXT_CHARS]))[:fingerprints.TEMPLATE_SHINGLES])
    heading = _what_it_names(record, doc, tokens)
    record.excerpt = digest.excerpt(main_text)
    record.content_digest = digest.content_digest(doc, main_text, record.title, heading, record.tag_paths,
                                                  record.phash)
    return main_text


def _what_it_names(record: PageRecord, doc: Any, tokens: list) -> str:
    """What a page says it is: its first h1, the form fields it shows filled in, the shingles
    where its text names a word of its URL (``signals``: ``h1``, ``fields``, ``iu``); returns
    the h1."""
    heading = first_heading(doc)
    if heading:
        record.signals["h1"] = heading
    named = fingerprints.item_shingles(tokens, fingerprints.item_words(record.final_url or record.url))
    if named:
        record.signals["iu"] = named
    fields = shown_fields(doc)
    if fields:
        record.signals["fields"] = fields
    return heading


#: What similar rule templates are compared by (``PageRecord.fingerprint_shingles``): the
#: smallest shingle values (``fingerprints.TEMPLATE_SHINGLES``) of the first characters of the
#: masked template text.
TEMPLATE_TEXT_CHARS = 20_000

#: Characters of the page heading kept (``signals["h1"]``).
HEADING_CHARS = 200


def first_heading(doc) -> str:
    """The text of the page's first non-empty ``<h1>``, whitespace collapsed: what the page says
    it is about (compared by :func:`~scrapy_websim.core.match.similarity.heading_sim`)."""
    for h1 in doc.iter("h1"):
        words = " ".join(h1.text_content().split())
        if words:
            return words[:HEADING_CHARS]
    return ""


#: Form fields kept per page (``signals["fields"]``) and characters of each value.
MAX_FIELDS = 12
FIELD_VALUE_CHARS = 100
#: Input types whose value a person does not read as what the page shows.
_UNSHOWN_INPUTS = frozenset(("hidden", "password", "submit", "button", "reset", "image", "file",
                             "checkbox", "radio", "color", "range"))


def _hidden(element) -> bool:
    """``element`` or an ancestor is hidden (an attribute, an inline style)."""
    return any(visible._hidden(node, node.tag) for node in chain((element,), element.iterancestors())
               if isinstance(node.tag, str))


def shown_fields(doc) -> dict:
    """The named form fields a person sees filled in, ``{name: value}`` (text-like inputs, a
    select's chosen option, a textarea; the first :data:`MAX_FIELDS`, an empty value kept): a
    page that shows what it was asked for (``Special:AllPages?from=N`` shows "N" in its "from"
    field, a search page its query) is about that value, which the judged text may not say."""
    out: dict = {}
    for seen, element in enumerate(doc.iter("input", "select", "textarea")):
        if seen >= MAX_FIELDS * 20:
            break  # a page of thousands of controls: its first ones say what it shows
        name = element.get("name")
        if not name or name in out:
            continue
        value = _shown_value(element)
        if value is None or _hidden(element):
            continue
        out[name[:FIELD_VALUE_CHARS]] = " ".join(value.split())[:FIELD_VALUE_CHARS]
        if len(out) >= MAX_FIELDS:
            break
    return out


def _shown_value(element) -> Optional[str]:
    """The value a form control shows (None: an input of a type no person reads)."""
    if element.tag == "input":
        if (element.get("type") or "text").strip().lower() in _UNSHOWN_INPUTS:
            return None
        return element.get("value") or ""
    if element.tag == "select":
        options = list(islice(element.iter("option"), 1000))
        chosen = next((o for o in options if o.get("selected") is not None), options[0] if options else None)
        if chosen is None:
            return ""
        return chosen.get("value") if chosen.get("value") is not None else chosen.text_content()
    return element.text_content()
