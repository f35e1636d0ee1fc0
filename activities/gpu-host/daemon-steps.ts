import { FailureType } from '../../workflows/domain/failures.js';
import type { ProofTiming } from '../../workflows/domain/types.js';
import { classifyDaemonError, diagnostics, failure } from './errors.js';
import { startHeartbeatTicker } from './heartbeat-ticker.js';
import type { GpuHostContext, StepInput } from './host.js';
import { proveOnce, requestId } from './prove.js';
import type { StepContext } from './step-keeper.js';

export interface StartDaemonInput extends StepInput {
  partitionWorkers: number;
  readySec: number;
}

/** (Re)starts the daemon and waits for a successful GetStatus, the only real readiness signal. */
export async function startDaemon(
  host: GpuHostContext,
  input: StartDaemonInput,
): Promise<{ readyMs: number; gpus: number }> {
  return host.steps.run(input.stepId, (ctx) => waitReady(host, ctx, input));
}

async function waitReady(
  host: GpuHostContext,
  ctx: StepContext,
  input: StartDaemonInput,
): Promise<{ readyMs: number; gpus: number }> {
  const { supervisor } = host.deps;
  const started = Date.now();
  // At once, not after the first wait: a step that never heartbeats reads as lost in delivery (see the workflow).
  ctx.heartbeat({ waitingMs: 0 });
  await supervisor.start(input.partitionWorkers);
  const deadline = started + input.readySec * 1000;
  let lastError = '';
  while (Date.now() < deadline) {
    ctx.heartbeat({ waitingMs: Date.now() - started });
    if (!supervisor.running) {
      throw await classifyDaemonError(new Error('daemon exited while starting'), supervisor, 'daemon start');
    }
    try {
      const status = await host.cuzk().getStatus(2000);
      return { readyMs: Date.now() - started, gpus: status.gpus.length };
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
    await new Promise((r) => setTimeout(r, 250));
  }
  const diag = await diagnostics(supervisor, { grpcMessage: lastError });
  await supervisor.stop();
  throw failure(FailureType.DaemonNeverReady, `cuzk-daemon did not answer GetStatus within ${input.readySec} s`, diag);
}

/** One proof on the fresh daemon (`step` names it: a warmup, a re-check), heartbeating while it runs. */
export async function warmupProof(
  host: GpuHostContext,
  input: { step: string; proofDeadlineSec: number } & StepInput,
): Promise<ProofTiming> {
  return host.steps.run(input.stepId, async (ctx) => {
    const started = Date.now();
    const stopTicker = startHeartbeatTicker(ctx, () => ({ step: input.step, elapsedMs: Date.now() - started }));
    try {
      return await proveOnce(host, requestId(input.step, 0), input.proofDeadlineSec, 0);
    } catch (err) {
      throw await classifyDaemonError(err, host.deps.supervisor, input.step);
    } finally {
      stopTicker();
    }
  });
}
