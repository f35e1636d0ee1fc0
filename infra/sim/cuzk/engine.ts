import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { HostScenario } from '../scenario.js';
import { scaledMs } from '../scenario.js';
import { proofPhasesSec } from './timing-model.js';

export interface ProofOutcome {
  status: 'COMPLETED' | 'FAILED';
  errorMessage: string;
  synthesisMs: number;
  gpuComputeMs: number;
  totalMs: number;
  queueWaitMs: number;
}

export interface EngineHooks {
  log(line: string): void;
  /** Called when a proof should lose its client connection (the seeds' transport error). */
  dropConnections(): void;
  /** Simulated kernel OOM kill or panic. */
  die(kind: 'oom' | 'panic'): never;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Proving model: synthesis on the CPU (RAM-bound, faster with more partition workers), then GPU compute
 * serialized per GPU. The first proof after a start pays kernel compile and PCE extraction.
 */
export class ProvingEngine {
  private proofsSinceStart = 0;
  private completed = 0;
  private failed = 0;
  private gpuFree: number[];
  private waiters: Array<() => void> = [];
  readonly startedAt = Date.now();

  constructor(
    private readonly sc: HostScenario,
    private readonly scale: number,
    private readonly partitionWorkers: number,
    private readonly paramCache: string,
    private readonly numGpus: number,
    private readonly hooks: EngineHooks,
  ) {
    this.gpuFree = Array.from({ length: numGpus }, (_, i) => i);
  }

  get counters() {
    return {
      completed: this.completed,
      failed: this.failed,
      uptimeSec: Math.floor((Date.now() - this.startedAt) / 1000),
    };
  }

  private get pceFile() {
    return path.join(this.paramCache, 'pce-porep-32g.bin');
  }

  private get dropStateFile() {
    return path.join(this.paramCache, '.sim-transport-drops-used');
  }

  async prove(jobId: string, c1: { ok: boolean; why: string }): Promise<ProofOutcome> {
    const f = this.sc.faults;
    const isFirst = this.proofsSinceStart++ === 0;
    const started = Date.now();
    this.hooks.log(`INFO cuzk_server: job accepted job_id=${jobId} partition_workers=${this.partitionWorkers}`);
    if (!c1.ok) {
      this.failed++;
      return { status: 'FAILED', errorMessage: c1.why, synthesisMs: 0, gpuComputeMs: 0, totalMs: 0, queueWaitMs: 0 };
    }
    if (f.forgedTimings === 'uniform') return await this.scriptedProof();
    // Fewer partition workers than ~10 slow synthesis down (the warmup with 2 workers is slow).
    const uptimeSec = (Date.now() - this.startedAt) / 1000 / this.scale;
    const slowdown = f.degradeAfterSec !== undefined && uptimeSec > f.degradeAfterSec ? f.degradeFactor : 1;
    // A forger answers without proving; an honest host's CPU synthesis varies by a few percent per proof.
    const forge = f.forgedTimings === 'fast' ? 0.01 : 1;
    const jitter = 1 + (Math.random() - 0.5) * 0.04;
    const phases = proofPhasesSec(this.sc.proofSec * forge, this.partitionWorkers, slowdown);
    let synthSec = phases.synthSec * jitter;
    if (isFirst) synthSec = await this.firstProofAfterStart(synthSec);
    if (f.hangProofs) await new Promise(() => undefined); // the gRPC server keeps the process alive
    await sleep(scaledMs(synthSec, this.scale));
    const gpu = await this.acquireGpu();
    const queueWaitMs = Date.now() - started - scaledMs(synthSec, this.scale);
    try {
      await sleep(scaledMs(phases.gpuSec, this.scale));
    } finally {
      this.releaseGpu(gpu);
    }
    if (!existsSync(this.pceFile)) writeFileSync(this.pceFile, 'simulated PCE cache\n');
    return this.outcome(jobId, gpu, started, queueWaitMs, synthSec, phases.gpuSec);
  }

  /** The first proof after a start pays kernel compile and PCE extraction (or re-extraction): its synthesis time. */
  private async firstProofAfterStart(synthSec: number): Promise<number> {
    const f = this.sc.faults;
    synthSec += this.sc.firstProofAfterRestartExtraSec;
    if (!existsSync(this.pceFile)) {
      this.hooks.log(`INFO cuzk_pce: no PCE cache, extracting with ${this.partitionWorkers} partition workers`);
      if (f.oomOnPceAbovePartitionWorkers !== undefined && this.partitionWorkers > f.oomOnPceAbovePartitionWorkers) {
        await sleep(scaledMs(this.sc.pceExtractSec / 2, this.scale));
        this.hooks.log(`WARN cuzk_pce: synthesis RSS 121.4 GiB of 125.0 GiB`);
        this.hooks.die('oom');
      }
      synthSec += this.sc.pceExtractSec;
    } else {
      this.hooks.log('INFO cuzk_pce: re-extracting PCE after restart');
    }
    if (f.transportDrops > 0 && this.dropsUsed() < f.transportDrops) {
      this.useDrop();
      setTimeout(
        () => {
          this.hooks.log('WARN h2: connection reset while proving (client gone)');
          this.hooks.dropConnections();
        },
        scaledMs(synthSec / 2, this.scale),
      );
    }
    return synthSec;
  }

  /** How a proven job ends: failed self-verification, a GPU panic after it, or completed with its timings. */
  private outcome(
    jobId: string,
    gpu: number,
    started: number,
    queueWaitMs: number,
    synthSec: number,
    gpuSec: number,
  ): ProofOutcome {
    const f = this.sc.faults;
    if (f.failProofs) {
      this.failed++;
      this.hooks.log(`ERROR cuzk_core: job ${jobId} failed: groth16 verification failed`);
      return {
        status: 'FAILED',
        errorMessage: 'proof failed self-verification',
        synthesisMs: 0,
        gpuComputeMs: 0,
        totalMs: Date.now() - started,
        queueWaitMs,
      };
    }
    this.completed++;
    if (f.crashAfterProofs !== undefined && this.completed > f.crashAfterProofs) {
      this.hooks.log(
        `ERROR cuzk_core: thread 'gpu-worker-${gpu}' panicked at 'CUDA error: an illegal memory access was encountered'`,
      );
      this.hooks.die('panic');
    }
    this.hooks.log(`INFO cuzk_server: job completed job_id=${jobId} total_ms=${Date.now() - started}`);
    return {
      status: 'COMPLETED',
      errorMessage: '',
      // Same clock as total_ms: compressed by the time scale.
      synthesisMs: scaledMs(synthSec, this.scale),
      gpuComputeMs: scaledMs(gpuSec, this.scale),
      totalMs: Date.now() - started,
      queueWaitMs,
    };
  }

  /** The `uniform` forger: every proof answered after exactly proofSec, with the same timings each time. */
  private async scriptedProof(): Promise<ProofOutcome> {
    const ms = scaledMs(this.sc.proofSec, this.scale);
    await sleep(ms);
    if (!existsSync(this.pceFile)) writeFileSync(this.pceFile, 'simulated PCE cache\n');
    this.completed++;
    const synthesisMs = Math.round(ms * 0.55);
    return {
      status: 'COMPLETED',
      errorMessage: '',
      synthesisMs,
      gpuComputeMs: ms - synthesisMs,
      totalMs: ms,
      queueWaitMs: 0,
    };
  }

  private dropsUsed(): number {
    return existsSync(this.dropStateFile) ? Number(readFileSync(this.dropStateFile, 'utf8')) || 0 : 0;
  }

  private useDrop(): void {
    writeFileSync(this.dropStateFile, String(this.dropsUsed() + 1));
  }

  private async acquireGpu(): Promise<number> {
    for (;;) {
      const gpu = this.gpuFree.shift();
      if (gpu !== undefined) return gpu;
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }

  private releaseGpu(gpu: number): void {
    this.gpuFree.push(gpu);
    this.waiters.shift()?.();
  }
}
