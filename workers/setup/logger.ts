import type { LogLevel, LogMetadata, Logger } from '@temporalio/common';
import { destination as fileDestination, pino, type Logger as Pino } from 'pino';

const LEVEL: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * The SDK's logger backed by pino: one JSON line per entry on stdout, with the SDK's metadata
 * (workflowId, runId, activityType, ...) as fields. Workflow and activity logs reach it through
 * Runtime.install, so a lifecycle's lines carry its workflow id without our code passing it around.
 */
export class PinoSdkLogger implements Logger {
  constructor(readonly pino: Pino) {}

  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    this.pino[LEVEL[level]](meta ?? {}, message);
  }
  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}

/** JSON lines on stdout, or appended to the file `destination`, at `level` and above. */
export function createLogger(level: LogLevel, destination?: string): PinoSdkLogger {
  const opts = { level: LEVEL[level], base: { service: 'gpu-fleet' }, timestamp: pino.stdTimeFunctions.isoTime };
  return new PinoSdkLogger(pino(opts, destination ? fileDestination({ dest: destination, sync: true }) : undefined));
}
