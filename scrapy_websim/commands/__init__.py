"""The ``websim`` command's subcommands, one module each (``scrapy_websim.cli`` dispatches to them).

Each module has ``main(argv) -> int``, ``argv`` being the arguments after the subcommand's name,
and returns the exit status. What more than one command shares (exit statuses, the result-file and
decision options, the rendering options, a distributed job's ``--redis`` and ``--job``) is in
:mod:`~scrapy_websim.commands.options`; a command imports nothing from another command.

==========  ====================================================================================
``crawl``   ``websim -l URLS -o RESULT``: render a URL list, cluster it, label special pages
            (no subcommand name: the default); its ``--resume`` folder is :mod:`.jobdir`
``cluster`` ``websim cluster FEATURES -o RESULT``: cluster a features file again, without rendering
``urls``    ``websim urls --dedupe FILE``: a URL list reduced to its URL patterns, nothing fetched
``report``  ``websim report RESULT -o DIR``: the offline HTML report of a result file
``diff``    ``websim diff OLD NEW``: what changed between two scans
``explain`` ``websim explain RESULT URL_A URL_B``: why two pages are or are not in one cluster
``push``    ``websim push``: a URL list into Redis for distributed workers (docs/distributed.md)
``worker``  ``websim worker``: render a distributed job's URLs from its shared queue
``status``  ``websim status``: a distributed job's progress
``collect`` ``websim collect``: cluster a distributed job's records, write the result files
==========  ====================================================================================
"""

#: ``websim NAME ...`` runs the module NAME of this package; any other first argument is the crawl's.
SUBCOMMANDS = ("cluster", "urls", "report", "diff", "explain", "push", "worker", "status", "collect")
#: The command of ``websim -l ...`` (no subcommand name).
DEFAULT = "crawl"
