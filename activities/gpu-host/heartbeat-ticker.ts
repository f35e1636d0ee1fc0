import type { StepContext } from './step-keeper.js';

/**
 * How often a long host step records progress locally. The SDK sends at most one heartbeat per throttle
 * interval (20 s by default), so ticking every second only cost CPU (~0.1 ms/s per running step,
 * measured); a twelfth of the heartbeat timeout, within 1-5 s, keeps every sent heartbeat fresh.
 */
export function tickerIntervalMs(heartbeatTimeoutMs: number | undefined): number {
  if (heartbeatTimeoutMs === undefined || heartbeatTimeoutMs <= 0) return 5000;
  return Math.min(5000, Math.max(1000, Math.floor(heartbeatTimeoutMs / 12)));
}

/** Heartbeats `details()` now and then periodically; call the returned function to stop. */
export function startHeartbeatTicker(ctx: StepContext, details: () => unknown): () => void {
  ctx.heartbeat(details());
  const ticker = setInterval(() => ctx.heartbeat(details()), tickerIntervalMs(ctx.info.heartbeatTimeoutMs));
  return () => clearInterval(ticker);
}
