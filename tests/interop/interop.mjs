// The TypeScript client's part of the cross-client interop check (tests/interop/run.sh): `node
// interop.mjs make DIR` writes DIR/node.ids (Xid.new(), new Snowflake({ workerId: 3 })); `node
// interop.mjs read DIR` reads every DIR/*.ids and writes DIR/node.read (tests/interop/README.md).
// It takes the client as built by scripts/test_node.sh (clients/node/dist).
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  Snowflake, Xid, snowflakeSequence, snowflakeUnixMs, snowflakeWorker,
} from '../../clients/node/dist/index.js';

const N = 300;
const [phase, dir] = process.argv.slice(2);

if (phase === 'make') {
  const flakes = new Snowflake({ workerId: 3 });
  const lines = [];
  for (let i = 0; i < N; i++) lines.push(`x ${Xid.new()}`);
  for (let i = 0; i < N; i++) lines.push(`s ${flakes.nextId()}`);
  writeFileSync(join(dir, 'node.ids'), `${lines.join('\n')}\n`);
} else if (phase === 'read') {
  const xids = [];
  const flakes = [];
  const out = [];
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.ids')).sort()) {
    for (const line of readFileSync(join(dir, f), 'utf8').split('\n').filter(Boolean)) {
      const [kind, value] = line.split(' ');
      if (kind === 'x') {
        const x = Xid.parse(value);
        xids.push(x);
        out.push(`x ${x} ${x.unixSeconds} ${x.machineId} ${x.pid} ${x.counter}`);
      } else {
        const s = BigInt(value);
        flakes.push(s);
        out.push(`s ${s} ${snowflakeUnixMs(s)} ${snowflakeWorker(s)} ${snowflakeSequence(s)}`);
      }
    }
  }
  for (const x of xids.sort((a, b) => a.compare(b))) out.push(`ox ${x}`);
  for (const s of flakes.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) out.push(`os ${s}`);
  writeFileSync(join(dir, 'node.read'), `${out.join('\n')}\n`);
} else {
  throw new Error(`usage: node interop.mjs make|read DIR (not ${phase})`);
}
