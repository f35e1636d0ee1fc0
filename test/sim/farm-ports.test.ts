import { describe, expect, it } from 'vitest';
import { farmPorts } from '../../infra/sim/farm/ports.js';

// Two bench runs on one machine must not share their host farms' daemon ports:
// a host would then prove on another fleet's daemon and its own would die with EADDRINUSE.
describe('simulated farm port base', () => {
  it('defaults to 21000 and follows SIM_FARM_PORT_BASE', () => {
    expect(farmPorts({}).base).toBe(21_000);
    expect(farmPorts({ SIM_FARM_PORT_BASE: '11000' }).base).toBe(11_000);
  });

  it.each(['abc', '80', '60000', '1.5'])('rejects %s, naming the variable', (raw) => {
    expect(() => farmPorts({ SIM_FARM_PORT_BASE: raw })).toThrow(/SIM_FARM_PORT_BASE/);
  });

  it('bounds the span a shard may use', () => {
    expect(farmPorts({}).span).toBe(10_000);
    expect(farmPorts({ SIM_FARM_PORT_SPAN: '2500' }).span).toBe(2500);
    expect(() => farmPorts({ SIM_FARM_PORT_SPAN: '0' })).toThrow(/SIM_FARM_PORT_SPAN/);
  });
});
