/**
 * Values shared between requests because nothing can change them: deeply frozen, and known to be
 * (a value frozen here is recorded, so "the same object as last time" proves "the same content").
 * Whoever answers such a value from a cache keeps reads cheap without a copy per request, and
 * whoever receives one may reuse what it derived from it the last time (a checked output, its JSON).
 */

/** Objects frozen by `freezeDeep`, with everything they reach. */
const deeplyFrozen = new WeakSet<object>();

/** Freezes `v` and everything it reaches, and records it as deeply frozen; answers `v`. */
export const freezeDeep = <T>(v: T): T => {
  if (v === null || typeof v !== 'object' || deeplyFrozen.has(v)) return v;
  // Recorded first: a cycle ends here.
  deeplyFrozen.add(v);
  Object.freeze(v);
  for (const x of Object.values(v)) freezeDeep(x);
  return v;
};

/** True for a primitive or an object `freezeDeep` froze: its content can never change. */
export const isFrozenDeep = (v: unknown): boolean =>
  v === null || typeof v !== 'object' || deeplyFrozen.has(v);

/** The JSON text of deeply frozen objects, made once each. */
const texts = new WeakMap<object, string>();

/** `JSON.stringify(v)`, made once per deeply frozen object. */
export const jsonText = (v: unknown): string => {
  if (v === null || typeof v !== 'object' || !deeplyFrozen.has(v)) return JSON.stringify(v);
  let text = texts.get(v);
  if (text === undefined) {
    text = JSON.stringify(v);
    texts.set(v, text);
  }
  return text;
};

/**
 * `derive`, made once per object and deeply frozen: for what is derived from a frozen value alone
 * (it cannot change while the value is the same object).
 */
export const onceEach = <K extends object, V>(derive: (k: K) => V): ((k: K) => V) => {
  const made = new WeakMap<K, V>();
  return (k) => {
    let v = made.get(k);
    if (v === undefined) {
      v = freezeDeep(derive(k));
      made.set(k, v);
    }
    return v;
  };
};
