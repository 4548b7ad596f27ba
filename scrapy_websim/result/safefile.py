"""Writing the user's files safely: every output websim writes (result files, the report, the
features file, thumbnails, screenshots) goes through here.

* A file is written to a temporary name beside its target, then renamed over it: a reader, a full
  disk or a crash sees the previous file or the complete new one, never half a file, and a failed
  write leaves no temporary file behind.
* A file that is replaced keeps its mode (and, for root, its owner); a new file gets the mode the
  umask gives (``0o666 & ~umask``), as ``open()`` would.
* :func:`probe_file` and :func:`probe_dir` try to create a file where an output will go, so that a
  place that cannot be written is found before anything is rendered.
* :func:`write_with_fallback` writes a file and, when its place fails, the same content to a
  fallback place that the caller names in its error: the work done is kept.

Scrapy-free.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import tempfile
from typing import IO, Any, Callable, Iterator, List, NamedTuple, Optional, Sequence


def describe(exc: BaseException) -> str:
    """An OS error as a user reads it: ``No space left on device`` rather than ``[Errno 28] ...: 'x'``."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return f"{type(exc).__name__}: {exc}"


def _temp_name(path: str) -> str:
    directory, base = os.path.split(os.path.abspath(path))
    return os.path.join(directory, f".{base}.{secrets.token_hex(4)}.tmp")


def _keep_mode(target: str, tmp: str) -> None:
    """Give ``tmp`` the mode (and, when allowed, the owner) of the file it replaces."""
    try:
        st = os.stat(target)
    except OSError:
        return  # a new file: the umask's mode, which os.open gave it
    os.chmod(tmp, stat.S_IMODE(st.st_mode))
    if hasattr(os, "chown"):
        with contextlib.suppress(OSError):  # only root may give a file away
            os.chown(tmp, st.st_uid, st.st_gid)


@contextlib.contextmanager
def replacing(path: str, binary: bool = False, encoding: str = "utf-8", sync: bool = True) -> Iterator[IO[Any]]:
    """``with replacing(path) as fh: fh.write(...)``: ``path`` is replaced by what was written when
    the block ends without an error; on an error ``path`` is left as it was and the temporary file
    is removed. ``sync``: on the disk before the rename (a result file; not for many small files)."""
    tmp = _temp_name(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
    try:
        fh: IO[Any]
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding=encoding, newline="")) as fh:
            yield fh
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
        _keep_mode(path, tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def write_bytes(path: str, data: bytes) -> None:
    """``data`` to ``path`` (a thumbnail, a screenshot), through :func:`replacing`, not synced."""
    with replacing(path, binary=True, sync=False) as fh:
        fh.write(data)


class Staged:
    """Several files replaced together (a report's): each is written to a temporary name beside its
    target, and only when all are written are they renamed into place (:meth:`commit`); on an
    error :meth:`abort` removes the temporary files and every target keeps its previous content.
    ``with Staged() as staged:`` commits at the end of the block, or aborts on an error."""

    def __init__(self) -> None:
        self.files: List[tuple] = []  # (temporary, target)

    def write(self, path: str, data: Any) -> None:
        tmp = _temp_name(path)
        self.files.append((tmp, path))
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)

    def commit(self) -> None:
        for tmp, path in self.files:
            _keep_mode(path, tmp)
        for tmp, path in self.files:
            os.replace(tmp, path)
        self.files = []

    def abort(self) -> None:
        for tmp, _path in self.files:
            with contextlib.suppress(OSError):
                os.remove(tmp)
        self.files = []

    def __enter__(self) -> "Staged":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


def probe_file(path: str) -> str:
    """``""`` when a file can be created where ``path`` goes (a temporary file beside it is created
    and removed), else what stops it."""
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        return "it is a folder"
    if not os.path.isdir(directory):
        return f"its folder {directory} does not exist"
    tmp = _temp_name(path)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as exc:
        return f"a file cannot be created in {directory}: {describe(exc)}"
    os.close(fd)
    with contextlib.suppress(OSError):
        os.remove(tmp)
    return ""


def probe_dir(path: str) -> str:
    """``""`` when folder ``path`` exists or can be created and a file can be created in it, else
    what stops it. A folder it creates is removed again when it stays empty."""
    if os.path.exists(path) and not os.path.isdir(path):
        return "it exists and is not a folder"
    made = not os.path.exists(path)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        return f"the folder cannot be created: {describe(exc)}"
    try:
        return probe_file(os.path.join(path, "probe"))
    finally:
        if made:
            with contextlib.suppress(OSError):
                os.rmdir(path)


def fallback_dirs(first: Sequence[str] = ()) -> List[str]:
    """Where a file goes when its own place fails, in order: ``first`` (a job folder), the working
    directory, the system's temporary directory, the home directory (each once)."""
    out: List[str] = []
    for place in (*first, os.getcwd(), tempfile.gettempdir(), os.path.expanduser("~")):
        if place and os.path.abspath(place) not in out:
            out.append(os.path.abspath(place))
    return out


class Written(NamedTuple):
    """What :func:`write_with_fallback` did: ``path`` is where the content is ('' = nowhere);
    ``error`` is why the requested place failed ('' = it did not)."""

    path: str
    error: str


def _fallback_name(directory: str, path: str) -> str:
    base = os.path.basename(os.path.abspath(path)) or "output"
    stem, ext = os.path.splitext(base)
    for n in range(1, 1000):
        name = f"websim-fallback-{stem}{'' if n == 1 else f'-{n}'}{ext}"
        candidate = os.path.join(directory, name)
        if not os.path.exists(candidate):
            return candidate
    return os.path.join(directory, f"websim-fallback-{stem}-{secrets.token_hex(4)}{ext}")


def write_with_fallback(path: str, write: Callable[[IO[Any]], object], fallbacks: Sequence[str],
                        binary: bool = False) -> Written:
    """``write(fh)`` into ``path`` (through :func:`replacing`); if that fails with an OS error, into
    a new file ``websim-fallback-NAME`` in the first of ``fallbacks`` where it works."""
    try:
        with replacing(path, binary=binary) as fh:
            write(fh)
        return Written(path, "")
    except OSError as exc:
        return write_fallback(path, write, fallbacks, describe(exc), binary)


def write_fallback(path: str, write: Callable[[IO[Any]], object], fallbacks: Sequence[str], error: str,
                   binary: bool = False) -> Written:
    """``write(fh)`` into a new file ``websim-fallback-NAME`` in the first of ``fallbacks`` where it
    works, ``path`` having failed with ``error``."""
    for directory in fallbacks:
        if not os.path.isdir(directory) or os.path.dirname(os.path.abspath(path)) == directory:
            continue
        target = _fallback_name(directory, path)
        try:
            with replacing(target, binary=binary) as fh:
                write(fh)
            return Written(target, error)
        except OSError:
            continue
    return Written("", error)


def output_error(what: str, path: str, written: Written) -> Optional[str]:
    """The one-line message of a failed output (None when it did not fail)."""
    if not written.error:
        return None
    if written.path:
        return f"{what} {path} could not be written ({written.error}); it was written to {written.path} instead"
    return f"{what} {path} could not be written ({written.error}), nor anywhere else"
