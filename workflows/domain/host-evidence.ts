import { FailureType as FT, type FailureType, type HostDiagnostics } from './failures.js';

/**
 * What a host may say about how its own step ended. A host runs our GPU-host worker on a machine its
 * operator controls, so the failure type of a host step is the host's word: taken only for the types
 * the fitness gate and daemon supervision define (activities/gpu-host), and a type that spares the host
 * (inconclusive) only with the evidence our worker attaches to it, not contradicting the type. A kill
 * type a host reports is taken as given: it condemns itself. A host naming another type
 * (`VastApiError`, `OfferUnavailable`: ours or the market's, never counted against it) or sparing
 * itself without that evidence is choosing how its rental ends: `HostMisreported`. The evidence is
 * still the host's to write; what this stops is a bare relabel (docs/security.md).
 */
interface Rule {
  needs: string;
  ok(details: Record<string, unknown>, d: Partial<HostDiagnostics> | null): boolean;
}

const GRPC_DEADLINE_EXCEEDED = 4;
const self: Rule = { needs: 'nothing: it condemns itself', ok: () => true };
/** Our worker attaches its diagnostics object to every host-side failure (activities/gpu-host/errors.ts). */
const diagnosed = (needs: string, ok: Rule['ok'] = () => true): Rule => ({
  needs: `our worker's diagnostics, ${needs}`,
  ok: (x, d) => d !== null && ok(x, d),
});

const HOST_REPORTED: Readonly<Partial<Record<FailureType, Rule>>> = {
  [FT.DaemonCrashed]: self,
  [FT.DaemonOOM]: self,
  [FT.ProofFailed]: self,
  [FT.ProofDeadlineExceeded]: self,
  [FT.HostUnfit]: self,
  // A proof past its deadline (a kill) is not a dropped stream. (The daemon's last exit may be an
  // earlier requested stop, a restart: no evidence either way.)
  [FT.DaemonTransportError]: diagnosed(
    'a gRPC status other than DEADLINE_EXCEEDED',
    (_, d) => d?.grpcCode !== GRPC_DEADLINE_EXCEEDED,
  ),
  [FT.DaemonNeverReady]: diagnosed('its log tail'),
  // A fetch that exited 0 without stalling did not fail.
  [FT.ParamfetchFailed]: diagnosed(
    'an exit other than success, or a stall',
    (x, d) => !(d?.exitCode === 0 && (d.signal ?? null) === null && x.stalled === false),
  ),
  [FT.BenchInputFetchFailed]: diagnosed('the download'),
  [FT.BenchInputMissing]: diagnosed('our configuration', (x) => x.ours === undefined || x.ours === true),
  [FT.HostUnreadable]: {
    needs: 'the probes it could not read',
    ok: (x) => Array.isArray(x.unreadable) && x.unreadable.length > 0,
  },
};

/** The failure types a host's step may end with, as our worker throws them. */
export const HOST_REPORTED_TYPES: readonly FailureType[] = Object.keys(HOST_REPORTED) as FailureType[];

/** Why the host's word on its failure is not taken, or null when it is. */
export function hostReportProblem(type: FailureType, details: Record<string, unknown>): string | null {
  const rule = HOST_REPORTED[type];
  if (!rule) return `${type}, which hosts do not report`;
  const d: unknown = details.diagnostics;
  const diag = d !== null && typeof d === 'object' ? (d as Partial<HostDiagnostics>) : null;
  return rule.ok(details, diag) ? null : `${type} without its evidence (${rule.needs})`;
}

/**
 * The server's own reasons for failing an activity whose payload was over its size limit
 * (go.temporal.io/server common/util.go, FailureReason*ExceedsLimit): only the host put it there.
 */
export const SERVER_PAYLOAD_LIMIT_REASONS: readonly string[] = [
  'Heartbeat details exceed size limit.',
  'Complete result exceeds size limit.',
  'Failure exceeds size limit.',
  'Cancel details exceed size limit.',
];
