import { Context } from '@temporalio/activity';
import { FailureType } from '../../workflows/domain/failures.js';
import type { ProofTiming } from '../../workflows/domain/types.js';
import { diagnostics, failure } from './errors.js';
import type { GpuHostContext } from './host.js';

/** PoRep 32 GiB (StackedDrg32GiBV1_1). */
const REGISTERED_PROOF_POREP_32G = 8;

/** One PoRep C2 of the host's C1 input on its daemon; a proof that does not complete is ProofFailed. */
export async function proveOnce(
  host: GpuHostContext,
  requestId: string,
  deadlineSec: number,
  index: number,
): Promise<ProofTiming> {
  const c = await host.c1();
  const res = await host.cuzk().prove(
    {
      requestId,
      vanillaProof: c.bytes,
      sectorNumber: c.sectorNumber,
      sectorSize: c.sectorSize,
      minerId: host.deps.minerId,
      registeredProof: REGISTERED_PROOF_POREP_32G,
    },
    deadlineSec * 1000,
  );
  if (res.status !== 'COMPLETED') {
    throw failure(
      FailureType.ProofFailed,
      `proof ${requestId} ended ${res.status}: ${res.error_message}`,
      await diagnostics(host.deps.supervisor),
      {
        status: res.status,
        errorMessage: res.error_message,
      },
    );
  }
  return { index, totalMs: res.total_ms, synthesisMs: res.synthesis_ms, gpuComputeMs: res.gpu_compute_ms };
}

/** Fresh id per attempt: the daemon uses it as the job id, and reusing a running one corrupts both. */
export function requestId(step: string, index: number): string {
  const info = Context.current().info;
  return `${info.workflowExecution?.workflowId ?? 'standalone'}/${step}/a${info.attempt}/${index}`;
}
