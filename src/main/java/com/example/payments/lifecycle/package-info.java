/** Shutdown choreography: signals, pre-drain pause, bounded drain of in-flight requests, cleanup and log flush. */
package com.example.payments.lifecycle;
