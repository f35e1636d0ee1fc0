/** Evaluates the Vast offer query format (`{"field": {"op": value}}`) against one offer. */
const CONTROL_KEYS = new Set(['order', 'type', 'limit', 'allocated_storage', 'external', 'disable_bundling']);

export function matchesQuery(offer: Record<string, unknown>, query: Record<string, unknown>): boolean {
  for (const [field, cond] of Object.entries(query)) {
    if (CONTROL_KEYS.has(field)) continue;
    if (cond === null || typeof cond !== 'object' || Array.isArray(cond)) {
      throw new QueryError(`filter for ${field} must be an object like {"eq": value}`);
    }
    const actual = field === 'verified' ? offer.verification === 'verified' : offer[field];
    for (const [op, expected] of Object.entries(cond as Record<string, unknown>)) {
      if (!test(actual, op, expected, field)) return false;
    }
  }
  return true;
}

function test(actual: unknown, op: string, expected: unknown, field: string): boolean {
  switch (op) {
    case 'eq':
      return actual === expected;
    case 'neq':
      return actual !== expected;
    case 'gt':
      return typeof actual === 'number' && actual > Number(expected);
    case 'gte':
      return typeof actual === 'number' && actual >= Number(expected);
    case 'lt':
      return typeof actual === 'number' && actual < Number(expected);
    case 'lte':
      return typeof actual === 'number' && actual <= Number(expected);
    case 'in':
      return Array.isArray(expected) && expected.includes(actual);
    case 'notin':
      return Array.isArray(expected) && !expected.includes(actual);
    default:
      throw new QueryError(`unknown operator ${op} on ${field}`);
  }
}

export class QueryError extends Error {}

export function sortOffers(offers: Record<string, unknown>[], order: unknown): Record<string, unknown>[] {
  if (!Array.isArray(order)) return offers;
  return [...offers].sort((a, b) => {
    for (const entry of order) {
      if (!Array.isArray(entry)) continue;
      const [key, dir] = entry as [string, string];
      const av = Number(a[key] ?? 0);
      const bv = Number(b[key] ?? 0);
      if (av !== bv) return dir === 'desc' ? bv - av : av - bv;
    }
    return 0;
  });
}
