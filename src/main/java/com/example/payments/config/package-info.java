/** Configuration reading with range checks; a bad value fails startup (exit 2) naming the key. */
package com.example.payments.config;
