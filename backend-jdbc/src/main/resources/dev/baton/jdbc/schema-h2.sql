-- The lease table of Baton's JDBC backend (dev.baton:backend-jdbc) for H2 2.x.
-- Baton runs this statement itself on first use unless election.jdbc.create-table=false;
-- then run it once yourself. For another table name or a schema, replace baton_lease
-- (for example with app.baton_lease) and set election.jdbc.table / election.jdbc.schema.
-- One row per election. term is the fencing token: every grant sets it one higher, and at least
-- to the database clock in microseconds, so it keeps increasing if the row is ever lost.
-- The defaults let Baton create a free row from the election name alone before its upsert:
-- on H2 that is what keeps two concurrent first acquires from colliding on the primary key.
CREATE TABLE IF NOT EXISTS baton_lease (
  election    varchar(255) NOT NULL PRIMARY KEY,
  holder      varchar(255),
  term        bigint DEFAULT 0 NOT NULL,
  ttl_millis  bigint DEFAULT 0 NOT NULL,
  acquired_at timestamp(3) with time zone DEFAULT TIMESTAMP WITH TIME ZONE '1970-01-01 00:00:00+00' NOT NULL,
  renewed_at  timestamp(3) with time zone DEFAULT TIMESTAMP WITH TIME ZONE '1970-01-01 00:00:00+00' NOT NULL,
  expires_at  timestamp(3) with time zone DEFAULT TIMESTAMP WITH TIME ZONE '1970-01-01 00:00:00+00' NOT NULL
);
