"""The ``websim`` console script: it runs one command of :mod:`scrapy_websim.commands`.

``websim NAME ARGS`` runs ``scrapy_websim.commands.NAME`` with ``ARGS``; anything else
(``websim -l urls.txt -o result.json``, ``websim --help``) is the crawl,
:mod:`scrapy_websim.commands.crawl`. The table of commands is that package's docstring.
"""

from __future__ import annotations

import importlib
import sys
from typing import List, Optional

from scrapy_websim.commands import DEFAULT, SUBCOMMANDS


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    name = DEFAULT
    if argv and argv[0] in SUBCOMMANDS:
        name, argv = argv[0], argv[1:]
    # Only the command that runs is imported: `websim urls` loads no Scrapy.
    command = importlib.import_module(f"scrapy_websim.commands.{name}")
    return command.main(argv)


if __name__ == "__main__":
    sys.exit(main())
