import { runFeeder } from './feeder.js';

/** Simulated production prover process (Curio's role after promotion), started by the GPU-host worker. */
await runFeeder({
  cuzkAddress: process.env.CUZK_ADDRESS ?? '127.0.0.1:9820',
  c1Path: process.env.C1_PATH ?? 'c1.json',
  concurrency: Number(process.env.PROOF_CONCURRENCY ?? '2'),
  minerId: Number(process.env.MINER_ID ?? 1000),
  tag: `curio-sim/${process.pid}`,
  log: (line) => console.log(line),
  signal: new AbortController().signal,
});
