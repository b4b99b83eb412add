# The verbs a DBA types for a PostgreSQL extension; scripts/ does the work.
#   make                      release build for the pg_config on PATH (or make PG_CONFIG=/path/to/pg_config)
#   make install              installs it there (sudo make install for the system's PostgreSQL);
#                             builds first when the build is missing or older than the sources
#   make uninstall            removes the installed files
#   make installcheck         SQL regression suites against the running server that PGHOST,
#                             PGPORT and PGUSER name (see scripts/installcheck.sh)
#   make deb                  target/package/postgresql-NN-pg-idgen_<version>_<arch>.deb
#   make dist                 target/pg_idgen-<version>.zip, the PGXN distribution
# Building needs Rust 1.96 or newer and cargo-pgrx 0.19.4, which make installs when it is missing,
# and the server headers of that PostgreSQL (Debian: postgresql-server-dev-NN) and libclang.
PG_CONFIG ?= pg_config
PG_CONFIG_PATH := $(shell p=$$(command -v $(PG_CONFIG)) && realpath -s "$$p" || echo $(PG_CONFIG))
export PG_IDGEN_FROM_MAKE = 1

all:
	bash scripts/install.sh --build $(PG_CONFIG_PATH)

install:
	bash scripts/install.sh --no-build $(PG_CONFIG_PATH)

uninstall:
	bash scripts/install.sh --uninstall $(PG_CONFIG_PATH)

installcheck:
	bash scripts/installcheck.sh $(PG_CONFIG_PATH)

deb:
	bash scripts/package.sh --deb $(PG_CONFIG_PATH)

dist:
	bash scripts/pgxn_dist.sh

.PHONY: all install uninstall installcheck deb dist
