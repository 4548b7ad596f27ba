"""Helpers for the test suite and the benches: real servers on 127.0.0.1 and crawls in a subprocess.

``servers`` (nginx, Apache httpd, lighttpd, Django), ``sites`` (sites built from Debian documentation
packages), ``hostile_server``, ``soft404_fleet``, ``redis_server`` and ``crawl`` (the ``websim`` CLI in
a subprocess). The crawler never imports this package, and nothing here sends traffic beyond loopback.
"""
