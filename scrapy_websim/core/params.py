"""The one range check of the frozen parameter objects' ``validate()``.

A range is written as it reads in the error message: ``"[0, 1]"``, ``"(0, 1]"``, ``"[0.5, 1)"``,
``">= 1"``, optionally after a type word (``"int [1, 64]"``: an integer, bools refused;
``"number [0, 1]"``: an int or float, bools refused) and before a note
(``"[0, 1.01] (above 1 disables rule 2)"``). The error is always
``"{field} must be {an integer |a number }{in RANGE|>= LO}{ note}, got {value!r}"``, the form
``config.build_params`` rewrites to name the ``WEBSIM_*`` setting.

Pure module: no Scrapy import.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, NamedTuple, Optional

__all__ = ["Range", "parse_range", "check_ranges"]

_SPEC = re.compile(
    r"(?:(?P<kind>int|number) )?"
    r"(?:(?P<left>[\[(])(?P<lo>[^,]+), (?P<hi>[^\])]+)(?P<right>[\])])|>= (?P<min>\S+))"
    r"(?P<note>.*)"
)
_KIND_TEXT = {None: "", "int": "an integer ", "number": "a number "}


class Range(NamedTuple):
    kind: Optional[str]  # None (any comparable value), "int" or "number"
    lo: float
    hi: Optional[float]  # None: no upper bound
    lo_open: bool
    hi_open: bool
    text: str  # the message's "must be ..." part

    def holds(self, value: Any) -> bool:
        if self.kind and (isinstance(value, bool) or not isinstance(value, (int, float) if self.kind == "number" else int)):
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
        lo, hi, lo_open, hi_open, where = float(m["min"]), None, False, False, f">= {m['min']}"
    else:
        lo, hi = float(m["lo"]), float(m["hi"])
        lo_open, hi_open = m["left"] == "(", m["right"] == ")"
        where = f"in {m['left']}{m['lo']}, {m['hi']}{m['right']}"
    return Range(kind, lo, hi, lo_open, hi_open, _KIND_TEXT[kind] + where + m["note"])


def check_ranges(obj: Any, **specs: str) -> None:
    """Raise ``ValueError("{field} must be ..., got {value!r}")`` for the first field of ``obj``
    outside its range; ``specs`` maps field names to ranges, checked in the order given."""
    for name, spec in specs.items():
        value = getattr(obj, name)
        rng = parse_range(spec)
        if not rng.holds(value):
            raise ValueError(f"{name} must be {rng.text}, got {value!r}")
