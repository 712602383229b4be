/** The Windows value pair (mains and battery) that processor and idle settings share. */
import { z } from 'zod';

export const AcDc = z
  .object({
    ac: z.number().nullable().describe('Value when on mains power.'),
    dc: z.number().nullable().describe('Value when on battery.'),
  })
  .meta({ id: 'AcDc', description: 'A Windows setting with separate mains (AC) and battery (DC) values.' });
export type AcDc = z.infer<typeof AcDc>;
