-- The lease table of Baton's JDBC backend (dev.baton:backend-jdbc) for PostgreSQL.
-- Baton runs this statement itself on first use unless election.jdbc.create-table=false;
-- then run it once yourself. For another table name or a schema, replace baton_lease
-- (for example with app.baton_lease) and set election.jdbc.table / election.jdbc.schema.
-- One row per election. term is the fencing token: every grant sets it one higher, and at least
-- to the database clock in microseconds, so it keeps increasing if the row is ever lost.
-- timestamptz, not timestamp: sessions with different time zones must agree about expiry.
CREATE TABLE IF NOT EXISTS baton_lease (
  election    varchar(255) NOT NULL PRIMARY KEY,
  holder      varchar(255),
  term        bigint       NOT NULL,
  ttl_millis  bigint       NOT NULL,
  acquired_at timestamptz  NOT NULL,
  renewed_at  timestamptz  NOT NULL,
  expires_at  timestamptz  NOT NULL
);
