"""The tunables of :mod:`scrapy_websim.core.rules`: the rule codes, the keyword lists and
:class:`RuleParams` (read by :mod:`~scrapy_websim.core.rules.signals` per page and
:mod:`~scrapy_websim.core.rules.label` at the end). See :mod:`scrapy_websim.core.params` for how a
field is declared.

Keywords are matched case-insensitively; ASCII keywords on word boundaries, CJK keywords as
substrings (:mod:`~scrapy_websim.core.rules.signals` says how). The Chinese and Japanese lists were
checked on every chapter and section of debian-reference-zh-cn/-ja and maint-guide-ja (no label)
and on CJK maintenance, 404, login and WAF pages (the right label).

Pure module: no Scrapy import, no import of the algorithm modules.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Dict, Iterable, Mapping, Optional, Tuple

from .base import FieldError, Params, param

#: A page smaller than this is thin (T1) and too small to cluster by content: one threshold for
#: both (``RuleParams.thin_*``; ``ClusterParams.min_*`` is set from them, see ``ClusterParams``).
THIN_HTML_BYTES, THIN_TEXT_CHARS = 1024, 200

__all__ = [
    "RULE_CODES",
    "RULE_SCOPES",
    "ERROR_KEYWORDS",
    "LOGIN_KEYWORDS",
    "WAF_KEYWORDS",
    "MAINTENANCE_KEYWORDS",
    "RuleParams",
]

#: All rule codes in priority order. R1/U1 are applied by core.match.assign.
RULE_CODES = ("E1", "E3", "L1", "W1", "M1", "T1", "R1", "U1")
#: How rule clusters group pages (RuleParams.scope).
RULE_SCOPES = ("template", "origin")

ERROR_KEYWORDS: Tuple[str, ...] = (
    # English
    "404", "error 404", "404 error", "not found", "page not found", "file not found",
    "page does not exist", "page doesn't exist", "does not exist", "doesn't exist", "page you requested",
    "page you are looking for",
    "page you were looking for", "page you're looking for", "could not be found",
    "cannot be found", "can't be found", "couldn't find", "can't find", "cannot find",
    "no longer available", "no longer exists", "has been removed", "has been deleted",
    "nothing was found", "nothing found", "oops", "something went wrong", "an error occurred",
    "an error has occurred", "error", "bad request", "forbidden", "unauthorized",
    "not authorized", "permission denied", "internal server error", "server error",
    "service unavailable", "bad gateway", "gateway timeout", "dead link", "broken link",
    "access denied", "no such", "empty page",
    # Chinese
    "页面不存在", "页面未找到", "找不到页面", "页面找不到", "您访问的页面不存在", "你访问的页面不存在",
    "您要访问的页面不存在", "无法找到", "找不到该页面", "内容不存在", "文章不存在", "信息不存在",
    "已被删除", "出错了", "出错啦", "发生错误", "错误页面", "服务器错误", "系统错误",
    "请求错误", "无权访问", "没有权限", "访问被拒绝", "拒绝访问", "抱歉,您访问的页面", "抱歉,您访问的页面",
    "链接已失效",
    "找不到网页", "网页不存在", "页面已失效",
    # Chinese (traditional)
    "找不到網頁", "網頁不存在", "訪問被拒絕", "拒絕訪問", "頁面不存在", "找不到頁面", "發生錯誤", "伺服器錯誤",
    "系統錯誤",
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


#: What sets the keyword lists (their own words, or words added to them).
_KEYWORDS = "WEBSIM_RULE_KEYWORDS / WEBSIM_RULE_KEYWORDS_REPLACE"


@dataclass(frozen=True)
class RuleParams(Params):
    """Parameters of the special-page rules."""

    #: the others are skipped (the next rule in priority gets its chance)
    enabled_rules: Tuple[str, ...] = param(RULE_CODES, "", "rules that may fire", setting="WEBSIM_RULES_ENABLED",
                                            shown="all: `E1 E3 L1 W1 M1 T1 R1 U1`")
    error_keywords: Tuple[str, ...] = param(ERROR_KEYWORDS, "", "E3: words of an error page", set_by=_KEYWORDS)
    login_keywords: Tuple[str, ...] = param(LOGIN_KEYWORDS, "", "L1: words of a login wall", set_by=_KEYWORDS)
    waf_keywords: Tuple[str, ...] = param(WAF_KEYWORDS, "", "W1: words of a WAF block page", set_by=_KEYWORDS)
    maintenance_keywords: Tuple[str, ...] = param(MAINTENANCE_KEYWORDS, "", "M1: words of a maintenance page",
                                                  set_by=_KEYWORDS)
    thin_html_bytes: int = param(THIN_HTML_BYTES, "int [0, 10000000]", "T1: HTML below this is thin")
    thin_text_chars: int = param(THIN_TEXT_CHARS, "int [0, 10000000]", "T1: main text below this is thin")
    short_text_chars: int = param(600, "int [0, 10000000]", "keyword rules on 2xx pages need less main text")
    #: visible page = text + controls; above this share the page "is a form"
    form_share: float = param(0.5, "number [0, 1]", "L1 on 2xx: share of the page inside forms")
    e3_length_tolerance: float = param(0.2, "number [0, 1]", "E3: HTML-length band within one template")
    #: two login, WAF or maintenance pages are one template when the masked text their template
    #: fingerprints hash is this alike (the noise-forgiving shingle measure) and their structure
    #: this much: the same form reached with another return-to value, with a captcha shown or a
    #: line naming the page the login leads to; 1.01 = only equal fingerprints
    template_text_similarity: float = param(0.6, "number [0, 1.01]",
                                            "rules: masked-text similarity of one login/WAF/maintenance template")
    #: two error pages (E1, E3) of one status and one structure are one error template whatever
    #: message it shows ("Path not found", "Invalid branch"): the spec groups error pages by their
    #: HTML, and a person triaging a site wants one cluster per error template, not per message;
    #: above 0: their masked own texts must be this alike too
    error_template_text_similarity: float = param(0.0, "number [0, 1.01]",
                                                  "rules: masked-text similarity of one error template")
    template_structure_similarity: float = param(0.85, "number [0, 1]", "rules: structure similarity of one template")
    #: visible text and headings, for reports and debugging
    signal_text_chars: int = param(120, "int [0, 2000]", "characters of visible text kept in the signals")
    #: "template": one cluster per rule and template across hosts; "origin": the reference tool's
    #: per-origin ids (``err5xx-{origin}``, ``errtpl-{origin}-{hash}``...)
    scope: str = param("template", "", "rule clusters per template or per origin", choices=RULE_SCOPES,
                       setting="WEBSIM_RULE_SCOPE")

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
        # Only keyword-tuple fields are named in changes, but mypy checks **changes against every field.
        return replace(self, **changes).validate()  # type: ignore[arg-type]
