// Types of win-emu-state.mjs for the TypeScript tests that build emulator states.
export interface EmuPlan {
  guid: string;
  name: string;
  /** Setting GUID -> [AC, DC]. */
  settings: Record<string, [number, number]>;
}

export interface EmuState {
  locale: string;
  codepage: number;
  active: string;
  plans: EmuPlan[];
  templates: EmuPlan[];
  delayMs: number;
  hang: boolean | string[];
  notElevated: boolean;
  noQh: boolean;
  policy: string | null;
  oemcp: number | null;
  firmware: Record<string, string>;
  nonSticky?: Record<string, [number, number]>;
  policySettings?: Record<string, [number, number]>;
  events?: string | null;
  eventsFile?: string;
  wevtutilFails?: boolean;
}

export declare const SCHEME: {
  balanced: string;
  highPerformance: string;
  powerSaver: string;
  ultimate: string;
};

export declare const S: Record<
  | 'idleDisable'
  | 'minState'
  | 'coolingPolicy'
  | 'maxState'
  | 'boostMode'
  | 'epp'
  | 'coreParkingMinCores'
  | 'perfIncreaseThreshold'
  | 'perfIncreaseTime'
  | 'personality'
  | 'idleStateMax'
  | 'idlePromote'
  | 'idleDemote',
  string
>;

export declare const stockState: (locale?: string, codepage?: number) => EmuState;
