-- A parallel build of a unique index (2 workers and the leader, each sorting its share on
-- disk, the leader merging). trace_sort reports each participant's sort; the workers' reports
-- reach this client through the leader (scripts/reliability.sh counts them).
SET max_parallel_maintenance_workers = 2;
SET maintenance_work_mem = '96MB';
SET trace_sort = on;
SET client_min_messages = log;
CREATE UNIQUE INDEX ids_id ON ids (id);
RESET client_min_messages;
RESET trace_sort;
