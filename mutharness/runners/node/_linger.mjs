// mutharness linger watch (`node --import <this file> --test ...`), shipped as package data.
//
// In each test file's process (node sets NODE_TEST_CONTEXT there; the `node --test` parent does
// nothing here) it waits for the file's last test: a root `after` hook, which node runs once
// every test the file has created has ended. From then on it watches. If the process stays
// alive only because of handles that run no code by themselves (a server still listening, an
// open socket, a file watcher: never a timer, an immediate, a pending request or a child
// process), no callback but the promises, ticks and unref'd timers that finish the file's
// after hooks or keep node's own house has run since its last test ended (a timer or I/O that
// ran may have started another test: then it never releases), and nothing at all has run for
// QUIET_MS, it unrefs those handles, so node ends
// the file as it ends any file whose event loop is empty: the root test finishes, node reports
// the file's plan and totals, `exit` handlers run. Nothing is cut short (unlike
// --test-force-exit): a timer or any code still to run keeps the process alive as before, and
// so does a timer the project's own code unref'd (`setTimeout(check, 500).unref()`) that has
// yet to fire: a handle that holds the process would let it fire under plain node, and what it
// runs may fail the file. Such a timer is known by the `unref()` call that made it one (not a
// repeating one, not node's or an installed package's: a file the call came from under
// `node:` or `node_modules`); one made unref'd by other means is not seen.
//
// Either way it appends JSON lines to the file MUTHARNESS_NODE_LINGER names: `settled` (the last
// test ended), `released` (what it unref'd, and when), `exit` (how long after the last test the
// process ended), for mutharness to tell the user which file keeps the event loop alive.
import fs from 'node:fs';

const LOG = process.env.MUTHARNESS_NODE_LINGER;
const QUIET_MS = 200;
const TICK_MS = 50;
// what keeps an event loop alive but runs JavaScript only when something outside calls on it
const RELEASABLE = new Set([
  'TCPServerWrap', 'TCPSocketWrap', 'TCPWrap', 'PipeServerWrap', 'PipeSocketWrap', 'PipeWrap',
  'UDPWrap', 'FSEventWrap',
  'StatWatcher', 'TTYWrap',
]);

// A callback that ends what already runs, never one that starts anew: a promise's reaction, a
// tick or a microtask (by the async hook's type, or, for one made before the watch began, by
// its resource: a promise, or the plain object node gives a tick or a promise made before the
// hooks were on).
// An unref'd timer's callback is node's own housekeeping (http's date cache, a socket's idle
// timer) or code its author let go of: it cannot hold the process, so it wakes nothing.
const SETTLING = new Set(['PROMISE', 'TickObject', 'Microtask']);
// the project's one-shot timers unref'd and not yet fired or cleared (see `keepUnrefd`)
const unrefd = new Set();
const OWN = import.meta.url;
const NOT_PROJECT = /\(node:|^\s*at node:|[\\/]node_modules[\\/]/;

// Whether the code that called unref() is the project's: the first frame not this file's lies
// neither in node (`node:`) nor in an installed package; a stack it cannot read counts as the
// project's (then the timer is waited for, as plain node would).
function fromProject() {
  let stack;
  const limit = Error.stackTraceLimit;
  try {
    Error.stackTraceLimit = 6;
    stack = String(new Error().stack ?? '');
  } catch {
    return true;
  } finally {
    try { Error.stackTraceLimit = limit; } catch { /* frozen: left as it was */ }
  }
  const caller = stack.split('\n').slice(1).find((line) => !line.includes(OWN));
  return caller === undefined || !NOT_PROJECT.test(caller);
}

// Record every one-shot timer the project's code unref's, through the prototype all timers
// share (read from a timer made and cleared at once).
function keepUnrefd() {
  const probe = setTimeout(() => {}, 1);
  clearTimeout(probe);
  const prototype = Object.getPrototypeOf(probe);
  const unref = prototype?.unref;
  if (typeof unref !== 'function') return;
  Object.defineProperty(prototype, 'unref', {
    value: function unrefRecorded(...args) {
      if (!this._repeat && fromProject()) unrefd.add(this);
      return unref.apply(this, args);
    },
    writable: true, enumerable: false, configurable: true,
  });
}

// The recorded timers still to fire (pruned of those that fired, were cleared or ref'd again).
function pendingUnrefd() {
  for (const timer of unrefd) {
    if (timer._destroyed || timer.hasRef?.()) unrefd.delete(timer);
  }
  return unrefd.size;
}

function settling(type, resource) {
  if (typeof resource?.hasRef === 'function' && !resource.hasRef()) return true;
  if (type !== undefined) return SETTLING.has(type);
  if (resource instanceof Promise) return true;
  const made = resource?.constructor?.name;
  return made === 'Object' || made === 'Promise' || made === 'SafePromise';
}
// What holds the process open, in words a user can search their tests for: the objects that
// own its handles (Server, Socket, FSWatcher, ChildProcess...; never its own stdio) and the
// timers, immediates and requests node counts besides.
function holding() {
  const stdio = new Set([process.stdin, process.stdout, process.stderr, process.channel]);
  const owners = process._getActiveHandles()
    .filter((handle) => !stdio.has(handle))
    .map((handle) => handle?.constructor?.name ?? 'handle');
  const pending = process.getActiveResourcesInfo().filter((name) => !name.endsWith('Wrap'));
  return [...owners, ...pending, ...(pendingUnrefd() ? ["unref'd Timeout"] : [])];
}

async function watch() {
  const { after } = await import('node:test');
  const { createHook, executionAsyncResource } = await import('node:async_hooks');
  const file = process.argv[1] ?? null;
  const record = (entry) => {
    try {
      fs.appendFileSync(LOG, `${JSON.stringify({ pid: process.pid, file, ...entry })}\n`);
    } catch {
      // a note only: a full disk or a removed directory changes no test's outcome
    }
  };
  after(() => {
    const settled = Date.now();
    let open = [];
    record({ type: 'settled' });
    process.on('exit', () => record({ type: 'exit', ms: Date.now() - settled, open }));
    let ours = -1;
    let depth = 0; // callbacks entered and not yet left since the watch began
    let making = false;
    let ran = Date.now();
    let woken = false;
    const kinds = new Map();
    const hook = createHook({
      init(id, type) {
        kinds.set(id, type);
        if (making && type === 'Timeout') ours = id;
      },
      before(id) {
        depth += 1;
        if (id === ours) return;
        ran = Date.now();
        // the promises and ticks that end the file's own after hooks are expected; anything
        // else (a timer, an immediate, I/O) may start more tests: then nothing is released.
        // A callback run inside another (a library's AsyncResource) is that one's doing.
        if (depth === 1 && !settling(kinds.get(id), executionAsyncResource())) woken = true;
      },
      after() {
        depth = Math.max(0, depth - 1);
      },
    });
    hook.enable();
    making = true;
    const tick = setInterval(() => {
      depth = 1; // this callback alone: a count an uncaught exception left unbalanced ends here
      if (open.length === 0) open = holding();
      const now = Date.now();
      if (woken) {
        clearInterval(tick);
        hook.disable();
        return;
      }
      if (now - ran < QUIET_MS || pendingUnrefd()) return;
      if (process.getActiveResourcesInfo().some((name) => !RELEASABLE.has(name))) return;
      clearInterval(tick);
      hook.disable();
      const stdio = new Set([process.stdin, process.stdout, process.stderr, process.channel]);
      for (const handle of process._getActiveHandles()) {
        if (!stdio.has(handle) && typeof handle?.unref === 'function') handle.unref();
      }
      record({ type: 'released', ms: now - settled, open });
    }, TICK_MS);
    making = false;
    tick.unref();
  });
}

if (process.env.NODE_TEST_CONTEXT && LOG) {
  try {
    keepUnrefd();
    await watch();
  } catch {
    // a node without what this needs: the file runs as it would without the watch
  }
}
