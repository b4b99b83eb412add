// Sequelize 6 with pg-idgen/sequelize: XID12 and RAPKEY columns, Xid values in where, Op.gt,
// Op.in, arrays and create, findByPk with the id's text, 10,000 rows from bulkCreate read back
// and paged by id > cursor (Sequelize has no cursor pagination of its own), bad input failing
// with the server's words, and sync({ alter: true }) run again without touching the XID12 and
// RAPKEY columns (the control without idgenSequelize adds one more unique constraint each run).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DatabaseError, DataTypes, Op, Sequelize } from 'sequelize';
import { Xid, rapkey as rk } from '../../dist/index.js';
import { RAPKEY, XID12, idgenAfterConnect, idgenSequelize } from '../../dist/sequelize.js';
import { HOST, PORT, freshDatabase, serverError, skip } from './helpers.mjs';

const DB = 'node_sequelize';
const ROWS = 10000;

function make({ helper = true } = {}) {
  const ddl = [];
  const s = new Sequelize({
    dialect: 'postgres', host: HOST, port: PORT, username: 'postgres', database: DB,
    pool: { max: 2 }, hooks: { afterConnect: idgenAfterConnect() },
    logging: (q) => { if (/\b(ALTER|CREATE|DROP)\b/.test(q)) ddl.push(q); },
  });
  if (helper) idgenSequelize(s);
  const Order = s.define('Order', {
    id: { type: new XID12(), primaryKey: true, defaultValue: s.fn('gen_xid12') },
    key: { type: new RAPKEY(), unique: true },
    ref: { type: new XID12(), allowNull: false, defaultValue: s.fn('gen_xid12') },
    n: DataTypes.INTEGER,
  }, { tableName: 'orders', timestamps: false });
  return { s, Order, ddl };
}

const uniques = (s) => s.query(`SELECT count(*)::int AS n FROM pg_constraint
  WHERE conrelid = 'orders'::regclass AND contype = 'u'`, { plain: true }).then((r) => r.n);

describe('Sequelize', { skip }, () => {
  let s;
  let Order;
  before(async () => {
    await freshDatabase(DB);
    ({ s, Order } = make());
    await s.sync({ alter: true });
    await Order.bulkCreate(Array.from({ length: ROWS }, (_, i) => ({ key: rk.build('ord', 'cn', String(i)), n: i })));
  });
  after(async () => s && s.close());

  test('sync({ alter: true }) again leaves the XID12 and RAPKEY columns alone', async () => {
    const before = await s.query("SELECT md5(string_agg(id::text || key || ref::text, ',' ORDER BY id)) AS h FROM orders", { plain: true });
    for (let i = 0; i < 2; i++) {
      const again = make();
      await again.s.sync({ alter: true });
      assert.deepEqual(again.ddl.filter((q) => /"(id|key|ref)"/.test(q)), []);
      await again.s.close();
    }
    assert.equal(await uniques(s), 1);
    assert.deepEqual(await s.query("SELECT md5(string_agg(id::text || key || ref::text, ',' ORDER BY id)) AS h FROM orders", { plain: true }), before);
  });

  test('Xid values in where, Op.gt, Op.in, arrays; findByPk with the text', async () => {
    const made = await Order.create({ key: rk.build('ord', 'de', '1'), n: 1000 });
    assert.ok(made.id instanceof Xid && made.ref instanceof Xid);
    const [one] = await Order.findAll({ where: { id: made.id } });
    assert.ok(one.id.equals(made.id) && one.n === 1000);
    assert.equal((await Order.findAll({ where: { id: { [Op.gt]: made.id } } })).length, 0);
    const ids = (await Order.findAll({ attributes: ['id'], order: [['id', 'ASC']], limit: 5 })).map((o) => o.id);
    assert.equal((await Order.findAll({ where: { id: ids } })).length, 5);
    assert.equal((await Order.findAll({ where: { id: { [Op.in]: ids.slice(0, 2) } } })).length, 2);
    assert.equal((await Order.findAll({ where: { id: { [Op.gte]: ids[3] } }, order: [['id', 'ASC']], limit: 2 }))[0].id.toString(), ids[3].toString());
    assert.ok((await Order.findByPk(String(made.id))).id.equals(made.id));
    await assert.rejects(Order.findByPk(made.id), /Argument passed to findByPk is invalid/); // Sequelize's own check
    await made.destroy();
  });

  test("a bad id or key from user input: the error says the server's words", async () => {
    // XID12 parses a string id before Sequelize sends it (XidError)
    const badId = await serverError(DB, "SELECT 'nope'::xid12");
    for (const q of [() => Order.findAll({ where: { id: 'nope' } }), () => Order.findByPk('nope')]) {
      await assert.rejects(q(), (e) => {
        assert.equal(e.name, 'XidError');
        assert.equal(e.message, `${badId.message}: ${badId.detail}`);
        return true;
      });
    }
    // RAPKEY checks keys that create writes (RapkeyError): the server's DETAIL; its message
    // names the type where the server's names the domain's CHECK
    const badKey = await serverError(DB, "SELECT 'ord.cn.1-0'::rapkey");
    await assert.rejects(Order.create({ key: 'ord.cn.1-0', n: 1 }), (e) => {
      assert.equal(e.name, 'RapkeyError');
      assert.equal(e.message, `invalid input syntax for type rapkey: ${badKey.detail}`);
      return true;
    });
    // a raw query's bound value is the server's to check: Sequelize's DatabaseError
    await assert.rejects(s.query('SELECT n FROM orders WHERE id = $id', { bind: { id: 'nope' }, type: 'SELECT' }), (e) => {
      assert.ok(e instanceof DatabaseError, e.constructor.name);
      assert.equal(e.message, badId.message);
      return true;
    });
  });

  test(`${ROWS} rows read back as Xid; keyset pages (Sequelize has no cursor pagination): every row once`, async () => {
    const all = (await s.query('SELECT id::text AS id FROM orders ORDER BY id', { type: 'SELECT' })).map((r) => r.id);
    assert.equal(all.length, ROWS);
    const rows = await Order.findAll({ order: [['id', 'ASC']] });
    assert.ok(rows.every((o) => o.id instanceof Xid && o.ref instanceof Xid));
    assert.deepEqual(rows.map((o) => o.id.toString()), all);
    const one = await Order.findOne({ where: { id: Xid.parse(all[2345]) } });
    assert.equal(one.id.toString(), all[2345]);
    assert.equal(one.key, rk.build('ord', 'cn', String(one.n)));
    const seen = [];
    let cursor = null;
    for (;;) {
      const where = cursor ? { id: { [Op.gt]: cursor } } : {};
      const rows = await Order.findAll({ where, order: [['id', 'ASC']], limit: 1000 });
      if (rows.length === 0) break;
      seen.push(...rows.map((r) => r.id.toString()));
      cursor = rows.at(-1).id;
    }
    assert.deepEqual(seen, all);
  });

  test('control: without idgenSequelize each sync adds a unique constraint on the rapkey column', async () => {
    const control = make({ helper: false });
    await control.s.sync({ alter: true });
    assert.ok(control.ddl.some((q) => /ADD UNIQUE \("key"\)/.test(q)), control.ddl.join('\n'));
    assert.equal(await uniques(s), 2);
    await control.s.close();
  });
});
