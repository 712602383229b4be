export type Standin = 'powercfg' | 'reg' | 'icacls' | 'powershell' | 'wevtutil' | 'powerplan-service';
export declare const STANDINS: Record<Standin, string>;
export declare const linkStandins: (
  exe: string,
  dir: string,
  env?: Record<string, string>,
) => Record<Standin, string>;
export declare const buildStandins: (
  dir: string,
  prefix?: unknown,
) => Promise<{
  exe: string;
  paths: Record<Standin, string>;
}>;
