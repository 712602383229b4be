/** get_system_info's answer: this machine, the service, and which backend answers with what. */
import { arch, availableParallelism, cpus, hostname, platform, release } from 'node:os';
import type { SystemInfo } from '../domain/schemas.ts';
import type { PowerBackend } from '../platform/backend.ts';
import { version } from '../version.ts';

export const systemInfo = async (backend: PowerBackend, fleet: boolean): Promise<SystemInfo> => {
  const [facts, capabilities] = await Promise.all([backend.facts(), backend.capabilities()]);
  return {
    hostname: hostname(),
    os: platform() === 'win32' ? 'windows' : platform(),
    release: release(),
    arch: arch(),
    cpu: { model: cpus()[0]?.model.trim() || 'unknown', logicalCpus: availableParallelism() },
    virtualization: facts.virtualization,
    powerSource: facts.powerSource,
    backend: { name: backend.name, capabilities },
    service: { version, node: process.version, execArgv: [...process.execArgv], fleet },
  };
};
