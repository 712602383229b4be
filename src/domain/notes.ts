/**
 * Notes a backend attaches to the active plan: a stable code that callers and the advice rules
 * match on, and a sentence for a person. The text may be reworded; the codes are a public contract
 * (add codes, never rename them).
 */
import { z } from 'zod';

export const NoteCode = z
  .enum([
    'policy-managed',
    'policy-unknown',
    'owner-inactive',
    'no-performance-profile',
    'profile-degraded',
    'vm-host-decides',
    'cpus-disagree',
    'passive-powersave',
  ])
  .meta({
    id: 'NoteCode',
    description:
      'policy-managed: group policy sets the plan and reverts a change; policy-unknown: whether it does could not be checked; ' +
      'owner-inactive: a power daemon is installed but not in charge; no-performance-profile: power-profiles-daemon offers ' +
      'no performance profile (placeholder driver); profile-degraded: a profile runs with reduced performance; ' +
      "vm-host-decides: a virtual machine, whose host's power policy decides the CPU clock; cpus-disagree: the CPUs run " +
      'different settings; passive-powersave: the powersave governor pins the minimum clock (intel_pstate passive).',
  });
export type NoteCode = z.infer<typeof NoteCode>;

export const Note = z
  .object({
    code: NoteCode,
    text: z.string().describe('The note in words, with what to do about it.'),
  })
  .meta({ id: 'Note', description: 'Something the caller should know about this answer.' });
export type Note = z.infer<typeof Note>;

/** The note fields of an answer: the notes, and their texts as `warnings` for clients that read those. */
export const noteFields = (notes: readonly Note[]): { notes?: Note[]; warnings?: string[] } =>
  notes.length ? { notes: [...notes], warnings: notes.map((n) => n.text) } : {};
