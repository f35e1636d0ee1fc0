import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { CatalogueSchema } from '../scenario.js';
import { startVastSim } from './server.js';

/**
 * The simulated Vast.ai API on its own (`npm run sim:vast [catalogue.json]`), for running the control
 * worker against it by hand: set the worker's VAST_API_URL to the printed URL and VAST_API_KEY to the
 * same key. Rented instances boot the real GPU-host worker with the env the rent call gave them.
 */
const DEFAULT_CATALOGUE = path.join(path.dirname(fileURLToPath(import.meta.url)), '../scenarios/demo.json');

const env = z
  .object({
    VAST_API_KEY: z.string().min(1, 'VAST_API_KEY: the key clients must present (any string for the simulator)'),
    SIM_VAST_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  })
  .safeParse(process.env);
if (!env.success) {
  console.error(`sim:vast: ${env.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  process.exit(2);
}

const catalogueFile = process.argv[2] ?? DEFAULT_CATALOGUE;
const catalogue = CatalogueSchema.parse(JSON.parse(readFileSync(catalogueFile, 'utf8')));
const sim = await startVastSim({
  offers: catalogue.offers,
  apiKey: env.data.VAST_API_KEY,
  port: env.data.SIM_VAST_PORT,
});
console.log(`simulated Vast.ai API at ${sim.url} with ${catalogue.offers.length} offers from ${catalogueFile}`);

const stop = () => {
  void sim.close().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
