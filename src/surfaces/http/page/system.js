// @ts-check
// "This machine": OS, CPU, virtual machine, power source, and the backend with what it can do. Also
// fills the host name in the header and the service version in the footer.
import { api } from './api.js';
import { byId, facts, note, replace } from './dom.js';
import { section } from './errors.js';

/** @typedef {import('../../../../openapi/api-types').components['schemas']['SystemInfo']} SystemInfo */

/** @type {Record<string, string>} */
const abilities = {
  listPlans: 'list plans',
  setPlan: 'set the plan',
  createPlan: 'create plans',
  processorSettings: 'read processor settings',
};

/**
 * The facts; the ones the backend gives (virtual machine, power source) are the simulated state's
 * on the simulated backend, not this machine's, and say so: the host, OS and CPU stay the real ones.
 * @param {SystemInfo} s
 */
const systemView = (s) => {
  const simulated = s.backend.name === 'simulated';
  const backendFact = (/** @type {string} */ label) => (simulated ? `${label} (simulated)` : label);
  return [
    facts([
      ['Host', s.hostname],
      ['OS', `${s.os} ${s.release} (${s.arch})`],
      ['CPU', `${s.cpu.model}, ${s.cpu.logicalCpus} logical CPUs`],
      [
        backendFact('Virtual machine'),
        s.virtualization.detected
          ? `yes${s.virtualization.kind ? ` (${s.virtualization.kind})` : ''}`
          : simulated
            ? 'no'
            : 'none detected',
      ],
      [backendFact('Power source'), s.powerSource],
      ['Backend', s.backend.name],
      [
        'Can',
        Object.entries(s.backend.capabilities)
          .filter(([, v]) => v)
          .map(([k]) => abilities[k] ?? k)
          .join(', ') || 'read only',
      ],
    ]),
    simulated
      ? note(
          'info',
          'Simulated backend:',
          'the plans, the virtual machine and the power source are a simulation, not this machine; the host, OS and CPU are real.',
        )
      : null,
  ];
};

/**
 * Loads and shows the system facts; resolves with them, or undefined when they could not be loaded.
 * @returns {Promise<SystemInfo | undefined>}
 */
export const loadSystem = async () => {
  /** @type {SystemInfo | undefined} */
  let system;
  await section(byId('system'), 'the system facts', async () => {
    const s = /** @type {SystemInfo} */ (await api('GET', '/v1/system'));
    system = s;
    byId('host').textContent = `· ${s.hostname}`;
    byId('version').textContent = `powerplan ${s.service.version}`;
    replace(byId('system'), systemView(s));
  });
  return system;
};
