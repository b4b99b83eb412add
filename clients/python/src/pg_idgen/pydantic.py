"""Pydantic v2 types for pg_idgen's values (FastAPI and SQLModel use them as they are).

``id: Xid`` in a model needs no import from here: :class:`pg_idgen.Xid` carries Pydantic's
hooks, which import this module (and so pydantic) only when Pydantic builds a model.

- ``Xid``: validated from an ``Xid``, its 20-character text (either case) or its 12 bytes;
  ``model_dump()`` keeps the ``Xid``, JSON (``model_dump_json()``, ``mode="json"``, FastAPI
  responses) writes the lowercase text. JSON schema: a 20-character string with a pattern.
- :data:`RapkeyStr`: a ``str`` that is a valid key, as the ``rapkey`` domain checks it (the
  lowercase form only). :data:`NormalizedRapkeyStr` first trims and lowercases, like SQL
  ``to_rapkey`` (:func:`pg_idgen.rapkey.normalize`), for keys typed by people.
- :data:`SnowflakeId`: an ``int`` 0 .. 2**63-1, from an int or its decimal text. JSON writes
  it as a *string*: JavaScript's numbers are exact only up to 2**53, and every Snowflake id
  made more than 2**31 ms (about 25 days) after its epoch is larger than that, so as a JSON
  number a browser would silently round it to another id. Annotate ``int`` instead if every
  consumer of your JSON reads 64-bit integers.

A value that is not valid fails with the client's own message, the server's wording (e.g.
``invalid input syntax for type xid12: "…": The last character must be 0 or g: …``); error
types ``xid12_parsing``, ``xid12_type``, ``rapkey_parsing``, ``snowflake_parsing`` and
``snowflake_type``.
"""
from __future__ import annotations

from typing import Annotated, Any, Dict

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic_core import PydanticCustomError, core_schema

from . import rapkey as _rapkey
from ._xid import CHARS, Xid, _quoted

__all__ = ["Xid", "RapkeyStr", "NormalizedRapkeyStr", "SnowflakeId"]

_MAX_BIGINT = (1 << 63) - 1
#: What a JSON text of an Xid may be (either case), and what this module writes (lowercase).
XID_PATTERN = "^[0-9a-vA-V]{19}[0gG]$"
XID_CANONICAL_PATTERN = "^[0-9a-v]{19}[0g]$"
#: A rapkey's grammar (docs/formats.md §3); the Damm check character is beyond a pattern.
RAPKEY_PATTERN = r"^[a-z]{2,8}(\.[a-z0-9]{1,32}){1,5}-[0-9a-z~]$"
RAPKEY_MIN_LENGTH = len("ab.c-x")
SNOWFLAKE_PATTERN = "^[0-9]{1,19}$"


def _refuse(kind: str, error: Exception) -> PydanticCustomError:
    # The message is the client's text as it is: a template of one placeholder, so braces or
    # quotes in what the user sent are not read as a template.
    return PydanticCustomError(kind, "{reason}", {"reason": str(error)})


# --- xid12 ---------------------------------------------------------------------------------

def _to_xid(value: Any) -> Xid:
    if value.__class__ is Xid:
        return value
    try:
        return Xid(value)
    except ValueError as e:
        raise _refuse("xid12_parsing", e) from None
    except TypeError as e:
        raise _refuse("xid12_type", e) from None


def _xid_core_schema() -> core_schema.CoreSchema:
    return core_schema.no_info_plain_validator_function(
        _to_xid,
        serialization=core_schema.plain_serializer_function_ser_schema(
            str, when_used="json", return_schema=core_schema.str_schema()
        ),
    )


def _xid_json_schema(mode: str) -> Dict[str, Any]:
    pattern = XID_CANONICAL_PATTERN if mode == "serialization" else XID_PATTERN
    return {"type": "string", "pattern": pattern, "minLength": CHARS, "maxLength": CHARS}


# --- rapkey --------------------------------------------------------------------------------

class _RapkeyCheck:
    """The validation of :data:`RapkeyStr` (``normalize=False``) and
    :data:`NormalizedRapkeyStr`."""

    __slots__ = ("normalize",)

    def __init__(self, normalize: bool):
        self.normalize = normalize

    def __repr__(self) -> str:
        return f"_RapkeyCheck(normalize={self.normalize})"

    def _check(self, value: str) -> str:
        try:
            if self.normalize:
                return _rapkey.normalize(value)
            _rapkey.validate(value)
        except ValueError as e:
            raise _refuse("rapkey_parsing", e) from None
        return str(value)

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler):
        return core_schema.no_info_after_validator_function(
            self._check, core_schema.str_schema(strict=True)
        )

    def __get_pydantic_json_schema__(self, schema, handler: GetJsonSchemaHandler):
        js = handler(schema)
        if self.normalize and handler.mode == "validation":
            return js  # any case, spaces around: only the check says
        js.update(pattern=RAPKEY_PATTERN, minLength=RAPKEY_MIN_LENGTH,
                  maxLength=_rapkey.MAX_KEY_LEN)
        return js


#: A valid rapkey (a ``str``), exactly as the ``rapkey`` domain accepts it.
RapkeyStr = Annotated[str, _RapkeyCheck(normalize=False)]
#: A rapkey from user input: trimmed and lowercased (SQL ``to_rapkey``), then checked.
NormalizedRapkeyStr = Annotated[str, _RapkeyCheck(normalize=True)]


# --- Snowflake -----------------------------------------------------------------------------

def _to_snowflake(value: Any) -> int:
    if isinstance(value, str):
        digits = value[1:] if value[:1] == "-" else value
        if not (digits.isascii() and digits.isdigit()):
            raise PydanticCustomError(
                "snowflake_parsing", "{reason}",
                {"reason": f"invalid input syntax for type bigint: {_quoted(value)}"})
        if len(digits.lstrip("0")) > 19:
            raise PydanticCustomError(
                "snowflake_parsing", "{reason}",
                {"reason": f"value {_quoted(value)} is out of range for type bigint"})
        n = int(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        n = int(value)
    else:
        raise PydanticCustomError(
            "snowflake_type", "{reason}",
            {"reason": "a snowflake id is an int or its decimal text, not "
                       f"{type(value).__name__}"})
    if n < 0:
        raise PydanticCustomError(
            "snowflake_parsing", "{reason}",
            {"reason": f"invalid snowflake id {n}: snowflake ids are never negative"})
    if n > _MAX_BIGINT:
        raise PydanticCustomError(
            "snowflake_parsing", "{reason}",
            {"reason": f"snowflake id {n} does not fit in a bigint"})
    return n


class _SnowflakeCheck:
    __slots__ = ()

    def __repr__(self) -> str:
        return "_SnowflakeCheck()"

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler):
        return core_schema.no_info_plain_validator_function(
            _to_snowflake,
            serialization=core_schema.plain_serializer_function_ser_schema(
                str, when_used="json", return_schema=core_schema.str_schema()
            ),
        )

    def __get_pydantic_json_schema__(self, schema, handler: GetJsonSchemaHandler):
        text = {"type": "string", "pattern": SNOWFLAKE_PATTERN}
        if handler.mode == "serialization":
            return text
        return {"anyOf": [{"type": "integer", "minimum": 0, "maximum": _MAX_BIGINT}, text]}


#: A Snowflake id (an ``int``); written to JSON as its decimal text (see the module's notes).
SnowflakeId = Annotated[int, _SnowflakeCheck()]
