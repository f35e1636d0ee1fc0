import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export type ParamfetchFault = 'ok' | 'stall' | 'fail';

export interface ParamfetchSim {
  cache: string;
  totalMs: number;
  fault: ParamfetchFault;
  out(line: string): void;
  err(line: string): void;
  /** The fetcher's exit code. Never called for a stall: a hung download stays alive and silent. */
  exit(code: number): void;
}

const PARAMS = 'v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-82a357d2';
const STEPS = 10;

/**
 * The simulated parameter fetch, shared by the per-machine fetcher process (paramfetch.ts) and the host
 * farm: download progress like the real fetcher over `totalMs`, or a stall / failure. Returns a cancel.
 */
export function simulateParamfetch(o: ParamfetchSim): () => void {
  let timer: NodeJS.Timeout | null = null;
  let step = 0;
  const tick = () => {
    step++;
    o.out(`fetching ${PARAMS}.params: ${Math.round((step / STEPS) * 44 * 1024)} MiB of 45056 MiB`);
    if (step === 3 && o.fault === 'stall') return;
    if (step === 4 && o.fault === 'fail') {
      o.err('ERROR: fetching params: unexpected EOF (checksum mismatch on .params)');
      return o.exit(1);
    }
    if (step < STEPS) {
      timer = setTimeout(tick, o.totalMs / STEPS);
      return;
    }
    for (const ext of ['params', 'vk']) writeFileSync(path.join(o.cache, `${PARAMS}.${ext}`), 'simulated\n');
    o.out('parameters fetched');
    o.exit(0);
  };
  mkdirSync(o.cache, { recursive: true });
  timer = setTimeout(tick, o.totalMs / STEPS);
  return () => {
    if (timer) clearTimeout(timer);
  };
}
