import type { OfferCandidate } from '../domain/policy/offer-ranking.js';
import type { OfferFacts } from '../domain/types.js';
import { fmtDph, fmtRate, md } from './text.js';

/** A one-line summary is shown in lists and the timeline: keep it short. */
const MAX = 120;
const cut = (s: string) => (s.length <= MAX ? s : s.slice(0, MAX - 1) + '…');

function arg(args: unknown[]): Record<string, unknown> {
  const a = args[0];
  return a !== null && typeof a === 'object' ? (a as Record<string, unknown>) : {};
}

export function gpuLabel(offer: Pick<OfferFacts, 'numGpus' | 'gpuName'> | null): string {
  return offer ? `${offer.numGpus}x ${offer.gpuName}` : 'the host';
}

/** Host steps, named with what they do and on which GPUs ("benchmark 12 proofs ×3 on 2x A40"). */
export function hostSummary(gpu: string): (activity: string, args: unknown[]) => string | undefined {
  return (activity, args) => {
    const a = arg(args);
    switch (activity) {
      case 'paramfetch':
        return `paramfetch proof parameters on ${gpu} (stalled after ${String(a.stallSec)} s without output)`;
      case 'inspectHost':
        return a.stepId === undefined ? `probe the host: does it still answer?` : `inspect ${gpu}: PCE cache present?`;
      case 'startDaemon':
        return `start cuzk-daemon on ${gpu} with ${String(a.partitionWorkers)} partition workers`;
      case 'warmupProof':
        return `${a.step === 'post_restart_warmup' ? 'post-restart warmup' : 'warmup'} proof on ${gpu}`;
      case 'runBenchmark':
        return `benchmark ${String(a.count)} proofs ×${String(a.concurrency)} on ${gpu}`;
      case 'collectDiagnostics':
        return `collect the daemon log from ${gpu} before destroy`;
      case 'startProduction':
        return `start production proving on ${gpu}, ${String(a.concurrency)} at a time`;
      case 'sampleDaemon':
        return `sample the daemon's proof counters on ${gpu}`;
      default:
        return undefined;
    }
  };
}

/** Vast calls, named with the instance or offer they act on. */
export function vastSummary(activity: string, args: unknown[]): string | undefined {
  const a = arg(args);
  const first = args[0];
  switch (activity) {
    case 'rentOffer':
      return `rent offer ${String(a.offerId)} (${String(a.diskGb)} GB disk)`;
    case 'awaitRunning':
      return `wait until instance ${String(a.instanceId)} is running`;
    case 'instanceState':
      return `read instance ${String(first)}'s state and price`;
    case 'destroyInstance':
      return `destroy instance ${String(first)}`;
    case 'destroyLabelled':
      return `destroy anything else labelled ${String(first)}`;
    case 'changeBid':
      return `raise the bid of instance ${String(a.instanceId)} to $${String(a.priceDph)}/h`;
    default:
      return undefined;
  }
}

/**
 * Store writes, named by what they record: each stage change reads as "stage → benchmark" in the
 * compact event view rather than one more identical `recordEvent`.
 */
export function storeSummary(activity: string, args: unknown[]): string | undefined {
  const a = arg(args);
  switch (activity) {
    case 'recordEvent': {
      const message = typeof a.message === 'string' ? a.message : '';
      const stage = String(a.stage);
      return cut(message === `entered ${stage}` ? `stage → ${stage}` : `${stage}: ${message}`);
    }
    case 'recordInstance':
      return a.instanceId === null
        ? `record the rental (offer ${String(a.offerId)})`
        : `record instance ${String(a.instanceId)}`;
    case 'recordBenchmark':
      return typeof a.rate === 'number' ? `record the benchmark: ${fmtRate(a.rate)}` : 'record the benchmark';
    case 'recordOutcome':
      return cut(`record the outcome: ${String(a.outcome)}${a.failureType ? ` ${String(a.failureType)}` : ''}`);
    case 'recordPriceMove':
      return `record the new price: $${String(a.dphTotal)}/h`;
    case 'saveLogTail':
      return `save the ${String(a.source)} log tail`;
    default:
      return undefined;
  }
}

/** What a prediction rests on (predictions.ts `RatePrediction.source`), in the operator's words. */
const SOURCE_TEXT: Readonly<Record<string, string>> = {
  machine: 'this machine’s last benchmark',
  class: 'benchmarks of its model, GPU count and RAM class',
  model: 'benchmarks of its model on other hardware',
  prior: 'the cuzk reference’s figure for its model',
  unknown: 'a model with no figure and no benchmark: exploring',
};

/** What is known of an offer when its lifecycle starts, for the workflow's static summary and details. */
export interface StartFacts {
  offer: OfferCandidate & { hostId?: number };
  minRate: number;
  predictedRate?: number | null;
  /** The upper confidence bound the scaler ranked it by (value-ranking.ts). */
  upperRate?: number;
  source?: string;
  startedBy: string;
}

/** One line in the workflow list: "offer 123 · 2x A40 · machine 4242 · $0.520/h". */
export function lifecycleStaticSummary(f: StartFacts): string {
  const o = f.offer;
  return cut(`offer ${o.offerId} · ${gpuLabel(o)} · machine ${o.machineId} · ${fmtDph(o.dphTotal)}`);
}

/** The workflow page's details (Temporal markdown): the facts the lifecycle was started on. */
export function lifecycleStaticDetails(f: StartFacts): string {
  const o = f.offer;
  const upper = f.upperRate === undefined ? '' : `, ranked by its upper bound ${fmtRate(f.upperRate)}`;
  const from = f.source === undefined ? '' : ` (${SOURCE_TEXT[f.source] ?? f.source})`;
  const predicted =
    f.predictedRate === undefined
      ? ''
      : `\n- predicted: ${f.predictedRate === null ? 'unknown' : fmtRate(f.predictedRate)}${upper}${from}`;
  return md(
    [
      `**offer ${o.offerId}** — ${gpuLabel(o)} on machine ${o.machineId}${o.hostId === undefined ? '' : ` (host ${o.hostId})`}`,
      '',
      `- price at start: ${fmtDph(o.dphTotal)} (search price for our disk)`,
      `- RAM: ${Math.round(o.cpuRamMb / 1024)} GB`,
      `- keep/kill bar: ${fmtRate(f.minRate)}${predicted}`,
      `- started by: ${f.startedBy}`,
    ].join('\n'),
  );
}
