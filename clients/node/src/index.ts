// pg-idgen: pg_idgen's values and generators for Node.js. The adapters are their own entry
// points: pg-idgen/pg, pg-idgen/postgres, pg-idgen/drizzle, pg-idgen/kysely, pg-idgen/typeorm,
// pg-idgen/knex, pg-idgen/sequelize, pg-idgen/mikro-orm.

export {
  Xid, XidError, XidGenerator, type XidGeneratorOptions, machineFromHostname,
  XID_BYTES, XID_CHARS, MAX_XID_TIME, MAX_MACHINE, MAX_PID, MAX_COUNTER,
} from './xid.js';
export {
  Snowflake, type SnowflakeOptions, SnowflakeError, SnowflakeClockError, type SnowflakeParts,
  snowflakeParts, snowflakeWorker, snowflakeSequence, snowflakeUnixMs, snowflakeTime, snowflakeMin,
  snowflakeMax, snowflakeFromParts, DEFAULT_EPOCH_MS, DEFAULT_MAX_BACKWARD_MS, MAX_WORKER, MAX_SEQUENCE,
} from './snowflake.js';
export * as rapkey from './rapkey.js';
export { RapkeyError, type Rapkey } from './rapkey.js';
export {
  RegistryError, RegistryUnavailable, GrantLost, SlotsExhausted, WrongToken, RegistryFenced, PoolNotAllowed,
  CapReached, LeaseTooLong, EpochChanged, ReportOutsideWindow, DeviceConflict, REGISTRY_ERRORS, fencedUntil,
  ClockOutsideWindow, ClockBeforeWindow, ClockAheadOfWindow, SnowflakeGrantState, XidGrantState, StepKind,
} from './grant.js';
export {
  Registry, type RegistryOptions, type RegistryConnectionConfig, type GrantOptions, type Grant, GrantSnowflake,
  GrantXid, grantOffsetSeconds,
} from './registry.js';
export { registryErrorOf } from './protocol.js';
export { type Edition, ExtensionMissingError, type IdgenTypeInfo, type Queryable, lookupTypes } from './catalog.js';
