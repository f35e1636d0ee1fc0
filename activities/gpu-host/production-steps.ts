import type { HostDiagnostics } from '../../workflows/domain/failures.js';
import { classifyDaemonError, diagnostics } from './errors.js';
import type { GpuHostContext, StepInput } from './host.js';
import { readTail } from './log-tail.js';

export interface DaemonSample {
  completed: number;
  failed: number;
  uptimeSec: number;
  at: number;
}

/** Hands the promoted host to the production prover (idempotent: a retry does not start a second). */
export async function startProduction(
  host: GpuHostContext,
  input: { concurrency: number } & StepInput,
): Promise<{ started: boolean }> {
  return host.steps.run(input.stepId, async () => {
    const { deps } = host;
    if (!deps.supervisor.running) {
      const err = new Error('daemon is not running at promotion');
      throw await classifyDaemonError(err, deps.supervisor, 'start production');
    }
    return {
      started: deps.production.start({
        CUZK_ADDRESS: deps.cuzkAddress,
        C1_PATH: deps.c1Path,
        MINER_ID: String(deps.minerId),
        // The concurrency the benchmark proved this host sustains.
        PROOF_CONCURRENCY: String(input.concurrency),
      }),
    };
  });
}

/** One watch sample: the daemon's lifetime counters (the workflow turns deltas into a rate). */
export async function sampleDaemon(host: GpuHostContext, input: StepInput = {}): Promise<DaemonSample> {
  return host.steps.run(input.stepId, async () => {
    try {
      const s = await host.cuzk().getStatus(10_000);
      return {
        completed: s.total_proofs_completed,
        failed: s.total_proofs_failed,
        uptimeSec: s.uptime_seconds,
        at: Date.now(),
      };
    } catch (err) {
      throw await classifyDaemonError(err, host.deps.supervisor, 'watch sample');
    }
  });
}

/** Daemon log and exit state, fetched before the instance is destroyed so the evidence survives. */
export async function collectDiagnostics(host: GpuHostContext): Promise<HostDiagnostics & { paramfetchTail: string }> {
  return { ...(await diagnostics(host.deps.supervisor)), paramfetchTail: await readTail(host.paramfetchLog, 4000) };
}
