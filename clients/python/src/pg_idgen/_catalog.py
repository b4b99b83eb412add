"""Finding the extension's types by schema, shared by the adapters."""

#: One row per pg_idgen type in the extension's own schema, wherever that is (the
#: extension may live outside search_path): (oid, array oid, schema, visible). Every
#: relation, function and operator is named with its schema: nothing resolves through the
#: caller's search_path, where another role may have put look-alikes.
TYPE_QUERY = """
SELECT t.oid, t.typarray, n.nspname, pg_catalog.pg_type_is_visible(t.oid)
FROM pg_catalog.pg_extension e
JOIN pg_catalog.pg_type t ON t.typnamespace OPERATOR(pg_catalog.=) e.extnamespace
 AND t.typname OPERATOR(pg_catalog.=) %s::pg_catalog.name
JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) t.typnamespace
WHERE e.extname OPERATOR(pg_catalog.=) 'pg_idgen'::pg_catalog.name
"""


class ExtensionMissingError(LookupError):
    """The database has no pg_idgen extension (or no xid12 type in its schema)."""


def missing(database: str) -> ExtensionMissingError:
    return ExtensionMissingError(
        f"the pg_idgen extension is not installed in database {database!r}: no type xid12 "
        "found through pg_extension (run CREATE EXTENSION pg_idgen there first)"
    )


def qualified(schema: str, name: str = "xid12") -> str:
    return '"' + schema.replace('"', '""') + '".' + name
