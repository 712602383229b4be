/**
 * The one place where the backend is chosen: `auto` picks by platform, anything else is forced
 * (so the Windows backend can run against a powercfg emulator on Linux).
 */
import type { Config } from '../config.ts';
import type { Store } from '../lib/store.ts';
import type { PowerBackend } from './backend.ts';
import { createSimulatedBackend } from './simulated/simulated-backend.ts';
import { createUnsupportedBackend } from './unsupported.ts';

export const createBackend = (config: Config, store: Store): PowerBackend => {
  const choice = config.backend === 'auto' ? process.platform : config.backend;
  switch (choice) {
    case 'simulated':
      return createSimulatedBackend({ store });
    default:
      return createUnsupportedBackend(choice);
  }
};
