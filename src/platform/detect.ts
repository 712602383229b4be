/**
 * The one place where the backend is chosen: `auto` picks by platform, anything else is forced
 * (so the Windows backend can run against a powercfg emulator on Linux).
 */
import { dirname, join } from 'node:path';
import type { Config } from '../config.ts';
import type { IdleCounterReader } from '../domain/workload.ts';
import type { Store } from '../lib/store.ts';
import type { PowerBackend } from './backend.ts';
import { createLinuxIdleReader } from './linux/idle-counters.ts';
import { createLinuxBackend } from './linux/linux-backend.ts';
import { createSimulatedBackend } from './simulated/simulated-backend.ts';
import { createUnsupportedBackend } from './unsupported.ts';
import { createWindowsIdleReader } from './windows/idle-counters.ts';
import { createWindowsBackend } from './windows/windows-backend.ts';

export const createBackend = (config: Config, store: Store): PowerBackend => {
  const choice = config.backend === 'auto' ? process.platform : config.backend;
  switch (choice) {
    case 'simulated':
      return createSimulatedBackend({ store });
    case 'windows':
    case 'win32':
      return createWindowsBackend({
        powercfgPath: config.powercfg,
        regPath: config.reg,
        wevtutilPath: config.wevtutil,
        chcpPath: join(dirname(config.reg), 'chcp.com'),
        codepage: config.codepage,
      });
    case 'linux':
      return createLinuxBackend({ sysfsRoot: config.sysfsRoot, procfsRoot: config.procfsRoot });
    default:
      return createUnsupportedBackend(choice);
  }
};

/**
 * The live idle counters: the OS's own, whatever backend manages the plans (the simulated backend
 * simulates plans, not the work, so it reads the host it runs on); null where the OS offers none.
 */
export const createIdleReader = (config: Config): IdleCounterReader | null => {
  const choice =
    config.backend === 'auto' || config.backend === 'simulated' ? process.platform : config.backend;
  switch (choice) {
    case 'linux':
      return createLinuxIdleReader({ sysfsRoot: config.sysfsRoot, procfsRoot: config.procfsRoot });
    case 'windows':
    case 'win32':
      return createWindowsIdleReader({ powershell: config.powershell });
    default:
      return null;
  }
};
