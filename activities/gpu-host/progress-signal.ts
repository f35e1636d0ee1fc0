import { Context } from '@temporalio/activity';
import { benchmarkProgressSignal } from '../../workflows/definitions.js';
import type { BenchmarkProgress } from '../../workflows/domain/types.js';

/**
 * Tells the lifecycle of each finished benchmark proof with a Signal to its run, so its current details
 * show "benchmark 7/12 · 41 proofs/h so far" while the batch runs (a workflow cannot read its pending
 * activity's heartbeats). One signal per proof keeps history small; a failed send only loses a line of
 * progress, never the batch. Outside an activity with a client (a mock environment) it does nothing.
 */
export function benchmarkProgressReporter(stepId?: string): (p: BenchmarkProgress) => void {
  let send: ((p: BenchmarkProgress) => Promise<void>) | null = null;
  try {
    const ctx = Context.current();
    const wf = ctx.info.workflowExecution;
    if (wf) {
      const handle = ctx.client.workflow.getHandle(wf.workflowId, wf.runId);
      send = (p) => handle.signal(benchmarkProgressSignal, { ...p, ...(stepId ? { stepId } : {}) });
    }
  } catch {
    send = null;
  }
  return (p) => {
    void send?.(p).catch(() => undefined);
  };
}
