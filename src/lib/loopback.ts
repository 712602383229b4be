/**
 * Loopback: the one place that knows which addresses and names mean "this machine only" (what a
 * service without a token file serves, where it may listen, which Host names the guard takes).
 */

/** The names a loopback URL uses, as they appear in a Host header (IPv6 in brackets). */
export const LOOPBACK_NAMES: readonly string[] = ['127.0.0.1', 'localhost', '[::1]'];

/** A peer address on loopback: ::1, 127.0.0.0/8, or 127.x as an IPv4-mapped IPv6 address. */
export const isLoopbackAddress = (address: string): boolean => {
  const a = address.toLowerCase();
  return a === '::1' || /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
};

/** A listen host that is loopback only: a loopback address (IPv6 with or without brackets) or localhost. */
export const isLoopbackHost = (host: string): boolean => {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || isLoopbackAddress(h);
};
