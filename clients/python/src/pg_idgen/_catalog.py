"""Finding the extension's types by schema, shared by the adapters."""


class ExtensionMissingError(LookupError):
    """The database has no pg_idgen extension (or no xid12 type in its schema)."""


def qualified(schema: str, name: str = "xid12") -> str:
    return '"' + schema.replace('"', '""') + '".' + name


#: The two editions a database can have: the native extension (a base type ``xid12``, 12
#: bytes) or the portable SQL edition (``xid12`` a domain over ``text COLLATE "C"``, plain
#: script or pg_tle extension).
NATIVE = "native"
PORTABLE = "portable"

#: Which edition the database has, and its xid12 type: (edition, oid, array oid, schema,
#: visible, schema oid). The native extension (pg_extension pg_idgen, a base type xid12) or the
#: portable edition: a domain xid12 over text in the schema of the pg_tle extension pg_idgen,
#: or in a schema holding idgen_portable_version() owned by the domain's owner, who must be the
#: database owner (or a member of it) or a superuser: a look-alike planted by another role is
#: not a candidate. The extension first; more than one portable candidate without it is an
#: error naming their schemas (the query fails), never a pick by name. Every relation,
#: function and operator is named with its schema.
EDITION_QUERY = """
WITH c AS (
SELECT s.rank, t.typtype, t.oid, t.typarray, n.nspname, n.oid AS nspoid
  FROM (SELECT e.extnamespace AS nsp, 0 AS rank, NULL::pg_catalog.oid AS owner
          FROM pg_catalog.pg_extension e
         WHERE e.extname OPERATOR(pg_catalog.=) 'pg_idgen'::pg_catalog.name
        UNION ALL
        SELECT p.pronamespace, 1, p.proowner
          FROM pg_catalog.pg_proc p
         WHERE p.proname OPERATOR(pg_catalog.=) 'idgen_portable_version'::pg_catalog.name
           AND p.pronargs OPERATOR(pg_catalog.=) 0) s
  JOIN pg_catalog.pg_type t ON t.typnamespace OPERATOR(pg_catalog.=) s.nsp
   AND t.typname OPERATOR(pg_catalog.=) 'xid12'::pg_catalog.name
   AND (t.typtype OPERATOR(pg_catalog.=) 'b'::pg_catalog.char AND s.rank OPERATOR(pg_catalog.=) 0
        OR t.typtype OPERATOR(pg_catalog.=) 'd'::pg_catalog.char
           AND t.typbasetype OPERATOR(pg_catalog.=) 'pg_catalog.text'::pg_catalog.regtype
           AND (s.owner IS NULL
                OR s.owner OPERATOR(pg_catalog.=) t.typowner
                   AND (EXISTS (SELECT 1 FROM pg_catalog.pg_database d
                                 WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
                                   AND pg_catalog.pg_has_role(t.typowner, d.datdba, 'MEMBER'::pg_catalog.text))
                        OR EXISTS (SELECT 1 FROM pg_catalog.pg_roles r
                                    WHERE r.oid OPERATOR(pg_catalog.=) t.typowner AND r.rolsuper))))
  JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) t.typnamespace)
SELECT CASE WHEN c.typtype OPERATOR(pg_catalog.=) 'b'::pg_catalog.char THEN 'native'
            WHEN c.rank OPERATOR(pg_catalog.=) 1
             AND (SELECT pg_catalog.count(*) FROM c x WHERE x.rank OPERATOR(pg_catalog.=) 1)
                 OPERATOR(pg_catalog.>) 1
            THEN ('pg_idgen: more than one portable edition, in schemas '::pg_catalog.text
                  OPERATOR(pg_catalog.||)
                  (SELECT pg_catalog.string_agg(pg_catalog.quote_ident(x.nspname), ', '
                                                ORDER BY x.nspname)
                     FROM c x WHERE x.rank OPERATOR(pg_catalog.=) 1)
                  OPERATOR(pg_catalog.||)
                  ': drop all but one, or install the extension'::pg_catalog.text
                 )::pg_catalog.int4::pg_catalog.text
            ELSE 'portable' END,
       c.oid, c.typarray, c.nspname, pg_catalog.pg_type_is_visible(c.oid), c.nspoid
  FROM c
 ORDER BY c.rank, c.nspname
 LIMIT 1
"""

#: The rapkey domain in the schema EDITION_QUERY found: (oid, array oid, schema, visible).
RAPKEY_QUERY = """
SELECT t.oid, t.typarray, n.nspname, pg_catalog.pg_type_is_visible(t.oid)
FROM pg_catalog.pg_type t
JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) t.typnamespace
WHERE t.typnamespace OPERATOR(pg_catalog.=) %s::pg_catalog.oid
  AND t.typname OPERATOR(pg_catalog.=) 'rapkey'::pg_catalog.name
"""


def missing_edition(database: str) -> ExtensionMissingError:
    return ExtensionMissingError(
        f"the pg_idgen extension is not installed in database {database!r}: no type xid12 "
        "found through pg_extension, nor a portable xid12 domain beside "
        "idgen_portable_version() (run CREATE EXTENSION pg_idgen there first, or the "
        "portable edition's script)"
    )
