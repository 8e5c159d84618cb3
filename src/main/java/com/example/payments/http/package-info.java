/** HTTP plumbing shared by routes: filters, JSON bodies, request deadlines and RFC 9457 problem responses. */
package com.example.payments.http;
