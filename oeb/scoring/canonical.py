"""Canonical keys: the one string every scalar is reduced to before two values are compared.

Two values are equal for scoring and for pairing iff their keys are equal strings. The rules are
those of omni-extract-bench 1.0.0 (docs/scorer.md), quirks included: numbers pass through a
binary float, lowercasing happens before NFKD, dates use a fixed list of `strptime` formats.

`canonical_key` is the fast path used by the scorer. `explain_value` runs the same code while
recording every step that changed the text, to answer "why did this cell count as misread?".
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation, localcontext
from typing import Any

__all__ = ["Explanation", "Step", "canonical_key", "explain_value"]

# Keys of the values that the default rule treats as absent; only reachable with a custom `absent`.
NULL_KEY = "#NULL"
EMPTY_STRING_KEY = "#EMPTY_STRING"
EMPTY_LIST_KEY = "#EMPTY_LIST"
EMPTY_OBJECT_KEY = "#EMPTY_OBJECT"
DASH_KEY = "#ph_dash"
DATE_PREFIX = "#d"
TIME_PREFIX = "#t"

DATE_FORMATS = (
    "%Y-%m-%d",
    "%m/%d/%Y",
    "%m-%d-%Y",
    "%d/%m/%Y",
    "%B %d, %Y",
    "%b %d, %Y",
    "%d %B %Y",
    "%d-%b-%Y",
    "%d%b%Y",
    "%m/%d/%y",
    "%Y/%m/%d",
    "%d.%m.%Y",
    "%m.%d.%Y",
    "%b %d %Y",
    "%B %d %Y",
)
DATETIME_FORMATS = (
    "%Y-%m-%dT%H:%M:%S",
    "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%dT%H:%M:%S%z",
    "%Y-%m-%d %H:%M:%S%z",
    "%Y-%m-%dT%H:%M:%S.%f",
    "%Y-%m-%d %H:%M:%S.%f",
    "%Y-%m-%dT%H:%M:%S.%f%z",
    "%Y-%m-%d %H:%M:%S.%f%z",
    "%Y-%m-%dT%H:%M",
    "%Y-%m-%d %H:%M",
)
MAX_DATE_LENGTH = 34
FALLBACK_LENGTH = 64

_FOOTNOTE = re.compile(r"\s*\[\s*(?:\d{1,2}|[a-z])\s*\]")
_TYPOGRAPHY = str.maketrans(
    {
        "\u2019": "'",
        "\u2018": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u2033": '"',
        "\u201a": ",",
        "\u2013": "-",
        "\u2014": "-",
        "\u2010": "-",
        "\u2011": "-",
        "\u2212": "-",
        "\u2015": "-",
        "\u2044": "/",
    }
)
_BULLETS = frozenset("•‣◦▪▶∙●■")
_PLAIN_NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?")
_ZERO_PADDED = re.compile(r"-?0\d")
_WHITESPACE = re.compile(r"\s+")
_DASHES = re.compile(r"-+")
_DECIMAL_POINT = re.compile(r"(?<=\d)\.(?=\d)")
_PUNCTUATION = re.compile(r"[\s,\-.]")
_NUMBER_SIGNS = str.maketrans({"\u2212": "-", "\u2013": "-"})
_PARENTHESISED = re.compile(r"\((.*)\)")
# Lowercased ASCII text of letters, digits, spaces, commas and dashes, with a letter: no step of the
# text folds applies to it but the one removing spaces, commas and dashes (no number, no dashes
# alone, no decimal point, no footnote, bullet, quote, bracket or slash).
_PLAIN_WORDS = re.compile(r"[a-z0-9 ,\-]*[a-z][a-z0-9 ,\-]*")
# A date as `%Y-%m-%d` writes it, ASCII digits only: strptime's first format, without strptime. No
# other format reads such text (each needs a slash, a period, a month's name, a time, or another
# order of digits), so one that is no day of the calendar is no date at all.
_ISO_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
# Every date and time format reads at least two numbers (a year and a day) with something between
# them (a separator or a month's name, letters in an ASCII locale): ASCII text with fewer digit runs
# (a name with a number, a code like `SKU-012`) is no date, without trying the formats' pattern.
_TWO_NUMBERS = re.compile(r"[0-9][^0-9]+[0-9]")
# A decimal as tables write amounts (a sign, a dollar, thousands commas, at most 7 fraction digits),
# which the number route reads without rounding.
_SHORT_DECIMAL = re.compile(r"(-?)\$?([0-9][0-9,]{0,18}\.[0-9]{1,7})")


@dataclass(frozen=True, slots=True)
class Step:
    """One rule that changed a value on its way to its canonical key."""

    rule: str
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class Explanation:
    """Why a value has the canonical key it has: its route and the steps that changed it."""

    value: Any
    route: str
    key: str
    steps: tuple[Step, ...]


class _Trace:
    """Collects the steps of one canonicalisation; `None` stands for "not tracing" on the fast path."""

    __slots__ = ("route", "steps")

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.route = "text"

    def note(self, rule: str, before: str, after: str) -> None:
        if before != after:
            self.steps.append(Step(rule, before, after))


def canonical_key(value: Any) -> str:
    """The canonical key of one scalar (or of an empty container under a custom `absent` rule).

    Keys are cached process-wide, one table per type (`True`, `1` and `1.0` stay apart): the same
    values recur within a document, across documents and across the systems graded on one gold.
    """
    table = _KEYS.get(type(value))
    if table is not None:
        try:
            key = table.get(value)
        except TypeError:  # unhashable: kept nowhere
            key = None
        if key is not None:
            return key
    return _remember(value)


def _remember(value: Any) -> str:
    """A value not seen yet: its key, kept (no exception on this path: a raised and caught
    KeyError cost more than the key of an integer)."""
    key = _route(value, None)
    table = _KEYS.get(type(value))
    if table is None:
        table = _KEYS[type(value)] = {}
    elif len(table) >= MAX_CACHED_KEYS:
        table.clear()
    try:
        table[value] = key
    except TypeError:  # unhashable: an empty container under a custom `absent`, kept nowhere
        return key
    return key


# Each type's table is emptied when it reaches this many keys, bounding the memory it holds.
MAX_CACHED_KEYS = 1 << 18
_KEYS: dict[type, dict[Any, str]] = {}


def explain_value(value: Any) -> Explanation:
    """The canonical key of `value` with the route it took and every step that changed it."""
    trace = _Trace()
    key = _route(value, trace)
    return Explanation(value, trace.route, key, tuple(trace.steps))


def _route(value: Any, trace: _Trace | None) -> str:
    if type(value) is int and trace is None:
        # No period (no number route), digits alone (no date format reads them), a plain number to
        # the folds: its float's key; one too large for a float takes the full steps.
        try:
            return str(int(float(value)))
        except OverflowError:
            pass
    elif type(value) is float and trace is None:
        # Written without an exponent and with at most 7 fraction digits: the number route keys it
        # as its own float, unrounded (its text reads back as the same float).
        text = repr(value)
        point = text.find(".")
        if point >= 0 and "e" not in text and len(text) - point <= 8:
            return str(int(value)) if value.is_integer() else text  # `_float_key`, its repr made once
    marker = _absent_marker(value)
    if marker is not None:
        if trace:
            trace.route = "absent"
        return marker
    text = str(value)
    if isinstance(value, bool):
        return _text_route(text, "boolean", trace)
    number = _number_route(text, trace) if "." in text else None  # no period: no number (`_parse_decimal`)
    if number is not None:
        return number
    when = _date_or_time_route(text, trace)
    if when is not None:
        return when
    return _text_route(text, "text", trace)


def _absent_marker(value: Any) -> str | None:
    if value is None:
        return NULL_KEY
    if isinstance(value, str):
        return EMPTY_STRING_KEY if not value.strip() else None
    if isinstance(value, list) and not value:
        return EMPTY_LIST_KEY
    if isinstance(value, dict) and not value:
        return EMPTY_OBJECT_KEY
    return None


def _text_route(text: str, route: str, trace: _Trace | None) -> str:
    if trace is not None:
        trace.route = route
    key = _fold(text, trace)
    if key:
        return key
    key = _WHITESPACE.sub("", text.strip().lower())
    if trace is not None:
        trace.note("folds to nothing: the value itself, lowercased, whitespace removed", "", key)
    return key


# --- text folds ------------------------------------------------------------------------------


def _fold(text: str, trace: _Trace | None) -> str:
    """Text folds; a fold that raises (float overflow) falls back to a trimmed, lowercased prefix."""
    try:
        return _fold_steps(text, trace)
    except (OverflowError, ValueError):
        key = " ".join(text.split()).lower()[:FALLBACK_LENGTH]
        if trace is not None:
            trace.note("number too large for a float: first 64 characters, lowercased", text, key)
        return key


def _fold_steps(text: str, trace: _Trace | None) -> str:
    s = text.strip().lower()
    if trace is not None:
        trace.note("case: trim and lowercase", text, s)
    elif _PLAIN_WORDS.fullmatch(s):
        return s.replace(" ", "").replace(",", "").replace("-", "")

    if not s.isascii():  # ASCII text has nothing to decompose and no typography to replace
        before = s
        s = unicodedata.normalize("NFKD", s)
        s = "".join(ch for ch in s if not unicodedata.combining(ch) and unicodedata.category(ch) != "Cf").replace(
            "\u03bc", "u"
        )
        if trace is not None:
            trace.note("unicode: NFKD, combining marks and format characters removed, mu to u", before, s)

    if "[" in s:
        before = s
        without_markers = _FOOTNOTE.sub("", s)
        if without_markers.strip():
            s = without_markers
        if trace is not None:
            trace.note("footnote markers removed", before, s)

    if not s.isascii():
        before = s
        s = s.translate(_TYPOGRAPHY)
        if trace is not None:
            trace.note("typography: curly quotes, primes and dashes made plain", before, s)

    if s and s[0] in _BULLETS and (len(s) == 1 or s[1].isspace()):
        if trace is not None:
            trace.note("leading list bullet removed", s, s[1:])
        s = s[1:]

    number = s.replace(",", "").replace("$", "").replace("%", "").strip()
    if _PLAIN_NUMBER.fullmatch(number) and not _ZERO_PADDED.match(number):
        f = float(number)
        integral = int(f)  # raises OverflowError for a float that overflowed to infinity
        key = str(integral) if integral == f else repr(f)
        if trace is not None:
            trace.note("number: read as a float (',', '$', '%' removed)", s, key)
        return key

    if _DASHES.fullmatch(_WHITESPACE.sub("", s)):
        if trace is not None:
            trace.note("only dashes: the dash placeholder", s, DASH_KEY)
        return DASH_KEY

    before = s
    points = [m.start() for m in _DECIMAL_POINT.finditer(s)]
    if len(points) == 1:
        at = points[0]
        s = _PUNCTUATION.sub("", s[:at]) + "." + _PUNCTUATION.sub("", s[at + 1 :])
    else:
        s = _PUNCTUATION.sub("", s)
    if trace is not None:
        trace.note("punctuation: whitespace, ',', '-' and '.' removed (one decimal point kept)", before, s)

    before = s
    s = s.strip("'\"").replace("(", "").replace(")", "").replace("/", "")
    if trace is not None:
        trace.note("outer quotes stripped; '(', ')' and '/' removed", before, s)
    return s


# --- number route ----------------------------------------------------------------------------


def _number_route(text: str, trace: _Trace | None) -> str | None:
    if trace is None:
        written = _SHORT_DECIMAL.fullmatch(text)
        if written:  # what `_parse_decimal` reads, at most 7 fraction digits: keyed as below, at once
            return _float_key(float(written[1] + written[2].replace(",", "")))
    number = _parse_decimal(text)
    if number is None:
        return None
    exponent = number.as_tuple().exponent
    assert isinstance(exponent, int)
    if exponent >= -7 and trace is None:
        # No rounding (at most 7 fraction digits), and the text folds read the plain number as a
        # float: the key is that float's, of the number itself.
        return _float_key(float(number))
    if exponent < 0:
        fraction = _fraction_digits(number)
        if fraction.strip("0"):
            leading_zeros = len(fraction) - len(fraction.lstrip("0"))
            with localcontext() as context:
                context.prec = 1000
                number = number.quantize(Decimal(1).scaleb(-(7 + leading_zeros)))
    if number == number.to_integral_value():
        plain = str(int(number))
    else:
        plain = format(number, "f")
        if "." in plain:
            plain = plain.rstrip("0").rstrip(".")
    if trace is not None:
        trace.route = "number"
        trace.note("number: signs, parentheses, ',', '$', '%' read; fraction rounded to 7 digits", text, plain)
    return _fold(plain, trace)


def _float_key(f: float) -> str:
    """The key of a number read without rounding: its float, written without a needless `.0`."""
    return str(int(f)) if f.is_integer() else repr(f)


def _fraction_digits(number: Decimal) -> str:
    """The digits after the decimal point, zero-padded on the left (exponent is negative)."""
    _, digits, exponent = number.as_tuple()
    assert isinstance(exponent, int)
    places = -exponent
    return "".join(map(str, digits)).rjust(places, "0")[-places:]


def _parse_decimal(text: str) -> Decimal | None:
    """The number-text test: a decimal with a period, after signs and currency marks are read (no
    step adds a period: text without one is no number)."""
    if "." not in text:
        return None
    t = text.strip()
    negative = False
    wrapped = _PARENTHESISED.fullmatch(t)  # like the reference's pattern, `.` stops at a line feed
    if wrapped:
        negative = True
        t = wrapped.group(1).strip()
    if not t.isascii():
        t = t.translate(_NUMBER_SIGNS)
    if t.endswith("-"):
        negative = not negative
        t = t[:-1].strip()
    while t[:1] in ("-", "+") and t:
        if t[0] == "-":
            negative = not negative
        t = t[1:].strip()
    t = t.replace(",", "").replace("$", "").replace("%", "").replace(" ", "")
    if "." not in t:
        return None
    try:
        number = Decimal(("-" if negative else "") + t)
    except InvalidOperation:
        return None
    if not number.is_finite() or not -100 <= number.adjusted() <= 100:
        return None
    return number


# --- date and time routes ----------------------------------------------------------------------


def _strptime_pattern(fmt: str) -> str:
    """The regular expression `datetime.strptime` itself uses for `fmt`, for a cheap pre-check."""
    from _strptime import _TimeRE_cache  # type: ignore[import-not-found]  # the stdlib's own cache; no stubs

    pattern: str = _TimeRE_cache.pattern(fmt)
    return pattern


def _any_of(formats: tuple[str, ...]) -> re.Pattern[str] | None:
    try:
        patterns = [re.sub(r"\(\?P<\w+>", "(?:", _strptime_pattern(f)) for f in formats]
        return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)
    except Exception:  # pragma: no cover - a Python without the private cache: no pre-check
        return None


# strptime matches a format's regex at the start and then demands that nothing is left over, so
# any string it accepts fully matches that regex: strings that match none skip all 25 formats.
_MAYBE_DATE = _any_of(DATE_FORMATS + DATETIME_FORMATS)


def _date_or_time_route(text: str, trace: _Trace | None) -> str | None:
    s = text.strip()
    iso = _ISO_DATE.fullmatch(s)
    if iso:
        year, month, day = map(int, iso.groups())
        try:
            datetime(year, month, day)
        except ValueError:  # not a day of the calendar: no other format reads four, two and two digits
            return None
        return _dated(text, DATE_PREFIX + s, DATE_FORMATS[0], trace)
    if len(s) > MAX_DATE_LENGTH or not (_TWO_NUMBERS.search(s) if s.isascii() else any(ch.isdigit() for ch in s)):
        return None
    if _MAYBE_DATE is not None and not _MAYBE_DATE.fullmatch(s):
        return None
    for fmt in DATE_FORMATS:
        try:
            parsed = datetime.strptime(s, fmt)
        except ValueError:
            continue
        return _dated(text, DATE_PREFIX + _iso_date(parsed), fmt, trace)
    for fmt in DATETIME_FORMATS:
        try:
            parsed = datetime.strptime(s, fmt)
        except ValueError:
            continue
        if (parsed.hour, parsed.minute, parsed.second, parsed.microsecond) == (0, 0, 0, 0):
            return _dated(text, DATE_PREFIX + _iso_date(parsed), fmt, trace)
        stamp = f"{_iso_date(parsed)}T{parsed.hour:02d}:{parsed.minute:02d}:{parsed.second:02d}"
        return _dated(text, f"{TIME_PREFIX}{stamp}.{parsed.microsecond:06d}", fmt, trace, route="time")
    return None


def _iso_date(parsed: datetime) -> str:
    return f"{parsed.year:04d}-{parsed.month:02d}-{parsed.day:02d}"


def _dated(text: str, key: str, fmt: str, trace: _Trace | None, route: str = "date") -> str:
    if trace is not None:
        trace.route = route
        trace.note(f"{route}: read with the format {fmt!r}" + (", offset dropped" if "%z" in fmt else ""), text, key)
    return key
