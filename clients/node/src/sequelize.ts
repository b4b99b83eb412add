// Sequelize 6 (postgres dialect): XID12 and RAPKEY data types, and the connection hook that
// registers the types so xid12 values come back as Xid.
//
//   import { XID12, RAPKEY, idgenAfterConnect } from 'pg-idgen/sequelize';
//   const sequelize = new Sequelize(url, { hooks: { afterConnect: idgenAfterConnect() } });
//   const Order = sequelize.define('Order', {
//     id: { type: new XID12(), primaryKey: true, defaultValue: sequelize.fn('gen_xid12') },
//     key: { type: new RAPKEY(), unique: true },
//   });
//   await Order.findAll({ where: { id: { [Op.gt]: cursor } }, order: [['id', 'ASC']], limit: 100 });
//
// Xid values go into where (=, Op.gt, Op.in and arrays), create and update: the data type turns
// them into their text. findByPk takes only strings, numbers and Buffers: findByPk(String(id)).
//
// sync({ alter: true }) runs ALTER COLUMN ... TYPE, SET/DROP NOT NULL, DEFAULT and ADD UNIQUE
// for every column that is not a primary key, each time. idgenSequelize(sequelize) makes it
// skip XID12 and RAPKEY columns that already have their type, nullability, default and unique
// constraint (the other columns are Sequelize's business).

import { type AbstractDataType, DataTypes, QueryTypes, type Sequelize } from 'sequelize';
import { type RegisterOptions, type TypeParserClient, registerTypes } from './pg.js';
import { validate as validateRapkey } from './rapkey.js';
import { Xid } from './xid.js';

// DataTypes.ABSTRACT is a Proxy whose construct trap makes a plain ABSTRACT whatever subclass
// calls it; extend the class behind it.
const Abstract = (DataTypes.ABSTRACT as any).prototype.constructor as {
  new (...args: any[]): AbstractDataType;
  warn(link: string, text: string): void;
};

/** The xid12 data type: values are Xid (or their text) going in, Xid coming out (with the hook). */
export class XID12 extends Abstract {
  static readonly key = 'XID12';
  override readonly key = 'XID12';
  constructor(readonly schema?: string) {
    super();
  }
  override toSql(): string {
    return this.schema === undefined ? 'xid12' : `"${this.schema.replace(/"/g, '""')}".xid12`;
  }
  validate(value: unknown): true {
    Xid.from(value as Xid | string); // XidError names the text
    return true;
  }
  _sanitize(value: unknown): unknown {
    return typeof value === 'string' ? Xid.parse(value) : value;
  }
  _stringify(value: unknown): string {
    return Xid.from(value as Xid | string).toString();
  }
}

/**
 * The rapkey domain: strings. Values written by create and update (bound
 * parameters) are checked before they are sent (RapkeyError); where clauses are not checked.
 */
export class RAPKEY extends Abstract {
  static readonly key = 'RAPKEY';
  override readonly key = 'RAPKEY';
  constructor(readonly schema?: string) {
    super();
  }
  override toSql(): string {
    return this.schema === undefined ? 'rapkey' : `"${this.schema.replace(/"/g, '""')}".rapkey`;
  }
  validate(value: unknown): true {
    validateRapkey(String(value));
    return true;
  }
  _bindParam(value: unknown, options: { bindParam: (value: unknown) => string }): string {
    return options.bindParam(validateRapkey(String(value)));
  }
}

/**
 * Sequelize's afterConnect hook: registers the types on each new connection (registerTypes of
 * pg-idgen/pg; ifMissing defaults to 'skip', so the migration creating the extension runs).
 */
export function idgenAfterConnect(options: RegisterOptions = {}): (connection: unknown) => Promise<void> {
  const register: RegisterOptions = { ifMissing: 'skip', ...options };
  return async (connection) => {
    await registerTypes(connection as TypeParserClient, register);
  };
}

// The column as the catalog has it: its type's name, NOT NULL, its default and whether one
// unique index covers exactly it.
const COLUMN_QUERY = `
SELECT t.typname AS type, a.attnotnull AS notnull, pg_catalog.pg_get_expr(d.adbin, d.adrelid) AS "default",
       EXISTS (SELECT FROM pg_catalog.pg_index i WHERE i.indrelid OPERATOR(pg_catalog.=) a.attrelid AND i.indisunique
                  AND i.indnkeyatts OPERATOR(pg_catalog.=) 1 AND i.indkey[0] OPERATOR(pg_catalog.=) a.attnum
                  AND i.indpred IS NULL) AS "unique"
  FROM pg_catalog.pg_attribute a
  JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) a.atttypid
  LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid OPERATOR(pg_catalog.=) a.attrelid AND d.adnum OPERATOR(pg_catalog.=) a.attnum
 WHERE a.attrelid OPERATOR(pg_catalog.=) pg_catalog.to_regclass($1) AND a.attname OPERATOR(pg_catalog.=) $2 AND NOT a.attisdropped`;

/** Makes sync({ alter: true }) leave XID12 and RAPKEY columns that already match alone; returns sequelize. */
export function idgenSequelize<T extends Sequelize>(sequelize: T): T {
  const qi = sequelize.getQueryInterface() as any;
  if (qi.changeColumn.idgen) return sequelize;
  const changeColumn = qi.changeColumn.bind(qi);
  const wrapped = async (table: unknown, column: string, spec: any, options: any = {}) => {
    const type = spec?.type;
    if (type instanceof XID12 || type instanceof RAPKEY) {
      const rows: any[] = await sequelize.query(COLUMN_QUERY, {
        bind: [qi.queryGenerator.quoteTable(table), column], type: QueryTypes.SELECT,
        transaction: options.transaction, logging: options.logging,
      });
      const r = rows[0];
      const wantDefault = spec.defaultValue === undefined ? null
        : qi.queryGenerator.escape(spec.defaultValue, undefined, { operation: 'changeColumn' });
      if (r && r.type === type.key.toLowerCase() && r.notnull === (spec.allowNull === false)
          && (r.default ?? null) === wantDefault && r.unique === Boolean(spec.unique)) return;
    }
    return changeColumn(table, column, spec, options);
  };
  wrapped.idgen = true;
  qi.changeColumn = wrapped;
  return sequelize;
}
