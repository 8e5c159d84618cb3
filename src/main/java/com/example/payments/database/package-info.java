/** PostgreSQL backend: connection pool, migrations, readiness check and the idempotency store of record. */
package com.example.payments.database;
