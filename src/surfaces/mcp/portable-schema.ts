/**
 * Tool schemas every assistant accepts. zod writes a nullable field as `"type": ["string",
 * "null"]` (draft-07) and an unknown value as `{}`; some clients reject both (Gemini's function
 * declarations take a single `type`; a schema that constrains nothing reads as a bare `true`).
 * This rewrite keeps the contract and changes only the spelling, so the schemas pass the MCP
 * Inspector's `--strict` portability check (rules: type-union, untyped-schema, boolean-schema,
 * remote-ref) with no finding:
 * - a type array becomes `anyOf` branches of one `type` each, every type-specific keyword moving
 *   into the branch of its type;
 * - a schema that constrains nothing becomes `anyOf` over the six JSON types (any value, spelled out),
 *   or `true` where the keyword takes a boolean (`additionalProperties`).
 */
import { z } from 'zod';

type Json = Record<string, unknown>;

/** Keywords that constrain an instance (as the Inspector counts them). */
const constraining = new Set([
  'type',
  'enum',
  'const',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'format',
  'maxItems',
  'minItems',
  'uniqueItems',
  'maxContains',
  'minContains',
  'maxProperties',
  'minProperties',
  'required',
  'dependentRequired',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'items',
  'prefixItems',
  'contains',
  'additionalItems',
  'unevaluatedItems',
  'properties',
  'patternProperties',
  'additionalProperties',
  'unevaluatedProperties',
  'propertyNames',
  'dependentSchemas',
  'dependencies',
  '$ref',
  '$dynamicRef',
  '$recursiveRef',
]);

/** Which keywords belong to which type when a type array is split. */
const keywordType: Record<string, string[]> = {
  string: ['minLength', 'maxLength', 'pattern', 'format'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  array: ['items', 'prefixItems', 'minItems', 'maxItems', 'uniqueItems', 'contains', 'additionalItems'],
  object: [
    'properties',
    'required',
    'additionalProperties',
    'patternProperties',
    'propertyNames',
    'minProperties',
    'maxProperties',
  ],
};
const familyOf = (t: string) => (t === 'integer' ? 'number' : t);

const ANY_VALUE = ['object', 'array', 'string', 'number', 'boolean', 'null'].map((type) => ({ type }));
const booleanValued = new Set([
  'additionalProperties',
  'unevaluatedProperties',
  'additionalItems',
  'unevaluatedItems',
]);
const mapKeywords = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const arrayKeywords = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const singleKeywords = [
  'items',
  'additionalProperties',
  'not',
  'contains',
  'propertyNames',
  'if',
  'then',
  'else',
  'additionalItems',
  'unevaluatedItems',
  'unevaluatedProperties',
];

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const splitTypes = (node: Json, types: string[]): Json => {
  const out: Json = {};
  const specific = new Set(Object.values(keywordType).flat());
  for (const [k, v] of Object.entries(node)) if (k !== 'type' && k !== 'enum' && !specific.has(k)) out[k] = v;
  out.anyOf = types.map((t) => {
    const branch: Json = { type: t };
    for (const k of keywordType[familyOf(t)] ?? []) if (k in node) branch[k] = node[k];
    // A nullable enum lists null among its values: each branch keeps the values of its own type.
    if (Array.isArray(node.enum)) {
      const values = node.enum.filter((v) => (v === null ? 'null' : typeof v) === familyOf(t));
      if (values.length) branch.enum = values;
    }
    return branch;
  });
  return out;
};

const rewrite = (node: unknown, keyword?: string): unknown => {
  if (typeof node === 'boolean')
    return keyword && booleanValued.has(keyword) ? node : node ? { anyOf: ANY_VALUE } : { not: {} };
  if (!isObject(node)) return node;
  let n: Json = { ...node };
  for (const k of mapKeywords) {
    if (isObject(n[k]))
      n[k] = Object.fromEntries(Object.entries(n[k]).map(([name, s]) => [name, rewrite(s)]));
  }
  for (const k of arrayKeywords) if (Array.isArray(n[k])) n[k] = (n[k] as unknown[]).map((s) => rewrite(s));
  for (const k of singleKeywords) if (k in n) n[k] = rewrite(n[k], k);
  if (Array.isArray(n.type))
    n = n.type.length === 1 ? { ...n, type: n.type[0] } : splitTypes(n, n.type as string[]);
  const constrains =
    Object.keys(n).some((k) => constraining.has(k)) || ('if' in n && ('then' in n || 'else' in n));
  if (!constrains && keyword !== 'not') {
    if (keyword && booleanValued.has(keyword)) return true;
    n = { ...n, anyOf: ANY_VALUE };
  }
  return n;
};

/** A zod schema as a portable JSON Schema (draft-07, as MCP clients expect), for tools/list. */
export const portableJsonSchema = (schema: z.ZodType, io: 'input' | 'output'): Json => {
  const json = z.toJSONSchema(schema, { target: 'draft-7', io, unrepresentable: 'any' }) as Json;
  return rewrite(json) as Json;
};
