import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { HostScenarioSchema, scaledMs, timeScale } from './scenario.js';

/**
 * Simulated parameter fetch: prints download progress like the real fetcher over paramfetchSec,
 * or stalls / fails as the host's scenario says.
 */
const scenario = HostScenarioSchema.parse(JSON.parse(process.env.SIM_HOST_SCENARIO ?? '{}'));
const cache = process.env.PARAM_CACHE_DIR ?? '/var/tmp/filecoin-proof-parameters';
const totalMs = scaledMs(scenario.paramfetchSec, timeScale());
const files = [
  'v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-82a357d2.params',
  'v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-82a357d2.vk',
];
const steps = 10;
mkdirSync(cache, { recursive: true });
for (let i = 1; i <= steps; i++) {
  await new Promise((r) => setTimeout(r, totalMs / steps));
  console.log(`fetching ${files[0]}: ${Math.round((i / steps) * 44 * 1024)} MiB of 45056 MiB`);
  if (i === 3 && scenario.faults.paramfetch === 'stall') {
    // A hung download: the process stays alive and silent (a bare pending promise would let Node exit).
    setInterval(() => undefined, 60_000);
    await new Promise(() => undefined);
  }
  if (i === 4 && scenario.faults.paramfetch === 'fail') {
    console.error('ERROR: fetching params: unexpected EOF (checksum mismatch on .params)');
    process.exit(1);
  }
}
for (const f of files) writeFileSync(path.join(cache, f), 'simulated\n');
console.log('parameters fetched');
