import { z } from 'zod';
import { type Clock, clockOf, REAL_TIME } from '../../workflows/domain/policy/clock.js';

/**
 * A lifecycle reports in real units itself (workflows/domain/policy/clock.ts); the CLI converts only the
 * ages it reads off wall clocks (rental age, a host's heartbeat), with the clock of the lifecycle it shows.
 */
const ClockMemo = z.object({ clock: z.object({ scale: z.number().gt(0).max(1) }) });

/** The clock a lifecycle carries in its memo (set when its first run starts; workflows/lifecycle/journal.ts). */
export function memoClock(memo: Record<string, unknown> | undefined): Clock {
  const r = ClockMemo.safeParse(memo ?? {});
  // Its first workflow task has not run yet: it has measured nothing, and its age is still wall time.
  return r.success ? clockOf(r.data.clock.scale) : REAL_TIME;
}
