/** Implementation of the remote store. Not API: public only for the store's builder; it may change in any release. */
package io.sluice.client.internal;
