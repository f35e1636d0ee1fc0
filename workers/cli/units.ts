import type { Command } from 'commander';
import { type Clock, clockOf, REAL_TIME, realSec } from '../../workflows/domain/policy/clock.js';
import { decimalNumber } from './args.js';

/** Real seconds for a span the CLI measured on the wall clock, which the lifecycle's hosts share. */
export function realAgeSec(wallMs: number, clock: Clock): number {
  return realSec(wallMs, clock);
}

/**
 * `--time-scale` for the commands that start lifecycles (deploy, schedule setup): the clock they run on.
 * Only against the simulators, which compress time (0.01 = 100x); real time without it.
 */
export function addTimeScaleFlag(cmd: Command): Command {
  return cmd.option(
    '--time-scale <scale>',
    "the simulators' time compression the lifecycles run at, in (0, 1] (0.01 = 100x faster; default 1: real time)",
    decimalNumber('--time-scale', 0, 1, '', true),
  );
}

/** The clock for lifecycles this command starts: `--time-scale`, else real time. */
export function startClock(timeScale: number | undefined): Clock {
  return timeScale === undefined ? REAL_TIME : clockOf(timeScale);
}
