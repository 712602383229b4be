/**
 * power-profiles-daemon's state read from its D-Bus properties, without starting a program: one
 * system-bus connection, kept open, asks `GetAll` once and keeps the answer until the daemon says
 * otherwise (`PropertiesChanged`) or its name changes hands (`NameOwnerChanged`: started, stopped,
 * replaced by tuned-ppd). The name since 0.20, org.freedesktop.UPower.PowerProfiles, is asked
 * first, then the older net.hadess.PowerProfiles. Calls never start a daemon (NO_AUTO_START).
 */
import { DBusConnection } from '../../lib/dbus-connection.ts';
import type { Message } from '../../lib/dbus-wire.ts';
import type { PpdProfile } from './parsers.ts';
import { present } from './sysfs.ts';

export const PPD_NAMES = [
  { name: 'org.freedesktop.UPower.PowerProfiles', path: '/org/freedesktop/UPower/PowerProfiles' },
  { name: 'net.hadess.PowerProfiles', path: '/net/hadess/PowerProfiles' },
] as const;

export interface PpdPaths {
  /** The system bus socket. Default /run/dbus/system_bus_socket. */
  busSocket: string;
  /** Files whose presence means "installed" (its D-Bus service files). */
  installed: readonly string[];
}

export const defaultPpdPaths: PpdPaths = {
  busSocket: '/run/dbus/system_bus_socket',
  installed: PPD_NAMES.map((n) => `/usr/share/dbus-1/system-services/${n.name}.service`),
};

export type PpdAnswer =
  | { running: true; name: string; active: string | null; profiles: PpdProfile[] }
  | { running: false; reason: string };

type Props = Record<string, unknown>;

/** The properties as powerprofilesctl shows them: CpuDriver/PlatformDriver when given, else Driver. */
export const ppdProfiles = (props: Props): PpdProfile[] => {
  const degradedBy = typeof props.PerformanceDegraded === 'string' ? props.PerformanceDegraded : '';
  const list = Array.isArray(props.Profiles) ? (props.Profiles as Props[]) : [];
  return list.map((p) => {
    const name = String(p.Profile);
    const split = ['CpuDriver', 'PlatformDriver'].filter((k) => typeof p[k] === 'string');
    const keys = split.length ? split : typeof p.Driver === 'string' ? ['Driver'] : [];
    return {
      name,
      active: name === props.ActiveProfile,
      drivers: Object.fromEntries(keys.map((k) => [k, String(p[k])])),
      degraded: name === 'performance' ? { degraded: degradedBy !== '', reason: degradedBy || null } : null,
    };
  });
};

export class PpdBus {
  readonly #paths: PpdPaths;
  readonly #uid: number;
  #conn: Promise<DBusConnection> | null = null;
  #answer: Promise<PpdAnswer> | null = null;
  /** How many GetAll calls were made (tests count them). */
  fetches = 0;

  constructor(paths: PpdPaths, uid: number) {
    this.#paths = paths;
    this.#uid = uid;
  }

  /** Whether the daemon's package is installed (its D-Bus service file exists). */
  async installed(): Promise<boolean> {
    return this.#paths.installed.some(present);
  }

  #connect(): Promise<DBusConnection> {
    this.#conn ??= (async () => {
      const conn = await DBusConnection.open(this.#paths.busSocket, this.#uid);
      conn.on('signal', (m: Message) => {
        if (m.member === 'PropertiesChanged' || m.member === 'NameOwnerChanged') this.#answer = null;
      });
      conn.on('close', () => this.forget(true));
      for (const n of PPD_NAMES) {
        await conn.addMatch(
          `type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path='${n.path}'`,
        );
        await conn.addMatch(
          `type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='${n.name}'`,
        );
      }
      return conn;
    })();
    this.#conn.catch(() => {
      this.#conn = null;
    });
    return this.#conn;
  }

  async #fetch(): Promise<PpdAnswer> {
    let conn: DBusConnection;
    try {
      conn = await this.#connect();
    } catch (e) {
      this.#conn = null;
      return { running: false, reason: `no system bus at ${this.#paths.busSocket}: ${(e as Error).message}` };
    }
    for (const n of PPD_NAMES) {
      if (!(await conn.nameOwner(n.name))) continue;
      this.fetches++;
      const [props] = (await conn.call({
        destination: n.name,
        path: n.path,
        interface: 'org.freedesktop.DBus.Properties',
        member: 'GetAll',
        signature: 's',
        body: [n.name],
      })) as [Props];
      return {
        running: true,
        name: n.name,
        active: typeof props.ActiveProfile === 'string' ? props.ActiveProfile : null,
        profiles: ppdProfiles(props),
      };
    }
    return {
      running: false,
      reason: `no process owns ${PPD_NAMES.map((n) => n.name).join(' or ')} on the system bus`,
    };
  }

  /** The daemon's state: kept from the last answer until a signal says it changed. */
  read(): Promise<PpdAnswer> {
    this.#answer ??= this.#fetch();
    const answer = this.#answer;
    // Kept only while connected: without the bus no signal would say that the daemon came.
    answer.then(
      (a) => {
        if (!a.running && this.#conn === null && this.#answer === answer) this.#answer = null;
      },
      () => {
        if (this.#answer === answer) this.#answer = null;
      },
    );
    return answer;
  }

  /** Drops the kept answer (after a change through the daemon); `disconnect` closes the bus too. */
  forget(disconnect = false): void {
    this.#answer = null;
    if (disconnect) {
      const conn = this.#conn;
      this.#conn = null;
      conn?.then(
        (c) => c.close(),
        () => undefined,
      );
    }
  }
}
