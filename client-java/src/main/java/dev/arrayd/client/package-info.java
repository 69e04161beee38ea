/**
 * The arrayd Java client: asynchronous, typed handles, automatic batching onto one session stream.
 *
 * <p>Start with {@link dev.arrayd.client.ArraydClient#connect(String)}, open a
 * {@link dev.arrayd.client.Session}, create buffers, compile kernels and enqueue commands. Every command
 * returns an {@link dev.arrayd.client.Event} at once; its {@link dev.arrayd.client.Event#future() future}
 * completes when the daemon reports the command done.
 *
 * <p>Only the types in this package's public API are supported; everything package-private may change.
 */
package dev.arrayd.client;
