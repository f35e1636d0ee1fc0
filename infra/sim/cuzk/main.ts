import { HostScenarioSchema, timeScale } from '../scenario.js';
import { startSimDaemon } from './server.js';
import { readDaemonConfig } from './toml-config.js';

/**
 * Simulated cuzk-daemon process, started by the GPU-host worker exactly as it starts the real daemon
 * (`<cmd> --config <file>`). Behaviour comes from SIM_HOST_SCENARIO (JSON).
 */
const configIdx = process.argv.indexOf('--config');
const configFile = configIdx > 0 ? process.argv[configIdx + 1] : undefined;
if (!configFile) {
  console.error('usage: cuzk-sim --config <daemon.toml>');
  process.exit(2);
}

// The real daemon colours its log even when redirected; the worker must strip this.
const log = (line: string) => process.stdout.write(`\x1b[2m${new Date().toISOString()}\x1b[0m ${line}\n`);

startSimDaemon({
  cfg: readDaemonConfig(configFile),
  scenario: HostScenarioSchema.parse(JSON.parse(process.env.SIM_HOST_SCENARIO ?? '{}')),
  scale: timeScale(),
  gpuName: process.env.SIM_GPU_NAME ?? 'RTX 4090',
  numGpus: Number(process.env.SIM_NUM_GPUS ?? '1'),
  log,
  die: (kind) => {
    if (kind === 'oom') process.kill(process.pid, 'SIGKILL');
    process.exit(101);
  },
});

process.on('SIGTERM', () => {
  log('INFO cuzk_daemon: SIGTERM, shutting down');
  process.exit(0);
});
