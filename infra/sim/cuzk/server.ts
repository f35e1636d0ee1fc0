import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { loadProvingEngine, MAX_MESSAGE_BYTES } from '../../../activities/gpu-host/cuzk-proto.js';
import { type HostScenario, scaledMs } from '../scenario.js';
import { type EngineHooks, ProvingEngine } from './engine.js';
import { daemonHandlers } from './handlers.js';
import type { DaemonFileConfig } from './toml-config.js';

export interface SimDaemonOptions {
  cfg: DaemonFileConfig;
  scenario: HostScenario;
  scale: number;
  gpuName: string;
  numGpus: number;
  log(line: string): void;
  /** Simulated kernel OOM kill or panic: the caller ends the daemon's process (or stand-in). */
  die: EngineHooks['die'];
}

export interface SimDaemon {
  /** Stops serving and drops every connection, as the process exiting would. */
  close(): void;
}

/**
 * One simulated cuzk-daemon: the real proto over real gRPC on `cfg.listen`. A TCP proxy in front of
 * the gRPC server lets a fault drop client connections mid-proof. Used by the daemon process
 * (main.ts) and, many at once, by the host farm.
 */
export function startSimDaemon(o: SimDaemonOptions): SimDaemon {
  const { cfg, scenario, scale, log, numGpus, gpuName } = o;
  const sockets = new Set<net.Socket>();
  let proxy: net.Server | null = null;
  let closed = false;
  const engine = new ProvingEngine(scenario, scale, cfg.partitionWorkers, cfg.paramCache, numGpus, {
    log,
    dropConnections: () => {
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    die: o.die,
  });

  const server = new grpc.Server({
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': scenario.faults.badResponses === 'oversized' ? -1 : MAX_MESSAGE_BYTES,
  });
  server.addService(
    loadProvingEngine().service,
    daemonHandlers(engine, scenario, gpuName, numGpus, log) as unknown as grpc.UntypedServiceImplementation,
  );

  /** The real daemon exits when it cannot bind its port. */
  function failToBind(why: string): void {
    log(`ERROR cuzk_daemon: ${why}`);
    try {
      o.die('panic');
    } catch {
      /* an in-process daemon's die() throws after ending its stand-in */
    }
  }

  log(`INFO cuzk_daemon: starting, partition_workers=${cfg.partitionWorkers} gpus=${numGpus}x ${gpuName}`);
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, innerPort) => {
    if (err) return failToBind(`bind failed: ${err.message}`);
    if (scenario.faults.neverReady) {
      log('INFO cuzk_daemon: loading SRS porep-32g …');
      return; // hangs in SRS load forever, never serves
    }
    setTimeout(
      () => {
        if (closed) return;
        proxy = serveThroughProxy(cfg.listen, innerPort, sockets, log, failToBind);
      },
      scaledMs(scenario.startupSec, scale),
    );
  });

  return {
    close() {
      closed = true;
      proxy?.close();
      for (const s of sockets) s.destroy();
      sockets.clear();
      server.forceShutdown();
    },
  };
}

/** The daemon's public port: a TCP proxy to the gRPC server, so a fault can drop client connections. */
function serveThroughProxy(
  listen: string,
  innerPort: number,
  sockets: Set<net.Socket>,
  log: (line: string) => void,
  failToBind: (why: string) => void,
): net.Server {
  const [host, port] = splitHostPort(listen);
  const proxy = net.createServer((client) => {
    const upstream = net.connect(innerPort, '127.0.0.1');
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  proxy.once('error', (e) => failToBind(`cannot listen on ${listen}: ${e.message}`));
  proxy.listen(port, host, () => log(`INFO cuzk_daemon: ready, serving on ${listen}`));
  return proxy;
}

function splitHostPort(addr: string): [string, number] {
  const clean = addr.replace(/^https?:\/\//, '');
  const i = clean.lastIndexOf(':');
  return [clean.slice(0, i), Number(clean.slice(i + 1))];
}
