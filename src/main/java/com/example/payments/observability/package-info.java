/** Access log, request metrics and tracing of business requests. */
package com.example.payments.observability;
