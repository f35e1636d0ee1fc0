import * as grpc from '@grpc/grpc-js';
import { ApplicationFailure } from '@temporalio/common';
import { boundTail, FailureType, type HostDiagnostics } from '../../workflows/domain/failures.js';
import { CuzkCallError, CuzkResponseError } from './cuzk-client.js';
import type { DaemonExit, DaemonSupervisor } from './daemon.js';

const OOM_EVIDENCE = /out of memory|oom|memory allocation of \d+ bytes failed|cannot allocate memory/i;

/** The kernel's OOM killer sends SIGKILL; exit 137 is the same seen through a shell. */
export function isOomExit(exit: DaemonExit, logTail: string): boolean {
  return exit.signal === 'SIGKILL' || exit.code === 137 || OOM_EVIDENCE.test(logTail.slice(-4000));
}

export async function diagnostics(
  supervisor: DaemonSupervisor,
  extra: Partial<HostDiagnostics> = {},
): Promise<HostDiagnostics> {
  const exit = supervisor.lastExit;
  return {
    exitCode: exit?.code ?? null,
    signal: exit?.signal ?? null,
    daemonLogTail: boundTail(await supervisor.logTail()),
    ...extra,
  };
}

/** The process exit event can trail the broken connection it caused by a few ms. */
async function settleExit(supervisor: DaemonSupervisor, waitMs = 1500): Promise<DaemonExit | null> {
  const until = Date.now() + waitMs;
  while (supervisor.running && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  const exit = supervisor.lastExit;
  return exit && !exit.requested ? exit : null;
}

export function failure(
  type: FailureType,
  message: string,
  diag: HostDiagnostics,
  extra: object = {},
): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true, details: [{ ...extra, diagnostics: diag }] });
}

/**
 * Classifies a failed daemon interaction so a crashed daemon, an OOM kill, a dropped stream and a slow
 * proof never look alike (the operating history lost days to all of them reading "0 proofs/hour").
 */
export async function classifyDaemonError(
  err: unknown,
  supervisor: DaemonSupervisor,
  step: string,
  extra: object = {},
): Promise<ApplicationFailure> {
  if (err instanceof ApplicationFailure) return err;
  const exit = await settleExit(supervisor);
  const grpcExtra =
    err instanceof CuzkCallError ? { grpcCode: err.code, grpcMessage: boundTail(err.details, 500) } : {};
  const diag = await diagnostics(supervisor, grpcExtra);
  if (exit) {
    const oom = isOomExit(exit, diag.daemonLogTail ?? '');
    const how = exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
    return failure(
      oom ? FailureType.DaemonOOM : FailureType.DaemonCrashed,
      `cuzk-daemon died during ${step} (${how})${oom ? ', killed for memory' : ''}`,
      diag,
      extra,
    );
  }
  if (err instanceof CuzkCallError) {
    if (err.code === grpc.status.DEADLINE_EXCEEDED) {
      return failure(FailureType.ProofDeadlineExceeded, `${step}: proof exceeded its deadline`, diag, extra);
    }
    return failure(
      FailureType.DaemonTransportError,
      `${step}: gRPC transport error talking to cuzk-daemon (${grpc.status[err.code]}: ${err.details})`,
      diag,
      extra,
    );
  }
  if (err instanceof CuzkResponseError) {
    return failure(FailureType.ProofFailed, `${step}: daemon sent a malformed response: ${err.message}`, diag, extra);
  }
  const message = err instanceof Error ? err.message : String(err);
  return failure(FailureType.Internal, `${step}: ${message}`, diag, extra);
}
