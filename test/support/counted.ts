/** Counts the calls of `obj[name]`, an own property (a service's method, a zod v4 schema's `parse`). */
export const counted = <T extends object, K extends keyof T>(obj: T, name: K) => {
  const original = obj[name] as (...args: unknown[]) => unknown;
  const count = { calls: 0, restore: () => Object.assign(obj, { [name]: original }) };
  Object.assign(obj, {
    [name]: (...args: unknown[]) => {
      count.calls++;
      return original.apply(obj, args);
    },
  });
  return count;
};
