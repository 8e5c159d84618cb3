/** Composition root: Main wires settings, listeners (business 8080, health 8081), backends and the SIGTERM shutdown. */
package com.example.payments;
