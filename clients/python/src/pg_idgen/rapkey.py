"""RAP semantic keys such as ``ord.cn.sh.202407.8842-2``, with the server's rules (docs/formats.md §3-4).

A key is ``type . seg [. seg]{0,4} - c``: a type of 2-8 letters ``[a-z]``, 1 to 5 segments of
1-32 characters ``[a-z0-9]``, at most 128 characters in all, then ``-`` and one Damm check
character over the body. The lowercase form is the only valid form; :func:`build`,
:func:`normalize` and :func:`prefix_range` trim and lowercase their input, the others do not.

Damm's algorithm over the quasigroup ``x ∘ y = 2·(x − y) mod 37`` on the body symbols ``0-9``
(0-9), ``a-z`` (10-35) and ``.`` (36); check characters ``0-9a-z~``.
"""
from __future__ import annotations

from typing import List, Tuple

from ._xid import _WHITESPACE, _invalid_input, _quoted, _shown_char

__all__ = [
    "RapkeyError",
    "is_valid",
    "validate",
    "check_char",
    "build",
    "normalize",
    "parse",
    "prefix_range",
]

MAX_KEY_LEN = 128
MAX_BODY_LEN = MAX_KEY_LEN - 2
MAX_SEGMENTS = 5
MIN_TYPE_LEN = 2
MAX_TYPE_LEN = 8
MAX_SEGMENT_LEN = 32
CHECK_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz~"

_VALUE = {c: i for i, c in enumerate("0123456789abcdefghijklmnopqrstuvwxyz")}
_VALUE["."] = 36
_CHECK_VALUE = {c: i for i, c in enumerate(CHECK_ALPHABET)}
_LOWER = set("abcdefghijklmnopqrstuvwxyz")
_LOWER_DIGIT = _LOWER | set("0123456789")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
class RapkeyError(ValueError):
    """A key, body, part or prefix that the server would reject. ``str(error)`` is the
    server's message, ``": "`` and its DETAIL (``message`` and ``detail``, the texts of
    tests/vectors/rapkey.json). ``checksum`` is True when only the check character is wrong
    (``expected`` is set)."""

    def __init__(self, message: str, detail: str, *, checksum: bool = False, expected: str = ""):
        super().__init__(f"{message}: {detail}")
        self.message = message
        self.detail = detail
        self.checksum = checksum
        self.expected = expected


class _Why(Exception):
    """Why the grammar or the check refused (the DETAIL); the public function adds what was
    given (the message)."""

    def __init__(self, detail: str, *, checksum: bool = False, expected: str = ""):
        super().__init__(detail)
        self.detail = detail
        self.checksum = checksum
        self.expected = expected


def _refused(message: str, why: _Why) -> RapkeyError:
    return RapkeyError(message, why.detail, checksum=why.checksum, expected=why.expected)


def _lower(s: str) -> str:
    return s.translate(_ASCII_LOWER)


def _trim(s: str) -> str:
    return s.strip(_WHITESPACE)


def _interim(body: str) -> int:
    i = 0
    for c in body:
        i = (2 * (i - _VALUE[c])) % 37
    return i


def _check_type(lower: str, orig: str) -> None:
    for n, c in enumerate(lower):
        if c not in _LOWER:
            raise _Why(
                f"Type {_quoted(orig)} has a character outside [a-z]: {_shown_char(orig[n])} "
                f"at position {n + 1}."
            )
    n = len(lower)
    if n == 0:
        raise _Why("Type is empty.")
    if not MIN_TYPE_LEN <= n <= MAX_TYPE_LEN:
        raise _Why(
            f"Type {_quoted(orig)} is too {'short' if n < MIN_TYPE_LEN else 'long'}: {n} "
            f"letter{'' if n == 1 else 's'} (a type has {MIN_TYPE_LEN} to {MAX_TYPE_LEN} letters)."
        )


def _check_segment(index: int, lower: str, orig: str) -> None:
    if not lower:
        raise _Why(f"Segment {index} is empty.")
    for n, c in enumerate(lower):
        if c not in _LOWER_DIGIT:
            raise _Why(
                f"Segment {index} {_quoted(orig)} has a character outside [a-z0-9]: "
                f"{_shown_char(orig[n])} at position {n + 1}."
            )
    if len(lower) > MAX_SEGMENT_LEN:
        raise _Why(
            f"Segment {index} {_quoted(orig)} is too long: {len(lower)} characters "
            f"(at most {MAX_SEGMENT_LEN})."
        )


def _check_body(body: str, need_segment: bool) -> None:
    parts = body.split(".")
    _check_type(parts[0], parts[0])
    segments = parts[1:]
    for index, seg in enumerate(segments, 1):
        if index > MAX_SEGMENTS:
            raise _Why(f"Too many segments: {len(segments)} (at most {MAX_SEGMENTS}).")
        _check_segment(index, seg, seg)
    if not segments and need_segment:
        raise _Why(f"Type {_quoted(parts[0])} must be followed by at least one segment.")


def _body_too_long(n: int) -> _Why:
    return _Why(
        f"Body is too long: {n} characters (at most {MAX_BODY_LEN}, leaving room for '-' "
        "and the check character)."
    )


def _body_from_parts(kind: str, segments, need_segment: bool) -> str:
    if not isinstance(kind, str) or not all(isinstance(s, str) for s in segments):
        raise TypeError("a rapkey type and its segments are str")
    kind_orig = _trim(kind)
    kind_lower = _lower(kind_orig)
    _check_type(kind_lower, kind_orig)
    if len(segments) > MAX_SEGMENTS:
        raise _Why(f"Too many segments: {len(segments)} (at most {MAX_SEGMENTS}).")
    if not segments and need_segment:
        raise _Why(f"Type {_quoted(kind_lower)} must be followed by at least one segment.")
    body = [kind_lower]
    for i, seg in enumerate(segments, 1):
        orig = _trim(seg)
        lower = _lower(orig)
        _check_segment(i, lower, orig)
        body.append(lower)
    joined = ".".join(body)
    if len(joined) > MAX_BODY_LEN:
        raise _body_too_long(len(joined))
    return joined


def check_char(body: str) -> str:
    """The check character of ``body`` (``type.seg…``, lowercase, without ``-c``)."""
    if not isinstance(body, str):
        raise TypeError(f"a rapkey body is a str, not {type(body).__name__}")
    try:
        if len(body) > MAX_BODY_LEN:
            raise _body_too_long(len(body))
        _check_body(body, True)
    except _Why as why:
        raise _refused("invalid rapkey body", why) from None
    return CHECK_ALPHABET[_interim(body)]


def parse(key: str) -> Tuple[str, List[str], str]:
    """Validates a canonical key and returns (type, segments, check character)."""
    if not isinstance(key, str):
        raise TypeError(f"a rapkey is a str, not {type(key).__name__}")
    try:
        return _parse(key)
    except _Why as why:
        raise _refused(_invalid_input("rapkey", key), why) from None


def _parse(key: str) -> Tuple[str, List[str], str]:
    if not key:
        raise _Why("Key is empty.")
    if len(key) > MAX_KEY_LEN:
        raise _Why(f"Key is too long: {len(key)} characters (at most {MAX_KEY_LEN}).")
    body, sep, check = key.rpartition("-")
    if not sep:
        raise _Why("Missing '-' before the check character.")
    _check_body(body, True)
    if not check:
        raise _Why("Missing check character after '-'.")
    if len(check) > 1:
        raise _Why(f"Expected one check character after '-', found {_quoted(check)}.")
    value = _CHECK_VALUE.get(check)
    if value is None:
        raise _Why(f"Check character {_shown_char(check)} is not one of [0-9a-z~].")
    interim = _interim(body)
    if (2 * (interim - value)) % 37 != 0:
        expected = CHECK_ALPHABET[interim]
        raise _Why(
            f"Wrong check character: expected '{expected}', found {_shown_char(check)}.",
            checksum=True,
            expected=expected,
        )
    parts = body.split(".")
    return parts[0], parts[1:], check


def validate(key: str) -> None:
    """Raises :class:`RapkeyError` (a ValueError) saying why ``key`` is not a valid key."""
    parse(key)


def is_valid(key) -> bool:
    """True iff the server's ``rapkey_is_valid`` is true for ``key``; never raises."""
    if not isinstance(key, str):
        return False
    try:
        _parse(key)
    except _Why:
        return False
    return True


def build(type: str, *segments: str) -> str:
    """A key from a type and 1 to 5 segments (SQL ``rapkey_build``): each part trimmed and
    lowercased, then checked, and ``-`` plus the check character appended."""
    try:
        body = _body_from_parts(type, segments, True)
    except _Why as why:
        raise _refused("invalid rapkey part", why) from None
    return f"{body}-{CHECK_ALPHABET[_interim(body)]}"


def normalize(text: str) -> str:
    """The canonical form of user input (SQL ``to_rapkey``): trimmed, lowercased, validated."""
    if not isinstance(text, str):
        raise TypeError(f"a rapkey is a str, not {type(text).__name__}")
    key = _lower(_trim(text))
    try:
        _parse(key)
    except _Why as why:
        raise _refused(_invalid_input("rapkey", text), why) from None
    return key


def prefix_range(prefix: str) -> Tuple[str, str]:
    """The half-open range ``[lo, hi)`` of the valid keys under ``prefix`` (a type or
    ``type.seg1[.seg2…]`` of whole parts): compare in the "C" collation, ``lo <= key < hi``
    (SQL ``rapkey_prefix_lo``/``rapkey_prefix_hi``)."""
    if not isinstance(prefix, str):
        raise TypeError(f"a rapkey prefix is a str, not {type(prefix).__name__}")
    p = _lower(_trim(prefix))
    try:
        _check_body(p, False)
        if len(p) > MAX_BODY_LEN:
            raise _body_too_long(len(p))
    except _Why as why:
        raise _refused("invalid rapkey prefix", why) from None
    return p + "-", p + "/"
