--! portable/frame/plain_piece.sql: how the plain scripts run one source: as one statement string in
--! which the server puts the quoted schema for @extschema@ (psql does not interpolate inside
--! dollar quotes, where function bodies are). build.py puts the source where it says
--! -- @TEXT@; for a native file (sql/*.sql names its objects unqualified, as CREATE EXTENSION
--! runs it) the -- @NATIVE@ lines are kept: the install schema first on the search_path (after
--! pg_catalog, which PostgreSQL searches first when it is not named; pg_temp last), else dropped.

-- ===== @LABEL@ =====
DO $pg_idgen_install$
BEGIN
    PERFORM pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_setting('idgen_portable.install_schema')) || ', pg_temp', true); -- @NATIVE@
    EXECUTE replace($pg_idgen_src$
-- @TEXT@
$pg_idgen_src$, '@extschema@', quote_ident(current_setting('idgen_portable.install_schema')));
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true); -- @NATIVE@
END
$pg_idgen_install$;
