import { createWriteStream, type WriteStream } from 'node:fs';
import { Context } from '@temporalio/activity';
import { boundTail, FailureType } from '../../workflows/domain/failures.js';
import { failure } from './errors.js';
import { readTail } from './log-tail.js';
import { type HostProcess, type SpawnHostProcess, spawnChild } from './spawn.js';
import type { StepContext } from './step-keeper.js';

export interface ParamfetchResult {
  elapsedMs: number;
  outputBytes: number;
}

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** What the output watch saw, once stopped. */
interface Watched {
  outputBytes: number;
  stalled: boolean;
}

/**
 * Runs the parameter fetch command. Any output counts as progress; no output for `stallMs` means the
 * download is stuck, which the operating history recorded as a silent hang.
 */
export async function runParamfetch(
  command: string[],
  logFile: string,
  stallMs: number,
  spawn: SpawnHostProcess = spawnChild,
  ctx: StepContext = Context.current(),
): Promise<ParamfetchResult> {
  const [cmd, ...args] = command;
  if (!cmd) throw new Error('paramfetch command is empty');
  const started = Date.now();
  const log = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(cmd, args);
  const stopWatch = watchOutput(child, log, stallMs, ctx, started);
  const exit = await new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: 127, signal: null }));
  });
  await drained(child);
  const { outputBytes, stalled } = stopWatch();
  await new Promise<void>((resolve) => log.end(() => resolve()));
  if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason ?? new Error('cancelled');
  await failIfUnfinished(logFile, stallMs, stalled, exit);
  return { elapsedMs: Date.now() - started, outputBytes };
}

/**
 * Logs the child's output and heartbeats with it; kills the child when it stalls or the step is
 * cancelled. Returns the stop: it detaches everything, so nothing is written to the log after it.
 */
function watchOutput(
  child: HostProcess,
  log: WriteStream,
  stallMs: number,
  ctx: StepContext,
  started: number,
): () => Watched {
  let outputBytes = 0;
  let lastLine = '';
  let lastProgress = Date.now();
  let stalled = false;
  const beat = () => ctx.heartbeat({ outputBytes, lastLine: lastLine.slice(0, 200), elapsedMs: Date.now() - started });
  const onData = (chunk: Buffer) => {
    outputBytes += chunk.length;
    lastProgress = Date.now();
    log.write(chunk);
    const lines = chunk.toString('utf8').trim().split('\n');
    lastLine = lines[lines.length - 1] ?? lastLine;
    beat();
  };
  ctx.heartbeat({ outputBytes, lastLine, elapsedMs: 0 });
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const watchdog = setInterval(
    () => {
      beat();
      if (Date.now() - lastProgress > stallMs) {
        stalled = true;
        child.kill('SIGKILL');
      }
    },
    Math.min(1000, stallMs / 4),
  );
  const onCancel = () => child.kill('SIGKILL');
  ctx.cancellationSignal.addEventListener('abort', onCancel);
  return () => {
    child.stdout.off('data', onData);
    child.stderr.off('data', onData);
    clearInterval(watchdog);
    ctx.cancellationSignal.removeEventListener('abort', onCancel);
    return { outputBytes, stalled };
  };
}

/**
 * Output can trail the exit event; take what arrives while the pipes drain, for a second at most
 * (a grandchild may hold them open).
 */
async function drained(child: HostProcess): Promise<void> {
  await new Promise<void>((resolve) => {
    if (child.stdout.closed && child.stderr.closed) return resolve();
    const t = setTimeout(resolve, 1000);
    child.once('close', () => {
      clearTimeout(t);
      resolve();
    });
  });
}

/** A stalled or failed fetch is ParamfetchFailed, with the log's tail as evidence. */
async function failIfUnfinished(logFile: string, stallMs: number, stalled: boolean, exit: Exit): Promise<void> {
  const tail = boundTail(await readTail(logFile));
  if (stalled) {
    throw failure(
      FailureType.ParamfetchFailed,
      `paramfetch stalled: no progress for ${Math.round(stallMs / 1000)} s`,
      { exitCode: null, signal: 'SIGKILL', outputTail: tail },
      { stalled: true },
    );
  }
  if (exit.code !== 0) {
    throw failure(
      FailureType.ParamfetchFailed,
      `paramfetch exited with ${exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`}`,
      { exitCode: exit.code, signal: exit.signal, outputTail: tail },
      { stalled: false },
    );
  }
}
