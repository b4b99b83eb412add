// The grant row as the Registry reads it (issue 34): the window as the server gives it in
// id-time (lo_t, hi_t), the server's clock as JSON's ISO 8601 text of server_time, no
// arithmetic in SQL; unix µs computed here (xid12 t·10^6, Snowflake (epoch_ms + t)·10^3).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry, RegistryError, registryErrorOf } from '../../dist/index.js';
import { isoToUnixUs } from '../../dist/protocol.js';

const SERVER_US = 1796380512345678; // 2026-12-04T10:35:12.345678Z

test('ISO 8601 timestamps with an offset, as PostgreSQL writes them, to unix µs', () => {
  for (const text of [
    '"2026-12-04T10:35:12.345678+00:00"', '"2026-12-04T07:05:12.345678-03:30"', '"2026-12-04T16:05:12.345678+05:30"',
    '2026-12-04 10:35:12.345678+00', '2026-12-04 11:35:12.345678+01', '2026-12-04T10:35:12.345678Z',
  ]) assert.equal(isoToUnixUs(text), SERVER_US, text);
  assert.equal(isoToUnixUs('"2026-12-04T10:35:12.3456+00:00"'), SERVER_US - 78);
  assert.equal(isoToUnixUs('"2026-12-04T10:35:12+00:00"'), SERVER_US - 345678);
  assert.equal(isoToUnixUs('"1970-01-01T00:00:00.000001+00:00"'), 1);
  assert.equal(isoToUnixUs('"0050-01-01T00:00:00+00:00"'), Date.UTC(2050, 0, 1) * 1000 - 2000 * 365.2425 * 86400e6);
  assert.equal(isoToUnixUs('"1900-01-01T00:00:00+00:19:32"'), (Date.UTC(1900, 0, 1) - 1172000) * 1000);
  for (const other of ['04/12/2026 10:35:12.345678 UTC', 'Fri Dec 04 10:35:12.345678 2026 UTC', '', 'null']) {
    assert.ok(Number.isNaN(isoToUnixUs(other)), other);
  }
});

function fakeDb(rowOf) {
  const db = {
    sent: [],
    async query(text, values) {
      db.sent.push(text);
      if (text.includes('pg_extension')) return { rows: [{ schema: 'ext' }] };
      if (text.includes('idgen_release')) return { rows: [{ grant_id: '1' }] };
      return { rows: [rowOf(values[0])] };
    },
  };
  return db;
}

test('the statements select lo_t, hi_t and server_time, with no arithmetic; the grant is computed here', async () => {
  const now = Date.now();
  const epoch = 1600000000123;
  const xidLo = Math.floor(now / 1000) - 5;
  const serverTime = JSON.stringify(new Date(now).toISOString().replace('Z', '000+00:00').replace(/\.(\d{3})000/, '.$1678'));
  const db = fakeDb((kind) => kind === 'xid12'
    ? { grant_id: '8', token: '12', kind, slot: 4, epoch_ms: null, lo_t: String(xidLo), hi_t: String(xidLo + 605), server_time: serverTime }
    : { grant_id: '7', token: '11', kind, slot: 3, epoch_ms: String(epoch), lo_t: String(now - 5000 - epoch), hi_t: String(now + 600001 - epoch), server_time: serverTime });
  const reg = new Registry(db, { writer: 'row' });
  const snow = await reg.snowflake();
  const xid = await reg.xid12();
  const selects = db.sent.filter((t) => t.includes('idgen_acquire'));
  assert.equal(selects.length, 2);
  for (const text of selects) {
    assert.match(text, /^SELECT grant_id::pg_catalog\.text AS grant_id, token::pg_catalog\.text AS token, kind, slot, epoch_ms::pg_catalog\.text AS epoch_ms, lo_t::pg_catalog\.text AS lo_t, hi_t::pg_catalog\.text AS hi_t, pg_catalog\.to_json\(server_time\)::pg_catalog\.text AS server_time FROM "ext"\.idgen_acquire\(/);
    assert.doesNotMatch(text, /extract|floor|OPERATOR|epoch'/);
  }
  const serverUs = now * 1000 + 678;
  const g = snow.grant;
  assert.deepEqual([g.grantId, g.token, g.slot, g.epochMs, g.lo, g.hi], ['7', '11', 3, epoch, now - 5000 - epoch, now + 600001 - epoch]);
  assert.deepEqual([g.loUs, g.hiUs, g.serverUs], [(now - 5000) * 1000, (now + 600001) * 1000, serverUs]);
  assert.equal(snow.epochMs, epoch);
  const x = xid.grant;
  assert.deepEqual([x.lo, x.hi, x.epochMs], [xidLo, xidLo + 605, null]);
  assert.deepEqual([x.loUs, x.hiUs, x.serverUs], [xidLo * 1e6, (xidLo + 605) * 1e6, serverUs]);
  // ids inside those windows, with those slots
  const id = await snow.nextId();
  assert.equal(Number(id >> 12n & 1023n), 3);
  assert.ok(Number(id >> 22n) + epoch >= now - 5000 && Number(id >> 22n) + epoch < now + 600001);
  await reg.close();
});

test('a server_time that is not ISO 8601 is a RegistryError, not a wrong clock', async () => {
  const db = fakeDb((kind) => ({ grant_id: '9', token: '1', kind, slot: 1, epoch_ms: null, lo_t: '1', hi_t: '2', server_time: 'Fri Dec 04 10:35:12 2026 UTC' }));
  const reg = new Registry(db, { writer: 'odd' });
  await assert.rejects(reg.xid12(), (e) => e instanceof RegistryError && /could not be read: server_time Fri Dec 04/.test(e.message));
  await reg.close();
});

test('an extension before 0.7.0 (no column lo_t) is named', () => {
  const e = registryErrorOf(Object.assign(new Error('column "lo_t" does not exist'), { code: '42703', severity: 'ERROR' }));
  assert.ok(e instanceof RegistryError && e.constructor === RegistryError && e.sqlstate === '42703');
  assert.match(e.message, /needs the pg_idgen extension 0\.7\.0 or later \(ALTER EXTENSION pg_idgen UPDATE\): column "lo_t" does not exist/);
  assert.equal(registryErrorOf(Object.assign(new Error('column "x" does not exist'), { code: '42703', severity: 'ERROR' })).message,
    'column "x" does not exist');
});
