/**
 * Failure type of a store write Postgres answered and refused (bad data, a constraint, our SQL): retrying
 * cannot help. Every other store failure (connection refused, reset, timed out, server restarting) is an
 * outage of our own database, which the lifecycle waits out. Neither is the host's fault.
 */
export const STORE_REJECTED = 'StoreRejected';

/** SQLSTATE classes that are a verdict on the statement, not on the server's health. */
const REJECTING_SQLSTATE_CLASSES = ['22', '23', '42', '2B', '2D', '0A'];

export function isRejectingSqlState(code: unknown): boolean {
  return typeof code === 'string' && code.length === 5 && REJECTING_SQLSTATE_CLASSES.includes(code.slice(0, 2));
}
