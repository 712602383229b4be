export declare const PINNED: Record<
  string,
  { spec: string; file: string; sha256: string | null; version?: string }
>;
export declare const cacheDir: () => string;
export declare const sha256: (path: string) => string;
export declare const pinned: (
  name: 'nodeWin' | 'nodeLinux22' | 'nodeLinux24' | 'nodeLicense' | 'winsw',
) => string;
