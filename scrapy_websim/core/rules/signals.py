"""Special-page rules E1, E3, L1, W1, M1, T1 (SPEC section 7) and the template fingerprint.

Two steps, so the HTML is read once and never kept:

1. :func:`page_signals` (per rendered page, in the pipeline) reads the parsed lxml document and
   keeps a few hundred bytes of what a *person* sees: the visible text (scripts, styles,
   ``template``/``noscript``, hidden elements and attributes are never read; visible button labels
   are), keyword hits per rule split by where they occur (title, headings, body), password inputs
   and the share of the page that forms take, all of the page's *own* content: page chrome
   (``nav``, ``aside``, a site header/footer outside ``main``/``article``, navigation roles,
   sidebar/menu/navbar-style class or id, see :func:`scrapy_websim.core.visible._region`) and what the page echoes of its own
   URL are not read for keywords. :func:`template_fingerprint` hashes the normalised visible text
   and the tag skeleton into 64 bits, with per-host and per-request tokens (host names, "at HOST
   port N", numbers, ids, hex, timestamps, echoed paths/URLs/titles, attribute values such as CSRF
   tokens) taken out first.
2. :func:`special_label` (at close, on the compact :class:`~scrapy_websim.core.types.PageRecord`)
   decides the label.

Decision, first match wins (a rule switched off in ``enabled_rules`` is skipped and the next one
gets its chance):

* failed fetches (``error`` set, or no status) get no label; non-HTML responses get E1/E3 from
  their status only.
* **E1** status 5xx. A 503 maintenance or WAF page is still E1 (5xx first).
* **L1** HTTP auth wall: a 401 with ``WWW-Authenticate`` (basic, digest...), whatever its body.
* **L1** login wall. On a 4xx page: a password input, or login keywords in the title/headings
  (or two in the body) of a page that has a form or input. On a 2xx page: a password input and the page is mostly
  that form (``form_share``) or its main text is short; or a login keyword in the title/headings of
  a short page that has a form or input. A content page with a login box in its sidebar, or a
  documentation page about logging in, stays content.
* **W1** WAF / challenge page and **M1** maintenance page: on a 4xx page a keyword anywhere in the
  visible text; on a 2xx page the main text is short and the keywords are in the title/headings
  (or at least two different keywords in the body). Specific beats generic: a 403 with WAF
  wording is W1, a 200 with maintenance wording in its heading is M1.
* **E3** error template: any other 4xx (404, 401, 403, 410, 429, ...), and soft 404s: a 2xx page
  whose short main text has error wording in title/headings (or two different error phrases).
* **T1** thin page: HTML < ``thin_html_bytes`` or main text < ``thin_text_chars``, with status
  2xx/401/403 (401/403 reach T1 only when E3 is switched off).

"Short" means main text below ``short_text_chars`` (600), and own visible text below 5 times that
(a table of contents whose main text the extractor missed is not short): soft-404, challenge and
maintenance pages say one thing; documentation that mentions "error", "login" or "maintenance"
says a lot. T1 leaves alone a list page whose own text reaches ``thin_text_chars`` and a page whose
own visible text reaches ``short_text_chars``.
Keywords are matched case-insensitively; ASCII keywords on word boundaries (``error`` does not
hit ``terrorism``, ``log in`` does not hit ``logging``), CJK keywords as substrings; a keyword
inside (or overlapping) a longer keyword that hit is not counted twice. The Chinese and Japanese
lists were checked on every chapter and section of debian-reference-zh-cn/-ja and maint-guide-ja
(no label) and on CJK maintenance, 404, login and WAF pages (the right label).

Pure: no Scrapy import; never mutates the document.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple
from urllib.parse import parse_qsl, unquote, urlsplit

from .params import check_ranges
from .visible import (  # noqa: F401  (the page walk the rules read)
    _WS, _Walk, _walk, visible_text)

__all__ = [
    "RULE_CODES",
    "RuleParams",
    "page_signals",
    "rule_features",
    "template_fingerprint",
    "visible_text",
    "special_label",
]

#: All rule codes in priority order (SPEC section 7). R1/U1 are applied by core.assign.
RULE_CODES = ("E1", "E3", "L1", "W1", "M1", "T1", "R1", "U1")
#: How rule clusters group pages (RuleParams.scope).
RULE_SCOPES = ("template", "origin")
#: The rules whose keyword hits page_signals records.
KEYWORD_RULES = ("E3", "L1", "W1", "M1")

ERROR_KEYWORDS: Tuple[str, ...] = (
    # English
    "404", "error 404", "404 error", "not found", "page not found", "file not found",
    "page does not exist", "page doesn't exist", "page you requested", "page you are looking for",
    "page you were looking for", "page you're looking for", "could not be found",
    "cannot be found", "can't be found", "couldn't find", "can't find", "cannot find",
    "no longer available", "no longer exists", "has been removed", "has been deleted",
    "nothing was found", "nothing found", "oops", "something went wrong", "an error occurred",
    "an error has occurred", "error", "bad request", "forbidden", "unauthorized",
    "not authorized", "permission denied", "internal server error", "server error",
    "service unavailable", "bad gateway", "gateway timeout", "dead link", "broken link",
    "access denied",
    # Chinese
    "页面不存在", "页面未找到", "找不到页面", "页面找不到", "您访问的页面不存在", "你访问的页面不存在",
    "您要访问的页面不存在", "无法找到", "找不到该页面", "内容不存在", "文章不存在", "信息不存在",
    "已被删除", "出错了", "出错啦", "发生错误", "错误页面", "服务器错误", "系统错误",
    "请求错误", "无权访问", "没有权限", "访问被拒绝", "拒绝访问", "抱歉,您访问的页面", "抱歉,您访问的页面", "链接已失效",
    "找不到网页", "网页不存在", "页面已失效",
    # Chinese (traditional)
    "找不到網頁", "網頁不存在", "訪問被拒絕", "拒絕訪問", "頁面不存在", "找不到頁面", "發生錯誤", "伺服器錯誤", "系統錯誤",
    # Japanese
    "ページが見つかりません", "ページが見つかりませんでした", "お探しのページは見つかりません",
    "お探しのページが見つかりません", "ページは存在しません", "ページが存在しません",
    "指定されたページは存在しません", "ファイルが見つかりません", "エラーが発生しました",
    "サーバーエラー", "サーバエラー", "アクセスできません", "アクセスが拒否されました", "アクセス拒否",
    "アクセスは拒否されました", "削除された可能性があります",
)
LOGIN_KEYWORDS: Tuple[str, ...] = (
    # English
    "log in", "login", "log on", "logon", "sign in", "signin", "sign on", "password",
    "username", "user name", "forgot password", "forgot your password", "remember me",
    "keep me signed in", "please log in", "please sign in", "login required",
    "authentication required", "members only", "single sign-on",
    # Chinese
    "登录", "登入", "登陆", "用户登录", "请先登录", "请登录", "密码", "用户名", "账号", "帐号",
    "忘记密码", "记住我", "扫码登录", "验证码登录", "手机号登录", "统一身份认证",
    # Chinese (traditional)
    "會員登入", "請登入", "密碼", "帳號", "忘記密碼",
    # Japanese
    "ログイン", "サインイン", "ログインしてください", "パスワード", "パスワードを忘れ",
    "ユーザー名", "ユーザ名", "ユーザーid", "メールアドレス", "会員ログイン", "ログイン状態を保持",
)
#: A plain "access denied" is what any 403 says (Tomcat's, IIS's): an error page (E3). A WAF or
#: challenge page names the blocking, the firewall, the check or the vendor.
WAF_KEYWORDS: Tuple[str, ...] = (
    # English, generic
    "access to this page has been denied", "request blocked",
    "request rejected", "the requested url was rejected", "you have been blocked",
    "sorry, you have been blocked", "blocked by", "web application firewall", "firewall",
    "security check", "security verification", "checking your browser",
    "checking if the site connection is secure", "verify you are human",
    "verifying you are human", "verify that you are human", "are you a robot", "not a robot",
    "i'm not a robot", "captcha", "unusual traffic", "suspicious activity", "bot detection",
    "bot protection", "ddos protection", "ddos protection by", "too many requests",
    "rate limit exceeded", "please enable javascript and cookies", "enable cookies",
    "just a moment", "attention required", "one more step", "press & hold", "press and hold",
    # vendor phrases
    "cloudflare", "ray id", "cloudflare ray id", "performance & security by cloudflare",
    "sucuri website firewall", "sucuri", "incapsula", "incapsula incident id", "imperva",
    "akamai", "reference #", "edgesuite", "perimeterx", "human verification", "datadome",
    "aws waf", "support id", "incident id", "mod_security", "modsecurity", "wordfence",
    "barracuda", "fortiguard", "403 forbidden by waf",
    # Chinese
    "访问受限", "请求被拒绝", "请求被拦截", "已被拦截", "拦截", "防火墙",
    "网站防火墙", "安全验证", "安全检测", "人机验证", "验证码", "滑动验证", "请完成验证",
    "检测到异常", "异常访问", "访问过于频繁", "访问频率过高", "非法请求", "您的访问被阻断",
    "安全狗", "云锁", "知道创宇", "创宇盾", "阿里云盾", "腾讯云waf", "百度云加速", "长亭", "雷池",
    # Chinese (traditional)
    "存取被拒", "安全驗證", "人機驗證", "驗證碼",
    # Japanese
    "ファイアウォール",
    "セキュリティチェック", "セキュリティ確認", "ロボットではありません", "不正なアクセス",
    "不正なリクエスト", "アクセスが制限されています", "アクセスが集中",
)
MAINTENANCE_KEYWORDS: Tuple[str, ...] = (
    # English
    "maintenance", "under maintenance", "scheduled maintenance", "down for maintenance",
    "maintenance mode", "planned maintenance", "site maintenance", "temporarily unavailable",
    "temporarily down", "be back soon", "we'll be back", "we will be back", "back shortly",
    "upgrading", "currently upgrading", "system upgrade", "site upgrade", "being upgraded",
    "under construction", "briefly unavailable",
    # Chinese
    "维护中", "正在维护", "系统维护", "网站维护", "维护公告", "停机维护", "升级中", "正在升级",
    "升级维护", "暂停服务", "暂停访问", "建设中", "系统维护中", "维护期间",
    # Chinese (traditional)
    "維護中", "正在維護", "系統維護", "網站維護", "維護公告", "停機維護", "升級中", "系統升級",
    "暫停服務",
    # Japanese
    "メンテナンス中", "メンテナンスのお知らせ", "システムメンテナンス", "メンテナンスを実施",
    "メンテナンス作業", "ただいまメンテナンス", "定期メンテナンス", "緊急メンテナンス",
    "サービスを一時停止", "一時停止しております", "工事中", "準備中",
)


@dataclass(frozen=True)
class RuleParams:
    """Parameters of the special-page rules (WEBSIM_RULE_* settings)."""

    #: Rules that may fire; the others are skipped (the next rule in priority gets its chance).
    enabled_rules: Tuple[str, ...] = RULE_CODES
    error_keywords: Tuple[str, ...] = ERROR_KEYWORDS
    login_keywords: Tuple[str, ...] = LOGIN_KEYWORDS
    waf_keywords: Tuple[str, ...] = WAF_KEYWORDS
    maintenance_keywords: Tuple[str, ...] = MAINTENANCE_KEYWORDS
    #: T1: rendered HTML below this many bytes is thin.
    thin_html_bytes: int = 1024
    #: T1: main text below this many characters is thin.
    thin_text_chars: int = 200
    #: Keyword rules on 2xx pages need main text below this many characters.
    short_text_chars: int = 600
    #: L1 on 2xx: share of the visible page (text + controls) inside forms that counts as
    #: "the page is a form".
    form_share: float = 0.5
    #: E3 grouping: members of one error-template cluster differ in HTML length by at most this.
    e3_length_tolerance: float = 0.2
    #: Characters of visible text / headings kept in the signals (for reports and debugging).
    signal_text_chars: int = 120
    #: Rule clusters: "template" (one cluster per rule and template across hosts) or "origin"
    #: (the reference tool's per-origin ids: ``err5xx-{origin}``, ``errtpl-{origin}-{hash}``...).
    scope: str = "template"

    def validate(self) -> "RuleParams":
        unknown = [r for r in self.enabled_rules if r not in RULE_CODES]
        if isinstance(self.enabled_rules, str) or unknown:
            raise ValueError(
                f"enabled_rules must be a subset of {RULE_CODES}, got {self.enabled_rules!r}"
            )
        for name in ("error_keywords", "login_keywords", "waf_keywords", "maintenance_keywords"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(k, str) and k.strip() for k in value):
                raise ValueError(f"{name} must be a sequence of non-empty strings, got {value!r}")
        check_ranges(
            self, **dict.fromkeys(("thin_html_bytes", "thin_text_chars", "short_text_chars"), "int [0, 10000000]"),
            signal_text_chars="int [0, 2000]",
        )
        if self.scope not in RULE_SCOPES:
            raise ValueError(f"scope must be one of {', '.join(map(repr, RULE_SCOPES))}, got {self.scope!r}")
        check_ranges(self, form_share="number [0, 1]", e3_length_tolerance="number [0, 1]")
        return self

    def keywords(self, rule: str) -> Tuple[str, ...]:
        return {
            "E3": self.error_keywords,
            "L1": self.login_keywords,
            "W1": self.waf_keywords,
            "M1": self.maintenance_keywords,
        }[rule]

    def with_keywords(
        self,
        replace_lists: Optional[Mapping[str, Iterable[str]]] = None,
        extend_lists: Optional[Mapping[str, Iterable[str]]] = None,
    ) -> "RuleParams":
        """A copy with keyword lists replaced and/or extended, keyed by rule code (E3/L1/W1/M1).

        This is what a spider's ``custom_settings`` maps onto (see the settings in the report).
        """
        field_of = {
            "E3": "error_keywords",
            "L1": "login_keywords",
            "W1": "waf_keywords",
            "M1": "maintenance_keywords",
        }
        changes: Dict[str, Tuple[str, ...]] = {}
        for rule, words in (replace_lists or {}).items():
            if rule not in field_of:
                raise ValueError(f"keyword lists exist for {tuple(field_of)}, got {rule!r}")
            changes[field_of[rule]] = tuple(words)
        for rule, words in (extend_lists or {}).items():
            if rule not in field_of:
                raise ValueError(f"keyword lists exist for {tuple(field_of)}, got {rule!r}")
            base = changes.get(field_of[rule], getattr(self, field_of[rule]))
            changes[field_of[rule]] = tuple(dict.fromkeys(tuple(base) + tuple(words)))
        return replace(self, **changes).validate()


@lru_cache(maxsize=64)
def _prepared(keywords: Tuple[str, ...]) -> Tuple[Tuple[str, bool, bool], ...]:
    """(keyword, needs word boundary before, after); lower-cased, whitespace collapsed."""
    out = []
    for word in sorted({_WS.sub(" ", k.strip().lower()) for k in keywords if k.strip()}):
        ascii_word = word.isascii()
        out.append((word, ascii_word and _is_word(word[0]), ascii_word and _is_word(word[-1])))
    return tuple(out)


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _hits(keywords: Tuple[str, ...], text: str) -> int:
    """Number of different keywords found in ``text`` (already lower-cased and collapsed).

    ASCII keywords need word boundaries, CJK keywords match as substrings. A keyword inside a
    longer keyword that also hit is not counted again ("not found" in "page not found"), nor one
    whose first match overlaps a longer one's ("システムメンテナンス中" is one phrase, not two).
    """
    if not text:
        return 0
    found: List[Tuple[str, int, int]] = []
    for word, before, after in _prepared(keywords):
        start = text.find(word)
        while start >= 0:
            end = start + len(word)
            if (not before or start == 0 or not _is_word(text[start - 1])) and (
                not after or end == len(text) or not _is_word(text[end])
            ):
                found.append((word, start, end))
                break
            start = text.find(word, start + 1)
    kept: List[Tuple[str, int, int]] = []
    for word, start, end in sorted(found, key=lambda f: -len(f[0])):
        if not any(word in k or (start < k_end and k_start < end) for k, k_start, k_end in kept):
            kept.append((word, start, end))
    return len(kept)


def page_signals(doc, title: str, params: RuleParams = RuleParams(), url: str = "") -> Dict[str, Any]:
    """Compact rule signals of one rendered page (see module docstring). Does not mutate ``doc``.

    Keys: ``vis`` visible text length; ``head`` first characters of the visible text; ``h``
    first characters of the h1-h3 text; ``kw`` {rule: [title hits, heading hits, body hits]} for
    the rules with any hit (hits = number of different keywords); ``pw`` password inputs;
    ``inputs`` visible form controls; ``forms`` form elements; ``fs`` share of the visible page
    (text + 20 chars per control) inside forms, 0..1; ``mv`` visible text length outside page
    chrome. Keyword hits skip what the page echoes of its own ``url`` (a wiki's 404 titled
    "Maintenance window" for ``/wiki/Maintenance_window`` is not a maintenance page).
    """
    return _signals(_walk(doc), title, params, url)


def _signals(walk: _Walk, title: str, params: RuleParams, url: str = "") -> Dict[str, Any]:
    # Keyword hits, controls and headings count in the page's own content, not its chrome
    # (navigation, site header/footer, sidebars); a page that is all chrome is read whole.
    main = 0 if walk.main_parts or not walk.parts else None
    pick = (lambda pair: pair[0]) if main == 0 else sum
    text = " ".join(_drop_echoes(walk.main_parts if main == 0 else walk.parts, url))
    head_list = walk.headings[0] if main == 0 else walk.headings[0] + walk.headings[1]
    headings = " | ".join(h for h in _drop_echoes(head_list, url) if h)
    title = _drop_title_echo(_WS.sub(" ", title or "").strip(), url)
    low = (title.lower(), headings.lower(), text.lower())
    kw: Dict[str, List[int]] = {}
    for rule in KEYWORD_RULES:
        words = tuple(params.keywords(rule))
        counts = [_hits(words, part) for part in low]
        if any(counts):
            kw[rule] = counts
    n = params.signal_text_chars
    total = pick(walk.total_weight)
    share = pick(walk.form_weight) / total if total else 0.0
    return {
        "vis": sum(len(p) + 1 for p in walk.parts) - 1 if walk.parts else 0,
        "mv": len(text),
        "head": text[:n],
        "h": headings[:n],
        "kw": kw,
        "pw": pick(walk.password_inputs),
        "inputs": pick(walk.inputs),
        "forms": pick(walk.forms),
        "fs": round(share, 3),
    }


# ---------------------------------------------------------------------------------------------
# Template fingerprint

# A path/URL token is a whole run of printable ASCII with a "/", "\\", "@" or ".html"-like part in
# it; a digit token a whole run of [\w.:+-] with a digit in it. Matches can only start where a run
# starts (the lookbehind), so the engine does not retry inside runs that do not match (which made
# these two patterns quadratic in the run length). Same matches as without the lookbehind.
_URL_TOKEN = re.compile(r"(?<![!-~])[!-~]*?(?:[/\\@]|\.(?:html?|php|aspx?|jsp)\b)[!-~]*", re.I)
_DIGIT_TOKEN = re.compile(r"(?<![\w.:+-])[\w.:+-]*?\d[\w.:+-]*", re.ASCII)
_RANDOM_TOKEN = re.compile(
    r"\b(?:[A-Za-z_-]{25,}|(?=[A-Za-z_-]*[a-z])(?=[A-Za-z_-]*[A-Z][a-z]*[A-Z])[A-Za-z_-]{10,})\b",
    re.ASCII,
)
#: Host names (``www.example.org``, ``localhost``) and a server signature's "at HOST port N".
_HOST_TOKEN = re.compile(
    r"(?<![\w.-])(?:(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,24}|localhost)(?![\w-])", re.I | re.ASCII)
_SERVER_AT = re.compile(r"\b(at|on) \S+ port \S+", re.I)


def _normalise_text(text: str) -> str:
    """Per-request and per-host tokens become placeholders: a server signature's "at HOST port
    N", paths/URLs/emails, host names, anything with a digit (ids, hex, dates, times, counters,
    IP addresses, ports), long or camel-random letter runs. CJK text is kept as is."""
    text = _SERVER_AT.sub(r"\1 host port 0", text)
    text = _URL_TOKEN.sub("/", text)
    text = _HOST_TOKEN.sub("host", text)
    text = _DIGIT_TOKEN.sub("0", text)
    text = _RANDOM_TOKEN.sub("0", text)
    return _WS.sub(" ", text).strip().lower()


def _echoes(url: str) -> Tuple[str, ...]:
    """What a page may echo of its own URL besides the path: the last path segment and the
    query values, decoded, with ``_``/``+``/``-`` also read as spaces (a wiki's "no page
    titled Foo Bar" for ``/wiki/Foo_Bar``), lower-cased, longest first."""
    if not url:
        return ()
    parts = urlsplit(url)
    raw = [unquote(parts.path.rstrip("/").rsplit("/", 1)[-1])]
    raw += [v for _k, v in parse_qsl(parts.query)]
    out = set()
    for value in raw:
        value = value.strip()
        stem = value.rsplit(".", 1)[0] if "." in value[1:] else value
        for v in (value, stem):
            for variant in (v, re.sub(r"[_+]", " ", v), re.sub(r"[-_+]", " ", v)):
                variant = _WS.sub(" ", variant).strip().lower()
                if len(variant) >= 3:
                    out.add(variant)
    return tuple(sorted(out, key=lambda v: (-len(v), v)))


_QUOTES = "\"'“”‘’«»「」『』"
_TITLE_SEPARATORS = re.compile(r"\s+[-|–—:·•]+\s+")


@lru_cache(maxsize=64)
def _echo_matcher(url: str) -> Tuple[frozenset, Optional["re.Pattern[str]"]]:
    """(the echoes, a pattern of an echo in quotes)."""
    echoes = _echoes(url)
    if not echoes:
        return frozenset(), None
    alternatives = "|".join(re.escape(e) for e in echoes)
    quoted = re.compile(rf"[{_QUOTES}]\s*(?:{alternatives})\s*[{_QUOTES}]", re.I)
    return frozenset(echoes), quoted


def _is_echo(piece: str, echoes: frozenset) -> bool:
    return _WS.sub(" ", piece.strip(_QUOTES + " .,:;!?()[]")).lower() in echoes


def _drop_echoes(pieces: List[str], url: str) -> List[str]:
    """Text pieces without what the page echoes of its own URL: a piece (an element's text, a
    heading) that *is* the echo, or the echo in quotes inside a piece. Words that only happen to
    equal a URL segment inside longer text ("your account" on ``/account``) stay."""
    echoes, quoted = _echo_matcher(url) if url else (frozenset(), None)
    if not echoes:
        return pieces
    return [quoted.sub('""', p) for p in pieces if not _is_echo(p, echoes)]


def _drop_title_echo(title: str, url: str) -> str:
    """The title without a part (split at `` - ``, `` | ``...) that is the echo."""
    echoes, _quoted = _echo_matcher(url) if url else (frozenset(), None)
    if not echoes or not title:
        return title
    return " - ".join(p for p in _TITLE_SEPARATORS.split(title) if not _is_echo(p, echoes))


def template_fingerprint(doc, url: str = "") -> int:
    """64-bit hash of normalised visible text and tag skeleton (body only, attributes ignored).

    The same error/login/challenge template with a different request id, timestamp, CSRF token,
    host name, port or echoed path/title gives the same value; different templates give
    different values (BLAKE2b, full 64 bits, stable across runs and platforms). ``url`` (the
    page's final URL) lets an echo of its last path segment or query values be taken out.
    """
    return _fingerprint(_walk(doc, skeleton=True), url)


def _fingerprint(walk: _Walk, url: str = "") -> int:
    h = hashlib.blake2b(digest_size=8, person=b"websim-tpl")
    h.update(" ".join(walk.skeleton or ()).encode())
    h.update(b"\x00")
    text = " ".join(_drop_echoes(walk.parts, url))
    h.update(_normalise_text(text).encode("utf-8", "surrogatepass"))
    return int.from_bytes(h.digest(), "big")


def rule_features(doc, title: str, params: RuleParams = RuleParams(), url: str = ""
                  ) -> Tuple[Dict[str, Any], int]:
    """``(page_signals(doc, title, params, url), template_fingerprint(doc, url))`` from one walk of
    ``doc``: what the pipeline calls per page (about half the cost of calling the two)."""
    walk = _walk(doc, skeleton=True)
    return _signals(walk, title, params, url), _fingerprint(walk, url)


# ---------------------------------------------------------------------------------------------
# Decision


def _is_html(record) -> bool:
    ctype = (record.content_type or "").lower()
    return "html" in ctype or (not ctype and (record.rendered or record.html_len > 0))


def _main_len(record) -> int:
    return record.text_len or int((record.signals or {}).get("vis", 0))


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


def _login_page(signals, ok: bool, short: bool, params: RuleParams) -> bool:
    """A password input in the page's own content; or login words in its title/headings (or
    two login phrases) with a form control. Words and controls in chrome (a "Log in" link or a
    search box in the site header) do not count."""
    title, heading, body = _kw(signals, "L1")
    has_control = bool(signals.get("inputs") or signals.get("forms"))
    if not ok:
        return bool(signals.get("pw")) or bool((title or heading or body >= 2) and has_control)
    if signals.get("pw") and (float(signals.get("fs", 0.0)) >= params.form_share or short):
        return True
    return short and bool(title or heading) and has_control


def _thin(record, params: RuleParams) -> bool:
    """Little HTML or little main text; a list page (index, listing) whose entries are real
    text is content, not thin."""
    if record.html_len < params.thin_html_bytes:
        return True
    if _main_len(record) >= params.thin_text_chars:
        return False
    own = _own_len(record)
    if own >= params.short_text_chars:
        return False  # a long page whose main text was missed
    return not (record.page_type == "list" and own >= params.thin_text_chars)


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
    if not _is_html(record):
        return True, ("E3" if status >= 400 and "E3" in enabled else None)
    return False, None


def special_label(record, params: RuleParams = RuleParams()) -> Optional[str]:
    """E1/E3/L1/W1/M1/T1 for one PageRecord, or None (content page, failure, plain non-HTML)."""
    enabled = params.enabled_rules
    status = int(record.status_code or 0)
    decided, label = _by_status(record, status, enabled)
    if decided:
        return label
    ok = status < 300
    signals = record.signals or {}
    short = _short(record, params)
    if "L1" in enabled and _login_page(signals, ok, short, params):
        return "L1"
    for rule in ("W1", "M1"):
        if rule in enabled and _keyword_page(signals, rule, ok, short):
            return rule
    if "E3" in enabled and (not ok or _keyword_page(signals, "E3", ok, short)):
        return "E3"
    if "T1" in enabled and (ok or status in (401, 403)) and _thin(record, params):
        return "T1"
    return None
