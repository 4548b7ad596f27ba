"""The special-page label of a stored record: E1, E3, L1, W1, M1, T1 or none.

:func:`special_label` runs at the end of the crawl on the compact
:class:`~scrapy_websim.core.types.PageRecord`, from its status, headers and the signals that
:func:`scrapy_websim.core.rules.signals.page_signals` kept of the page.

Decision, first match wins (a rule switched off in ``enabled_rules`` is skipped and the next one
gets its chance):

* failed fetches (``error`` set, or no status) get no label; non-HTML responses get E1/E3 from
  their status only.
* **E1** status 5xx. A 503 maintenance or WAF page is still E1 (5xx first).
* **L1** HTTP auth wall: a 401 with ``WWW-Authenticate`` (basic, digest...), whatever its body.
* **L1** login wall. On a 4xx page: a password input, or login keywords in the title/headings
  (or two in the body) of a page that has a form or input. On a 2xx page: a password input and the page is mostly
  that form (``form_share``), its main text is short, or its title/headings and two of its phrases say
  login words (a token login that explains at length how to get a token); or a login keyword in the
  title/headings of a short page that has a form or input; or a page of one sentence of its own that
  asks to log in, with the site's login box in its chrome. A content page with a login box in its
  sidebar, or a documentation page about logging in, stays content.
* **W1** WAF / challenge page and **M1** maintenance page: on a 4xx page a keyword anywhere in the
  visible text; on a 2xx page the main text is short and the keywords are in the title/headings
  (or at least two different keywords in the body). Specific beats generic: a 403 with WAF
  wording is W1, a 200 with maintenance wording in its heading is M1.
* **E3** error template: any other 4xx (404, 401, 403, 410, 429, ...), and soft 404s: a 2xx page
  whose short main text has error wording in title/headings (or two different error phrases, or
  one when the page says nothing else: one sentence of its own). An item of its site (a ticket, a
  commit) is not a soft 404 by its text alone: its text is the item's own words.
* **T1** thin page: HTML < ``thin_html_bytes`` or main text < ``thin_text_chars``, with status
  2xx/401/403 (401/403 reach T1 only when E3 is switched off); not by its text when the page is an
  item of its site (one of several 2xx pages of one structure there: a ticket, a row, a short post)
  or a form of its own (two fields or more to fill, most of the page: a contact form).

"Short" means main text below ``short_text_chars`` (600), and own visible text below 5 times that
(a table of contents whose main text the extractor missed is not short): soft-404, challenge and
maintenance pages say one thing; documentation that mentions "error", "login" or "maintenance"
says a lot. T1 leaves alone a list page whose own text reaches ``thin_text_chars`` and a page whose
own visible text reaches ``short_text_chars``.

Pure: no Scrapy import.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Tuple, Union

from ..params.rules import RuleParams
from ..types import is_html_type

__all__ = ["special_label"]


def _main_len(record) -> int:
    """The main text's length; for a page whose main text was not found, its own visible text
    outside page chrome (``mv``: a login form's labels and notes, not the site's menus)."""
    signals = record.signals or {}
    return record.text_len or int(signals.get("mv", signals.get("vis", 0)))


def _own_len(record) -> int:
    """Visible text outside page chrome (``mv``); the main text length for older records."""
    signals = record.signals or {}
    return int(signals.get("mv", signals.get("vis", record.text_len or 0)))


def _short(record, params: RuleParams) -> bool:
    """Says one thing: a short main text, and not a long page whose main text was missed (a
    table of contents, an index: the page's own visible text is long)."""
    return _main_len(record) < params.short_text_chars and _own_len(record) < _LONG_FACTOR * params.short_text_chars


#: A page whose own visible text (outside chrome) reaches this many times ``short_text_chars`` is
#: never "short", whatever its extracted main text.
_LONG_FACTOR = 5


def _kw(signals: Mapping[str, Any], rule: str) -> Tuple[int, int, int]:
    counts = (signals.get("kw") or {}).get(rule) or (0, 0, 0)
    return int(counts[0]), int(counts[1]), int(counts[2])


def _keyword_page(signals, rule: str, ok: bool, short: bool) -> bool:
    """Keyword rule: anywhere in the own content of a non-2xx page; title/heading (or 2
    phrases) on a short 2xx."""
    title, heading, body = _kw(signals, rule)
    if not ok:
        return bool(title or heading or body)
    return short and bool(title or heading or body >= 2)


def _login_page(signals, ok: bool, short: bool, params: RuleParams, one_sentence: bool = False) -> bool:
    """A password input in the page's own content; or login words in its title/headings (or
    two login phrases) with a form control. Words and controls in chrome (a "Log in" link or a
    search box in the site header) do not count, except on a page whose own content is one
    sentence asking to log in (``one_sentence``): it shows nothing but the site's login form,
    wherever that form sits ("Please login with your username and password." beside the
    sidebar's login box)."""
    title, heading, body = _kw(signals, "L1")
    has_control = bool(signals.get("inputs") or signals.get("forms"))
    if not ok:
        return bool(signals.get("pw")) or bool((title or heading or body >= 2) and has_control)
    if _password_form(signals, short, bool(title or heading), body, params):
        return True
    if one_sentence and _asks_to_log_in(signals, bool(title or heading), body):
        return True
    return short and bool(title or heading) and has_control


def _asks_to_log_in(signals, named: bool, phrases: int) -> bool:
    """Login words in the title or headings (``named``) or two login phrases, and a password
    field on the page, its own or the site's in its chrome."""
    return (named or phrases >= 2) and bool(signals.get("pw") or signals.get("pwc"))


def _password_form(signals, short: bool, named: bool, phrases: int, params: RuleParams) -> bool:
    """A password field of its own, and the page is that form, short, or all about logging in
    (``named``: login words in its title or headings; ``phrases``: login phrases in its text)."""
    return bool(signals.get("pw")) and (float(signals.get("fs", 0.0)) >= params.form_share or short
                                        or named and phrases >= 2)


#: Own visible text of a page that says one sentence (a client-rendered app's "Sorry, we couldn't
#: find it... Go to the home page").
_ONE_SENTENCE_CHARS = 120


def _one_sentence(record) -> bool:
    return _own_len(record) < _ONE_SENTENCE_CHARS and _main_len(record) < _ONE_SENTENCE_CHARS


#: Whether a page is an item of its site: a bool, or a function that tells (asked only when needed).
Item = Union[bool, Callable[[], bool]]


def _is_item(item: Item) -> bool:
    return bool(item()) if callable(item) else bool(item)


def _soft_404(signals, short: bool, thin: bool, item: Item) -> bool:
    """A 2xx page that says it is an error: error words in its title or headings, or (two
    phrases, or one on a page of one sentence) in its text, on a short page. An item of its site
    (a ticket, a commit, a post) says what it is in its title or headings; its text is the item's
    own ("retry on a 404 error" in a commit message), so its text alone does not make it one."""
    title, heading, body = _kw(signals, "E3")
    if not short:
        return False
    if title or heading:
        return True
    return bool(body >= 2 or (thin and body)) and not _is_item(item)


def _thin(record, params: RuleParams, item: Item = False) -> bool:
    """Little HTML or little main text; a list page (index, listing) whose entries are real
    text is content, not thin, and so is an item of a site (one of many pages of one structure
    on it: a ticket, a row, a post of one sentence)."""
    if record.html_len < params.thin_html_bytes:
        return True
    if _main_len(record) >= params.thin_text_chars or _is_item(item) or _a_form(record.signals or {}, params):
        return False
    own = _own_len(record)
    if own >= params.short_text_chars:
        return False  # a long page whose main text was missed
    return not (record.page_type == "list" and own >= params.thin_text_chars)


#: Fields to fill (text inputs, text areas) a form page has of its own, outside page chrome.
_FORM_FIELDS = 2


def _a_form(signals, params: RuleParams) -> bool:
    """The page is a form of its own to fill: at least :data:`_FORM_FIELDS` fields outside page
    chrome, and the form is most of what it shows (``form_share``): a contact or report form says
    little besides its labels, and it is what the page is for (the site's search box in its header
    is chrome; a login form is L1 before this)."""
    return int(signals.get("inputs", 0)) >= _FORM_FIELDS and float(signals.get("fs", 0.0)) >= params.form_share


def _by_status(record, status: int, enabled: Tuple[str, ...]) -> Tuple[bool, Optional[str]]:
    """(decided, label) from the status and content type alone: failures, 5xx, HTTP auth walls,
    non-HTML responses and 1xx/3xx final statuses are decided here."""
    if record.error or status <= 0:
        return True, None
    if 500 <= status <= 599:
        return True, ("E1" if "E1" in enabled else None)
    if status == 401 and record.www_authenticate and "L1" in enabled:
        return True, "L1"  # an HTTP auth wall (basic, digest, ...): whatever its body says
    if not (200 <= status <= 299 or 400 <= status <= 499):
        return True, None  # 1xx/3xx as final status: nothing to say
    if not is_html_type(record.content_type, empty_is_html=bool(record.rendered or record.html_len > 0)):
        return True, ("E3" if status >= 400 and "E3" in enabled else None)
    return False, None


def special_label(record, params: RuleParams = RuleParams(), item: Item = False) -> Optional[str]:
    """E1/E3/L1/W1/M1/T1 for one PageRecord, or None (content page, failure, plain non-HTML).
    ``item``: the page is one of many pages of one structure on its site
    (:meth:`~scrapy_websim.core.match.template.Templates.is_item`), never thin by its text, and
    not a soft 404 by its text alone; a function that tells is called only when that matters."""
    enabled = params.enabled_rules
    status = int(record.status_code or 0)
    decided, label = _by_status(record, status, enabled)
    if decided:
        return label
    ok = status < 300
    label = _page_label(record, params, enabled, ok, item)
    if label is not None:
        return label
    if "T1" in enabled and (ok or status in (401, 403)) and _thin(record, params, item if ok else False):
        return "T1"
    return None


def _page_label(record, params: RuleParams, enabled: Tuple[str, ...], ok: bool, item: Item) -> Optional[str]:
    """L1, W1, M1 or E3 from what the page says (``ok``: its status is 2xx; ``item``: as
    :func:`special_label` takes it), else None."""
    signals = record.signals or {}
    short = _short(record, params)
    if "L1" in enabled and _login_page(signals, ok, short, params, _one_sentence(record)):
        return "L1"
    for rule in ("W1", "M1"):
        if rule in enabled and _keyword_page(signals, rule, ok, short):
            return rule
    if "E3" in enabled and (not ok or _soft_404(signals, short, _one_sentence(record), item)):
        return "E3"
    return None
