import type { temporal as proto } from '@temporalio/proto';
import protoPkg from '@temporalio/proto';
import { searchAttributeFlags } from '../../workflows/domain/search-attributes.js';

const { IndexedValueType } = protoPkg.temporal.api.enums.v1;
type Indexed = proto.api.enums.v1.IndexedValueType;

/**
 * Custom search attribute columns per type in SQL visibility (PostgreSQL/MySQL schema of server 1.29:
 * Keyword01–10, Int01–03, …; go.temporal.io/server common/searchattribute/defs.go). A type past its
 * count cannot be registered on a SQL-backed cluster, however many the dev server accepts.
 */
export const SQL_VISIBILITY_SLOTS: Readonly<Record<string, number>> = {
  Keyword: 10,
  Int: 3,
  Double: 3,
  Bool: 3,
  Datetime: 3,
  Text: 3,
  KeywordList: 3,
};

const INDEXED_TYPE: Readonly<Record<string, Indexed>> = {
  Keyword: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  Int: IndexedValueType.INDEXED_VALUE_TYPE_INT,
  Double: IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
  Bool: IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
  Datetime: IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
  Text: IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
  KeywordList: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

/**
 * Our search attributes as the operator API takes them, after checking they fit SQL visibility's
 * per-type columns. `flags` are `Name=Type` pairs (workflows/domain/search-attributes.ts).
 */
export function sqlSearchAttributes(flags: string[] = searchAttributeFlags()): Record<string, Indexed> {
  const out: Record<string, Indexed> = {};
  const perType = new Map<string, string[]>();
  for (const flag of flags) {
    const [name, type] = flag.split('=');
    const indexed = type === undefined ? undefined : INDEXED_TYPE[type];
    if (!name || !type || indexed === undefined) throw new Error(`search attribute "${flag}" is not Name=Type`);
    out[name] = indexed;
    perType.set(type, [...(perType.get(type) ?? []), name]);
  }
  for (const [type, names] of perType) {
    const slots = SQL_VISIBILITY_SLOTS[type] ?? 0;
    if (names.length > slots) {
      throw new Error(
        `${names.length} ${type} search attributes (${names.join(', ')}) do not fit SQL visibility's ${slots} ${type} columns`,
      );
    }
  }
  return out;
}
