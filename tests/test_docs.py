"""README.md and the documentation site in docs/: the site builds with no warning, README's links
and commands lead somewhere real, and what the docs list (output fields, command options, setting
names) is what the code has. The settings table itself: tests/test_settings_table.py."""

import os
import re
import subprocess
import sys

from scrapy_websim.core.types import OUTPUT_FIELDS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")


def read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as fh:
        return fh.read()


def doc_pages():
    return sorted(name for name in os.listdir(DOCS) if name.endswith(".md"))


def outside_code(text):
    """``text`` without fenced code blocks and inline code (links there are not links)."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def slug(heading):
    """The anchor GitHub and MkDocs (toc) both give these headings: lower case, punctuation
    dropped, spaces as hyphens."""
    text = re.sub(r"[`*]", "", heading).strip().lower()
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", text))


def anchors(text):
    return {slug(h) for h in re.findall(r"^#+ (.+)$", re.sub(r"^```.*?^```", "", text, flags=re.M | re.S), re.M)}


def test_mkdocs_build_strict_has_no_warning(tmp_path):
    """The site builds with every warning an error: a broken link between pages or to a heading,
    a page missing from the navigation, a Markdown file outside it."""
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARNING" not in proc.stderr, proc.stderr
    built = {p.name for p in tmp_path.joinpath("site").iterdir()}
    for page in doc_pages():
        name = page[:-3]
        assert (name == "index" and "index.html" in built) or name in built, page


def test_every_page_is_in_the_navigation():
    nav = read("mkdocs.yml")
    for page in doc_pages():
        assert re.search(rf":\s+{re.escape(page)}\s*$", nav, re.M), f"docs/{page} is not in mkdocs.yml's nav"


def test_readme_is_short_and_its_links_resolve():
    text = read("README.md")
    assert len(text.splitlines()) <= 400
    links = re.findall(r"\]\(([^)\s]+)\)", outside_code(text))
    local = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert len(local) >= len(doc_pages()), "README links every docs page"
    for link in local:
        path, _, anchor = link.partition("#")
        target = os.path.join(ROOT, path) if path else os.path.join(ROOT, "README.md")
        assert os.path.isfile(target), link
        if anchor:
            assert anchor in anchors(read(os.path.relpath(target, ROOT))), link
    for page in doc_pages():
        assert f"(docs/{page})" in text, f"README does not link docs/{page}"


def test_readme_commands_are_the_scripts_ci_runs():
    """README's two commands for a fresh machine are the demo and test scripts, and CI runs the
    test one."""
    text = read("README.md")
    section = text.split("\n## Two commands\n", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^(bash \S+)", section, re.M)
    assert commands == ["bash scripts/demo.sh", "bash scripts/test.sh"]
    for command in commands:
        assert os.path.isfile(os.path.join(ROOT, command.split()[1])), command
    assert "bash scripts/test.sh" in read(".ci", "run")
    assert re.search(r"pytest", read("scripts", "test.sh"))


def test_test_extra_installs_mkdocs():
    """A fresh machine gets mkdocs from scripts/setup.sh test (pip install -e '.[test]')."""
    import configparser

    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(ROOT, "setup.cfg"))
    extra = cfg["options.extras_require"]["test"].split()
    assert any(req.startswith("mkdocs>=") for req in extra), extra
    assert "'.[test]'" in read("scripts", "setup.sh")


def test_output_page_lists_every_field_in_order():
    text = read("docs", "output.md")
    table = text.split("\n| field | meaning |\n", 1)[1].split("\n\n", 1)[0]
    documented = [name for cell in re.findall(r"^\| ([^|]+) \|", table, re.M)
                  for name in re.findall(r"`(\w+)`", cell)]
    assert documented == list(OUTPUT_FIELDS)


def test_usage_page_documents_every_option_of_the_websim_command():
    from scrapy_websim.commands.crawl import build_parser

    text = read("docs", "usage.md")
    missing = []
    for action in build_parser()._actions:
        options = [o for o in action.option_strings if o not in ("-h", "--help")]
        if options and not any(re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text) for o in options):
            missing.append("/".join(options))
    assert not missing, f"docs/usage.md does not mention {missing}"


def test_every_setting_named_in_the_docs_exists():
    """A setting renamed or removed in the code leaves no mention behind in README or docs."""
    from scrapy_websim.config import SETTINGS_BY_NAME

    for name in ["README.md"] + [os.path.join("docs", page) for page in doc_pages()]:
        text = read(name)
        for setting in set(re.findall(r"\bWEBSIM_[A-Z0-9_]*[A-Z0-9]\b", text)):
            if re.search(re.escape(setting) + r"[\s\S]{0,80}did you mean", text):
                continue  # the example of a misspelt name
            if re.search(re.escape(setting) + r" was\s+removed", text):
                continue  # the example of the error a removed name gets
            assert setting in SETTINGS_BY_NAME, f"{name} names {setting}, which is no setting"
