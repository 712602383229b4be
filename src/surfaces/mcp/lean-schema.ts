/**
 * The output schemas of tools/list, lean: a client validates structured content against them, a
 * model is not shown them, and the full contract (every field described, every level) is the
 * OpenAPI document. So an output schema keeps the answer's fields and those of its direct parts
 * with their types, enums and what is required, and states deeper parts by their type alone; it
 * drops descriptions and titles, which the tool's description and the OpenAPI document carry, and
 * `additionalProperties: false` (a client need not refuse a field a newer service adds). Every
 * answer that passes the full schema passes this one. Definitions a tool's schema shares stay
 * `$ref`s to one copy.
 */

type Json = Record<string, unknown>;

/** Levels of fields kept whole below the answer's own: its parts' fields, and theirs by type. */
const DEPTH = 1;

const dropped = new Set(['description', 'title', 'examples', '$schema']);
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const refName = (ref: unknown) => String(ref).split('/').pop() ?? '';

/** An output schema (portable, draft-07 `definitions`) cut to DEPTH levels and stripped of prose. */
export const leanOutputSchema = (root: Json): Json => {
  const defs = (isObject(root.definitions) ? root.definitions : {}) as Record<string, Json>;
  const kept = new Map<string, Json>();

  /** Only the type of a part too deep to spell out (a `$ref` resolved, a union kept as a union). */
  const typeOnly = (n: Json): Json => {
    if (n.$ref !== undefined) return typeOnly(defs[refName(n.$ref)] ?? {});
    if (n.type !== undefined) return n.enum ? { type: n.type, enum: n.enum } : { type: n.type };
    if (Array.isArray(n.anyOf)) return { anyOf: n.anyOf.map((b) => typeOnly(b as Json)) };
    if (Array.isArray(n.allOf) && n.allOf.length === 1) return typeOnly(n.allOf[0] as Json);
    if (n.enum !== undefined) return { enum: n.enum };
    if (n.const !== undefined) return { const: n.const };
    return n;
  };

  const walk = (node: unknown, depth: number): unknown => {
    if (!isObject(node)) return node;
    const nested = node.type === 'object' || node.type === 'array' || node.$ref !== undefined;
    if (depth > DEPTH && nested) return typeOnly(node);
    if (node.$ref !== undefined) {
      const name = refName(node.$ref);
      if (!kept.has(name)) {
        kept.set(name, {});
        kept.set(name, walk(defs[name] ?? {}, depth) as Json);
      }
      return { $ref: node.$ref };
    }
    const out: Json = {};
    for (const [k, v] of Object.entries(node)) {
      if (dropped.has(k) || k === 'definitions' || (k === 'additionalProperties' && v === false)) continue;
      if (k === 'properties' && isObject(v))
        out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, walk(s, depth + 1)]));
      else if ((k === 'items' || k === 'additionalProperties') && isObject(v)) out[k] = walk(v, depth + 1);
      else if ((k === 'anyOf' || k === 'allOf' || k === 'oneOf') && Array.isArray(v))
        out[k] = v.map((s) => walk(s, depth));
      else out[k] = v;
    }
    return out;
  };

  const out = walk(root, 0) as Json;
  if (kept.size) out.definitions = Object.fromEntries(kept);
  return out;
};
