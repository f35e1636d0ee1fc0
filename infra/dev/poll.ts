/** How long to poll, how often, and which errors end it at once (the rest are retried). */
export interface PollOptions {
  timeoutMs: number;
  intervalMs?: number;
  isFatal?: (err: unknown) => boolean;
}

/**
 * The harness's one poller (tests, demo, bench): calls `probe` until it returns a value other than
 * undefined, or throws after `timeoutMs` naming what was awaited and the last error seen. Harness code
 * waits on conditions, never on fixed sleeps. Errors are retried (a server may be restarting) unless
 * `isFatal` says the condition can no longer come true. The product keeps its own waits: it must not
 * import the harness.
 */
export async function pollUntil<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  opts: PollOptions,
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

/**
 * pollUntil for a yes/no condition. Unlike pollUntil, an error from `cond` fails at once unless
 * `isFatal` says otherwise: these conditions read in-process state or a server that is expected up.
 */
export async function waitUntil(
  what: string,
  cond: () => Promise<boolean> | boolean,
  opts: PollOptions,
): Promise<void> {
  await pollUntil(what, async () => ((await cond()) ? true : undefined), { isFatal: () => true, ...opts });
}
