import { describe, expect, it } from 'vitest';
import { SQL_VISIBILITY_SLOTS, sqlSearchAttributes } from '../../infra/temporal/sql-visibility.js';
import { searchAttributeFlags } from '../../workflows/domain/search-attributes.js';

describe("our search attributes and SQL visibility's per-type columns", () => {
  it('fit: every type within its column count', () => {
    const names = Object.keys(sqlSearchAttributes());
    expect(names.length).toBe(searchAttributeFlags().length);
    const perType = new Map<string, number>();
    for (const f of searchAttributeFlags()) {
      const type = f.split('=')[1]!;
      perType.set(type, (perType.get(type) ?? 0) + 1);
    }
    for (const [type, count] of perType) expect(count).toBeLessThanOrEqual(SQL_VISIBILITY_SLOTS[type]!);
  });

  it('refuses a fourth Int attribute by name, before anything is registered', () => {
    expect(() => sqlSearchAttributes([...searchAttributeFlags(), 'Retries=Int'])).toThrow(
      /4 Int search attributes \(.*Retries\) do not fit SQL visibility's 3 Int columns/,
    );
  });

  it('refuses a malformed or unknown type', () => {
    expect(() => sqlSearchAttributes(['Foo'])).toThrow(/not Name=Type/);
    expect(() => sqlSearchAttributes(['Foo=Float'])).toThrow(/not Name=Type/);
  });
});
