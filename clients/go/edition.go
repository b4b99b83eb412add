package idgen

// editionQuery starts with tests/vectors/edition_rule.sql's rule byte for byte (its test checks
// it), then selects this client's columns.
const editionQuery = `WITH c AS (
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
            ELSE 'portable' END AS edition,
       c.oid::pg_catalog.int4 AS oid, c.typarray::pg_catalog.int4 AS typarray, c.nspname AS schema
  FROM c
 ORDER BY c.rank, c.nspname
 LIMIT 1`
