"""The repository root and the demo site of ``example_project`` on 127.0.0.1, for the end-to-end tests.

Running crawls and reading their output is ``scrapy_websim.testing.crawl``.
"""

from __future__ import annotations

import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from example_project.demo_site.server import running as demo_site  # noqa: E402

__all__ = ["REPO", "demo_site"]
