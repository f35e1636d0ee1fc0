/** A discrete-event queue: events run in time order, ties in the order they were scheduled. */
export class EventQueue {
  private readonly events: Array<{ at: number; seq: number; run: () => void }> = [];
  private seq = 0;
  now = 0;

  at(at: number, run: () => void): void {
    const e = { at: Math.max(at, this.now), seq: this.seq++, run };
    // Binary search for the first later event: the queue stays sorted by (at, seq).
    let lo = 0;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.events[mid]!.at <= e.at) lo = mid + 1;
      else hi = mid;
    }
    this.events.splice(lo, 0, e);
  }

  /** Runs every event before `untilSec`; later ones stay unrun (the day ended first). */
  runUntil(untilSec: number): void {
    while (this.events.length > 0 && this.events[0]!.at < untilSec) {
      const e = this.events.shift()!;
      this.now = e.at;
      e.run();
    }
    this.now = untilSec;
  }
}
