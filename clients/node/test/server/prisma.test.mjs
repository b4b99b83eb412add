// Prisma 7 with the driver adapter (@prisma/adapter-pg), no module of this package: the
// client is generated here, offline, from a schema whose id is `String @id
// @default(dbgenerated("gen_xid12()"))` over an xid12 column and whose key is a String over a
// rapkey column. `prisma generate` does not run the schema engine, but the CLI downloads it
// first unless PRISMA_SCHEMA_ENGINE_BINARY names a file that exists; the test names one. The
// generated client (TypeScript) is transpiled with the TypeScript of the devDependencies.
// The table comes from the migration SQL the README shows (Prisma's own would say text), run
// through $executeRawUnsafe: `prisma migrate` needs the schema engine, which is not here.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { Xid, rapkey as rk } from '../../dist/index.js';
import { HOST, PORT, freshDatabase, serverError, skip } from './helpers.mjs';

const DB = 'node_prisma';
const ROWS = 10000;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const OUT = path.join(ROOT, 'node_modules/.cache/pg-idgen-prisma');

const SCHEMA = `
generator client {
  provider     = "prisma-client"
  output       = "./client"
  moduleFormat = "esm"
}

datasource db {
  provider = "postgresql"
}

model Order {
  id  String  @id @default(dbgenerated("gen_xid12()"))
  key String? @unique @map("order_key")
  n   Int

  @@map("orders")
}
`;

export const MIGRATION = `CREATE TABLE "orders" (
  "id" xid12 NOT NULL DEFAULT gen_xid12(),
  "order_key" rapkey,
  "n" integer NOT NULL,
  CONSTRAINT "orders_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "orders_order_key_key" ON "orders"("order_key")`;

/** prisma generate without a download, then the generated TypeScript as ES modules. */
function generate() {
  fs.rmSync(OUT, { recursive: true, force: true });
  fs.mkdirSync(OUT, { recursive: true });
  fs.writeFileSync(path.join(OUT, 'schema.prisma'), SCHEMA);
  fs.writeFileSync(path.join(OUT, 'package.json'), '{"type": "module"}\n');
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules/prisma/build/index.js'), 'generate', '--schema', 'schema.prisma'], {
    cwd: OUT,
    env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: process.execPath, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' },
    stdio: 'pipe',
  });
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts')) {
        const { outputText } = ts.transpileModule(fs.readFileSync(p, 'utf8'), {
          compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, rewriteRelativeImportExtensions: true },
        });
        fs.writeFileSync(p.replace(/\.ts$/, '.js'), outputText);
      }
    }
  };
  walk(path.join(OUT, 'client'));
}

describe('Prisma (driver adapter, generated offline)', { skip }, () => {
  let prisma;
  let all; // the ids in the server's order
  before(async () => {
    await freshDatabase(DB);
    generate();
    const { PrismaClient } = await import(path.join(OUT, 'client/client.js'));
    const { PrismaPg } = await import('@prisma/adapter-pg');
    prisma = new PrismaClient({ adapter: new PrismaPg({ host: HOST, port: PORT, user: 'postgres', database: DB, max: 2 }) });
    for (const statement of MIGRATION.split(/;\n/)) await prisma.$executeRawUnsafe(statement);
    const { count } = await prisma.order.createMany({
      data: Array.from({ length: ROWS }, (_, i) => ({ key: rk.build('ord', 'cn', String(i)), n: i })),
    });
    assert.equal(count, ROWS);
    all = (await prisma.$queryRawUnsafe('SELECT id::text AS id FROM orders ORDER BY id')).map((r) => r.id);
  });
  after(async () => prisma && prisma.$disconnect());

  test(`createMany made ${ROWS} rows; findMany gives their ids as strings in the server's order`, async () => {
    assert.equal(all.length, ROWS);
    const rows = await prisma.order.findMany({ orderBy: { id: 'asc' } });
    assert.equal(rows.length, ROWS);
    assert.ok(rows.every((r) => typeof r.id === 'string'));
    assert.deepEqual(rows.map((r) => r.id), all);
    assert.equal(rows[0].key, rk.build('ord', 'cn', String(rows[0].n)));
  });

  test('create, findUnique, in and cursor with Xid values (Prisma sends their toJSON text)', async () => {
    const made = await prisma.order.create({ data: { key: rk.build('ord', 'de', '1'), n: -1 } });
    assert.equal(typeof made.id, 'string');
    assert.ok(Xid.parse(made.id).time.getTime() <= Date.now());
    const mine = Xid.new();
    assert.equal((await prisma.order.create({ data: { id: mine, n: -2 } })).id, String(mine));
    const one = await prisma.order.findUnique({ where: { id: Xid.parse(all[1234]) } });
    assert.equal(one.id, all[1234]);
    assert.equal((await prisma.order.findUnique({ where: { id: all[1234] } })).n, one.n);
    const ids = [Xid.parse(all[5]), made.id, mine];
    const some = await prisma.order.findMany({ where: { id: { in: ids } }, orderBy: { id: 'asc' } });
    assert.deepEqual(some.map((r) => r.id), ids.map(String).sort());
    const next = await prisma.order.findMany({ cursor: { id: Xid.parse(all[5]) }, skip: 1, take: 2, orderBy: { id: 'asc' } });
    assert.deepEqual(next.map((r) => r.id), all.slice(6, 8));
    assert.equal((await prisma.order.deleteMany({ where: { n: { lt: 0 } } })).count, 2);
  });

  test("cursor pagination (cursor: { id }, skip: 1) and id > cursor: every row once, the server's order", async () => {
    for (const take of [997, 1000]) {
      const seen = [];
      let cursor;
      for (;;) {
        const page = await prisma.order.findMany({ take, ...(cursor ? { cursor: { id: cursor }, skip: 1 } : {}), orderBy: { id: 'asc' }, select: { id: true } });
        if (page.length === 0) break;
        seen.push(...page.map((r) => r.id));
        cursor = page.at(-1).id;
      }
      assert.deepEqual(seen, all);
    }
    const seen = [];
    let cursor;
    for (;;) {
      const page = await prisma.order.findMany({ where: cursor ? { id: { gt: cursor } } : {}, take: 1000, orderBy: { id: 'asc' }, select: { id: true } });
      if (page.length === 0) break;
      seen.push(...page.map((r) => r.id));
      cursor = page.at(-1).id;
    }
    assert.deepEqual(seen, all);
  });

  test("a bad id or key from user input: Prisma's error with the server's words", async () => {
    const badId = await serverError(DB, "SELECT 'nope'::xid12");
    await assert.rejects(prisma.order.findUnique({ where: { id: 'nope' } }), (e) => {
      assert.equal(e.constructor.name, 'PrismaClientKnownRequestError');
      assert.equal(e.code, 'P2007');
      assert.ok(e.message.includes(badId.message), e.message);
      return true;
    });
    const badKey = await serverError(DB, "SELECT 'ord.cn.1-0'::rapkey");
    await assert.rejects(prisma.order.create({ data: { key: 'ord.cn.1-0', n: 0 } }), (e) => {
      assert.equal(e.constructor.name, 'PrismaClientKnownRequestError');
      assert.ok(e.message.includes(badKey.message), e.message); // the domain's check failed
      assert.equal(e.meta.driverAdapterError.cause.detail, badKey.detail); // which check character
      return true;
    });
  });

  test('$queryRaw: a bound string compares with xid12, ids come back as strings, count as bigint', async () => {
    const rows = await prisma.$queryRaw`SELECT id, order_key FROM orders WHERE id = ${all[7]}`;
    assert.deepEqual(rows, [{ id: all[7], order_key: rk.build('ord', 'cn', '7') }]);
    const [{ count }] = await prisma.$queryRaw`SELECT count(*) FROM orders WHERE id > ${all[ROWS - 10]}`;
    assert.equal(count, 9n);
    const badId = await serverError(DB, "SELECT 'nope'::xid12");
    await assert.rejects(prisma.$queryRaw`SELECT id FROM orders WHERE id = ${'nope'}`, (e) => {
      assert.equal(e.code, 'P2010');
      assert.ok(e.message.includes(badId.message), e.message);
      return true;
    });
  });

  test('$extends: a computed xid field gives Xid', async () => {
    const xp = prisma.$extends({ result: { order: { xid: { needs: { id: true }, compute: (o) => Xid.parse(o.id) } } } });
    const rows = await xp.order.findMany({ take: 3, orderBy: { id: 'asc' } });
    assert.ok(rows.every((r) => r.xid instanceof Xid && r.xid.toString() === r.id));
    assert.deepEqual(rows.map((r) => r.id), all.slice(0, 3));
  });
});
