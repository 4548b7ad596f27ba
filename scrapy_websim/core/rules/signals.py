"""What the special-page rules read of a page (SPEC section 7), and the template fingerprint.

Two steps, so the HTML is read once and never kept (this module is step 1; step 2 is
:mod:`scrapy_websim.core.rules.label`):

1. :func:`page_signals` (per rendered page, in the pipeline) reads the parsed lxml document and
   keeps a few hundred bytes of what a *person* sees: the visible text (scripts, styles,
   ``template``/``noscript``, hidden elements and attributes are never read; visible button labels
   are), keyword hits per rule split by where they occur (title, headings, body), password inputs
   and the share of the page that forms take, all of the page's *own* content: page chrome
   (``nav``, ``aside``, a site header/footer outside ``main``/``article``, navigation roles,
   sidebar/menu/navbar-style class or id, see :func:`scrapy_websim.core.page.visible._region`) and what the page echoes of its own
   URL are not read for keywords. :func:`template_fingerprint` hashes the normalised visible text
   and the tag skeleton into 64 bits, with per-host and per-request tokens (host names, "at HOST
   port N", numbers, ids, hex, timestamps, echoed paths/URLs/titles, attribute values such as CSRF
   tokens) taken out first.
2. :func:`~scrapy_websim.core.rules.label.special_label` (at close, on the compact :class:`~scrapy_websim.core.types.PageRecord`)
   decides the label.

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

from ..params import FieldError, Params, param
from ..page.visible import _WS, _Walk, _walk  # the page walk the rules read

__all__ = [
    "RULE_CODES",
    "RuleParams",
    "page_signals",
    "rule_features",
    "template_fingerprint",
]

#: All rule codes in priority order (SPEC section 7). R1/U1 are applied by core.match.assign.
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
class RuleParams(Params):
    """Parameters of the special-page rules (WEBSIM_RULE_* settings)."""

    #: the others are skipped (the next rule in priority gets its chance)
    enabled_rules: Tuple[str, ...] = param(RULE_CODES, "", "rules that may fire")
    error_keywords: Tuple[str, ...] = param(ERROR_KEYWORDS, "", "E3: words of an error page")
    login_keywords: Tuple[str, ...] = param(LOGIN_KEYWORDS, "", "L1: words of a login wall")
    waf_keywords: Tuple[str, ...] = param(WAF_KEYWORDS, "", "W1: words of a WAF block page")
    maintenance_keywords: Tuple[str, ...] = param(MAINTENANCE_KEYWORDS, "", "M1: words of a maintenance page")
    thin_html_bytes: int = param(1024, "int [0, 10000000]", "T1: HTML below this is thin")
    thin_text_chars: int = param(200, "int [0, 10000000]", "T1: main text below this is thin")
    short_text_chars: int = param(600, "int [0, 10000000]", "keyword rules on 2xx pages need less main text")
    #: visible page = text + controls; above this share the page "is a form"
    form_share: float = param(0.5, "number [0, 1]", "L1 on 2xx: share of the page inside forms")
    e3_length_tolerance: float = param(0.2, "number [0, 1]", "E3: HTML-length band within one template")
    #: visible text and headings, for reports and debugging
    signal_text_chars: int = param(120, "int [0, 2000]", "characters of visible text kept in the signals")
    #: "template": one cluster per rule and template across hosts; "origin": the reference tool's
    #: per-origin ids (``err5xx-{origin}``, ``errtpl-{origin}-{hash}``...)
    scope: str = param("template", "", "rule clusters per template or per origin", choices=RULE_SCOPES)

    def validate(self) -> "RuleParams":
        unknown = [r for r in self.enabled_rules if r not in RULE_CODES]
        if isinstance(self.enabled_rules, str) or unknown:
            raise FieldError("enabled_rules", f"must be a subset of {RULE_CODES}, got {self.enabled_rules!r}")
        return super().validate()

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
    :func:`~scrapy_websim.core.features.compute_features` adds ``h1``, the page's first h1 (for
    the duplicate decision's heading check, not for the rules).
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
