import { DEFAULT_TIMEOUTS } from '../../../workflows/domain/policy/defaults.js';
import type { LifecycleRequest } from '../../../workflows/domain/types.js';
import { compressedLifecycle } from '../../dev/sim-stack.js';
import { STACK_OFFER_CHECK_SEC } from '../market-day.js';
import { type Latencies, REAL_LATENCIES } from './lifecycle.js';

/**
 * The real-stack market day's configuration in real units, for checking the evaluator against it: the
 * lifecycle's timeouts as market-day.ts compresses them (with their floors: a 20 s floor on a 300 s
 * stall timeout is 500 s at 0.04) and its production heartbeat timeout (60 s of wall time), divided by
 * the time scale; the scaler's `offerCheckSec` of 5 s likewise. Nothing here is fitted to a result.
 */
export function asStack(scale: number): {
  lifecycle: Omit<LifecycleRequest, 'offerId'>;
  latencies: Latencies;
  /** market-day.ts triggers the scaler schedule at the start: one scaler run more than the schedule's. */
  extraStartRun: boolean;
} {
  const c = compressedLifecycle(scale);
  const real = (sec: number) => sec / scale;
  const t = c.timeouts;
  return {
    lifecycle: {
      timeouts: {
        waitRunningSec: real(t.waitRunningSec),
        hostConnectSec: real(t.hostConnectSec),
        paramfetchSec: real(t.paramfetchSec),
        paramfetchStallSec: real(t.paramfetchStallSec),
        daemonReadySec: real(t.daemonReadySec),
        proofDeadlineSec: real(t.proofDeadlineSec),
        benchmarkSec: real(t.benchmarkSec),
        heartbeatSec: real(DEFAULT_TIMEOUTS.heartbeatSec),
      },
      watch: { intervalSec: real(c.watch.intervalSec) },
    },
    latencies: { ...REAL_LATENCIES, offerCheckSec: real(STACK_OFFER_CHECK_SEC) },
    extraStartRun: true,
  };
}
