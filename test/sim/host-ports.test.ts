import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { canListen, hostPorts, portReserver } from '../../infra/sim/ports.js';

// A simulated daemon binds its port long after it is chosen: from the ephemeral range, an outgoing
// connection could take it meanwhile and the host would fail in a way no real host does.
describe('simulated daemon ports', () => {
  it('default to 31000-32699, below the kernel ephemeral range and clear of the host farm', () => {
    expect(hostPorts({})).toEqual({ base: 31_000, span: 1_700 });
    expect(hostPorts({ SIM_HOST_PORT_BASE: '40000', SIM_HOST_PORT_SPAN: '10' })).toEqual({ base: 40_000, span: 10 });
  });

  it.each([
    [{ SIM_HOST_PORT_BASE: '80' }, /SIM_HOST_PORT_BASE/],
    [{ SIM_HOST_PORT_BASE: 'x' }, /SIM_HOST_PORT_BASE/],
    [{ SIM_HOST_PORT_SPAN: '0' }, /SIM_HOST_PORT_SPAN/],
    [{ SIM_HOST_PORT_BASE: '65000', SIM_HOST_PORT_SPAN: '1000' }, /must not pass 65536/],
  ])('rejects %o, naming the variable', (env, message) => {
    expect(() => hostPorts(env)).toThrow(message);
  });

  const held: net.Server[] = [];
  afterEach(async () => {
    await Promise.all(held.splice(0).map((s) => new Promise((r) => s.close(r))));
  });
  const hold = async (): Promise<number> => {
    const srv = net.createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    held.push(srv);
    const addr = srv.address();
    if (typeof addr !== 'object' || !addr) throw new Error('no address');
    return addr.port;
  };

  it('a port someone listens on is not free, and is once they stop', async () => {
    const port = await hold();
    expect(await canListen(port)).toBe(false);
    await Promise.all(held.splice(0).map((s) => new Promise((r) => s.close(r))));
    expect(await canListen(port)).toBe(true);
  });

  it('hands out ports in turn from the start, skips a taken one, wraps, and says when none is free', async () => {
    const taken = new Set([101]);
    const isFree = (p: number) => Promise.resolve(!taken.has(p));
    const reserve = portReserver(100, 3, 101, isFree);
    expect([await reserve(), await reserve(), await reserve()]).toEqual([102, 100, 102]);
    taken.add(100).add(102);
    await expect(reserve()).rejects.toThrow('no free TCP port in 100..102');
  });
});
