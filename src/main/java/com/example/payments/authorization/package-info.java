/** The authorization operation: request validation, the authorizer (rules or HTTP issuer) and its bounded call. */
package com.example.payments.authorization;
