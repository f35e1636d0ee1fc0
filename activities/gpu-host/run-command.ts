import { type SpawnHostProcess, spawnChild } from './spawn.js';

export interface CommandResult {
  /** null when the command could not start or was killed at its deadline. */
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  timedOut: boolean;
  startError?: string;
}

/** Runs a short host command to its end (or SIGKILLs it at `timeoutMs`), keeping its output. */
export function runCommand(
  argv: string[],
  timeoutMs: number,
  spawn: SpawnHostProcess = spawnChild,
): Promise<CommandResult> {
  const [cmd, ...args] = argv;
  if (!cmd)
    return Promise.resolve({ code: null, stdout: '', stderr: '', ms: 0, timedOut: false, startError: 'empty command' });
  const started = Date.now();
  const child = spawn(cmd, args);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout = (stdout + d.toString('utf8')).slice(-16_000)));
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString('utf8')).slice(-16_000)));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  return new Promise((resolve) => {
    let startError: string | undefined;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({
        code: startError ? null : child.exitCode,
        stdout,
        stderr,
        ms: Date.now() - started,
        timedOut,
        ...(startError ? { startError } : {}),
      });
    };
    child.once('error', (err) => {
      startError = err.message;
      // A command that never started may not emit 'close'.
      setTimeout(finish, 100);
    });
    // 'close' comes after the pipes drained, so the output is complete.
    child.once('close', finish);
  });
}
