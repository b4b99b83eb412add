//! Which pg_idgen a database has: [`Edition::Native`] (the extension's base type `xid12`, 12
//! bytes) or [`Edition::Portable`] (the SQL edition of `portable/`: `xid12` a domain over
//! `text COLLATE "C"`, installed by its script or as a pg_tle extension).
//!
//! On the portable edition an `xid12` column is text on the wire (the server describes a
//! domain's column by its base type, `text`), so a driver cannot tell it from text by its oid.
//! What works there:
//!
//! - `postgres`: an [`Xid`](crate::Xid) reads from a `text` column (the 20-character text is
//!   parsed) and binds to a parameter the server types as `text` or as the portable domain (its
//!   text), so `WHERE id = $1`, `id > $1` and `INSERT` work unchanged, in binary mode.
//! - `sqlx`: an `Xid` reads from a `text` column; sqlx types a bound `Xid` itself, as the
//!   (native) `xid12`, so bind `xid.to_string()` on the portable edition.

/// The edition of pg_idgen in a database.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Edition {
    /// The native extension: `xid12` is a base type (12 bytes in binary form).
    Native,
    /// The portable SQL edition: `xid12` is a domain over `text`.
    Portable,
}

impl Edition {
    /// `"native"` or `"portable"`, as the other clients say it.
    pub fn as_str(self) -> &'static str {
        match self {
            Edition::Native => "native",
            Edition::Portable => "portable",
        }
    }

    fn from_name(name: &str) -> Edition {
        if name == "portable" {
            Edition::Portable
        } else {
            Edition::Native
        }
    }
}

impl std::fmt::Display for Edition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The catalog query [`detect`] and [`detect_sqlx`] run (and the writer registry, to find its
/// schema): one row, or none. Its columns: `edition`, `'native'` or `'portable'`; `schema`, the
/// schema the edition lives in (unquoted). Native: pg_extension `pg_idgen` with a base type
/// `xid12` in its schema. Portable: a domain `xid12` over `text` in the schema of the pg_tle
/// extension `pg_idgen`, or in a schema holding `idgen_portable_version()` owned by the
/// domain's owner, who must be the database owner (or a member of it) or a superuser: a
/// look-alike planted by another role is not a candidate. The extension first; more than one
/// portable candidate without it fails the query with an error naming their schemas, never a
/// pick by name. Every relation, function and operator is named with its schema: nothing
/// resolves through the caller's `search_path`. The start of this text, up to the edition's
/// `CASE … END`, is the rule all clients share (tests/vectors/edition_rule.sql).
pub const EDITION_QUERY: &str = "
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
       c.nspname::pg_catalog.text AS schema
  FROM c
 ORDER BY c.rank, c.nspname
 LIMIT 1";

/// Which edition the database of `client` has (`None`: neither), through the `postgres` crate.
#[cfg(feature = "postgres")]
pub fn detect<C: postgres::GenericClient>(
    client: &mut C,
) -> Result<Option<Edition>, postgres::Error> {
    Ok(client
        .query_opt(EDITION_QUERY, &[])?
        .map(|row| Edition::from_name(row.get::<_, &str>(0))))
}

/// Which edition the database has (`None`: neither), through sqlx (a pool, a connection or a
/// transaction).
#[cfg(feature = "sqlx")]
pub async fn detect_sqlx<'e, E>(executor: E) -> Result<Option<Edition>, sqlx::Error>
where
    E: sqlx::PgExecutor<'e>,
{
    let name: Option<String> = sqlx::query_scalar(EDITION_QUERY)
        .fetch_optional(executor)
        .await?;
    Ok(name.as_deref().map(Edition::from_name))
}
