#!/usr/bin/env bash
# The TypeScript client (clients/node, npm package pg-idgen): installs its dependencies with
# npm ci (when package-lock.json changed since the last install), builds it with tsc, checks the
# types and the typed example (tsc --noEmit), runs the unit tests (no server; they include the
# shared vectors of tests/vectors). Given PG_IDGEN_HOST (a socket directory) and PG_IDGEN_PORT
# of a running cluster with pg_idgen installed and preloaded, it also runs the server tests
# (node-postgres, Postgres.js, Drizzle, Kysely, TypeORM, Knex and Objection, Sequelize,
# MikroORM, Prisma with its driver adapter (the client generated offline), the Registry; they
# make their own databases) and installs the package as a user would: npm pack, a fresh
# project installs the tarball, imports every entry point whose library it does not load at
# import time, and runs examples/install-check.mjs against the server.
#
#   bash scripts/test_node.sh                                         # no server
#   PG_IDGEN_HOST=/var/tmp/pg_idgen/test/sock PG_IDGEN_PORT=54398 bash scripts/test_node.sh
#
# PG_IDGEN_NODE_ROWS sets the rows of the pagination table (default 100,000 on PostgreSQL 18
# and later, 20,000 on older versions).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=$ROOT/clients/node
cd "$DIR"

{ command -v node >/dev/null && command -v npm >/dev/null; } || { echo "test_node.sh: needs node (20 or later) and npm" >&2; exit 1; }
if ! cmp -s package-lock.json node_modules/.pg-idgen-lock; then
    echo "clients/node: npm ci"
    npm ci --no-audit --no-fund --loglevel=error
    cp package-lock.json node_modules/.pg-idgen-lock
fi
echo "clients/node: tsc (build, then --noEmit over the sources and examples/typed.ts)"
npx tsc -p tsconfig.build.json
npx tsc -p tsconfig.json --noEmit
echo "clients/node: unit tests"
node --test test/unit/

if [ -z "${PG_IDGEN_HOST:-}" ] || [ -z "${PG_IDGEN_PORT:-}" ]; then
    echo "clients/node: PG_IDGEN_HOST/PG_IDGEN_PORT not set: no server tests"
    exit 0
fi
echo "clients/node: server tests"
node --test test/server/

echo "clients/node: npm pack, a fresh project installs the tarball and runs an example"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
npm pack --silent --pack-destination "$WORK" >/dev/null
TARBALL=$(ls "$WORK"/pg-idgen-*.tgz)
PG_VERSION=$(node -p "require('./node_modules/pg/package.json').version")
# a database of its own with the extension
node --input-type=module -e "import { freshDatabase } from './test/server/helpers.mjs'; await freshDatabase('node_install');"
mkdir "$WORK/app"
cp examples/install-check.mjs "$WORK/app/"
(
    cd "$WORK/app"
    echo '{"name": "app", "version": "1.0.0", "private": true, "type": "module"}' >package.json
    npm install --no-audit --no-fund --loglevel=error "$TARBALL" "pg@$PG_VERSION" >/dev/null
    # the package brings no runtime dependency of its own: only pg and its dependencies
    [ ! -e node_modules/pg-idgen/node_modules ] || { echo "pg-idgen installed dependencies of its own" >&2; exit 1; }
    # the entry points that import no library at run time load from the tarball (the others need
    # theirs, which this project does not install)
    node --input-type=module -e "
        for (const e of ['pg-idgen', 'pg-idgen/pg', 'pg-idgen/typeorm']) {
            const m = await import(e);
            if (Object.keys(m).length === 0) throw new Error(e + ' exports nothing');
        }"
    PGHOST=$PG_IDGEN_HOST PGPORT=$PG_IDGEN_PORT PGUSER=postgres PGDATABASE=node_install node install-check.mjs
)
