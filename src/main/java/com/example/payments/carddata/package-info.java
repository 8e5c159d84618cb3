/** Card-data protection: PAN detection and masking in logs, so a PAN is never logged in clear. */
package com.example.payments.carddata;
