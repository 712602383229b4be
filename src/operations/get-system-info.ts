/** get_system_info: what this machine is and which backend answers for it. */
import { fleetConfigured } from '../config.ts';
import { SystemInfo } from '../domain/schemas.ts';
import { facts } from '../lib/table.ts';
import { systemInfo } from '../services/system-info.ts';
import { defineOperation, readOnly } from './define.ts';
import { noInput } from './inputs.ts';

export const getSystemInfo = defineOperation({
  name: 'get_system_info',
  title: 'System information',
  description:
    'Describes this machine: OS, release, CPU model and logical CPU count, whether it is a virtual machine ' +
    '(where the hypervisor host, not the guest, mostly decides CPU power policy), the power source, and which ' +
    'power backend answers with what capabilities. Cheap and read-only; call it first.',
  input: noInput,
  output: SystemInfo,
  annotations: readOnly,
  scope: 'read',
  http: { method: 'GET', path: '/v1/system' },
  cli: {
    command: ['system'],
    format: (s) =>
      facts(
        [
          ['Host:', `${s.hostname} (${s.os} ${s.release}, ${s.arch})`],
          ['CPU:', `${s.cpu.model}, ${s.cpu.logicalCpus} logical CPUs`],
          [
            'Virtualization:',
            s.virtualization.detected ? `yes (${s.virtualization.kind ?? 'unknown'})` : 'none detected',
          ],
          ['Power source:', s.powerSource],
          [
            'Backend:',
            `${s.backend.name} (${
              Object.entries(s.backend.capabilities)
                .filter(([, v]) => v)
                .map(([k]) => k)
                .join(', ') || 'read-only'
            })`,
          ],
        ],
        { width: 16, indent: '' },
      ).join('\n'),
  },
  handler: async (_input, ctx) => systemInfo(ctx.backend, fleetConfigured(ctx.config)),
});
