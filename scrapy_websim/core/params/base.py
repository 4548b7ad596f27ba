"""How the frozen parameter objects declare their fields, and the one check of their ``validate()``.

Each field is declared once with :func:`param`: its default, its valid range (or choices) and a
one-line description. :func:`check_fields` is the generic ``validate()`` those declarations drive,
and ``config.py`` builds the ``WEBSIM_*`` settings table from the same declarations, so a default,
a range and a description are written in one place.

A range is written as it reads in the error message: ``"[0, 1]"``, ``"(0, 1]"``, ``"[0.5, 1)"``,
``">= 1"``, optionally after a type word (``"int [1, 64]"``: an integer, bools refused;
``"number [0, 1]"``: an int or float, bools refused) and before a note
(``"[0, 1.01] (above 1 disables rule 2)"``). The error is always
``"{field} must be {an integer |a number }{in RANGE|>= LO}{ note}, got {value!r}"``, raised as a
:class:`FieldError` that ``config.build_params`` re-raises naming the setting (or the ``WEBSIM_PARAMS``
key) instead of the field. A field with ``choices`` fails with ``"{field} must be one of 'a', 'b', got {value!r}"``;
one whose default is a bool with ``"{field} must be True or False, got {value!r}"``; one whose
default is a tuple of strings (or ``()``) with ``"{field} must be a sequence of non-empty strings,
got {value!r}"``.

Pure module: no Scrapy import.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import re
from functools import lru_cache
from typing import Any, NamedTuple, Optional, Sequence, TypeVar

__all__ = ["Range", "parse_range", "check_ranges", "param", "check_fields", "Params", "FieldError"]

_SPEC = re.compile(
    r"(?:(?P<kind>int|number) )?"
    r"(?:(?P<left>[\[(])(?P<lo>[^,]+), (?P<hi>[^\])]+)(?P<right>[\])])|>= (?P<min>\S+))"
    r"(?P<note>.*)"
)
_KIND_TEXT = {None: "", "int": "an integer ", "number": "a number "}


class FieldError(ValueError):
    """A parameter field holds a value outside what it declares: ``str(err)`` is
    ``"{field} {problem}"``, and ``config.build_params`` names the setting or ``WEBSIM_PARAMS`` key instead."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field} {problem}")
        self.field, self.problem = field, problem


class Range(NamedTuple):
    kind: Optional[str]  # None (any comparable value), "int" or "number"
    lo: float
    hi: Optional[float]  # None: no upper bound
    lo_open: bool
    hi_open: bool
    text: str  # the message's "must be ..." part

    def holds(self, value: Any) -> bool:
        allowed = (int, float) if self.kind == "number" else int
        if self.kind and (isinstance(value, bool) or not isinstance(value, allowed)):
            return False
        try:
            above = value > self.lo if self.lo_open else value >= self.lo
            below = True if self.hi is None else value < self.hi if self.hi_open else value <= self.hi
        except TypeError:
            return False
        return bool(above and below)


@lru_cache(maxsize=None)
def parse_range(spec: str) -> Range:
    """The :class:`Range` written as ``spec`` (see the module docstring)."""
    m = _SPEC.fullmatch(spec)
    if m is None:
        raise ValueError(f"not a range: {spec!r}")
    kind = m["kind"]
    if m["min"] is not None:
        lo, hi, lo_open, hi_open, where = _number(m["min"]), None, False, False, f">= {m['min']}"
    else:
        lo, hi = _number(m["lo"]), _number(m["hi"])
        lo_open, hi_open = m["left"] == "(", m["right"] == ")"
        where = f"in {m['left']}{m['lo']}, {m['hi']}{m['right']}"
    return Range(kind, lo, hi, lo_open, hi_open, _KIND_TEXT[kind] + where + m["note"])


def _number(text: str) -> float:
    """A bound as written: an int stays exact (a 64-bit bound is not rounded), else a float."""
    text = text.strip()
    return int(text) if text.lstrip("+-").isdigit() else float(text)


def check_ranges(obj: Any, **specs: str) -> None:
    """Raise ``FieldError("{field}", "must be ..., got {value!r}")`` for the first field of ``obj``
    outside its range; ``specs`` maps field names to ranges, checked in the order given."""
    for name, spec in specs.items():
        value = getattr(obj, name)
        rng = parse_range(spec)
        if not rng.holds(value):
            raise FieldError(name, f"must be {rng.text}, got {value!r}")


def param(default: Any, spec: str = "", doc: str = "", *, choices: Sequence[Any] = (), **more: Any) -> Any:
    """A field of a frozen parameter dataclass: its ``default``, valid range ``spec`` (as above;
    ``""`` = not checked) or ``choices``, and a one-line ``doc``. ``more`` goes to the field's
    metadata as well, for the layers above: ``setting="WEBSIM_X"`` makes the field a setting of its
    own (one a user sets: a main threshold, a rule list), ``set_by="..."`` names what sets a field
    that no one sets directly (the other fields are keys of ``WEBSIM_PARAMS``, see ``config.py``),
    ``shown`` is the settings table's default cell where it is not the plain default."""
    return dataclasses.field(default=default, metadata={"range": spec, "doc": doc, "choices": tuple(choices), **more})


_P = TypeVar("_P", bound="Params")


class Params:
    """Base of the frozen parameter objects (``@dataclass(frozen=True)`` subclasses whose fields
    are declared with :func:`param`): ``validate()`` runs the checks the fields declare and returns
    the object. A subclass with a check no field can declare extends it."""

    def validate(self: _P) -> _P:
        check_fields(self)
        return self


def check_fields(obj: Any) -> None:
    """The declared checks of every field of ``obj`` (a dataclass whose fields are declared with
    :func:`param`), in declaration order: a bool default takes only a bool and a tuple of strings
    only non-empty strings, a str default only a str, then ``choices``, then ``range``, then the
    optional package a value ``needs`` (metadata ``needs``: ``{value: (module, pip extra)}``).
    :meth:`Params.validate`."""
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if isinstance(f.default, bool) and not isinstance(value, bool):
            raise FieldError(f.name, f"must be True or False, got {value!r}")
        if isinstance(f.default, str) and not isinstance(value, str):
            raise FieldError(f.name, f"must be a string, got {value!r}")
        if _is_words(f.default) and not _is_words(value, non_empty=True):
            raise FieldError(f.name, f"must be a sequence of non-empty strings, got {value!r}")
        choices = f.metadata.get("choices")
        if choices and value not in choices:
            raise FieldError(f.name, f"must be one of {', '.join(map(repr, choices))}, got {value!r}")
        if f.metadata.get("range"):
            check_ranges(obj, **{f.name: f.metadata["range"]})
        module, extra = f.metadata.get("needs", {}).get(value, ("", ""))
        if module and importlib.util.find_spec(module) is None:
            raise FieldError(f.name, f"{value!r} needs the optional package {module}, which is not installed: "
                                     f"pip install 'scrapy-websim[{extra}]'")


def _is_words(value: Any, non_empty: bool = False) -> bool:
    """A tuple or list of strings (each with a non-blank character when ``non_empty``)."""
    return isinstance(value, (tuple, list)) and all(isinstance(v, str) and (v.strip() or not non_empty) for v in value)
