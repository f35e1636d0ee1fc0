import { ActivityFailure, ApplicationFailure, RetryState, ServerFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { classify, fromCall } from '../../workflows/classify.js';
import { FailureType } from '../../workflows/domain/failures.js';
import { HOST_REPORTED_TYPES } from '../../workflows/domain/host-evidence.js';
import { KILL_MARK_SEC, markDecision, TRANSIENT_MARK_SEC, verdictFor } from '../../workflows/domain/policy/verdicts.js';

/**
 * A host chooses how its rental ends no more (issue 43, H5): what a host step's failure says is read by
 * us. Pure: classify() on what the SDK hands the workflow, tagged with the call it came from.
 */
const thrownBy = async (origin: Parameters<typeof fromCall>[0], cause: Error) =>
  fromCall(origin, () =>
    Promise.reject(new ActivityFailure('activity failed', 'step', '1', RetryState.NON_RETRYABLE_FAILURE, 'w', cause)),
  ).catch((e: unknown) => e);
const typed = (type: string, details?: Record<string, unknown>) =>
  ApplicationFailure.create({
    type,
    message: `${type} from the host`,
    nonRetryable: true,
    details: details ? [details] : [],
  });
const diag = (d: Record<string, unknown>) => ({ diagnostics: d });

describe.concurrent("the server's payload limit, hit by a host's own payload, is the host's failure", () => {
  it.each([
    'Heartbeat details exceed size limit.',
    'Complete result exceeds size limit.',
    'Failure exceeds size limit.',
    'Cancel details exceed size limit.',
  ])('%s: HostPayloadTooLarge, a kill whose mark expires', async (reason) => {
    const c = classify(await thrownBy('host', new ServerFailure(reason, true)));
    expect(c).toMatchObject({ type: FailureType.HostPayloadTooLarge, details: { serverReason: reason } });
    expect(verdictFor(c.type)).toMatchObject({ verdict: 'kill', cause: 'host', retry: false });
    expect(markDecision(c.type, 1)).toEqual({ mark: true, expiresInSec: KILL_MARK_SEC });
  });

  it('stays ours when the server failed something else, or a call of ours', async () => {
    expect(classify(await thrownBy('host', new ServerFailure('shard ownership lost', false))).type).toBe(
      FailureType.Internal,
    );
    const ours = new ServerFailure('Complete result exceeds size limit.', true);
    expect(classify(await thrownBy('vast', ours)).type).toBe(FailureType.Internal);
    expect(classify(await thrownBy('store', ours)).type).toBe(FailureType.Internal);
  });
});

describe.concurrent('a host names only the failure types hosts report', () => {
  it.each([
    FailureType.VastApiError,
    FailureType.OfferUnavailable,
    FailureType.PriceAboveBudget,
    FailureType.Preempted,
    FailureType.HostTokenExpiring,
    FailureType.BenchmarkUnobserved,
    FailureType.DestroyFailed,
    FailureType.HostLost,
  ])('%s from a host step is HostMisreported (a kill), with what it claimed', async (type) => {
    for (const origin of ['host', 'host-first'] as const) {
      const c = classify(await thrownBy(origin, typed(type, diag({}))));
      expect(c.type).toBe(FailureType.HostMisreported);
      expect(c.details).toEqual({ claimedType: type, claimedMessage: `${type} from the host` });
    }
    expect(verdictFor(FailureType.HostMisreported)).toMatchObject({ verdict: 'kill', cause: 'host' });
    expect(markDecision(FailureType.HostMisreported, 1)).toEqual({ mark: true, expiresInSec: KILL_MARK_SEC });
  });

  it('keeps those types where they are ours: a Vast call is not a host', async () => {
    expect(classify(await thrownBy('vast', typed(FailureType.VastApiError))).type).toBe(FailureType.VastApiError);
    expect(classify(await thrownBy('vast', typed(FailureType.OfferUnavailable))).type).toBe(
      FailureType.OfferUnavailable,
    );
  });

  it("takes the fitness gate's and daemon supervision's types, HostUnreadable among them", () => {
    expect([...HOST_REPORTED_TYPES].sort()).toEqual(
      [
        'BenchInputFetchFailed',
        'BenchInputMissing',
        'DaemonCrashed',
        'DaemonNeverReady',
        'DaemonOOM',
        'DaemonTransportError',
        'HostUnfit',
        'HostUnreadable',
        'ParamfetchFailed',
        'ProofDeadlineExceeded',
        'ProofFailed',
      ].sort(),
    );
  });

  it('takes a kill a host reports against itself as given', async () => {
    for (const type of [FailureType.DaemonOOM, FailureType.DaemonCrashed, FailureType.ProofFailed]) {
      expect(classify(await thrownBy('host', typed(type))).type).toBe(type);
    }
  });

  it('takes a type that spares the host only with our worker’s evidence, not contradicting it', async () => {
    const cases: Array<[string, Record<string, unknown> | undefined, string]> = [
      [FailureType.DaemonTransportError, diag({ exitCode: null, signal: null, grpcCode: 14 }), 'DaemonTransportError'],
      [FailureType.DaemonTransportError, undefined, 'HostMisreported'],
      // A proof past its deadline is a kill, not a dropped stream.
      [FailureType.DaemonTransportError, diag({ grpcCode: 4 }), 'HostMisreported'],
      // After a restart, the daemon's last exit is the requested stop: still a dropped stream.
      [FailureType.DaemonTransportError, diag({ signal: 'SIGTERM', grpcCode: 14 }), 'DaemonTransportError'],
      [FailureType.DaemonNeverReady, diag({ daemonLogTail: 'loading SRS' }), 'DaemonNeverReady'],
      [FailureType.DaemonNeverReady, {}, 'HostMisreported'],
      [FailureType.ParamfetchFailed, { ...diag({ exitCode: 2, signal: null }), stalled: false }, 'ParamfetchFailed'],
      [FailureType.ParamfetchFailed, { ...diag({ exitCode: 0, signal: null }), stalled: false }, 'HostMisreported'],
      [FailureType.BenchInputMissing, { ...diag({}), ours: true }, 'BenchInputMissing'],
      [FailureType.BenchInputMissing, { ...diag({}), ours: false }, 'HostMisreported'],
      [FailureType.BenchInputFetchFailed, { ...diag({}), url: 'https://x/c1', bytes: 3 }, 'BenchInputFetchFailed'],
      [FailureType.HostUnreadable, { unreadable: [{ check: 'gpus', message: 'N/A', output: '' }] }, 'HostUnreadable'],
      [FailureType.HostUnreadable, {}, 'HostMisreported'],
    ];
    for (const [type, details, want] of cases) {
      expect(classify(await thrownBy('host', typed(type, details))).type, `${type} ${JSON.stringify(details)}`).toBe(
        want,
      );
    }
  });

  it("calls our worker's own unclassified error on a host HostStepError: inconclusive once, marked when repeated", async () => {
    const internal = classify(await thrownBy('host', typed(FailureType.Internal, diag({}))));
    expect(internal).toMatchObject({ type: FailureType.HostStepError, details: { hostType: 'Internal' } });
    const untyped = classify(await thrownBy('host-first', ApplicationFailure.create({ message: 'TypeError: x' })));
    expect(untyped).toMatchObject({ type: FailureType.HostStepError, details: { hostType: 'Error' } });
    expect(verdictFor(FailureType.HostStepError)).toMatchObject({ verdict: 'inconclusive', marks: 'repeated' });
    expect(markDecision(FailureType.HostStepError, 1).mark).toBe(false);
    expect(markDecision(FailureType.HostStepError, 2)).toEqual({ mark: true, expiresInSec: TRANSIENT_MARK_SEC });
  });

  it('an unreadable fitness result is inconclusive once and marks the machine when it repeats', () => {
    expect(verdictFor(FailureType.HostUnreadable)).toMatchObject({ verdict: 'inconclusive', marks: 'repeated' });
    expect(markDecision(FailureType.HostUnreadable, 1)).toEqual({ mark: false, expiresInSec: null });
    expect(markDecision(FailureType.HostUnreadable, 2)).toEqual({ mark: true, expiresInSec: TRANSIENT_MARK_SEC });
  });
});
