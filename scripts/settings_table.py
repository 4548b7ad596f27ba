"""Write the settings table of docs/settings.md from ``scrapy_websim.config.SETTINGS``.

The table between the two marker lines of docs/settings.md is generated: one section per group, in
the order of ``SETTINGS``, one row per setting (name, type, default, valid values, meaning), all
taken from the field declarations ``config.py`` builds ``SETTINGS`` from. Change a setting there,
then run

    python scripts/settings_table.py           # rewrite the table in docs/settings.md
    python scripts/settings_table.py --check   # exit 1 if the table differs from the code

``tests/test_docs.py`` runs the same comparison.
"""

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE = os.path.join(ROOT, "docs", "settings.md")
START = ("<!-- settings-table: start (written by python scripts/settings_table.py from scrapy_websim.config.SETTINGS; "
         "do not edit by hand) -->")
END = "<!-- settings-table: end -->"


def _cell(text: str) -> str:
    """``text`` as one Markdown table cell: no line breaks, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _code(text: str) -> str:
    """``text`` as inline code (a backtick inside it gets a longer fence)."""
    text = _cell(text)
    if not text:
        return ""
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def render(settings, params_table: str = "") -> str:
    """The generated part of docs/settings.md (without the markers) for ``settings``, then the
    table of the ``WEBSIM_PARAMS`` keys (``params_table``)."""
    groups = []
    for s in settings:
        if s.group not in groups:
            groups.append(s.group)
    out = []
    for group in groups:
        out += [f"## {group}", "", "| setting | type | default | valid values | meaning |",
                "| --- | --- | --- | --- | --- |"]
        for s in settings:
            if s.group == group:
                out.append(f"| `{s.name}` | {_cell(s.type)} | {_cell(s.readme_default())} | {_code(s.range)} "
                           f"| {_cell(s.doc)} |")
        out.append("")
    if params_table:
        out += ["### The keys of `WEBSIM_PARAMS`", "", params_table.rstrip("\n"), ""]
    return "\n".join(out).rstrip("\n") + "\n"


def split(page_text: str):
    """``(before, table, after)`` of the page; an error when the markers are missing or doubled."""
    if page_text.count(START) != 1 or page_text.count(END) != 1:
        raise SystemExit(f"{PAGE}: needs exactly one line\n{START}\nand one line\n{END}")
    before, rest = page_text.split(START + "\n", 1)
    table, after = rest.split(END, 1)
    return before, table, after


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Write (or check) the settings table of docs/settings.md.")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the table differs from the code, change nothing")
    args = parser.parse_args(argv)
    sys.path.insert(0, ROOT)
    from scrapy_websim.config import SETTINGS, params_markdown  # noqa: PLC0415 - after the path is set

    with open(PAGE, encoding="utf-8") as fh:
        text = fh.read()
    before, table, after = split(text)
    wanted = render(SETTINGS, params_markdown())
    if args.check:
        if table != wanted:
            print(f"{PAGE}: the settings table differs from scrapy_websim.config.SETTINGS; "
                  "run python scripts/settings_table.py", file=sys.stderr)
            return 1
        return 0
    if table != wanted:
        with open(PAGE, "w", encoding="utf-8") as fh:
            fh.write(before + START + "\n" + wanted + END + after)
        print(f"{PAGE}: settings table written ({len(SETTINGS)} settings)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
