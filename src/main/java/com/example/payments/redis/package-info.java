/** Redis backend of the idempotency registry: the Lettuce connection, the Lua-script store and its readiness check. */
package com.example.payments.redis;
