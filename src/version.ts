/** The service's own version, from package.json. */
import pkg from '../package.json' with { type: 'json' };

export const version: string = pkg.version;
