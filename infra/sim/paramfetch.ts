import { simulateParamfetch } from './fetch-params.js';
import { HostScenarioSchema, scaledMs, timeScale } from './scenario.js';

/** Simulated parameter fetch as its own process: progress, stall or failure as the host's scenario says. */
const scenario = HostScenarioSchema.parse(JSON.parse(process.env.SIM_HOST_SCENARIO ?? '{}'));
// Alive until the simulation exits; a stalled fetch stays alive and silent.
const keepAlive = setInterval(() => undefined, 60_000);
simulateParamfetch({
  cache: process.env.PARAM_CACHE_DIR ?? '/var/tmp/filecoin-proof-parameters',
  totalMs: scaledMs(scenario.paramfetchSec, timeScale()),
  fault: scenario.faults.paramfetch,
  out: (l) => console.log(l),
  err: (l) => console.error(l),
  exit: (code) => {
    clearInterval(keepAlive);
    process.exitCode = code;
  },
});
