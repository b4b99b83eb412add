package io.github.pgidgen;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.postgresql.PGStatement;

/**
 * Which pg_idgen a database has (tests/vectors/edition_rule.sql: the text below starts with it,
 * byte for byte, then selects its own columns): "native" (the extension) or "portable" (the SQL
 * edition), and the schema it lives in. Every name is qualified: nothing resolves through the
 * caller's search_path.
 */
final class Catalog {
    private Catalog() {}

    static final String EDITION_QUERY = """
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
                        ELSE 'portable' END AS edition,
                   c.nspname AS schema, c.oid::pg_catalog.int4 AS oid
              FROM c
             ORDER BY c.rank, c.nspname
             LIMIT 1""";

    /**
     * {edition, schema} of this connection's database by EDITION_QUERY (sent unnamed, bounded by
     * the query timeout); RegistryException when pg_idgen is not installed.
     */
    static String[] find(Connection c, int timeoutSeconds) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(EDITION_QUERY)) {
            if (ps.isWrapperFor(PGStatement.class)) ps.unwrap(PGStatement.class).setPrepareThreshold(0);
            ps.setQueryTimeout(timeoutSeconds);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) throw new RegistryException(RegistryWords.of("not_installed"));
                return new String[] {rs.getString("edition"), rs.getString("schema")};
            }
        }
    }

    static String quoteIdent(String s) {
        return "\"" + s.replace("\"", "\"\"") + "\"";
    }
}
