/**
 * The harness's one concurrency limit: `fn` over `items`, at most `limit` at a time, results in input
 * order. Bench and harness code use it instead of hand-written worker pools, so a fleet of thousands
 * does not open thousands of calls at once against the server being measured.
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  if (!(limit >= 1)) throw new RangeError(`limit must be >= 1, got ${limit}`);
  const out = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}
