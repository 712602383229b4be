/**
 * The Windows backend: powercfg.exe run through the one command wrapper (argument arrays, a
 * timeout, no shell), its output decoded from the OEM code page and parsed by GUID. Reads share
 * one in-flight call and a short cache; a change clears it and is read back before it counts.
 * Runs on any OS when pointed at the powercfg emulator (test/emulators/powercfg.mjs).
 */
import { PowerPlanError } from '../../domain/errors.ts';
import { type Note, noteFields } from '../../domain/notes.ts';
import type { ActivePlan, Capabilities, Plan } from '../../domain/schemas.ts';
import { type RunFn, runCommand } from '../../lib/run-command.ts';
import type { BackendFacts, CreatableKind, PowerBackend } from '../backend.ts';
import { ReadCache } from '../read-cache.ts';
import { classifyScheme, isWellKnown } from './classify.ts';
import { DEFAULT_OEM_CODEPAGE, decodeOutput } from './decode.ts';
import { createEventReader, windowsControl } from './events.ts';
import { normalizeGuid, parseFirstScheme, parseSchemeList, type SchemeLine } from './parse.ts';
import { acdc, compareEffective, idleStates, policySettings, processorSettings } from './plan-settings.ts';
import { createPowercfg, quote } from './powercfg-command.ts';
import { createRegistry, type PolicyState } from './registry.ts';
import {
  CREATED_SCHEME,
  planTemplates,
  powercfgAliases,
  SETTING,
  STOCK_SETTINGS,
  SUB_NONE,
  SUB_PROCESSOR,
  stockDifferences,
  TEMPLATES,
} from './well-known.ts';

export interface WindowsBackendOptions {
  /** Full path of powercfg.exe (config.powercfg: POWERPLAN_POWERCFG or %SystemRoot%\System32). */
  powercfgPath: string;
  /** Full path of reg.exe; null or absent: the registry is not read (no policy / code page lookup). */
  regPath?: string | null;
  /** Full path of wevtutil.exe (Kernel-Processor-Power events); null or absent: not read. */
  wevtutilPath?: string | null;
  /** Full path of chcp.com, the code page source of last resort. */
  chcpPath?: string | null;
  /** The OEM code page of console output when known (config.codepage: POWERPLAN_CODEPAGE). */
  codepage?: number | undefined;
  run?: RunFn;
  /** Per call; a powercfg that hangs is killed after this. */
  timeoutMs?: number;
  /** How long a read is reused. */
  cacheTtlMs?: number;
}

export const createWindowsBackend = (options: WindowsBackendOptions): PowerBackend => {
  const run = options.run ?? runCommand;
  const timeoutMs = options.timeoutMs ?? 15_000;
  const cache = new ReadCache(options.cacheTtlMs ?? 1_500);
  const registry = createRegistry({
    run,
    regPath: options.regPath ?? null,
    chcpPath: options.chcpPath ?? null,
    timeoutMs,
  });
  /** Set when a change was refused for lack of rights; cleared by the next successful change. */
  let refused: string | null = null;

  let codepage: Promise<number> | undefined;
  const oemCodepage = (): Promise<number> => {
    codepage ??= options.codepage
      ? Promise.resolve(options.codepage)
      : registry.oemCodepage().then((cp) => cp ?? DEFAULT_OEM_CODEPAGE);
    return codepage;
  };
  const decode = (bytes: Buffer) => decodeOutput(bytes, oemCodepage);
  const { powercfg, query, unexpected } = createPowercfg({
    path: options.powercfgPath,
    run,
    timeoutMs,
    decode,
  });

  const listSchemes = () =>
    cache.get('list', async (): Promise<SchemeLine[]> => {
      const out = await powercfg(['/list']);
      const schemes = parseSchemeList(out);
      if (!schemes.length) throw unexpected('/list', out);
      return schemes;
    });

  const activeScheme = (live: boolean) =>
    cache.get(
      'active',
      async (): Promise<SchemeLine> => {
        const out = await powercfg(['/getactivescheme']);
        const scheme = parseFirstScheme(out);
        if (!scheme) throw unexpected('/getactivescheme', out);
        return { ...scheme, active: true };
      },
      live,
    );

  const processorQuery = (id: string) => cache.get(`processor:${id}`, () => query([id, SUB_PROCESSOR]));

  /** The personality value, or null where Windows does not show it (no `/qh`, setting absent). */
  const personality = (id: string) =>
    cache.get(`personality:${id}`, async (): Promise<number | null> => {
      try {
        const q = await query([id, SUB_NONE, SETTING.personality]);
        return q.settings.find((s) => s.id === SETTING.personality)?.ac ?? null;
      } catch (e) {
        if (e instanceof PowerPlanError && e.code === 'not_found') return null;
        throw e;
      }
    });

  const policy = (live: boolean) => cache.get('policy', (): Promise<PolicyState> => registry.policy(), live);

  const classify = async (id: string) => {
    if (isWellKnown(id)) {
      return classifyScheme({ id, personality: null, minStateAc: null });
    }
    const p = await personality(id);
    const minStateAc = p === null ? (acdc(await processorQuery(id), SETTING.minState)?.ac ?? null) : null;
    return classifyScheme({ id, personality: p, minStateAc });
  };

  /** A built-in plan's differences from its stock key settings (its own /qh; a failed read says nothing). */
  const edits = async (id: string) => {
    if (!STOCK_SETTINGS[id]) return [];
    const q = await processorQuery(id).catch(() => null);
    if (!q) return [];
    return stockDifferences(id, {
      minStatePercent: acdc(q, SETTING.minState)?.ac ?? null,
      maxStatePercent: acdc(q, SETTING.maxState)?.ac ?? null,
      idleDisable: acdc(q, SETTING.idleDisable)?.ac ?? null,
    });
  };

  const toPlan = async (s: SchemeLine): Promise<Plan> => {
    const [c, differences] = await Promise.all([classify(s.id), edits(s.id)]);
    return {
      id: s.id,
      name: s.name,
      kind: c.kind,
      kindSource: c.kindSource,
      active: s.active,
      builtin: c.builtin,
      ...(STOCK_SETTINGS[s.id] ? { edited: differences.length > 0 } : {}),
      ...(differences.length ? { differences } : {}),
    };
  };

  const processorEvents = createEventReader({ path: options.wevtutilPath ?? null, run, timeoutMs, decode });

  const capabilities = async (): Promise<Capabilities> => ({
    listPlans: true,
    setPlan: true,
    createPlan: true,
    processorSettings: true,
  });

  let virtualization: Promise<BackendFacts['virtualization']> | undefined;
  const vmFacts = () => {
    virtualization ??= registry.virtualization();
    return virtualization;
  };

  return {
    name: 'windows',
    capabilities,

    async listPlans() {
      return Promise.all((await listSchemes()).map(toPlan));
    },

    async getActive(options = {}): Promise<ActivePlan> {
      const live = options.live === true;
      const [active, pol] = await Promise.all([activeScheme(live), policy(live)]);
      const [plan, q, ev, virt] = await Promise.all([
        toPlan(active),
        processorQuery(active.id),
        processorEvents(),
        vmFacts(),
      ]);
      const notes: Note[] = [];
      if (pol.state === 'set') {
        notes.push({
          code: 'policy-managed',
          text: `Group policy sets the active power plan here (${pol.schemeId}); a change made through this service is reverted at the next policy refresh. Change the policy instead.`,
        });
      } else if (pol.state === 'unknown') {
        notes.push({
          code: 'policy-unknown',
          text: `Whether group policy owns the power plan could not be checked: ${pol.reason}.`,
        });
      }
      return {
        plan,
        processor: processorSettings(q),
        owner: pol.state === 'set' ? 'group-policy' : 'powercfg',
        policyManaged: pol.state === 'set',
        canSet: refused === null,
        ...(refused === null ? {} : { cannotSetReason: refused }),
        ...noteFields(notes),
        idle: idleStates(q),
        control: windowsControl(
          ev.events,
          virt.detected ? (virt.kind ?? 'virtual machine') : null,
          ev.reason,
        ),
      };
    },

    async checkEffective(planId) {
      const id = normalizeGuid(planId) ?? planId;
      cache.clear();
      // What the scheme asks for, what the power manager reports in force, and single-setting policies.
      const [wanted, current, pinned] = await Promise.all([
        query([id, SUB_PROCESSOR]),
        query(['SCHEME_CURRENT', SUB_PROCESSOR]),
        policySettings(registry),
      ]);
      return compareEffective(wanted, current, pinned);
    },

    async setActive(planId) {
      const id = normalizeGuid(planId);
      if (!id) {
        throw new PowerPlanError('not_found', `'${quote(planId)}' is not a power scheme GUID.`, {
          available: (await listSchemes()).map((s) => ({ id: s.id, name: s.name })),
        });
      }
      try {
        await powercfg(['/setactive', id]);
      } catch (e) {
        cache.clear();
        if (e instanceof PowerPlanError && e.code === 'forbidden') refused = e.message;
        // An error text in a language we do not know: the list says for sure whether the scheme exists.
        if (e instanceof PowerPlanError && e.code === 'os_error') {
          const schemes = await listSchemes().catch(() => null);
          if (schemes && !schemes.some((s) => s.id === id)) {
            throw new PowerPlanError('not_found', `Power scheme ${id} does not exist here.`, {
              available: schemes.map((s) => ({ id: s.id, name: s.name })),
            });
          }
        }
        throw e;
      }
      cache.clear();
      const now = await activeScheme(true);
      if (now.id !== id) {
        throw new PowerPlanError(
          'os_error',
          `powercfg accepted /setactive ${id}, but the active scheme is still ${now.id} (${now.name}); group policy or another program may have reverted it.`,
          { requested: id, active: now.id },
        );
      }
      refused = null;
    },

    async createPlan(kind: CreatableKind) {
      const template = TEMPLATES[kind].id;
      let out: string;
      try {
        out = await powercfg(['/duplicatescheme', template, CREATED_SCHEME[kind]]);
      } catch (e) {
        if (e instanceof PowerPlanError && e.code === 'forbidden') refused = e.message;
        throw e;
      } finally {
        cache.clear();
      }
      const scheme = parseFirstScheme(out);
      if (!scheme) throw unexpected(`/duplicatescheme ${template}`, out);
      return {
        id: scheme.id,
        name: scheme.name,
        kind,
        kindSource: 'well-known-id',
        active: false,
        builtin: false,
      };
    },

    async facts(): Promise<BackendFacts> {
      return { virtualization: await vmFacts(), powerSource: 'unknown' };
    },

    aliases: () => ({ ...powercfgAliases }),
    templates: planTemplates,
  };
};
