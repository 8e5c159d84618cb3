/** API-key authentication of business requests (401 problem bodies on failure). */
package com.example.payments.authentication;
