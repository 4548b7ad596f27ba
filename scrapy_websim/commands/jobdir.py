"""The ``--resume DIR`` folder of a crawl: Scrapy's ``JOBDIR`` (the record store, Scrapy's request
queue), the job's own copy of its URL list, and the result files the job wrote.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import itertools
import json
import os
import shutil
from typing import Any, List

from scrapy_websim.core.urls.url_list import UrlList, parse_ports

#: Inside a ``--resume`` directory: the job's copy of its URL list (as given: a file's bytes, standard
#: input, a comma list) and what it was (``--ports``, digest), the result files it wrote, and the
#: parsed list an earlier version kept instead.
JOB_SOURCE, JOB_SOURCE_META, JOB_OUTPUTS, JOB_LIST = ("websim-list.src", "websim-list.json", "websim-outputs.json",
                                                      "websim-list.jsonl")


class JobFolder:
    """A ``--resume`` directory: keeps the URL list of the job and the result files it wrote."""

    def __init__(self, parser: argparse.ArgumentParser, path: str) -> None:
        self.parser = parser
        self.path = os.path.abspath(path)
        if os.path.exists(self.path) and not os.path.isdir(self.path):
            parser.error(f"--resume {path!r} exists and is not a directory")
        try:
            os.makedirs(self.path, exist_ok=True)
        except OSError as exc:
            parser.error(f"--resume {path!r}: the job folder cannot be made ({exc.strerror or exc})")
        self.outputs: List[str] = []
        with contextlib.suppress(OSError, ValueError):
            with open(os.path.join(self.path, JOB_OUTPUTS), encoding="utf-8") as fh:
                self.outputs = list(json.load(fh))

    def has_list(self) -> bool:
        return any(os.path.isfile(os.path.join(self.path, name)) for name in (JOB_SOURCE_META, JOB_LIST))

    def unwritable(self) -> str:
        """Why nothing can be written in the job folder (full, read-only), or ``""``."""
        probe = os.path.join(self.path, f".websim-write-test-{os.getpid()}")
        try:
            with open(probe, "wb") as fh:
                fh.write(b"\0" * 65536)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            return exc.strerror or str(exc)
        finally:
            with contextlib.suppress(OSError):
                os.remove(probe)
        return ""

    def saved_list(self, given: Any) -> Any:
        """The job's own copy of its list (checked against ``given``), else ``given``."""
        meta_path = os.path.join(self.path, JOB_SOURCE_META)
        if os.path.isfile(meta_path):
            with open(meta_path, encoding="utf-8") as fh:
                meta = json.load(fh)
            ports = parse_ports(meta["ports"]) if meta.get("ports") else ()
            source = os.path.join(self.path, JOB_SOURCE)
            if meta.get("kind") == "text":
                with open(source, encoding="utf-8") as fh:
                    saved = UrlList(text=fh.read(), ports=ports, name="the job's list")
            else:
                saved = UrlList(path=source, ports=ports, name="the job's list")
            if given is not None and _list_digest(given) != meta.get("sha256"):
                self._another_list(source)
            return saved
        old = os.path.join(self.path, JOB_LIST)
        if os.path.isfile(old):  # kept by an earlier version: the parsed entries
            saved = UrlList(path=old, jsonl=True)
            if given is not None and any(a != b for a, b in itertools.zip_longest(
                    map(dataclasses.astuple, saved.entries()), map(dataclasses.astuple, given.entries()))):
                self._another_list(old)
            return saved
        return given

    def _another_list(self, saved: str) -> None:
        self.parser.error(f"--resume {self.path!r} belongs to another URL list (its copy is {saved}); "
                          "use a new directory for a new list")

    def keep_list(self, given: Any) -> Any:
        """The job's own copy of the list (so it cannot change under a resumed job, and a list read
        from standard input is the same list the next time): made from ``given`` the first time (a
        copy of its bytes, not of its parsed entries: a list of a million lines is copied in a
        moment), checked against ``given`` after that."""
        if self.has_list():
            return self.saved_list(given)
        assert given is not None  # main requires -l when the job has no list yet
        source = os.path.join(self.path, JOB_SOURCE)
        digest = _list_hash(given)
        with open(source + ".tmp", "wb") as fh:
            for chunk in given.source_bytes():
                digest.update(chunk)
                fh.write(chunk)
        os.replace(source + ".tmp", source)
        meta = {"kind": "text" if given.text is not None else "file", "sha256": digest.hexdigest(),
                "ports": ",".join(f"{scheme}:{port}" if scheme else str(port) for scheme, port in given.ports)}
        with open(os.path.join(self.path, JOB_SOURCE_META) + ".tmp", "w", encoding="utf-8") as fh:
            json.dump(meta, fh)
        os.replace(os.path.join(self.path, JOB_SOURCE_META) + ".tmp", os.path.join(self.path, JOB_SOURCE_META))
        return self.saved_list(None)

    def repair_scrapy_files(self) -> List[str]:
        """Scrapy's own files in the job folder (its request queue, the spider state) left unreadable
        by a full or read-only disk would stop every later run at start: such a file is removed (the
        URLs not done are requested again from the list)."""
        notes = []
        queue = os.path.join(self.path, "requests.queue")
        if os.path.isdir(queue) and not _queue_readable(queue):
            shutil.rmtree(queue, ignore_errors=True)
            notes.append(f"Scrapy's request queue in {queue} was unreadable (left by a full or read-only disk); "
                         "it starts over: every URL not done is requested again")
        state = os.path.join(self.path, "spider.state")
        if os.path.isfile(state) and not _pickle_readable(state):
            with contextlib.suppress(OSError):
                os.remove(state)
            notes.append(f"Scrapy's spider state {state} was unreadable; it starts over")
        return notes

    def wrote(self, path: str) -> None:
        """Remember a result file the job wrote (best effort: a full job folder forgets it, and the
        next run's -o onto it is refused, -O accepted)."""
        full = os.path.abspath(path)
        if full not in self.outputs:
            self.outputs.append(full)
            target = os.path.join(self.path, JOB_OUTPUTS)
            with contextlib.suppress(OSError):  # a new file, then renamed: a full disk leaves the old one whole
                with open(target + ".tmp", "w", encoding="utf-8") as fh:
                    json.dump(self.outputs, fh)
                os.replace(target + ".tmp", target)


def _list_hash(url_list: Any) -> Any:
    return hashlib.sha256(repr(tuple(url_list.ports)).encode())


def _list_digest(url_list: Any) -> str:
    """What identifies a list: its bytes (or text) and ``--ports``."""
    digest = _list_hash(url_list)
    for chunk in url_list.source_bytes():
        digest.update(chunk)
    return digest.hexdigest()


def _queue_readable(queue: str) -> bool:
    """Scrapy's disk queue folder can be opened: ``active.json`` and every ``info.json`` parse."""
    for root, _dirs, files in os.walk(queue):
        for name in files:
            if name in ("active.json", "info.json"):
                try:
                    with open(os.path.join(root, name), encoding="utf-8") as fh:
                        json.load(fh)
                except (OSError, ValueError):
                    return False
    return True


def _pickle_readable(path: str) -> bool:
    """The file looks like a whole pickle (a protocol mark first, the STOP opcode last), without
    loading it: an empty or cut file does not."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(2)
            fh.seek(-1, os.SEEK_END)
            tail = fh.read(1)
    except OSError:
        return False
    return len(head) == 2 and head[0] == 0x80 and tail == b"."
