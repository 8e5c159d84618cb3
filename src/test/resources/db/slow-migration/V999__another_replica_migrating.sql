-- A migration of a newer build, still running (SchemaCurrentTest cancels it): Flyway holds its lock meanwhile.
SELECT pg_sleep(60);
