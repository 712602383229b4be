/**
 * Turns raw strings (query parameters, CLI flags) into the types an operation's input schema
 * expects, so the zod schema stays the single validator. Booleans and numbers are converted, and a
 * list is given as one comma-separated string (`--plans a,b`, `?idleGapsMs=50,200`); anything else
 * is left for zod to judge.
 */
import { z } from 'zod';
import { PowerPlanError } from '../domain/errors.ts';
import type { Operation } from '../operations/define.ts';

export interface FieldInfo {
  name: string;
  type: 'string' | 'boolean' | 'number' | 'integer' | 'array' | 'object' | 'unknown';
  description?: string;
  /** Type of the elements when `type` is `array`. */
  items?: FieldInfo['type'];
  required: boolean;
  enum?: readonly unknown[];
  default?: unknown;
  maximum?: number;
}

const cache = new WeakMap<Operation, FieldInfo[]>();

/** The top-level fields of an operation's input, read from its JSON schema (computed once). */
export const inputFields = (op: Operation): FieldInfo[] => {
  const hit = cache.get(op);
  if (hit) return hit;
  const schema = z.toJSONSchema(op.input, { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<
      string,
      {
        type?: string;
        description?: string;
        enum?: unknown[];
        default?: unknown;
        maximum?: number;
        items?: { type?: string };
      }
    >;
    required?: string[];
  };
  const fields = Object.entries(schema.properties ?? {}).map(([name, p]) => ({
    name,
    type: (p.type as FieldInfo['type']) ?? 'unknown',
    ...(p.items?.type ? { items: p.items.type as FieldInfo['type'] } : {}),
    required: schema.required?.includes(name) ?? false,
    ...(p.description ? { description: p.description } : {}),
    ...(p.enum ? { enum: p.enum } : {}),
    ...(p.default !== undefined ? { default: p.default } : {}),
    ...(p.maximum !== undefined ? { maximum: p.maximum } : {}),
  }));
  cache.set(op, fields);
  return fields;
};

const toScalar = (field: Pick<FieldInfo, 'type' | 'items'>, raw: string): unknown => {
  if (field.type === 'array') {
    const item = { type: field.items ?? 'string' };
    // A list may also be written as the descriptions show it, in brackets: [50, 200, 1000].
    const list = /^\s*\[(.*)\]\s*$/s.exec(raw)?.[1] ?? raw;
    return list
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')
      .map((s) => toScalar(item, s));
  }
  if (field.type === 'boolean') {
    if (raw === 'true' || raw === '1' || raw === '') return true;
    if (raw === 'false' || raw === '0') return false;
    return raw;
  }
  if (field.type === 'number' || field.type === 'integer') {
    const n = Number(raw);
    return raw.trim() !== '' && Number.isFinite(n) ? n : raw;
  }
  return raw;
};

/** Converts string values by the field types; repeated keys and unknown keys are left to the caller / zod. */
export const coerceStrings = (
  op: Operation,
  raw: Record<string, string | string[]>,
): Record<string, unknown> => {
  const fields = new Map(inputFields(op).map((f) => [f.name, f]));
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (Array.isArray(value)) {
      if (value.length > 1) throw new PowerPlanError('invalid_input', `${key}: given more than once`);
      out[key] = value[0];
    } else {
      out[key] = value;
    }
    const field = fields.get(key);
    if (field && typeof out[key] === 'string') out[key] = toScalar(field, out[key] as string);
  }
  return out;
};
