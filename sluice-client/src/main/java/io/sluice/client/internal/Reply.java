package io.sluice.client.internal;

/**
 * The server's answer to one store call: its HTTP status and JSON body, whether the call went in a request of its
 * own or as one call of a batch.
 */
record Reply(int status, byte[] body) {}
