// The portable SQL edition (portable/: xid12 a domain over text): registerTypes and Postgres.js's
// lookupTypes find it and say 'portable', xid12 columns come back as strings (text on the wire),
// an Xid binds for WHERE id = $1 and for keyset pages (id > $1: every row once), binary results
// are text; the writer Registry gets grants of both kinds from the plain script's registry (found
// by the edition lookup, not pg_extension); and a native database says 'native'. The portable
// database is made here: the plain script sent through the driver as a role that owns the
// database and nothing else (its psql variable, schema, substituted), and the writer grants of
// portable/README.md (the registry's included: the writer admitted to pool app).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import postgres from 'postgres';
import { ExtensionMissingError, Registry, RegistryError, Xid, snowflakeParts } from '../../dist/index.js';
import { registerTypes } from '../../dist/pg.js';
import { idgenTypes, lookupTypes } from '../../dist/postgres.js';
import { config, freshDatabase, skip } from './helpers.mjs';

const DB = 'node_portable';
const OWNER = 'node_portable_owner';
const WRITER = 'node_portable_writer';
const ROWS = 40;
const PAGE = 7;
const DIST = new URL('../../../../portable/dist/', import.meta.url);

/**
 * Installs the plain script as the README says, with psql (-v schema=...), as the owner: the
 * script is a psql script (\if, \gset), not SQL a driver can send. psql from PG_IDGEN_BINDIR
 * when set, else the first on PATH (scripts/test.sh puts the server's bin directory first).
 */
function installPortable(schema) {
  const name = readdirSync(DIST).filter((f) => /^pg_idgen_portable--\d+\.\d+\.\d+\.sql$/.test(f)).sort().pop();
  assert.ok(name, 'no portable install script in portable/dist');
  const psql = process.env.PG_IDGEN_BINDIR ? `${process.env.PG_IDGEN_BINDIR}/psql` : 'psql';
  const { host, port } = config(DB);
  execFileSync(psql, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-v', `schema=${schema}`, '-h', host, '-p', String(port),
    '-U', OWNER, '-d', DB, '-f', fileURLToPath(new URL(name, DIST))], { stdio: ['ignore', 'ignore', 'pipe'] });
}

async function withClient(cfg, fn) {
  const c = new pg.Client(cfg);
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

async function makePortable() {
  await withClient(config('postgres'), async (admin) => {
    await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
    for (const r of [WRITER, OWNER]) await admin.query(`DROP ROLE IF EXISTS ${r}`);
    await admin.query(`CREATE ROLE ${OWNER} LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB`);
    await admin.query(`CREATE ROLE ${WRITER} LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB`);
    await admin.query(`CREATE DATABASE ${DB} OWNER ${OWNER}`);
  });
  installPortable('idgen');
  await withClient({ ...config(DB), user: OWNER }, async (owner) => {
    await owner.query(`
      GRANT USAGE ON SCHEMA idgen TO ${WRITER};
      GRANT SELECT ON idgen.idgen_config TO ${WRITER};
      GRANT EXECUTE ON FUNCTION idgen.gen_xid12(), idgen.gen_xid12(timestamptz),
                                idgen.gen_snowflake(), idgen.rapkey_next(text) TO ${WRITER};
      CREATE TABLE public.items (id idgen.xid12 PRIMARY KEY DEFAULT idgen.gen_xid12(), n int NOT NULL);
      GRANT SELECT, INSERT, DELETE ON public.items TO ${WRITER};
      UPDATE idgen.idgen_config SET worker_id = ${SERVER_WORKER};
      SELECT idgen.idgen_pool_allow('app', '${WRITER}', 8)`);
    const { rows } = await owner.query('SELECT idgen.idgen_portable_version() AS v');
    assert.match(rows[0].v, /^\d+\.\d+\.\d+$/);
  });
}

const FLOOR = Xid.parse('00000000000000000000');
/** The server's own Snowflake worker id (idgen_config): reserved by the registry, never granted. */
const SERVER_WORKER = 5;

/** A pg.Pool of the writer role with an empty search_path: the Registry names every object. */
function writerPool() {
  return new pg.Pool({ ...config(DB), user: WRITER, max: 2, options: '-c search_path=' });
}

const MALLORY = 'node_portable_mallory';

/** A look-alike portable edition in `schema`: a domain xid12 over text and the version function. */
function plant(schema) {
  return `CREATE SCHEMA ${schema};
    CREATE DOMAIN ${schema}.xid12 AS text CHECK (VALUE IS NULL);
    CREATE FUNCTION ${schema}.idgen_portable_version() RETURNS text LANGUAGE sql AS $$SELECT '9'$$`;
}

describe('the portable edition', { skip }, () => {
  before(makePortable);

  test('node-postgres: registerTypes says portable; Xid parameters; keyset pages; binary results', async () => {
    await withClient({ ...config(DB), user: WRITER }, async (c) => {
      const info = await registerTypes(c);
      assert.equal(info.edition, 'portable');
      assert.equal(info.schema, 'idgen');
      await c.query('DELETE FROM public.items');
      await c.query(`INSERT INTO public.items (n) SELECT g FROM generate_series(1, ${ROWS}) g`);
      const ids = (await c.query('SELECT id FROM public.items ORDER BY id')).rows.map((r) => r.id);
      // Text on the wire: strings, which Xid.parse reads.
      assert.ok(ids.every((id) => typeof id === 'string' && id.length === 20));
      const xids = ids.map((id) => Xid.parse(id));
      assert.deepEqual(xids.map(String), ids);
      for (const binary of [false, true]) {
        const { rows } = await c.query({ text: 'SELECT id, n FROM public.items WHERE id = $1', values: [xids[3]], binary });
        assert.equal(rows[0].id, ids[3], `binary: ${binary}`);
        const seen = [];
        for (let last = FLOOR; ;) {
          const page = (await c.query({ text: `SELECT id FROM public.items WHERE id > $1 ORDER BY id LIMIT ${PAGE}`, values: [last], binary })).rows;
          if (page.length === 0) break;
          seen.push(...page.map((r) => r.id));
          last = Xid.parse(page[page.length - 1].id);
        }
        assert.deepEqual(seen, ids, `binary: ${binary}`);
      }
      // xid12[] results (the domain's array type) parse to arrays of Xid; = ANY of an Xid array.
      const { rows: [arr] } = await c.query('SELECT ARRAY(SELECT id FROM public.items ORDER BY id) AS a');
      assert.deepEqual(arr.a.map(String), ids);
      assert.ok(arr.a[0] instanceof Xid);
      const { rows: [cnt] } = await c.query('SELECT count(*)::int AS n FROM public.items WHERE id = ANY($1)', [xids.slice(0, 5)]);
      assert.equal(cnt.n, 5);
      const made = Xid.parse('9m4e2mr0ui3e8a215n4g');
      await c.query('INSERT INTO public.items (id, n) VALUES ($1, 0)', [made]);
      assert.equal((await c.query('SELECT n FROM public.items WHERE id = $1', [made])).rows[0].n, 0);
    });
  });

  test("node-postgres: xid12As 'string' and a Pool's onConnect", async () => {
    const pool = new pg.Pool({ ...config(DB), user: WRITER, max: 1, onConnect: (c) => registerTypes(c, { xid12As: 'string' }) });
    try {
      const { rows: [r] } = await pool.query('SELECT ARRAY(SELECT id FROM public.items ORDER BY id LIMIT 2) AS a');
      assert.ok(r.a.length === 2 && r.a.every((s) => typeof s === 'string'));
    } finally {
      await pool.end();
    }
  });

  test('Postgres.js: lookupTypes says portable; idgenTypes; Xid parameters and keyset pages', async () => {
    const opts = { ...config(DB), username: WRITER, onnotice: () => undefined };
    const sql = postgres({ ...opts, types: await idgenTypes(opts) });
    try {
      assert.equal((await lookupTypes(sql)).edition, 'portable');
      const ids = (await sql`SELECT id FROM public.items ORDER BY id`).map((r) => r.id);
      assert.ok(ids.length > ROWS && ids.every((id) => typeof id === 'string'));
      const x = Xid.parse(ids[4]);
      assert.equal((await sql`SELECT id FROM public.items WHERE id = ${x}`)[0].id, ids[4]);
      const seen = [];
      for (let last = FLOOR; ;) {
        const page = await sql`SELECT id FROM public.items WHERE id > ${last} ORDER BY id LIMIT ${PAGE}`;
        if (page.length === 0) break;
        seen.push(...page.map((r) => r.id));
        last = Xid.parse(page[page.length - 1].id);
      }
      assert.deepEqual(seen, ids);
      const made = Xid.parse('9m4e2mr0ui3e8a215n50');
      await sql`INSERT INTO public.items (id, n) VALUES (${made}, -1)`;
      assert.equal((await sql`SELECT n FROM public.items WHERE id = ${made}`)[0].n, -1);
    } finally {
      await sql.end();
    }
  });

  test('Registry: a grant of each kind from the plain script\'s registry, ids it covers, released', async () => {
    const pool = writerPool();
    const reg = new Registry(pool, { writer: 'node-portable' });
    let sg, xg;
    const snowIds = [];
    const xidIds = [];
    try {
      const snow = await reg.snowflake();
      const xid = await reg.xid12({ lease: '10 minutes' });
      for (let i = 0; i < 500; i++) {
        snowIds.push(i % 2 ? await snow.nextId() : snow.nextIdSync());
        xidIds.push(i % 2 ? await xid.new() : xid.newSync());
      }
      [sg, xg] = [snow.grant, xid.grant];
    } finally {
      await reg.close();
      await pool.end();
    }
    assert.notEqual(sg.slot, SERVER_WORKER, 'the server\'s own worker id is reserved');
    for (let i = 1; i < snowIds.length; i++) assert.ok(snowIds[i] > snowIds[i - 1], 'Snowflake ids increase');
    for (let i = 1; i < xidIds.length; i++) assert.ok(xidIds[i].compare(xidIds[i - 1]) > 0, 'xid12 ids increase');
    assert.ok(snowIds.every((id) => snowflakeParts(id).worker === sg.slot));
    await withClient({ ...config(DB), user: OWNER, options: '-c search_path=' }, async (c) => {
      // Every id is covered by this writer's grant (the registry's own word, as the owner).
      const w1 = await c.query(
        `SELECT pg_catalog.array_agg(g.writer ORDER BY u.o) AS w FROM pg_catalog.unnest($1::pg_catalog.int8[]) WITH ORDINALITY u(x, o)
           LEFT JOIN LATERAL idgen.idgen_writer_of(u.x) g ON true`,
        [snowIds.map(String)]);
      assert.deepEqual(w1.rows[0].w, snowIds.map(() => 'node-portable'));
      const w2 = await c.query(
        `SELECT pg_catalog.array_agg(g.writer ORDER BY u.o) AS w FROM pg_catalog.unnest($1::pg_catalog.text[]) WITH ORDINALITY u(x, o)
           LEFT JOIN LATERAL idgen.idgen_writer_of(u.x::idgen.xid12) g ON true`,
        [xidIds.map(String)]);
      assert.deepEqual(w2.rows[0].w, xidIds.map(() => 'node-portable'));
      // The grants are the writer role's, in pool app, and close() released both.
      const { rows } = await c.query(
        'SELECT kind, slot, db_role::pg_catalog.text AS db_role, pool, released_at IS NOT NULL AS released FROM idgen.idgen_grants WHERE grant_id = ANY($1::pg_catalog.int8[]) ORDER BY kind',
        [[sg.grantId, xg.grantId]]);
      assert.deepEqual(rows, [
        { kind: 'snowflake', slot: sg.slot, db_role: WRITER, pool: 'app', released: true },
        { kind: 'xid12', slot: xg.slot, db_role: WRITER, pool: 'app', released: true },
      ]);
    });
  });

  // A role that is not the database owner plants a look-alike (domain xid12 + the version
  // function) in a schema sorting first, visible to it and the real one not: never the edition.
  test('a look-alike planted by a role that is not the owner is ignored; two owner-made are an error', async () => {
    await withClient(config('postgres'), async (admin) => {
      await admin.query(`DROP ROLE IF EXISTS ${MALLORY}`);
      await admin.query(`CREATE ROLE ${MALLORY} LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB`);
      await admin.query(`GRANT CREATE ON DATABASE ${DB} TO ${MALLORY}`);
    });
    try {
      await withClient({ ...config(DB), user: MALLORY }, async (c) => {
        await c.query(plant('aaa'));
        await c.query('SET search_path = aaa');
        const info = await registerTypes(c);
        assert.equal(info.schema, 'idgen');
      });
      await withClient({ ...config(DB), user: WRITER }, async (c) => {
        assert.equal((await registerTypes(c)).schema, 'idgen');
      });
      const sql = postgres({ ...config(DB), username: WRITER, onnotice: () => undefined });
      try {
        assert.equal((await lookupTypes(sql)).schema, 'idgen');
      } finally {
        await sql.end();
      }
      // The Registry too: its grant comes from idgen (aaa has no idgen_acquire to call).
      const pool = writerPool();
      const reg = new Registry(pool, { writer: 'node-portable-planted' });
      try {
        const g = await reg.snowflake();
        assert.equal(snowflakeParts(await g.nextId()).worker, g.grant.slot);
      } finally {
        await reg.close();
        await pool.end();
      }
    } finally {
      await withClient(config(DB), (admin) => admin.query(`DROP OWNED BY ${MALLORY} CASCADE`));
    }
    // Two candidates made by the owner: an error naming both schemas, not a pick by name.
    await withClient({ ...config(DB), user: OWNER }, (c) => c.query(plant('aaa')));
    try {
      await withClient({ ...config(DB), user: WRITER }, async (c) => {
        await assert.rejects(registerTypes(c), /more than one portable edition, in schemas aaa, idgen/);
      });
      const pool = writerPool();
      const reg = new Registry(pool, { writer: 'node-portable-two' });
      try {
        await assert.rejects(reg.snowflake(),
          (e) => e instanceof RegistryError && /more than one portable edition, in schemas aaa, idgen/.test(e.message));
      } finally {
        await reg.close();
        await pool.end();
      }
    } finally {
      await withClient({ ...config(DB), user: OWNER }, (c) => c.query('DROP SCHEMA aaa CASCADE'));
    }
    // The look-alike alone: no edition.
    await freshDatabase('node_planted_only', { extension: false });
    await withClient(config('postgres'), (admin) => admin.query(`GRANT CREATE ON DATABASE node_planted_only TO ${MALLORY}`));
    try {
      await withClient({ ...config('node_planted_only'), user: MALLORY }, async (c) => {
        await c.query(plant('aaa'));
        await c.query('SET search_path = aaa');
        await assert.rejects(registerTypes(c), (e) => e instanceof ExtensionMissingError);
      });
    } finally {
      await withClient(config('node_planted_only'), (admin) => admin.query(`DROP OWNED BY ${MALLORY} CASCADE`));
      await withClient(config('postgres'), (admin) => admin.query(`DROP ROLE IF EXISTS ${MALLORY}`));
    }
  });
});

describe('the native edition', { skip }, () => {
  before(() => freshDatabase('node_native_edition'));

  test('registerTypes and lookupTypes say native', async () => {
    await withClient(config('node_native_edition'), async (c) => {
      const info = await registerTypes(c);
      assert.equal(info.edition, 'native');
      const { rows: [r] } = await c.query('SELECT gen_xid12() AS id');
      assert.ok(r.id instanceof Xid);
      await assert.rejects(c.query({ text: 'SELECT gen_xid12() AS id, $1::int AS n', values: [1], binary: true }), /binary result format/);
    });
    const sql = postgres({ ...config('node_native_edition'), username: 'postgres', onnotice: () => undefined });
    try {
      assert.equal((await lookupTypes(sql)).edition, 'native');
    } finally {
      await sql.end();
    }
  });

  test('neither edition: ExtensionMissingError', async () => {
    await freshDatabase('node_no_edition', { extension: false });
    await withClient(config('node_no_edition'), async (c) => {
      await assert.rejects(registerTypes(c), (e) => e instanceof ExtensionMissingError && /portable xid12 domain/.test(e.message));
    });
  });
});
