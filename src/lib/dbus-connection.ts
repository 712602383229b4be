/**
 * A D-Bus connection over a Unix socket (the system bus at /run/dbus/system_bus_socket): EXTERNAL
 * authentication by uid, Hello, method calls answered by their reply or error, and signals for
 * the match rules added. It keeps the event loop alive only while a call is waiting, so a one-shot
 * command that used it still exits. See docs/LINUX.md for why this is not a library.
 */
import { EventEmitter } from 'node:events';
import { connect, type Socket } from 'node:net';
import { decodeMessage, encodeMessage, type Message, MessageType, NO_AUTO_START } from './dbus-wire.ts';

export class DBusError extends Error {
  /** The D-Bus error name, e.g. org.freedesktop.DBus.Error.NameHasNoOwner. */
  readonly errorName: string;
  constructor(errorName: string, message: string) {
    super(`${errorName}: ${message}`);
    this.errorName = errorName;
  }
}

export interface Call {
  destination?: string;
  path: string;
  interface?: string;
  member: string;
  signature?: string;
  body?: unknown[];
}

const BUS = {
  destination: 'org.freedesktop.DBus',
  path: '/org/freedesktop/DBus',
  interface: 'org.freedesktop.DBus',
};

export class DBusConnection extends EventEmitter<{
  signal: [Message];
  call: [Message];
  close: [];
}> {
  readonly #socket: Socket;
  #serial = 1;
  #pending = new Map<number, { resolve: (m: Message) => void; reject: (e: Error) => void }>();
  #buf: Buffer = Buffer.alloc(0);
  #closed = false;
  /** This connection's unique name (":1.42"). */
  name = '';

  private constructor(socket: Socket) {
    super();
    this.#socket = socket;
  }

  /** Connects, authenticates and says Hello; rejects when there is no bus or it refuses. */
  static async open(socketPath: string, uid: number, timeoutMs = 5_000): Promise<DBusConnection> {
    const socket = connect(socketPath);
    const conn = new DBusConnection(socket);
    const timer = setTimeout(
      () => socket.destroy(new Error(`no answer from the bus in ${timeoutMs} ms`)),
      timeoutMs,
    );
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('error', reject);
        socket.once('connect', () => {
          socket.off('error', reject);
          resolve();
        });
      });
      socket.write(`\0AUTH EXTERNAL ${Buffer.from(String(uid)).toString('hex')}\r\n`);
      const line = await new Promise<string>((resolve, reject) => {
        let text = '';
        const onData = (d: Buffer) => {
          text += d.toString('latin1');
          const end = text.indexOf('\r\n');
          if (end < 0) return;
          socket.off('data', onData);
          socket.off('error', reject);
          if (end + 2 < text.length) conn.#buf = Buffer.from(text.slice(end + 2), 'latin1');
          resolve(text.slice(0, end));
        };
        socket.on('data', onData);
        socket.once('error', reject);
        socket.once('close', () => reject(new Error('the bus closed the connection')));
      });
      if (!line.startsWith('OK ')) throw new Error(`the bus refused authentication: ${line}`);
      socket.write('BEGIN\r\n');
      conn.#listen();
      [conn.name] = (await conn.call({ ...BUS, member: 'Hello' })) as [string];
      return conn;
    } catch (e) {
      socket.destroy();
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  #listen() {
    const socket = this.#socket;
    socket.on('data', (d: Buffer) => {
      this.#buf = this.#buf.length ? Buffer.concat([this.#buf, d]) : d;
      try {
        for (let next = decodeMessage(this.#buf); next; next = decodeMessage(this.#buf)) {
          this.#buf = this.#buf.subarray(next.size);
          this.#dispatch(next.message);
        }
      } catch (e) {
        socket.destroy(e as Error);
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => this.#close());
    socket.unref();
  }

  #dispatch(m: Message) {
    if (m.type === MessageType.signal) {
      this.emit('signal', m);
      return;
    }
    if (m.type === MessageType.call) {
      this.emit('call', m);
      return;
    }
    const waiting = m.replySerial !== undefined ? this.#pending.get(m.replySerial) : undefined;
    if (!waiting) return;
    this.#pending.delete(m.replySerial!);
    if (this.#pending.size === 0) this.#socket.unref();
    if (m.type === MessageType.error) {
      waiting.reject(
        new DBusError(m.errorName ?? 'org.freedesktop.DBus.Error.Failed', String(m.body[0] ?? '')),
      );
    } else {
      waiting.resolve(m);
    }
  }

  #close() {
    if (this.#closed) return;
    this.#closed = true;
    for (const w of this.#pending.values()) w.reject(new Error('the bus connection closed'));
    this.#pending.clear();
    this.emit('close');
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Sends a message; its serial is assigned here. */
  send(m: Omit<Message, 'serial'>): number {
    const serial = this.#serial++;
    this.#socket.write(encodeMessage({ ...m, serial }));
    return serial;
  }

  /** A method call (never starting a service that is not running); resolves with the reply's body. */
  call(c: Call): Promise<unknown[]> {
    if (this.#closed) return Promise.reject(new Error('the bus connection closed'));
    return new Promise((resolve, reject) => {
      const serial = this.send({
        type: MessageType.call,
        flags: NO_AUTO_START,
        ...c,
        signature: c.signature ?? '',
        body: c.body ?? [],
      });
      this.#pending.set(serial, { resolve: (m) => resolve(m.body), reject });
      this.#socket.ref();
    });
  }

  /** Asks the bus for the signals matching `rule` (match-rule syntax of the specification). */
  async addMatch(rule: string): Promise<void> {
    await this.call({ ...BUS, member: 'AddMatch', signature: 's', body: [rule] });
  }

  /** The unique name owning `name`, or null when nobody does. */
  async nameOwner(name: string): Promise<string | null> {
    try {
      return (
        (await this.call({ ...BUS, member: 'GetNameOwner', signature: 's', body: [name] })) as [string]
      )[0];
    } catch (e) {
      if (e instanceof DBusError && e.errorName === 'org.freedesktop.DBus.Error.NameHasNoOwner') return null;
      throw e;
    }
  }

  close(): void {
    this.#socket.destroy();
    this.#close();
  }
}
