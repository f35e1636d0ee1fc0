/**
 * Polls `probe` until it returns a value other than undefined, or throws after `timeoutMs` naming what
 * was awaited and the last error seen. Fault tests wait on conditions, never on fixed sleeps. Errors
 * are retried (a server may be restarting) unless `isFatal` says the condition can no longer come true.
 */
export async function pollUntil<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  opts: { timeoutMs: number; intervalMs?: number; isFatal?: (err: unknown) => boolean },
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  let lastError: unknown = null;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      if (opts.isFatal?.(err)) throw err;
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const why =
        lastError === null
          ? ''
          : ` (last error: ${lastError instanceof Error ? lastError.message : String(lastError)})`;
      throw new Error(`timed out after ${opts.timeoutMs} ms waiting for ${what}${why}`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 200));
  }
}
