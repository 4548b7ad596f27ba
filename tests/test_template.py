"""What a page says beyond its site's template: the templates of sites and kinds of pages, items of
a site, and special-page templates grouped by likeness (core/match/template.py, core/match/assign.py).

The pages are built like an issue tracker's: every ticket is one real sentence (the first entry of a
Debian changelog on this machine) inside a template of field labels, a workflow form and help text
that every ticket repeats, so that two tickets compared whole are mostly template.
"""

from __future__ import annotations

import glob
import gzip
import hashlib
import random

import pytest

from scrapy_websim.core.features import FeatureParams, compute_features
from scrapy_websim.core.match import assign, cluster, similarity, template
from scrapy_websim.core.match.assign_arrays import PageTable
from scrapy_websim.core.match.template import templates_of_records
from scrapy_websim.core.params.match import TemplateParams
from scrapy_websim.core.rules.label import special_label
from scrapy_websim.core.types import PageRecord

SITE = "http://127.0.0.1:8000"
MIRROR = "http://127.0.0.1:8001"

TICKET = """<!doctype html><html><head><title>View Ticket - Bench Tracker</title></head><body>
<div id="header"><a href="/">Bench Tracker</a> <a href="/login">Login</a> <a href="/prefs">Preferences</a></div>
<div id="mainnav"><a href="/wiki">Wiki</a> <a href="/timeline">Timeline</a> <a href="/report">View Tickets</a></div>
<div id="content" class="ticket"><h1>Ticket</h1>
<table class="properties"><tr><th>Reported by:</th><td>maintainer</td><th>Owned by:</th><td>somebody</td></tr>
<tr><th>Priority:</th><td>major</td><th>Milestone:</th><td>next release</td></tr>
<tr><th>Component:</th><td>packaging</td><th>Keywords:</th><td></td></tr></table>
<div class="description"><h3>Description</h3><p>{desc}</p></div>
<div class="changelog"><h3>Change History</h3><p>No changes have been made to this ticket since it was
opened; add a comment below to tell the owner what you found out.</p></div>
<form class="modify"><h3>Modify Ticket</h3><p>Action: leave as new. The owner will remain somebody. Resolve
as fixed, invalid, wontfix, duplicate or worksforme. Reassign to another developer of the project, or accept
the ticket yourself so that everybody knows who works on it.</p><p>Note: see the tracker's guide for help on
using tickets, on the fields each ticket carries and on the workflow that moves a ticket from new to closed.
Comments are formatted as wiki text; attachments can be added once the ticket is saved.</p></form>
</div><div id="footer">Powered by a tracker</div></body></html>"""


def _sentences(n: int) -> list:
    """``n`` different real one-line changelog entries of packages installed on this machine."""
    out, seen = [], set()
    for path in sorted(glob.glob("/usr/share/doc/*/changelog.Debian.gz")):
        try:
            with gzip.open(path, "rt", encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    line = line.strip()
                    if line.startswith("* ") and 50 <= len(line) <= 160 and line not in seen:
                        seen.add(line)
                        out.append(line[2:])
                        break
        except OSError:
            continue
        if len(out) >= n:
            return out
    if len(out) < n:
        pytest.skip(f"only {len(out)} Debian changelogs on this machine")
    return out


def _record(page_id: int, url: str, html: str, status: int = 200) -> PageRecord:
    rec = PageRecord(id=page_id, url=url, final_url=url, status_code=status, content_type="text/html",
                     html_len=len(html.encode()), rendered=True)
    title = html.split("<title>", 1)[1].split("</title>", 1)[0] if "<title>" in html else ""
    rec.title = title
    compute_features(rec, html, None, FeatureParams())
    rec.phash = 0x5A5A5A5A5A5A5A5A  # one look, as a template's pages have
    return rec


def _uid(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


@pytest.fixture(scope="module")
def tracker():
    """Tickets named by a hash (no title, heading or URL word tells two apart), a mirror with three
    of them and a URL variant of one."""
    sentences = _sentences(24)
    records = [_record(i + 1, f"{SITE}/tktview/{_uid(s)}", TICKET.format(n=i + 1, desc=s))
               for i, s in enumerate(sentences)]
    mirror = [_record(100 + i, f"{MIRROR}/tktview/{_uid(sentences[i])}", TICKET.format(n=i + 1, desc=sentences[i]))
              for i in (0, 1, 2)]
    variant = _record(200, f"{SITE}/tktview/{_uid(sentences[4])}?utm_source=mail",
                      TICKET.format(n=5, desc=sentences[4]))
    return records, mirror, variant


def test_two_tickets_compared_whole_look_alike_and_beyond_the_template_they_do_not(tracker):
    records, mirror, variant = tracker
    templates = templates_of_records(records + mirror + [variant])
    assert templates.of(records[0]).shape[0] > 0, "the tracker's template is found"
    whole_dups = joined = 0
    for a, b in zip(records, records[1:]):
        whole_dups += similarity.compare(a, b).is_duplicate
        joined += similarity.compare(a, b, template=templates.for_pair(a, b)).is_duplicate
    assert whole_dups > 0, "compared whole, tickets of one sentence pass for copies (the problem)"
    assert joined == 0
    d = similarity.judge(records[0], records[1], template=templates.for_pair(records[0], records[1]))
    assert d.own is not None and d.own.template_share(0) > 0.5


def test_copies_of_an_item_share_what_it_says(tracker):
    records, mirror, variant = tracker
    templates = templates_of_records(records + mirror + [variant])
    for copy in mirror:
        original = next(r for r in records if r.url.rsplit("/", 1)[1] == copy.url.rsplit("/", 1)[1])
        assert similarity.compare(original, copy, template=templates.for_pair(original, copy)).is_duplicate
    assert similarity.compare(records[4], variant, template=templates.for_pair(records[4], variant)).is_duplicate


def test_templates_do_not_depend_on_the_order_of_the_pages(tracker):
    records, mirror, variant = tracker
    pages = records + mirror + [variant]
    first = templates_of_records(pages)
    shuffled = pages[:]
    random.Random(3).shuffle(shuffled)
    second = templates_of_records(shuffled)
    assert first.by_site.keys() == second.by_site.keys()
    for site in first.by_site:
        assert first.by_site[site].tolist() == second.by_site[site].tolist()


def test_a_site_with_too_few_pages_has_no_template_of_its_own(tracker):
    """Three tickets are too few to tell their site's template, and enough to tell that a ticket
    is one of its kinds of pages (an item: content however short); two are neither."""
    records, mirror, _ = tracker
    templates = templates_of_records(records[:3] + mirror)
    assert not templates.by_site
    assert templates.is_item(records[0])
    two = templates_of_records(records[:2] + mirror)
    assert not two.by_site and not two.is_item(records[0])


ARTICLE = """<!doctype html><html><head><title>{t}</title></head><body><div id="content"><h1>{t}</h1>
<p>{body}</p></div></body></html>"""
HISTORY = """<!doctype html><html><head><title>Revision history of "{t}"</title></head><body><div id="content">
<h1>Revision history of "{t}"</h1><form><p>Compare selected revisions. (cur | prev) marks the current and the
previous revision; choose two revisions and compare them to see what changed between them.</p>
<ul class="history"><li><span>(cur | prev)</span> <span>12:00, 1 May</span> <span>Editor</span>
<span>({n} bytes)</span> <span>{t} corrected</span></li></ul></form>
<p>View logs for this page. Filter revisions by date or by tag; older revisions are listed on the next pages of
this history, newest first, and each can be viewed, compared or restored by an administrator.</p></div></body></html>"""


def test_kinds_of_pages_have_templates_of_their_own():
    sentences = _sentences(20)
    pages, n = [], 0
    for i, s in enumerate(sentences[:14]):
        n += 1
        pages.append(_record(n, f"{SITE}/wiki/A{i}", ARTICLE.format(t=f"Topic {i} {s[:12]}", body=s * 3)))
    histories = []
    for i in range(8):
        n += 1
        histories.append(_record(n, f"{SITE}/wiki/A{i}?action=history",
                                 HISTORY.format(t=f"Topic {i} {sentences[i][:12]}", n=100 + i)))
    templates = templates_of_records(pages + histories, TemplateParams(min_pages=6))
    kinds = templates.kinds["127.0.0.1:8000"]
    assert sorted(k.pages for k in kinds if k.pages >= 6) == [8, 14]
    assert templates.is_item(histories[0]) and templates.is_item(pages[0])
    a, b = histories[0], histories[1]
    assert not similarity.compare(a, b, template=templates.for_pair(a, b)).is_duplicate


SHORT = """<!doctype html><html><head><title>{t}</title></head><body><div class="nav"><a href="/">Home</a>
<a href="/rows">Rows</a></div><div class="not-footer"><table class="row"><tr><th>name</th><td>{name}</td></tr>
<tr><th>version</th><td>{v}</td></tr></table></div><div class="footer">Powered by a data browser</div>
""" + "<!-- " + "x" * 900 + " -->" + "</body></html>"


def test_short_items_of_a_site_are_content_and_a_lone_short_page_is_thin():
    rows = [_record(i + 1, f"{SITE}/rows/{i}", SHORT.format(t=f"row {i}", name=f"package{i}", v=f"1.{i}"))
            for i in range(10)]
    assert rows[0].text_len < 200, "a row says a few words"
    templates = templates_of_records(rows)
    assert templates.is_item(rows[0])
    assert special_label(rows[0]) == "T1"  # without its site, a page of a few words is thin
    assert special_label(rows[0], item=True) is None
    assert cluster.is_eligible(rows[0], item=True) and not cluster.is_eligible(rows[0])
    lone = _record(50, "http://127.0.0.1:9000/", SHORT.format(t="placeholder", name="x", v="0"))
    assert not templates.is_item(lone) and special_label(lone) == "T1"


def test_a_not_footer_wrapper_is_the_page():
    rec = _record(1, f"{SITE}/rows/1", SHORT.format(t="row", name="bash", v="5.2"))
    assert "bash" in rec.signals.get("head", "") and rec.text_len > 0


LOGIN = """<!doctype html><html><head><title>Login - Bench SCM</title></head><body><div class="nav">
<a href="/">Home</a> <a href="/timeline">Timeline</a></div><div class="content"><h1>Login</h1>{extra}
<form method="post"><table><tr><td>User ID:</td><td><input name="u"></td></tr><tr><td>Password:</td>
<td><input type="password" name="p"></td></tr><tr><td></td><td><input type="checkbox" name="r"> Remember me?
</td></tr></table><input type="submit" value="Login"></form>
<p>Warning: login information, including the password, will be sent in the clear over an unencrypted
connection. Consider logging in at a secure address instead.</p>{more}</div></body></html>"""
CAPTCHA = ("<p>Visitors may enter anonymous as the user-ID with the 8-character hexadecimal password shown "
           "below:</p><pre>" + " ".join("__ |__ /_ ||___" for _ in range(12)) + "</pre>")
ERROR = """<!doctype html><html><head><title>{repo} - bench git</title></head><body><table id="header"><tr><td>
index : {repo}</td><td>{desc}</td></tr></table><div class="content"><table class="tabs"><tr><td><a href="/">summary
</a> <a href="/">refs</a> <a href="/">log</a> <a href="/">tree</a> <a href="/">commit</a></td></tr></table>
<div class="error">{message}</div></div><div class="footer">generated by cgit</div></body></html>"""


def _special_table(records):
    params = assign.AssignParams()
    table = PageTable()
    for r in records:
        assign.add_page(table, r, params)
    by_id = {r.id: r for r in records}
    joined = assign.merge_similar_templates(table, by_id.__getitem__, params)
    names = {r.id: table.group_names[g] for r, g in zip(records, table.spec_group)}
    return joined, names


def test_one_login_template_whatever_it_shows_of_the_request():
    pages = [_record(1, f"{SITE}/login", LOGIN.format(extra="", more=CAPTCHA)),
             _record(2, f"{SITE}/login?g=setup",
                     LOGIN.format(extra="<p>Login as a named user to access page <b>setup</b>.</p>", more="")),
             _record(3, f"{MIRROR}/login?g=%2Ftimeline",
                     LOGIN.format(extra="<p>Login as a named user to access page <b>/timeline</b>.</p>", more=""))]
    assert {special_label(p) for p in pages} == {"L1"}
    assert len({p.fingerprint for p in pages[:2]}) == 2, "the fingerprints differ"
    joined, names = _special_table(pages)
    assert joined >= 1 and len(set(names.values())) == 1


def test_two_error_messages_of_one_application_are_one_template_of_each_status():
    pages = [_record(1, f"{SITE}/coreutils/log/?h=upstream",
                     ERROR.format(repo="coreutils", desc="Debian packaging of coreutils",
                                  message="Invalid branch: upstream"), status=404),
             _record(2, f"{SITE}/debianutils/log/?h=sid",
                     ERROR.format(repo="debianutils", desc="Debian packaging history of debianutils",
                                  message="Invalid branch: sid"), status=404),
             _record(3, f"{SITE}/coreutils/changes/",
                     ERROR.format(repo="coreutils", desc="Debian packaging of coreutils", message="Invalid request"),
                     status=404)]
    assert {special_label(p) for p in pages} == {"E3"}
    _, names = _special_table(pages)
    assert names[1] == names[2], "one error on two projects of the site: one template"
    assert names[1] == names[3], "two messages of one error template: one template"
    forbidden = _record(4, f"{SITE}/coreutils/blame/README",
                        ERROR.format(repo="coreutils", desc="Debian packaging of coreutils",
                                     message="Blame is disabled"), status=403)
    _, names = _special_table(pages + [forbidden])
    assert names[4] != names[1], "another status: another template"


def test_a_tiny_error_page_is_not_like_a_longer_one():
    tiny = _record(1, f"{SITE}/config.inc", "<html><head><title>403 Forbidden</title></head><body>"
                   "<h1>403 Forbidden</h1></body></html>" + " " * 1100, status=403)
    apache = _record(2, f"{MIRROR}/deny", "<html><head><title>403 Forbidden</title></head><body><h1>Forbidden</h1>"
                     "<p>You don't have permission to access this resource.</p><hr><address>Apache/2.4.62 (Debian) "
                     "Server at 127.0.0.1 Port 8001</address></body></html>" + " " * 900, status=403)
    text, _ = assign.template_similarity(tiny, apache)
    assert text < 0.5
    _, names = _special_table([tiny, apache])
    assert names[1] != names[2]


TOKEN_LOGIN = """<!doctype html><html><head><title>Jupyter Server</title></head><body><div id="site">
<h1>Token authentication is enabled</h1><p>If no password has been configured, you need to open the server with
its login token in the URL, or paste it above. This requirement will be lifted if you enable a password.</p>
<p>The command: jupyter server list will show you the URLs of running servers with their tokens, which you can
copy and paste into your browser. For example: Currently running servers: http://localhost:8888/?token=c8de56fa
:: /Users/you/notebooks</p><p>or you can paste just the token value into the password field on this page. See the
documentation on how to enable a password in place of token authentication, if you would like to avoid dealing
with random tokens. Cookies are required for authenticated access to the server.</p>
<form method="post"><label>Password or token:</label><input type="password" name="password">
<button type="submit">Log in</button></form><h3>Setup a Password</h3><p>You can also setup a password by entering
your token and a new password on the fields below:</p><form method="post"><label>Token</label>
<input type="password" name="password"><label>New Password</label><input type="password" name="new_password">
<button type="submit">Log in and set new password</button></form></div></body></html>"""


def test_a_token_login_that_explains_itself_is_a_login_wall():
    rec = _record(1, f"{SITE}/login?next=%2Flab", TOKEN_LOGIN)
    assert rec.text_len > 600, "not a short page"
    assert special_label(rec) == "L1"


@pytest.mark.parametrize("apostrophe", ["'", "\u2019"])
def test_a_page_of_one_sentence_saying_it_found_nothing_is_a_soft_404(apostrophe):
    html = ("<!doctype html><html><head><title>Bench Registry</title></head><body><div id=root><div>"
            f"<p>Sorry, we couldn{apostrophe}t find it...</p><a href='/'>Go to the home page</a></div>"
            "<footer>Made with love</footer></div>" + "<script>/*" + "x" * 1200 + "*/</script></body></html>")
    assert special_label(_record(1, f"{SITE}/-/web/detail/nosuchpackage", html)) == "E3"
    # "No such object: deadbeef" (an SCM's answer to a hash no object has, status 200)
    nothing = html.replace(f"Sorry, we couldn{apostrophe}t find it...", "No such object: deadbeef0000")
    assert special_label(_record(2, f"{SITE}/info/deadbeef0000", nothing)) == "E3"


def test_an_error_naming_the_path_asked_for_is_one_template_and_the_login_word_stays():
    # cgit's "path not found" under two paths: the breadcrumb names the path's words
    pages = [_record(1, f"{SITE}/coreutils/tree/README",
                     ERROR.format(repo="site", desc="packaging", message="path: root / README / Path not found"),
                     status=404),
             _record(2, f"{SITE}/debianutils/tree/debian/control",
                     ERROR.format(repo="site", desc="packaging",
                                  message="path: root / debian / control / Path not found"), status=404)]
    _, names = _special_table(pages)
    assert names[1] == names[2]
    # a query value is taken out only where a message quotes it: a login page's own "Login"
    # stays when the URL asks for ?_task=login, or the two would be two templates
    logins = [_record(3, f"{SITE}/", LOGIN.format(extra="", more="")),
              _record(4, f"{SITE}/?_task=login", LOGIN.format(extra="", more=""))]
    assert logins[0].fingerprint != logins[1].fingerprint
    _, names = _special_table(logins)
    assert names[3] == names[4]


TABLE = """<!doctype html><html><head><title>packages: {n} rows{sort}</title></head><body>
<div class="nav"><a href="/">home</a></div><h1>packages</h1><p>{n} rows{sort}</p><table>{rows}</table></body></html>"""


def test_the_same_rows_said_to_be_sorted_are_one_page():
    rows = "".join(f"<tr><td>{i}</td><td>package{i} {w} release {i}.{i}</td></tr>"
                   for i, w in enumerate(("editor", "shell", "compiler", "daemon", "library", "toolkit", "viewer",
                                          "server", "client", "parser", "linker", "debugger") * 3))
    plain = _record(1, f"{SITE}/db/packages", TABLE.format(n=36, sort="", rows=rows))
    by_name = _record(2, f"{SITE}/db/packages?_sort=name", TABLE.format(n=36, sort=" sorted by name", rows=rows))
    decision = similarity.judge(plain, by_name)
    assert decision.same_words and decision.result.is_duplicate
    # without the exception, the title naming the URL's "name" keeps them apart (the item check)
    assert similarity.items_differ(plain, by_name)
    # a page with a row of its own is not the same words: the item check applies
    other = _record(3, f"{SITE}/db/packages?_sort=name",
                    TABLE.format(n=37, sort=" sorted by name",
                                 rows=rows + "<tr><td>x</td><td>one more package</td></tr>"))
    assert not similarity.judge(plain, other).same_words


def test_a_kind_of_page_the_sample_saw_a_few_times_is_an_item_of_a_big_site():
    rows = [_record(i + 1, f"{SITE}/rows/{i}", SHORT.format(t=f"row {i}", name=f"package{i}", v=f"1.{i}"))
            for i in range(12)]
    articles = [_record(100 + i, f"{SITE}/wiki/A{i}",
                        ARTICLE.format(t=f"Topic {i}", body=" ".join(f"word{i}x{j} of article {i}" for j in range(40))))
                for i in range(24)]
    sampled = templates_of_records(rows + articles, TemplateParams(sample=12, min_pages=6, item_pages=6))
    kind = next(k for k in sampled.kinds["127.0.0.1:8000"] if k.paths == template.path_set(rows[0].tag_paths))
    assert 2 <= kind.pages < 6 <= kind.estimate, "a few rows in a sample of 12 of 36 pages stand for more"
    assert sampled.is_item(rows[0])
    # a site whose pages the sample holds all of: what it saw is what there is
    whole = templates_of_records(rows[:4] + articles, TemplateParams(sample=256, min_pages=6, item_pages=6))
    assert not whole.is_item(rows[0])


def test_the_more_of_a_page_was_template_the_more_its_own_text_must_agree():
    params = similarity.DEFAULT_DECISION_PARAMS
    base, top = params.rule1_jaccard, params.rule1_templated
    assert similarity.templated_threshold(base, 0.0) == base
    middle = similarity.templated_threshold(base, similarity.TEMPLATED_SHARE / 2)
    assert base < middle < top and abs(middle - (base + top) / 2) < 1e-9
    assert similarity.templated_threshold(base, 0.42) > 0.8, "two tickets 42 % template, 0.54 alike beyond it"
    assert similarity.templated_threshold(base, 0.9) == top
    assert similarity.templated_threshold(0.9, 0.3) == 0.9, "never below the threshold it starts from"


def test_soft_404s_of_one_structure_are_one_error_template_whatever_they_say():
    """An application's "not found" answers with status 200 ("No such object", "No such file")
    are one error template, as its 404s are: the spec groups error pages by their HTML. A ticket
    of a tracker whose sentence speaks of errors is no soft 404 at all (its title and headings do
    not say error; its text is the ticket's own), so it cannot join one."""
    answers = [_record(1, f"{SITE}/info/0123456789abcdef",
                       ERROR.format(repo="No Such Object", desc="site", message="No such object: 0123456789abcdef")),
               _record(2, f"{SITE}/file?name=nosuch.py", ERROR.format(
                   repo="No such file", desc="site", message="File 'nosuch.py' does not exist in this repository."))]
    assert {special_label(p) for p in answers} == {"E3"}
    _, names = _special_table(answers)
    assert names[1] == names[2]
    _, names = _special_table([_record(3, f"{SITE}/x", ERROR.format(repo="site", desc="tracker", message="x"), 404),
                               _record(4, f"{SITE}/y", ERROR.format(repo="site", desc="tracker", message="y z"), 404)])
    assert names[3] == names[4]
    tickets = [_record(10 + i, f"{SITE}/ticket/{i}", ERROR.format(repo=f"Ticket {i}", desc="tracker", message=desc))
               for i, desc in enumerate(
                   ["Fix the parser error on empty input: the list showed a 404 page not found instead.",
                    "Handle the build error with newer compilers; something went wrong in configure.",
                    *(f"Packaging change number {i} of the tracker's bench, with its own words." for i in range(8))])]
    templates = templates_of_records(tickets)
    assert {special_label(t) for t in tickets[:2]} == {"E3"}  # alone on their site they would be
    assert {special_label(t, item=lambda t=t: templates.is_item(t)) for t in tickets[:2]} == {"T1"}  # under 1 KB


def test_a_small_sites_article_shown_on_its_home_page_and_copied_is_not_its_template():
    # eight pages: a home page (and its index.html) that shows the article, the article and its
    # mirror copy, and four other pages: the article's words are on half of them, yet they are
    # what the article says, not what the site repeats
    article = "How rivers shape valleys. " + " ".join(f"water{i} carves stone{i} over years{i}" for i in range(30))
    home = ARTICLE.format(t="Demo site", body="Latest: " + article)
    pages = [_record(1, f"{SITE}/", home), _record(2, f"{SITE}/index.html", home.replace("Latest:", "Newest:")),
             _record(3, f"{SITE}/article/rivers", ARTICLE.format(t="Rivers", body=article)),
             _record(4, f"{SITE}/mirror/rivers",
                     ARTICLE.format(t="Rivers", body=article.replace("years29", "ages29")))]  # a word changed
    pages += [_record(10 + i, f"{SITE}/article/{i}", ARTICLE.format(t=f"Topic {i}", body=f"other{i} words " * 40))
              for i in range(4)]
    templates = templates_of_records(pages)
    a, b = pages[2], pages[3]
    decision = similarity.judge(a, b, template=templates.for_pair(a, b))
    assert decision.result.is_duplicate, decision


REVISION = """<!doctype html><html><head><title>Revision - websim - Bench Redmine</title></head>
<body><div id="header"><h1>websim</h1><div id="main-menu"><ul><li><a href="/p/websim">Overview</a></li>
<li><a href="/p/websim/activity">Activity</a></li><li><a href="/p/websim/repository">Repository</a></li></ul>
</div></div>
<div id="content"><h2>Revision {rev}</h2><div class="details"><h4>Added by the maintainers 3 days ago</h4>
<ul class="revision-info"><li><strong>ID</strong> {rev}0000000000000000000000000000000000</li></ul></div>
<div class="wiki changeset-comments"><p>{message}</p></div><ul id="changes-legend"><li>added</li><li>modified</li>
<li>copied</li><li>renamed</li><li>deleted</li></ul><div class="changeset-changes"><ul><li>
<a href="/p/websim/entry/{path}">{path}</a> (<a href="/p/websim/diff/{path}">diff</a>)</li></ul></div></div>
<div id="footer">Powered by Bench Redmine</div></body></html>"""


def test_revisions_differ_by_their_message_kept_in_a_block_named_comments():
    """A repository browser's revision pages: one h1 (the project's name), one title, ids that are
    hashes, the message in a block named ``changeset-comments``. The message is the page's text:
    two revisions that touch one file are two pages by what they say, a revision on a mirror is
    its copy."""
    messages = _sentences(10)
    revs = [_record(i + 1, f"{SITE}/p/websim/revisions/{_uid(m)[:8]}",
                    REVISION.format(rev=_uid(m)[:8], message=m, path="bench/fleet.py"))
            for i, m in enumerate(messages)]
    copy = _record(100, f"{MIRROR}/p/websim/revisions/{_uid(messages[0])[:8]}",
                   REVISION.format(rev=_uid(messages[0])[:8], message=messages[0], path="bench/fleet.py"))
    templates = templates_of_records(revs + [copy])
    pairs = [(a, b) for a, b in zip(revs, revs[1:])]
    assert not any(similarity.compare(a, b, template=templates.for_pair(a, b)).is_duplicate for a, b in pairs)
    assert similarity.compare(revs[0], copy, template=templates.for_pair(revs[0], copy)).is_duplicate


OPERATIONS = """<!doctype html><html><head><title>{host} / bench / {table} | Bench Admin</title></head><body>
<nav class="breadcrumb"><a href="/">Server</a> <a href="/db/bench">Database: bench</a>
<a href="/db/bench/{table}">Table: {table}</a></nav>
<div id="content"><h2>Table maintenance</h2><p>Check the table for errors, analyze its key distribution, or
optimize it to reclaim unused space and defragment its data file. Each action runs on this table only and
reports what it found when it is done; none of them changes the rows the table holds.</p>
<form action="/db/bench/{table}/rename"><label>Rename table to</label><input name="new_name" value="{table}">
<label>Table comments</label><input name="comment" value=""><p>Renaming a table keeps its rows, its indexes and
its privileges; views that name it must be changed by hand.</p></form></div>""" + "<!-- " + "x" * 600 + " -->" + """
</body></html>"""


def _operations_cluster(pages):
    templates = templates_of_records(pages)
    by_id = {p.id: p for p in pages}

    def compare(a, b):
        return similarity.compare(by_id[a], by_id[b], template=templates.for_pair(by_id[a], by_id[b]))

    labels = cluster.cluster_labels(cluster.cluster(pages, compare))
    return {p.url: labels.get(p.id, f"alone-{p.id}") for p in pages}


def test_items_whose_text_is_all_template_differ_by_the_name_in_their_title_and_form():
    """An application's page per table whose judged text is all template: the table's name is in
    the title, the breadcrumb (navigation) and a form field only. One judged text is not one page
    when the titles name two items; the same table on a mirror port (its title names the port)
    and under a tracking parameter is its copy."""
    tables = ("changes", "countries", "currencies", "languages", "scripts", "uploads", "releases", "mirrors")
    pages = [_record(i + 1, f"{SITE}/table/operations?db=bench&table={t}",
                     OPERATIONS.format(host="127.0.0.1:8000", table=t)) for i, t in enumerate(tables)]
    pages += [_record(100 + i, f"{MIRROR}/table/operations?db=bench&table={t}",
                      OPERATIONS.format(host="127.0.0.1:8001", table=t)) for i, t in enumerate(tables[:3])]
    pages.append(_record(200, f"{SITE}/table/operations?db=bench&table=scripts&utm_source=mail",
                         OPERATIONS.format(host="127.0.0.1:8000", table="scripts")))
    assert len({p.text_hash for p in pages}) == 1, "one judged text on every table's page"
    got = _operations_cluster(pages)
    own = [got[p.url] for p in pages[:len(tables)]]
    assert len(set(own)) == len(tables), "each table a page of its own"
    for i, t in enumerate(tables[:3]):
        assert got[f"{MIRROR}/table/operations?db=bench&table={t}"] == own[i], "the mirror's copy joins its table"
    assert got[f"{SITE}/table/operations?db=bench&table=scripts&utm_source=mail"] == own[tables.index("scripts")]
    a, b = pages[0], pages[1]
    decision = similarity.judge(a, b)
    assert decision.text_measure == "identical" and not decision.result.is_duplicate
    assert decision.items_veto or decision.title_items_veto


MESSAGE = """<!doctype html><html><head><title></title></head><body>
<p>[<a href="/prev">Date Prev</a>][<a href="/next">Date Next</a>][<a href="/tprev">Thread Prev</a>][<a
href="/tnext">Thread Next</a>][<a href="/maillist.html">Date Index</a>][<a href="/threads.html">Thread Index</a>]</p>
<h1>{subject}</h1><hr><ul><li><em>To</em>: devel@lists.bench.invalid</li><li><em>Subject</em>: {subject}</li>
<li><em>From</em>: {sender}</li><li><em>Date</em>: Mon, 18 Mar 2024 {time} +0000</li></ul><hr>
<pre>{body}</pre><hr><p>To UNSUBSCRIBE, email to devel-REQUEST@lists.bench.invalid with a subject of
"unsubscribe". Trouble? Contact listmaster@lists.bench.invalid</p>
<ul><li>Prev by Date: <strong><a href="/prev">{prev}</a></strong></li>
<li>Next by Date: <strong><a href="/next">{next}</a></strong></li></ul>
<ul><li>Index(es): <a href="/maillist.html">Date</a> <a href="/threads.html">Thread</a></li></ul>
""" + "<!-- " + "x" * 600 + " -->" + "</body></html>"


def test_a_reply_quoting_a_short_message_whole_is_another_message():
    """A list archive's short message and its reply, which quotes it whole and adds a line: beyond
    the archive's template the reply holds everything the first says, and what it adds is less
    than the noise a server may add to a copy. What each calls itself differs ("Re: ..."): two
    items of one kind whose h1s differ are two pages. The first message on a mirror is its copy."""
    lines = _sentences(20)

    def message(i, subject, body, sender, time):
        return MESSAGE.format(subject=subject, sender=sender, time=time, body=body, prev=lines[(i + 11) % 12][:40],
                              next=lines[(i + 1) % 12][:40])

    pages = [_record(i + 1, f"{SITE}/msg{i:05d}.html",
                     message(i, f"pkg{i}: {lines[i][:40]}", lines[i], f"Dev {i} <d{i}@bench.invalid>", f"1{i}:19:27"))
             for i in range(1, 12)]
    body = "\n".join(lines[12:16])
    first = message(0, f"pkg0: {lines[12][:40]}", body, "Dev 0 <d0@bench.invalid>", "10:19:27")
    quoted = "\n".join(f"&gt; {line}" for line in lines[12:16])
    reply = _record(50, f"{SITE}/msg00050.html", message(
        0, f"Re: pkg0: {lines[12][:40]}", f"On Mon, 18 Mar 2024, Dev 0 wrote:\n{quoted}\n\n{lines[16]}",
        "Dev 9 <d9@bench.invalid>", "23:49:27"))
    original = _record(60, f"{SITE}/msg00000.html", first)
    copy = _record(61, f"{MIRROR}/msg00000.html", first)
    templates = templates_of_records(pages + [original, reply, copy])
    decision = similarity.judge(original, reply, template=templates.for_pair(original, reply))
    assert decision.result.content_sim >= decision.text_threshold, "beyond the template the reply holds it all"
    assert not decision.result.is_duplicate and decision.heading_veto
    assert similarity.compare(original, copy, template=templates.for_pair(original, copy)).is_duplicate


def test_a_not_found_answer_is_one_template_but_not_an_error_of_its_frame():
    """One application's not-found page, answered with 404 for one missing object, 410 for
    another and 200 (a soft 404) for a third, is one error template; a 403 of the same frame is
    another, and so is an error the application answers with 200 in the same frame (a failing
    report: a page of its own, not the missing page's template)."""
    def page(i, path, message, status):
        return _record(i, f"{SITE}{path}", ERROR.format(repo="site", desc="tracker", message=message), status)

    missing = [page(1, "/doc/tip/nosuch.md", "No such document: nosuch.md in this repository", 404),
               page(2, "/info/deadbeef", "No such check-in: deadbeef in this repository", 200),
               page(3, "/gone", "Gone: gone", 410)]
    forbidden = page(4, "/archive/tip.zip", "Archives are not allowed", 403)
    assert {special_label(p) for p in missing + [forbidden]} == {"E3"}
    _, names = _special_table(missing + [forbidden])
    assert names[1] == names[2] == names[3], "404, 410 and a soft 404 of one template: one template"
    assert names[4] != names[1], "a 403 of the same frame: another"
    # another site: its 404s and a report that fails with a database error, in one frame
    failing = page(5, "/report/7", "Report execution failed: OperationalError: no such column: milestone", 200)
    _, names = _special_table([missing[0], missing[2], failing])
    assert special_label(failing) == "E3" and names[1] == names[3]
    assert names[5] != names[1], "an error page of the same frame answered with 200: another"
    assert assign.status_class("E3", 410) == assign.status_class("E3", 404) != assign.status_class("E3", 200)


def _finalized(records):
    from scrapy_websim.config import WebsimConfig, WebsimParams
    from scrapy_websim.core.store import FeatureStore
    from scrapy_websim.result import finalize, rows

    with FeatureStore() as store:
        store.add_many(records)
        store.flush()
        result = finalize.Finalizer(WebsimParams.from_settings({}, WebsimConfig())).run(store)
        return {row["url"]: row for row in rows.ResultRows(result).url_rows()}


def test_a_copy_of_a_short_item_on_a_mirror_of_few_pages_joins_it():
    """A row of a few words is content on its site (one of many rows) and thin on a mirror port
    that holds three pages, where no kind of page can be learnt: the copy says what the row says
    and calls itself the same, so it is the row's page, not a thin page of its own. A thin page
    that only shares the row's words under another title stays thin."""
    rows = [_record(i + 1, f"{SITE}/rows/{i}", SHORT.format(t=f"row {i}", name=f"package{i}", v=f"1.{i}"))
            for i in range(10)]
    mirror = [_record(20 + i, f"{MIRROR}/rows/{i}", SHORT.format(t=f"row {i}", name=f"package{i}", v=f"1.{i}"))
              for i in (3, 4)]
    other = _record(30, "http://127.0.0.1:8002/about", SHORT.format(t="about", name="package3", v="1.3"))
    got = _finalized(rows + mirror + [other])
    for i in (3, 4):
        row, copy = got[f"{SITE}/rows/{i}"], got[f"{MIRROR}/rows/{i}"]
        assert row["cluster_kind"] == "content" and row["is_canonical"]
        assert copy["cluster_id"] == row["cluster_id"] and copy["match_rule"] == "copy"
        assert copy["match_reason"].startswith("copy:")
    assert got[f"{SITE}/rows/3"]["cluster_id"] != got[f"{SITE}/rows/4"]["cluster_id"]
    assert got[f"{SITE}/rows/5"]["cluster_id"] == "", "a row without a copy stays alone"
    assert got["http://127.0.0.1:8002/about"]["cluster_kind"] == "T1"
