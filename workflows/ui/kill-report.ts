import type { HostDiagnostics } from '../domain/failures.js';
import type { ProofTiming } from '../domain/types.js';
import { formatUsd } from '../domain/policy/cost.js';
import { grpcCodeName } from './grpc-codes.js';
import { fmtDph, fmtMinutes, fmtRate, md } from './text.js';

/** What is known when a lifecycle is killed, for its failure message, details and current details. */
export interface KillFacts {
  type: string;
  /** The classified cause, as the activity or the workflow worded it. */
  cause: string;
  stage: string;
  /** Raw evidence (the classified failure's details). */
  details: Record<string, unknown>;
  diagnostics?: HostDiagnostics;
  costUsd: number | null;
  dph: number | null;
  rentedForMs: number | null;
  minRate: number;
  /** Proofs in flight at once during the benchmark; null before it was planned. */
  concurrency: number | null;
}

/** Lines of the daemon log an operator sees first; the whole tail stays in the raw evidence. */
const LOG_LINES = 5;

function costText(f: KillFacts): string {
  if (f.costUsd === null) return 'nothing billed (never rented)';
  const over = f.dph === null || f.rentedForMs === null ? '' : ` (${fmtDph(f.dph)} for ${fmtMinutes(f.rentedForMs)})`;
  return `cost ${formatUsd(f.costUsd)}${over}`;
}

/**
 * One line, each fact once: "BenchRateBelowMin during benchmark: 12 proofs/h is below the minimum of 29
 * proofs/h · cost $0.0420 ($0.500/h for 5 min)". The stage is left out when the cause already names it.
 */
export function killMessage(f: KillFacts): string {
  const cause = f.cause.replace(/\s*\(during [a-z_]+\)\s*$/, '');
  const stage = cause.includes(`during ${f.stage}`) ? '' : ` during ${f.stage}`;
  return `${f.type}${stage}: ${cause} · ${costText(f)}`;
}

function timingsOf(details: Record<string, unknown>): ProofTiming[] {
  const t = details.timings;
  return Array.isArray(t) ? (t as ProofTiming[]).filter((x) => typeof x?.totalMs === 'number') : [];
}

/** Per-proof times as min/median/max, against the longest a proof may take for the batch to make minRate. */
export function timingLine(timings: ProofTiming[], minRate: number, concurrency: number | null): string | null {
  if (timings.length === 0) return null;
  const ms = timings.map((t) => t.totalMs).sort((a, b) => a - b);
  const median = ms[Math.floor((ms.length - 1) / 2)] ?? 0;
  const line = `${timings.length} proof(s) took ${fmtMinutes(ms[0] ?? 0)} / ${fmtMinutes(median)} / ${fmtMinutes(ms[ms.length - 1] ?? 0)} (min / median / max)`;
  if (!concurrency || minRate <= 0) return line;
  const paceMs = (concurrency * 3_600_000) / minRate;
  return `${line}; ${fmtRate(minRate)} at ${concurrency} in flight needs ≤ ${fmtMinutes(paceMs)} each`;
}

function logLines(tail: string | undefined): string[] {
  if (!tail) return [];
  return tail
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.length > 0)
    .slice(-LOG_LINES)
    .map((l) => (l.length > 200 ? l.slice(0, 199) + '…' : l));
}

/**
 * The short human summary that leads a kill's details: cause, cost, timings, gRPC status, daemon log.
 * As `markdown` (the UI's current details) the text is escaped and the log lines are a code block.
 */
export function killSummary(f: KillFacts, markdown = false): string {
  const esc = markdown ? md : (t: string) => t;
  const lines = [markdown ? `**killed · ${f.type}** during ${f.stage}` : `killed · ${f.type} during ${f.stage}`];
  lines.push(esc(killMessage(f)));
  const timings = timingLine(timingsOf(f.details), f.minRate, f.concurrency);
  if (timings) lines.push(esc(timings));
  const d = f.diagnostics;
  if (d?.grpcCode !== undefined)
    lines.push(esc(`gRPC ${grpcCodeName(d.grpcCode)}${d.grpcMessage ? `: ${d.grpcMessage.slice(0, 200)}` : ''}`));
  if (d?.exitCode !== undefined && d.exitCode !== null) lines.push(`the host process exited with code ${d.exitCode}`);
  if (d?.signal) lines.push(`the host process was killed by ${d.signal}`);
  const log = logLines(d?.daemonLogTail);
  if (log.length > 0)
    lines.push(
      markdown ? `last daemon log lines:\n\n    ${log.join('\n    ')}` : `last daemon log lines:\n${log.join('\n')}`,
    );
  return lines.join(markdown ? '\n\n' : '\n');
}

/** The failure's details: the human summary first, then the raw evidence unchanged. */
export function killDetails(f: KillFacts): Record<string, unknown> {
  const d = f.diagnostics;
  return {
    summary: killSummary(f),
    stage: f.stage,
    costUsd: f.costUsd === null ? null : Math.round(f.costUsd * 10_000) / 10_000,
    ...(d?.grpcCode !== undefined ? { grpcStatus: grpcCodeName(d.grpcCode) } : {}),
    ...f.details,
  };
}

/** The early stop in one sentence: why even the best case cannot reach the minimum. */
export function earlyStopCause(p: {
  completed: number;
  requested: number;
  gpus: number;
  gpuCeilingRate: number | null;
  /** The best rate the batch could still reach, when the host reported it. */
  bestRate?: number;
  minRate: number;
}): string {
  const after = `stopped early after ${p.completed} of ${p.requested} proofs`;
  if (p.gpuCeilingRate !== null && p.gpuCeilingRate < p.minRate)
    return `${after}: ${p.gpus} GPU${p.gpus === 1 ? '' : 's'} cannot exceed ${fmtRate(p.gpuCeilingRate)}, under the minimum of ${fmtRate(p.minRate)}`;
  const best = p.bestRate === undefined ? 'reach' : `exceed ${fmtRate(p.bestRate)}, under`;
  return `${after}: even at the fastest pace seen the batch cannot ${best} the minimum of ${fmtRate(p.minRate)}`;
}
