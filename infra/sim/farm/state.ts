import { NativeConnection } from '@temporalio/worker';
import { z } from 'zod';
import type { SpawnHostProcess } from '../../../activities/gpu-host/spawn.js';
import type { GpuHost } from '../../../workers/setup/gpu-host-factory.js';
import type { SimOffer } from '../scenario.js';

export interface FarmHost {
  instanceId: number;
  offer: SimOffer;
  workDir: string;
  host: GpuHost;
  run: Promise<void>;
}

export interface Standin {
  pid: number;
  kind: StandinRequest['kind'];
  hostId: number | null;
  /** Ends the simulation (the process is stopping or gone). */
  stop(): void;
  /** Ends the stand-in's process with this exit code (a simulated crash or the fetch's end). */
  exit(code: number): void;
}

const StandinBase = z.object({ pid: z.number().int().positive(), concurrency: z.number() });
const StandinRequestSchema = z.union([
  StandinBase.extend({ kind: z.enum(['daemon', 'production']), ref: z.string().min(1) }),
  StandinBase.extend({
    kind: z.literal('paramfetch'),
    cache: z.string().min(1),
    seconds: z.number().nonnegative(),
    fault: z.enum(['ok', 'stall', 'fail']),
  }),
]);
export type StandinRequest = z.infer<typeof StandinRequestSchema>;

/** standin.sh's request body: kind, pid, proof concurrency, then the command's own arguments, one per line. */
export function parseStandinRequest(body: string): StandinRequest {
  const [kind, pid, concurrency, ...args] = body.replace(/\n$/, '').split('\n');
  const common = { kind, pid: Number(pid), concurrency: Math.max(1, Number(concurrency) || 1) };
  return StandinRequestSchema.parse(
    kind === 'paramfetch'
      ? { ...common, cache: args[0], seconds: Number(args[1]), fault: args[2] }
      : { ...common, ref: args[0] },
  );
}

/** Everything one farm process knows: its machines, the stand-ins running for them, its Temporal connections. */
export interface FarmState {
  baseDir: string;
  scale: number;
  /** Seconds between a host's heartbeats. */
  throttleSec: number;
  /** How hosts start their processes (default: children of the farm process). */
  spawn: SpawnHostProcess | undefined;
  hosts: Map<number, FarmHost>;
  standins: Map<number, Standin>;
  connections: Map<string, Promise<NativeConnection>>;
  /** A daemon port from this farm's range. */
  reservePort: () => Promise<number>;
}

/** One connection per Temporal address, shared by every host of the farm. */
export function connect(st: FarmState, address: string): Promise<NativeConnection> {
  let c = st.connections.get(address);
  if (!c) st.connections.set(address, (c = NativeConnection.connect({ address })));
  return c;
}

export function stopStandin(st: FarmState, pid: number): void {
  const s = st.standins.get(pid);
  st.standins.delete(pid);
  s?.stop();
}

export function killQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    /* already gone */
  }
}
