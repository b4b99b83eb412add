-- One line per object of the pg_idgen extension, with every property a user or the planner
-- relies on, and no OIDs: two databases with the same objects give the same lines.
WITH member AS (
    SELECT d.classid, d.objid
    FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
    WHERE d.refclassid = 'pg_catalog.pg_extension'::regclass AND d.deptype = 'e'
      AND e.extname = 'pg_idgen'
)
SELECT pg_catalog.pg_describe_object(m.classid, m.objid, 0) || ' | ' || CASE m.classid
    WHEN 'pg_catalog.pg_proc'::regclass THEN (
        SELECT CASE WHEN p.prokind = 'a' THEN
                   format('aggregate(%s) returns %s trans=%s final=%s combine=%s sortop=%s stype=%s init=%s',
                          pg_catalog.pg_get_function_arguments(p.oid), pg_catalog.pg_get_function_result(p.oid),
                          a.aggtransfn, a.aggfinalfn, a.aggcombinefn, a.aggsortop::regoperator,
                          a.aggtranstype::regtype, a.agginitval)
               ELSE pg_catalog.pg_get_functiondef(p.oid) END
               || format(' acl=%s comment=%s', p.proacl, pg_catalog.obj_description(p.oid, 'pg_proc'))
        FROM pg_catalog.pg_proc p LEFT JOIN pg_catalog.pg_aggregate a ON a.aggfnoid = p.oid
        WHERE p.oid = m.objid)
    WHEN 'pg_catalog.pg_type'::regclass THEN (
        SELECT format('type=%s len=%s byval=%s align=%s storage=%s category=%s preferred=%s '
                      'io=%s/%s/%s/%s analyze=%s base=%s collation=%s notnull=%s default=%s array=%s '
                      'acl=%s comment=%s constraints=%s',
                      t.typtype, t.typlen, t.typbyval, t.typalign, t.typstorage, t.typcategory,
                      t.typispreferred, t.typinput, t.typoutput, t.typreceive, t.typsend, t.typanalyze,
                      pg_catalog.format_type(t.typbasetype, t.typtypmod),
                      (SELECT c.collname FROM pg_catalog.pg_collation c WHERE c.oid = t.typcollation),
                      t.typnotnull, t.typdefault, pg_catalog.format_type(t.typarray, NULL), t.typacl,
                      pg_catalog.obj_description(t.oid, 'pg_type'),
                      (SELECT string_agg(c.conname || ' ' || pg_catalog.pg_get_constraintdef(c.oid)
                                         || ' validated=' || c.convalidated, '; ' ORDER BY c.conname)
                       FROM pg_catalog.pg_constraint c WHERE c.contypid = t.oid))
        FROM pg_catalog.pg_type t WHERE t.oid = m.objid)
    WHEN 'pg_catalog.pg_operator'::regclass THEN (
        SELECT format('code=%s commutator=%s negator=%s restrict=%s join=%s merges=%s hashes=%s comment=%s',
                      o.oprcode, nullif(o.oprcom, 0)::regoperator, nullif(o.oprnegate, 0)::regoperator,
                      o.oprrest, o.oprjoin, o.oprcanmerge, o.oprcanhash,
                      pg_catalog.obj_description(o.oid, 'pg_operator'))
        FROM pg_catalog.pg_operator o WHERE o.oid = m.objid)
    WHEN 'pg_catalog.pg_opclass'::regclass THEN (
        SELECT format('type=%s default=%s family=%s storage=%s',
                      c.opcintype::regtype, c.opcdefault, f.opfname, nullif(c.opckeytype, 0)::regtype)
        FROM pg_catalog.pg_opclass c JOIN pg_catalog.pg_opfamily f ON f.oid = c.opcfamily
        WHERE c.oid = m.objid)
    WHEN 'pg_catalog.pg_opfamily'::regclass THEN (
        SELECT format('operators=%s procedures=%s',
                      (SELECT string_agg(format('%s:%s:%s', o.amopstrategy, o.amopopr::regoperator, o.amoppurpose),
                                         ', ' ORDER BY o.amopstrategy, o.amopopr::regoperator::text)
                       FROM pg_catalog.pg_amop o WHERE o.amopfamily = m.objid),
                      (SELECT string_agg(format('%s(%s,%s):%s', p.amprocnum, p.amproclefttype::regtype,
                                                p.amprocrighttype::regtype, p.amproc::regprocedure),
                                         ', ' ORDER BY p.amprocnum, p.amproclefttype::regtype::text)
                       FROM pg_catalog.pg_amproc p WHERE p.amprocfamily = m.objid)))
    WHEN 'pg_catalog.pg_cast'::regclass THEN (
        SELECT format('function=%s context=%s method=%s',
                      nullif(c.castfunc, 0)::regprocedure, c.castcontext, c.castmethod)
        FROM pg_catalog.pg_cast c WHERE c.oid = m.objid)
    WHEN 'pg_catalog.pg_class'::regclass THEN (
        SELECT format('kind=%s persistence=%s acl=%s rls=%s/%s comment=%s columns=%s constraints=%s indexes=%s policies=%s',
                      r.relkind, r.relpersistence,
                      -- no ACL is the owner's default: the same privileges (a REVOKE leaves the default spelled out)
                      coalesce(r.relacl, pg_catalog.acldefault((CASE r.relkind WHEN 'S' THEN 's' ELSE 'r' END)::"char", r.relowner)),
                      r.relrowsecurity, r.relforcerowsecurity,
                      pg_catalog.obj_description(r.oid, 'pg_class'),
                      (SELECT string_agg(format('%s %s notnull=%s collation=%s default=%s', a.attname,
                                                pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull,
                                                (SELECT c.collname FROM pg_catalog.pg_collation c WHERE c.oid = a.attcollation),
                                                pg_catalog.pg_get_expr(d.adbin, d.adrelid)), ', ' ORDER BY a.attnum)
                       FROM pg_catalog.pg_attribute a
                       LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                       WHERE a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped),
                      (SELECT string_agg(c.conname || ' ' || pg_catalog.pg_get_constraintdef(c.oid), '; ' ORDER BY c.conname)
                       FROM pg_catalog.pg_constraint c WHERE c.conrelid = r.oid),
                      (SELECT string_agg(pg_catalog.pg_get_indexdef(i.indexrelid), '; ' ORDER BY 1)
                       FROM pg_catalog.pg_index i WHERE i.indrelid = r.oid),
                      (SELECT string_agg(format('%s cmd=%s permissive=%s roles=%s using=%s check=%s', y.polname,
                                                y.polcmd, y.polpermissive, y.polroles::regrole[],
                                                pg_catalog.pg_get_expr(y.polqual, y.polrelid),
                                                pg_catalog.pg_get_expr(y.polwithcheck, y.polrelid)), '; ' ORDER BY y.polname)
                       FROM pg_catalog.pg_policy y WHERE y.polrelid = r.oid))
        FROM pg_catalog.pg_class r WHERE r.oid = m.objid)
    ELSE 'not compared: add this catalog to tests/client/extension_objects.sql'
END AS line
FROM member m
UNION ALL
-- The configuration tables in name order: their order in extconfig is the order the scripts
-- marked them, which differs between a fresh install and an update.
SELECT format('extension | version=%s relocatable=%s config=%s',
              e.extversion, e.extrelocatable,
              (SELECT pg_catalog.array_agg(format('%s(%s)', c.t::regclass, c.cond) ORDER BY c.t::regclass::text)
               FROM ROWS FROM (pg_catalog.unnest(e.extconfig), pg_catalog.unnest(e.extcondition)) AS c(t, cond)))
FROM pg_catalog.pg_extension e WHERE e.extname = 'pg_idgen'
ORDER BY 1
