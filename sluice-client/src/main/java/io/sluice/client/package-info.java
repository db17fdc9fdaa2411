/**
 * The remote store: {@link io.sluice.client.RemoteStore}, a {@link io.sluice.Store} backed by a running
 * {@code sluice serve}.
 */
package io.sluice.client;
