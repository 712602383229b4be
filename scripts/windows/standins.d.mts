export declare const STANDINS: Record<
  'powercfg' | 'reg' | 'icacls' | 'wevtutil' | 'powerplan-service',
  string
>;
export declare const linkStandins: (
  exe: string,
  dir: string,
  env?: Record<string, string>,
) => Record<'powercfg' | 'reg' | 'icacls' | 'wevtutil' | 'powerplan-service', string>;
export declare const buildStandins: (
  dir: string,
  prefix?: unknown,
) => Promise<{
  exe: string;
  paths: Record<'powercfg' | 'reg' | 'icacls' | 'wevtutil' | 'powerplan-service', string>;
}>;
