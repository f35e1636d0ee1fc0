/** What an activity proxy's function offers besides the call itself (SDK 1.24, experimental). */
interface WithOptions {
  executeWithOptions?: (options: { summary: string }, args: unknown[]) => Promise<unknown>;
}

/** Names an activity call for the UI's timeline and event list: undefined keeps the activity's type alone. */
export type Summarize = (activity: string, args: unknown[]) => string | undefined;

/**
 * The same activity proxy, each call carrying a one-line `summary` (user metadata on the command, shown
 * by the Temporal UI on the event). The summary is data in history, not a decision: replay ignores it.
 */
export function summarized<P extends object>(proxy: P, summarize: Summarize): P {
  return new Proxy(proxy, {
    get(target, prop, receiver) {
      const fn: unknown = Reflect.get(target, prop, receiver);
      if (typeof prop !== 'string' || typeof fn !== 'function') return fn;
      const call = fn as ((...args: unknown[]) => Promise<unknown>) & WithOptions;
      return (...args: unknown[]) => {
        const summary = summarize(prop, args);
        return summary && call.executeWithOptions ? call.executeWithOptions({ summary }, args) : call(...args);
      };
    },
  });
}
