-- The lease table of Baton's JDBC backend (dev.baton:backend-jdbc) for MariaDB.
-- Baton runs this statement itself on first use unless election.jdbc.create-table=false;
-- then run it once yourself. For another table name or a schema (database), replace
-- baton_lease (for example with app.baton_lease) and set election.jdbc.table / election.jdbc.schema.
-- One row per election. term is the fencing token: every grant sets it one higher, and at least
-- to the database clock in microseconds, so it keeps increasing if the row is ever lost.
-- Times are UTC (Baton writes utc_timestamp(3)) with millisecond precision, so sessions with
-- different time zones agree about expiry. Names compare exactly (binary, no padding).
CREATE TABLE IF NOT EXISTS baton_lease (
  election    varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY,
  holder      varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  term        bigint      NOT NULL,
  ttl_millis  bigint      NOT NULL,
  acquired_at datetime(3) NOT NULL,
  renewed_at  datetime(3) NOT NULL,
  expires_at  datetime(3) NOT NULL
) ENGINE=InnoDB;
