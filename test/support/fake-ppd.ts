/**
 * A private D-Bus (Debian's dbus-daemon with the session configuration, on a socket in a temp dir)
 * and a stand-in for power-profiles-daemon on it: it owns the daemon's bus names and answers
 * `Properties.GetAll` / `Get` from the powerprofilesctl emulator's JSON state file, read at every
 * call, so a `powerprofilesctl set` through the emulator is what the next D-Bus read sees. The
 * property layout is the daemon's: `Driver` only before 0.20 (`format: "old"`, only the
 * net.hadess name), `CpuDriver` / `PlatformDriver` (and `Driver: "multiple"`) and both names after.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { DBusConnection } from '../../src/lib/dbus-connection.ts';
import { type Message, MessageType, Variant } from '../../src/lib/dbus-wire.ts';
import { PPD_NAMES } from '../../src/platform/linux/ppd-bus.ts';

export interface Bus {
  socket: string;
  stop: () => Promise<void>;
}

/** Starts dbus-daemon on `<dir>/bus`; resolves once it prints its address. */
export const startBus = async (dir: string): Promise<Bus> => {
  const socket = join(dir, 'bus');
  const child: ChildProcess = spawn(
    'dbus-daemon',
    ['--session', '--nofork', '--print-address', `--address=unix:path=${socket}`],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`dbus-daemon exited with ${code}`)));
    createInterface({ input: child.stdout! }).once('line', () => resolve());
  });
  return {
    socket,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
};

interface EmuProfile {
  name: string;
  cpuDriver?: string;
  platformDriver?: string;
  degraded?: string;
}
interface EmuState {
  format: 'old' | 'new';
  active: string;
  profiles: EmuProfile[];
}

const properties = (state: EmuState): Record<string, Variant> => {
  const s = (v: string) => new Variant('s', v);
  const profiles = state.profiles.map((p) =>
    state.format === 'old'
      ? { Profile: s(p.name), Driver: s(p.cpuDriver ?? p.platformDriver ?? 'placeholder') }
      : {
          Profile: s(p.name),
          Driver: s('multiple'),
          ...(p.cpuDriver ? { CpuDriver: s(p.cpuDriver) } : {}),
          ...(p.platformDriver ? { PlatformDriver: s(p.platformDriver) } : {}),
        },
  );
  const degraded = state.profiles.find((p) => p.name === 'performance')?.degraded ?? '';
  return {
    ActiveProfile: s(state.active),
    Profiles: new Variant('aa{sv}', profiles),
    PerformanceDegraded: s(degraded),
    PerformanceInhibited: s(''),
    Actions: new Variant('as', []),
    ActiveProfileHolds: new Variant('aa{sv}', []),
    Version: s(state.format === 'old' ? '0.12' : '0.23'),
  };
};

export interface FakePpd {
  /** GetAll / Get calls answered so far. */
  reads: () => number;
  /** Emits PropertiesChanged as the daemon does after a change (call after editing the state file). */
  changed: () => void;
  stop: () => void;
}

/** Connects to the bus at `socket` and serves the daemon's properties from `statePath`. */
export const startFakePpd = async (socket: string, statePath: string): Promise<FakePpd> => {
  const conn = await DBusConnection.open(socket, process.getuid?.() ?? 0);
  const state = (): EmuState => JSON.parse(readFileSync(statePath, 'utf8')) as EmuState;
  const names =
    state().format === 'old' ? PPD_NAMES.filter((n) => n.name === 'net.hadess.PowerProfiles') : PPD_NAMES;
  let reads = 0;
  conn.on('call', (m: Message) => {
    const reply = (signature: string, body: unknown[], errorName?: string) =>
      conn.send({
        type: errorName ? MessageType.error : MessageType.reply,
        flags: 1,
        replySerial: m.serial,
        ...(m.sender ? { destination: m.sender } : {}),
        ...(errorName ? { errorName } : {}),
        signature,
        body,
      });
    const props = properties(state());
    if (m.interface === 'org.freedesktop.DBus.Properties' && m.member === 'GetAll') {
      reads++;
      reply('a{sv}', [props]);
    } else if (m.interface === 'org.freedesktop.DBus.Properties' && m.member === 'Get') {
      reads++;
      const v = props[String(m.body[1])];
      if (v) reply('v', [v]);
      else reply('s', ['no such property'], 'org.freedesktop.DBus.Error.InvalidArgs');
    } else {
      reply('s', [`${m.member} is not served here`], 'org.freedesktop.DBus.Error.UnknownMethod');
    }
  });
  for (const n of names) {
    await conn.call({
      destination: 'org.freedesktop.DBus',
      path: '/org/freedesktop/DBus',
      interface: 'org.freedesktop.DBus',
      member: 'RequestName',
      signature: 'su',
      body: [n.name, 4],
    });
  }
  return {
    reads: () => reads,
    changed: () => {
      for (const n of names) {
        conn.send({
          type: MessageType.signal,
          flags: 1,
          path: n.path,
          interface: 'org.freedesktop.DBus.Properties',
          member: 'PropertiesChanged',
          signature: 'sa{sv}as',
          body: [n.name, { ActiveProfile: new Variant('s', state().active) }, []],
        });
      }
    },
    stop: () => conn.close(),
  };
};
