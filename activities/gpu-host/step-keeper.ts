import { Context } from '@temporalio/activity';

/** What a host step's work sees of its activity: heartbeats, cancellation, the heartbeat timeout. */
export interface StepContext {
  heartbeat(details?: unknown): void;
  readonly cancellationSignal: AbortSignal;
  readonly info: { readonly heartbeatTimeoutMs?: number };
}

interface Job {
  promise: Promise<unknown>;
  abort: AbortController;
  progress: unknown;
  settled: boolean;
  /** The activity attempt currently waiting on this job, if any: heartbeats go to it. */
  attached: Context | null;
}

/**
 * Keeps each host step's work and result on the host, by the step id the workflow gives it, until the
 * workflow has the result. A Temporal server outage of minutes stops heartbeats and can swallow a
 * completion; the server then times the activity out although the host did its work. The workflow calls
 * the step again with the same id: a running step is re-attached (no second proof, no second daemon
 * start), a finished one hands back its kept result or failure. A step id the host has not seen means
 * the workflow moved on, so every earlier step is acknowledged and dropped.
 *
 * Only a cancel the workflow requested stops the work; an attempt the server lost (timed out, not found)
 * or a worker shutdown detaches from it and leaves it running for the next attempt.
 */
export class StepKeeper {
  private readonly jobs = new Map<string, Job>();

  async run<T>(stepId: string | undefined, work: (ctx: StepContext) => Promise<T>): Promise<T> {
    const ctx = Context.current();
    // Workflows recorded before step ids: the step runs as a plain activity, as it always did.
    if (stepId === undefined) return work(ctx);
    const job = this.jobs.get(stepId) ?? this.start(stepId, ctx, work);
    job.attached = ctx;
    // At once: a step that never heartbeats reads as lost in delivery (see the workflow).
    ctx.heartbeat(job.progress);
    const cancelled = new Promise<never>((_, reject) => {
      const onAbort = () => reject(ctx.cancellationSignal.reason ?? new Error('cancelled'));
      if (ctx.cancellationSignal.aborted) onAbort();
      else ctx.cancellationSignal.addEventListener('abort', onAbort, { once: true });
    });
    cancelled.catch(() => undefined);
    try {
      return (await Promise.race([job.promise, cancelled])) as T;
    } catch (err) {
      if (!ctx.cancellationSignal.aborted || job.settled) throw err;
      if (!cancelRequested(ctx)) throw err;
      // The workflow asked (its timer, an operator): stop the work and hand back what it returns.
      job.abort.abort(ctx.cancellationSignal.reason);
      return (await job.promise) as T;
    } finally {
      if (job.attached === ctx) job.attached = null;
    }
  }

  /** How many steps the host holds (running or with a result the workflow has not acknowledged). */
  get size(): number {
    return this.jobs.size;
  }

  private start<T>(stepId: string, first: Context, work: (ctx: StepContext) => Promise<T>): Job {
    for (const [id, old] of this.jobs) {
      // The workflow moved on: it has this step's result, or gave up on it (then stop its work).
      if (!old.settled) old.abort.abort(new Error(`superseded by step ${stepId}`));
      this.jobs.delete(id);
    }
    const abort = new AbortController();
    const job: Job = { promise: Promise.resolve(), abort, progress: { step: stepId }, settled: false, attached: null };
    const stepCtx: StepContext = {
      heartbeat(details?: unknown) {
        job.progress = details;
        job.attached?.heartbeat(details);
      },
      cancellationSignal: abort.signal,
      info: { heartbeatTimeoutMs: first.info.heartbeatTimeoutMs },
    };
    job.promise = work(stepCtx).finally(() => {
      job.settled = true;
    });
    // Kept for a later attempt even when no attempt is waiting: never an unhandled rejection.
    job.promise.catch(() => undefined);
    this.jobs.set(stepId, job);
    return job;
  }
}

function cancelRequested(ctx: Context): boolean {
  const details = ctx.cancellationDetails;
  if (details) return details.cancelRequested;
  const reason: unknown = ctx.cancellationSignal.reason;
  return reason instanceof Error && reason.message === 'CANCELLED';
}
