import { scaledMs } from '../scenario.js';
import { bootHost } from './host-boot.js';
import type { SimInstance, VastState } from './state.js';

/**
 * Vast stops an interruptible instance whose bid falls under min_bid: not destroyed, storage still
 * billed (SKILL.md), every state field stopped (the pattern dstack fails fast on, PR #4037).
 */
export function stopOutbid(inst: SimInstance, minBid: number): void {
  inst.outbid = { at: Date.now(), minBid };
  inst.timers.forEach(clearTimeout);
  inst.timers = [];
  inst.host?.kill();
  inst.host = null;
  inst.actual_status = inst.actual_status === null ? null : 'stopped';
  inst.intended_status = 'stopped';
  inst.cur_state = 'stopped';
  inst.status_msg = `Instance stopped: outbid (min_bid $${minBid}/h above bid $${inst.bid}/h)`;
  if (inst.runningAt !== null) inst.stoppedAt = Date.now();
}

/** The market's tick: every interruptible instance whose bid is now under min_bid stops. */
export function startMarketTick(st: VastState): NodeJS.Timeout {
  const tick = setInterval(() => {
    for (const inst of st.instances.values()) {
      if (inst.destroyed || inst.bid === null || inst.outbid) continue;
      const minBid = st.market.minBid(inst.offer);
      if (inst.bid < minBid) stopOutbid(inst, minBid);
    }
  }, 100);
  tick.unref();
  return tick;
}

export function destroy(st: VastState, inst: SimInstance): void {
  inst.destroyed = true;
  inst.destroyedAt = Date.now();
  inst.cur_state = 'unloaded';
  inst.timers.forEach(clearTimeout);
  inst.host?.kill();
  st.taken.delete(inst.offer.id);
}

/** created -> loading -> the scenario's fate (running with a booted host, or stuck, stopped, exited, offline). */
export function schedule(st: VastState, inst: SimInstance): void {
  const sc = inst.offer.sim.instance;
  const at = (sec: number, fn: () => void) => inst.timers.push(setTimeout(fn, scaledMs(sec, st.scale)));
  at(0.5, () => {
    inst.actual_status = 'created';
  });
  at(1, () => {
    inst.actual_status = 'loading';
    inst.status_msg = `Pulling image ${inst.image}`;
  });
  if (sc.fate === 'stuck_loading') return;
  at(1 + sc.loadingSec, () => {
    if (sc.fate === 'stopped') {
      // Vast will not run it (outbid, zero balance): every state field says stopped, still "loading".
      inst.intended_status = 'stopped';
      inst.cur_state = 'stopped';
      inst.status_msg = 'Instance stopped: insufficient bid';
      return;
    }
    if (sc.fate === 'exited' || sc.fate === 'offline') {
      inst.actual_status = sc.fate;
      inst.status_msg =
        sc.fate === 'exited' ? 'Error: OCI runtime create failed: nvidia-container-cli: initialization error' : '';
      return;
    }
    startRunning(st, inst);
    if (sc.preemptAfterSec !== undefined) {
      at(sc.preemptAfterSec, () => {
        inst.host?.kill();
        inst.actual_status = 'offline';
      });
    }
  });
}

/** The instance runs: its machine boots a simulated GPU host. */
function startRunning(st: VastState, inst: SimInstance): void {
  inst.actual_status = 'running';
  inst.runningAt = Date.now();
  inst.status_msg = `success, running ${inst.image}`;
  void (st.opts.bootHost ?? bootHost)(inst.offer, inst.id, inst.env, st.baseDir, (code, signal) => {
    inst.hostExit = `code=${code} signal=${signal}`;
  }).then(
    (host) => {
      // Destroyed, stopped by the market, or the simulator closed while it booted (a demo stopped mid-rent
      // would leave it running): the machine is not ours to run.
      if (inst.destroyed || inst.outbid || st.closed) return host.kill();
      inst.host = host;
    },
    (err: unknown) => {
      // The machine never came up: to the renter it looks like a host whose worker never connects.
      inst.hostExit = `boot failed: ${err instanceof Error ? err.message : String(err)}`;
    },
  );
}
