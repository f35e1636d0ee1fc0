import { createWriteStream, type WriteStream } from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { runFeeder } from '../feeder.js';
import { simulateParamfetch } from '../fetch-params.js';
import { startSimDaemon, type SimDaemon } from '../cuzk/server.js';
import { readDaemonConfig } from '../cuzk/toml-config.js';
import { hostOf } from './hosts.js';
import { type FarmHost, type FarmState, killQuietly, type Standin, type StandinRequest, stopStandin } from './state.js';

type HostRequest = Extract<StandinRequest, { kind: 'daemon' | 'production' }>;

/**
 * Starts the simulation a stand-in process stands for; its output and exit code go to `res`.
 * Returns why it cannot, or null.
 */
export function startStandin(st: FarmState, req: StandinRequest, res: http.ServerResponse): string | null {
  const send = (line: string) => {
    if (!res.writableEnded) res.write(`${line}\n`);
  };
  // Whichever comes first (an exit we send, a stop request, the stand-in's connection closing) ends it.
  const end = () => {
    if (st.standins.get(req.pid) === standin) stopStandin(st, req.pid);
  };
  const standin: Standin = {
    pid: req.pid,
    kind: req.kind,
    hostId: null,
    stop: () => undefined,
    exit(code) {
      send(`exit ${code}`);
      res.end();
      end();
    },
  };
  if (req.kind === 'paramfetch') {
    standin.stop = simulateParamfetch({
      cache: req.cache,
      totalMs: req.seconds * 1000,
      fault: req.fault,
      out: (l) => send(`out ${l}`),
      err: (l) => send(`err ${l}`),
      exit: (code) => standin.exit(code),
    });
  } else {
    const h = hostOf(st, req.kind === 'daemon' ? req.ref : path.join(req.ref, 'x'));
    if (!h) return `no farm host owns ${req.ref}`;
    standin.hostId = h.instanceId;
    standin.stop = startHostProcess(st, req, h, standin);
  }
  st.standins.set(req.pid, standin);
  // The stand-in's process ended (stopped, killed or crashed): so does its simulation.
  res.on('close', end);
  return null;
}

/** A machine's daemon or production prover, logging to its file in the work dir; returns how to stop it. */
function startHostProcess(st: FarmState, req: HostRequest, h: FarmHost, standin: Standin): () => void {
  const logFile = path.join(h.workDir, req.kind === 'daemon' ? 'cuzk-daemon.log' : 'production.log');
  const log: WriteStream = createWriteStream(logFile, { flags: 'a' });
  const line = (l: string) => log.write(`\x1b[2m${new Date().toISOString()}\x1b[0m ${l}\n`);
  const stop = req.kind === 'daemon' ? startDaemon(st, req, h, standin, line) : startProduction(req, h, line);
  return () => {
    stop();
    log.end();
  };
}

function startDaemon(st: FarmState, req: HostRequest, h: FarmHost, standin: Standin, line: (l: string) => void) {
  // The worker stopped the previous daemon before starting this one; its connection may not have
  // closed yet, and a real process would already have closed its port.
  for (const [otherPid, other] of st.standins) {
    if (other.hostId === h.instanceId && other.kind === 'daemon') {
      st.standins.delete(otherPid);
      other.stop();
    }
  }
  let daemon: SimDaemon | null = null;
  const die = (why: 'oom' | 'panic'): never => {
    daemon?.close();
    // The real daemon is OOM-killed by the kernel (SIGKILL) or panics with exit code 101.
    if (why === 'oom') killQuietly(req.pid, 'SIGKILL');
    else standin.exit(101);
    throw new Error(why === 'oom' ? 'daemon was OOM-killed' : 'daemon panicked');
  };
  daemon = startSimDaemon({
    cfg: readDaemonConfig(req.ref),
    scenario: h.offer.sim.host,
    scale: st.scale,
    gpuName: h.offer.gpu_name,
    numGpus: h.offer.num_gpus,
    log: line,
    die,
  });
  return () => daemon?.close();
}

/** The production prover (Curio's part): feeds the machine's daemon at the concurrency it was started with. */
function startProduction(req: HostRequest, h: FarmHost, line: (l: string) => void) {
  const abort = new AbortController();
  const cuzkAddress = readDaemonConfig(path.join(h.workDir, 'cuzk-daemon.toml')).listen;
  void runFeeder({
    cuzkAddress,
    c1Path: path.join(h.workDir, 'c1.json'),
    concurrency: req.concurrency,
    minerId: 1000,
    tag: `curio-sim/${req.pid}`,
    log: line,
    signal: abort.signal,
  }).catch(() => undefined);
  return () => abort.abort();
}
