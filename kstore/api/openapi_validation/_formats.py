"""String formats kube-apiserver v1.36 enforces in custom resources, as kube-openapi checks them.

Which formats are enforced (apiextensions' ``formats.go``): on a string schema (or one with no
type, or several), the format, with dashes removed, must be one of :data:`SUPPORTED_FORMATS`,
else it is dropped and never checked; on ``integer`` only ``int32``/``int64`` survive, on
``number`` only ``float``/``double``; on any other type the format is dropped. Numeric formats
are range checks (see the validator), not string checks.

Each predicate below mirrors kube-openapi's ``strfmt`` checker of the same name:

- ``uuid``/``uuid3``/``uuid4``/``uuid5``, ``isbn*``, ``creditcard`` (with the Luhn sum), ``ssn``,
  ``hexcolor``, ``rgbcolor``, ``byte`` (standard base64 with padding; the empty string is *not*
  valid), ``k8s-short-name``, ``k8s-long-name``, ``bsonobjectid`` (24 hex digits), ``password``
  (anything): the same regular expressions, Go's ASCII ``\\d`` and ``\\s``;
- ``date``: Go's ``time.Parse("2006-01-02")``: four-digit year, two-digit month and day, a real
  calendar day; ``date-time``: the string lower-cased and split on ``t``: a date, then
  ``HH:MM:SS[.frac](z|±HH:MM)`` with hour ≤ 23, minute and second ≤ 59 (parts after a second
  ``t`` are ignored, as in kube-openapi);
- ``duration``: Go's ``time.ParseDuration`` (its grammar and int64 range), or else
  kube-openapi's lenient fallback that accepts any string containing ``<digits><spaces><unit>``
  with a known unit word (``5 minutes``), unless one of those numbers overflows an int64;
- ``ipv4``: parsed sloppily (leading zeros allowed, as Kubernetes' ``ParseIPSloppy``) and
  containing a dot (so ``::ffff:1.2.3.4`` is accepted); ``ipv6``: Go's ``net.ParseIP`` and a
  colon; ``cidr``: ``ParseCIDRSloppy``; ``mac``: Go's ``net.ParseMAC`` (6, 8 or 20 octets);
- ``hostname``: kube-openapi's RFC 1034 pattern (letters and symbols of any script) run on RE2,
  at most 255 bytes, each label at most 63 bytes;
- ``uri``: Go's ``url.ParseRequestURI`` (an absolute URI or an absolute path);
- ``email``: Go's ``net/mail.ParseAddress``, in its common forms (``a@b.c``, ``Name <a@b.c>``,
  ``"quoted local"@b.c``).

Every check runs in time linear in the value (no backtracking blow-up on a crafted value).

Known approximation: ``uri`` and ``email`` follow the Go parsers' rules for the common shapes;
exotic inputs (comments in addresses, obsolete syntax, non-ASCII quoting) may be judged
differently.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from typing import Final

import re2

__all__ = ["FORMAT_CHECKS", "SUPPORTED_FORMATS", "normalize"]

FormatCheck = Callable[[str], bool]

# The formats apiextensions validates in v1.36 (names with dashes removed, as go-openapi
# normalizes them). k8s-short-name and k8s-long-name were added in 1.34.
SUPPORTED_FORMATS: Final = frozenset(
    {
        "bsonobjectid",
        "uri",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "cidr",
        "mac",
        "uuid",
        "uuid3",
        "uuid4",
        "uuid5",
        "isbn",
        "isbn10",
        "isbn13",
        "creditcard",
        "ssn",
        "hexcolor",
        "rgbcolor",
        "byte",
        "password",
        "date",
        "duration",
        "datetime",
        "k8sshortname",
        "k8slongname",
    }
)


def normalize(name: str) -> str:
    return name.replace("-", "")


def _full(pattern: str, flags: int = 0) -> Callable[[str], bool]:
    rx = re.compile(pattern, flags)
    match = rx.match
    return lambda s: match(s) is not None


_UUID_BODY = "[0-9a-f]{8}-?[0-9a-f]{4}-?%s-?%s-?[0-9a-f]{12}\\Z"
_is_uuid = _full(_UUID_BODY % ("[0-9a-f]{4}", "[0-9a-f]{4}"), re.IGNORECASE)
_is_uuid3 = _full(_UUID_BODY % ("3[0-9a-f]{3}", "[0-9a-f]{4}"), re.IGNORECASE)
_is_uuid4 = _full(_UUID_BODY % ("4[0-9a-f]{3}", "[89ab][0-9a-f]{3}"), re.IGNORECASE)
_is_uuid5 = _full(_UUID_BODY % ("5[0-9a-f]{3}", "[89ab][0-9a-f]{3}"), re.IGNORECASE)

_CREDIT_CARD = re.compile(
    "(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}"
    "|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})\\Z"
)
_NOT_DIGITS = re.compile("[^0-9]+")
_ISBN10 = re.compile("(?:[0-9]{9}X|[0-9]{10})\\Z")
_ISBN13 = re.compile("[0-9]{13}\\Z")
_SPACES_AND_MINUS = re.compile("[\t\n\f\r -]+")
_is_hexcolor = _full("#?(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})\\Z")
_BYTE = "(?:0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])"
_SP = "[\t\n\f\r ]*"
_is_rgbcolor = _full(f"rgb\\({_SP}{_BYTE}{_SP},{_SP}{_BYTE}{_SP},{_SP}{_BYTE}{_SP}\\)\\Z")
_is_base64 = _full(
    "(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})\\Z"
)
_SSN = re.compile("[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}\\Z")
_SHORT_NAME = re.compile("[a-z0-9](?:[-a-z0-9]*[a-z0-9])?\\Z")
_LONG_NAME = re.compile("[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*\\Z")
_is_bson = _full("[0-9a-fA-F]{24}\\Z")

_re2_options = re2.Options()
_re2_options.log_errors = False
_HOSTNAME = re2.compile(
    r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}]"
    r"(([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
    _re2_options,
)


def _is_credit_card(s: str) -> bool:
    digits = _NOT_DIGITS.sub("", s)
    if _CREDIT_CARD.match(digits) is None:
        return False
    total = 0
    double = False
    for ch in reversed(digits):
        d = ord(ch) - 48
        if double:
            d *= 2
            total += d % 10 + 1 if d >= 10 else d
        else:
            total += d
        double = not double
    return total % 10 == 0


def _is_isbn10(s: str) -> bool:
    s = _SPACES_AND_MINUS.sub("", s)
    if _ISBN10.match(s) is None:
        return False
    checksum = sum((i + 1) * (ord(s[i]) - 48) for i in range(9))
    checksum += 100 if s[9] == "X" else 10 * (ord(s[9]) - 48)
    return checksum % 11 == 0


def _is_isbn13(s: str) -> bool:
    s = _SPACES_AND_MINUS.sub("", s)
    if _ISBN13.match(s) is None:
        return False
    checksum = sum((1, 3)[i % 2] * (ord(s[i]) - 48) for i in range(12))
    return (ord(s[12]) - 48) - ((10 - checksum % 10) % 10) == 0


def _is_ssn(s: str) -> bool:
    return len(s.encode()) == 11 and _SSN.match(s) is not None


def _is_short_name(s: str) -> bool:
    return len(s.encode()) <= 63 and _SHORT_NAME.match(s) is not None


def _is_long_name(s: str) -> bool:
    return len(s.encode()) <= 253 and _LONG_NAME.match(s) is not None


_DAYS: Final = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_DATE = re.compile("([0-9]{4})-([0-9]{2})-([0-9]{2})\\Z")


def _is_date(s: str) -> bool:
    m = _DATE.match(s)
    if m is None:
        return False
    year, month, day = int(m[1]), int(m[2]), int(m[3])
    if not 1 <= month <= 12:
        return False
    days = _DAYS[month - 1]
    if month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0):
        days = 29
    return 1 <= day <= days


_TIME = re.compile("([0-9]{2}):([0-9]{2}):([0-9]{2})(?:.[0-9]+)?(?:z|[+-][0-9]{2}:[0-9]{2})\\Z")


def _is_date_time(s: str) -> bool:
    if len(s.encode()) < 4:
        return False
    parts = s.lower().split("t")
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    m = _TIME.match(parts[1])
    return m is not None and m[1] <= "23" and m[2] <= "59" and m[3] <= "59"


# Go's time.ParseDuration grammar: [-+]?("0" | (number unit)+), units ns us µs μs ms s m h.
_GO_DURATION = re.compile(
    "[-+]?(?:0|(?:(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:ns|us|\u00b5s|\u03bcs|ms|s|m|h))+)\\Z"
)
_DIGIT_RUN = re.compile("[0-9]+")
_UNIT_AFTER_DIGITS = re.compile("[\t\n\f\r ]*([A-Za-z\u00b5]+)")
_UNIT_WORDS: Final = (
    ("ns", "nano"),
    ("us", "\u00b5s", "micro"),
    ("ms", "milli"),
    ("s", "sec"),
    ("m", "min"),
    ("h", "hr", "hour"),
    ("d", "day"),
    ("w", "wk", "week"),
)
_MAX_INT64: Final = (1 << 63) - 1


def _fits_int64(digits: str) -> bool:
    digits = digits.lstrip("0")
    return len(digits) <= 19 and int(digits or "0") <= _MAX_INT64


def _lenient_units(s: str) -> list[tuple[str, str]]:
    """``((\\d+)\\s*([A-Za-zµ]+))`` found all over ``s``, in linear time: a match can only start
    where a run of digits starts (a later start in the same run sees the same suffix)."""
    found = []
    for run in _DIGIT_RUN.finditer(s):
        unit = _UNIT_AFTER_DIGITS.match(s, run.end())
        if unit is not None:
            found.append((run[0], unit[1]))
    return found


_DURATION_PART = re.compile("([0-9]*)(?:\\.([0-9]*))?([^0-9.]+)")
_UNIT_NS: Final = {
    "ns": 1,
    "us": 1000,
    "\u00b5s": 1000,
    "\u03bcs": 1000,
    "ms": 10**6,
    "s": 10**9,
    "m": 60 * 10**9,
    "h": 3600 * 10**9,
}


def _go_parse_duration_ok(s: str) -> bool:
    """``time.ParseDuration`` succeeds: the grammar, and the total fits an int64 of ns."""
    if _GO_DURATION.match(s) is None:
        return False
    negative = s.startswith("-")
    body = s.lstrip("+-")
    if body == "0":
        return True
    total = 0
    for m in _DURATION_PART.finditer(body):
        unit = _UNIT_NS[m[3]]
        whole, frac = m[1] or "0", m[2] or ""
        if len(whole.lstrip("0")) > 19:
            return False
        total += int(whole) * unit
        if frac:
            # Go keeps the fraction's value in ns, truncated; digits past what an int64 holds
            # are dropped, which cannot change the integer result here.
            frac = frac[:30]
            total += int(frac) * unit // 10 ** len(frac)
        if total > 1 << 63:
            return False
    return total < 1 << 63 or negative


def _is_duration(s: str) -> bool:
    if _go_parse_duration_ok(s):
        return True
    found = False
    for number, unit_text in _lenient_units(s):
        if not _fits_int64(number):
            return False  # strconv.Atoi fails: the whole string is rejected
        if found:
            continue
        unit = unit_text.strip().lower()
        for variants in _UNIT_WORDS:
            last = len(variants) - 1
            for i, variant in enumerate(variants):
                if (i == last and unit.startswith(variant)) or variant.lower() == unit:
                    found = True
    return found


_SLOPPY_V4 = re.compile("([0-9]+)\\.([0-9]+)\\.([0-9]+)\\.([0-9]+)\\Z")


def _octet(digits: str) -> bool:
    digits = digits.lstrip("0")
    return len(digits) <= 3 and int(digits or "0") <= 255


def _sloppy_v4(s: str) -> bool:
    m = _SLOPPY_V4.match(s)
    return m is not None and all(_octet(part) for part in m.groups())


def _strict_v6(s: str) -> bool:
    if "%" in s or ":" not in s:
        return False
    try:
        ipaddress.IPv6Address(s)
    except ValueError:
        return False
    return True


def _sloppy_v6(s: str) -> bool:
    # The pre-1.17 parser also takes leading zeros in an embedded IPv4 tail.
    head, sep, tail = s.rpartition(":")
    if sep and "." in tail:
        m = _SLOPPY_V4.match(tail)
        if m is None or not all(_octet(p) for p in m.groups()):
            return False
        s = head + ":" + ".".join(str(int(p)) for p in m.groups())
    return _strict_v6(s)


def _first_of(s: str, chars: str) -> str:
    for ch in s:
        if ch in chars:
            return ch
    return ""


def _is_ipv4(s: str) -> bool:
    first = _first_of(s, ".:")
    if first == ".":
        ok = _sloppy_v4(s)
    elif first == ":":
        ok = _sloppy_v6(s)
    else:
        ok = False
    return ok and "." in s


def _is_ipv6(s: str) -> bool:
    return _strict_v6(s)


def _is_cidr(s: str) -> bool:
    addr, sep, mask = s.partition("/")
    if not sep or not mask.isascii() or not mask.isdigit():
        return False
    if _sloppy_v4(addr):
        bits = 32
    elif _sloppy_v6(addr):
        bits = 128
    else:
        return False
    mask = mask.lstrip("0")
    return len(mask) <= 3 and int(mask or "0") <= bits


_MAC_COLON = re.compile("[0-9a-fA-F]{2}(?:([:-])[0-9a-fA-F]{2})+\\Z")
_MAC_DOT = re.compile("[0-9a-fA-F]{4}(?:\\.[0-9a-fA-F]{4})+\\Z")


def _is_mac(s: str) -> bool:
    if len(s) not in (14, 17, 19, 23, 24, 59):
        return False  # 6, 8 or 20 octets, written xx:xx:... or xxxx.xxxx...
    if s[2] in ":-":
        if _MAC_COLON.match(s) is None or len(set(s[2::3])) != 1:
            return False
        return (len(s) + 1) // 3 in (6, 8, 20)
    if s[4] == ".":
        return _MAC_DOT.match(s) is not None and 2 * (len(s) + 1) // 5 in (6, 8, 20)
    return False


# The same pattern for ASCII input, on Python's faster engine: the ASCII letters are \p{L} and
# the ASCII symbols (\p{S}) are $+<=>^`|~.
_A = "a-zA-Z0-9$+<=>^`|~"
_HOSTNAME_ASCII = re.compile(
    f"(?:[{_A}](?:(?:-?[{_A}]{{0,62}})?)|(?:[{_A}](?:(?:[{_A}-]{{0,61}}[{_A}])?)(?:\\.)){{1,}}"
    "(?:[a-zA-Z]){2,63})\\Z"
)


def _is_hostname(s: str) -> bool:
    # Lengths first (kube-openapi checks them after the pattern; the result is the same), so
    # the pattern never runs on a long value.
    raw = s.encode()
    if len(raw) > 255 or any(len(label) > 63 for label in raw.split(b".")):
        return False
    if s.isascii():
        return _HOSTNAME_ASCII.match(s) is not None
    return _HOSTNAME.search(s) is not None


# --- uri: url.ParseRequestURI ---------------------------------------------------------------

_SCHEME = re.compile("[A-Za-z][A-Za-z0-9+.-]*\\Z")
_PORT = re.compile(":[0-9]*\\Z")
_HOST_CHARS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~!$&'()*+,;=:[]<>\"%"
)
_USERINFO_CHARS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._:~!$&'()*+,;=%@"
)
_BAD_ESCAPE = re.compile("%(?![0-9a-fA-F]{2})")


_CTL = re.compile("[\x00-\x1f\x7f]")
_FIRST_SPECIAL = re.compile("[/?#]")


def _valid_host(host: str) -> bool:
    if host.startswith("["):
        end = host.rfind("]")
        if end < 0:
            return False
        if not _PORT.match(host[end + 1 :]) and host[end + 1 :]:
            return False
        return _BAD_ESCAPE.search(host[: end + 1]) is None
    colon = host.rfind(":")
    if colon >= 0 and _PORT.match(host[colon:]) is None:
        return False
    if _BAD_ESCAPE.search(host) is not None:
        return False
    return all(ch in _HOST_CHARS or ord(ch) >= 0x80 for ch in host)


def _is_uri(s: str) -> bool:
    if not s or _CTL.search(s) is not None:
        return False
    if s == "*":
        return True
    rest = s
    colon = s.find(":")
    if colon == 0:
        return False
    special = _FIRST_SPECIAL.search(s)
    has_scheme = colon > 0 and (special is None or colon < special.start())
    if has_scheme and s[0].isascii() and s[0].isalpha():
        if _SCHEME.match(s[:colon]) is None:
            return False
        rest = s[colon + 1 :]
    elif has_scheme and s[0] not in "0123456789+-.":
        return False
    else:
        has_scheme = False
    rest = rest.split("?", 1)[0]
    if not rest.startswith("/"):
        return has_scheme  # an opaque URI ("mailto:x") needs a scheme
    if has_scheme and rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        rest = slash + path
        userinfo, at, host = authority.rpartition("@")
        if at and not all(ch in _USERINFO_CHARS for ch in userinfo):
            return False
        if not _valid_host(host):
            return False
    return _BAD_ESCAPE.search(rest) is None


# --- email: net/mail.ParseAddress ------------------------------------------------------------

_ATEXT = "A-Za-z0-9!#$%&'*+\\-/=?^_`{|}~\u0080-\U0010ffff"
_DOT_ATOM = f"[{_ATEXT}]+(?:\\.[{_ATEXT}]+)*"
_QUOTED = '"(?:[^"\\\\\r\n]|\\\\.)*"'
_ADDR_SPEC = f"(?:{_DOT_ATOM}|{_QUOTED})@(?:{_DOT_ATOM}|\\[[^\\[\\]\\\\]*\\])"
_ADDRESS = re.compile(f"{_ADDR_SPEC}\\Z")
_WORD = re.compile(f"[ \t]*(?:[{_ATEXT}.]+|{_QUOTED})")


def _is_phrase(s: str) -> bool:
    """A display name: words (atoms, dots allowed, or quoted strings) separated by blanks."""
    pos = 0
    while pos < len(s):
        word = _WORD.match(s, pos)
        if word is None or word.end() == pos:
            return s[pos:].strip(" \t") == ""
        pos = word.end()
    return True


def _is_email(s: str) -> bool:
    s = s.strip(" \t")
    if s.endswith(">") and "<" in s:
        lt = s.rfind("<")
        return _is_phrase(s[:lt]) and _ADDRESS.match(s, lt + 1, len(s) - 1) is not None
    return _ADDRESS.match(s) is not None


FORMAT_CHECKS: Final[dict[str, FormatCheck]] = {
    "bsonobjectid": _is_bson,
    "uri": _is_uri,
    "email": _is_email,
    "hostname": _is_hostname,
    "ipv4": _is_ipv4,
    "ipv6": _is_ipv6,
    "cidr": _is_cidr,
    "mac": _is_mac,
    "uuid": _is_uuid,
    "uuid3": _is_uuid3,
    "uuid4": _is_uuid4,
    "uuid5": _is_uuid5,
    "isbn": lambda s: _is_isbn10(s) or _is_isbn13(s),
    "isbn10": _is_isbn10,
    "isbn13": _is_isbn13,
    "creditcard": _is_credit_card,
    "ssn": _is_ssn,
    "hexcolor": _is_hexcolor,
    "rgbcolor": _is_rgbcolor,
    "byte": _is_base64,
    "password": lambda s: True,
    "date": _is_date,
    "duration": _is_duration,
    "datetime": _is_date_time,
    "k8sshortname": _is_short_name,
    "k8slongname": _is_long_name,
}
