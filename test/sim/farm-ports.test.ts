import { afterEach, describe, expect, it } from 'vitest';
import { farmPorts } from '../../infra/sim/farm/ports.js';

// Two bench runs on one machine must not share their host farms' daemon ports:
// a host would then prove on another fleet's daemon and its own would die with EADDRINUSE.
describe('simulated farm port base', () => {
  const saved = { base: process.env.SIM_FARM_PORT_BASE, span: process.env.SIM_FARM_PORT_SPAN };
  afterEach(() => {
    if (saved.base === undefined) delete process.env.SIM_FARM_PORT_BASE;
    else process.env.SIM_FARM_PORT_BASE = saved.base;
    if (saved.span === undefined) delete process.env.SIM_FARM_PORT_SPAN;
    else process.env.SIM_FARM_PORT_SPAN = saved.span;
  });

  it('defaults to 21000 and follows SIM_FARM_PORT_BASE', () => {
    delete process.env.SIM_FARM_PORT_BASE;
    expect(farmPorts().base).toBe(21_000);
    process.env.SIM_FARM_PORT_BASE = '11000';
    expect(farmPorts().base).toBe(11_000);
  });

  it.each(['abc', '80', '60000', '1.5'])('rejects %s, naming the variable', (raw) => {
    process.env.SIM_FARM_PORT_BASE = raw;
    expect(() => farmPorts().base).toThrow(/SIM_FARM_PORT_BASE/);
  });

  it('bounds the span a shard may use', () => {
    delete process.env.SIM_FARM_PORT_SPAN;
    expect(farmPorts().span).toBe(10_000);
    process.env.SIM_FARM_PORT_SPAN = '2500';
    expect(farmPorts().span).toBe(2500);
    process.env.SIM_FARM_PORT_SPAN = '0';
    expect(() => farmPorts().span).toThrow(/SIM_FARM_PORT_SPAN/);
  });
});
