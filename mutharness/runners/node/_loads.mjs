// mutharness load record (`node --import <this file> --test ...`, and through NODE_OPTIONS in
// every node process the tests start), shipped as package data.
//
// Each node process of a run appends lines to a log of its own in the directory
// MUTHARNESS_NODE_LOADS names: `file\t<the test file it belongs to>` first (a test file's
// process is its own; a worker thread or a node child inherits its test file through the
// environment), then `load\t<file>` for each module it loaded (ES modules through the module
// hooks' `load`, CommonJS through `require.cache` as it ends), `read\t<file>` for each file it
// opened through `fs`, and `spawn\t<command>` for each program that is not node it started (what
// such a program reads no hook sees). `partial\t<why>` says the record cannot be whole (a node
// without module hooks). Files outside the workspace (MUTHARNESS_NODE_ROOT) are not written.
import children from 'node:child_process';
import fs from 'node:fs';
import module from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const DIRECTORY = process.env.MUTHARNESS_NODE_LOADS;
const ROOT = process.env.MUTHARNESS_NODE_ROOT;
const TEST_FILE = 'MUTHARNESS_NODE_TEST_FILE';
const ESCAPES = { '\t': '\\t', '\n': '\\n', '\r': '\\r', '\\': '\\\\' };

function start() {
  // `node --test` itself runs no test: only its children (NODE_TEST_CONTEXT) and what they start
  if (!process.env.NODE_TEST_CONTEXT && !process.env[TEST_FILE]) return;
  if (!process.env[TEST_FILE] && process.argv[1]) {
    process.env[TEST_FILE] = path.resolve(process.argv[1]);
  }
  const name = `${process.pid}-${Math.random().toString(16).slice(2, 10)}.log`;
  const log = fs.openSync(path.join(DIRECTORY, name), 'a');
  const written = new Set();
  const prefix = path.resolve(ROOT) + path.sep;
  const write = (kind, value) => {
    const line = `${kind}\t${String(value).replace(/[\t\n\r\\]/g, (c) => ESCAPES[c])}\n`;
    if (written.has(line)) return;
    written.add(line);
    try { fs.writeSync(log, line); } catch { /* a full disk loses the record, never the run */ }
  };
  const inside = (file) => {
    try {
      const full = path.resolve(file instanceof URL ? fileURLToPath(file) : String(file));
      return full.startsWith(prefix) ? full : null;
    } catch { return null; }
  };
  write('file', process.env[TEST_FILE]);
  if (typeof module.registerHooks === 'function') {  // in this thread (node 22.15+): cheap
    module.registerHooks({
      load(url, context, nextLoad) {
        if (url.startsWith('file:')) { const file = inside(new URL(url)); if (file) write('load', file); }
        return nextLoad(url, context);
      },
    });
  } else if (typeof module.register === 'function') {  // a hooks thread, its own log
    module.register(new URL('./_loads_hooks.mjs', import.meta.url), {
      data: { log: path.join(DIRECTORY, `${name}.hooks`), prefix, file: process.env[TEST_FILE] },
    });
  } else {
    write('partial', `node ${process.version} has no module hooks`);
  }
  process.on('exit', () => {
    for (const file of Object.keys(module._cache ?? {})) {
      const found = inside(file);
      if (found) write('load', found);
    }
  });
  const readers = ['readFileSync', 'readFile', 'openSync', 'open', 'createReadStream'];
  for (const name of readers) {
    const original = fs[name];
    if (typeof original !== 'function') continue;
    fs[name] = function (file, ...rest) {
      if (typeof file === 'string' || file instanceof URL || Buffer.isBuffer(file)) {
        const found = inside(Buffer.isBuffer(file) ? file.toString() : file);
        if (found) write('read', found);
      }
      return original.call(this, file, ...rest);
    };
  }
  for (const name of ['readFile', 'open']) {
    const original = fs.promises[name];
    fs.promises[name] = function (file, ...rest) {
      if (typeof file === 'string' || file instanceof URL) {
        const found = inside(file);
        if (found) write('read', found);
      }
      return original.call(this, file, ...rest);
    };
  }
  for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync']) {
    const original = children[name];
    children[name] = function (command, ...rest) {
      const program = path.basename(String(command).trim().split(/\s+/)[0] ?? '');
      if (!/^node(\.exe)?$/i.test(program) && String(command) !== process.execPath) {
        write('spawn', command);
      }
      return original.call(this, command, ...rest);
    };
  }
  module.syncBuiltinESMExports();
}

if (DIRECTORY && ROOT) {
  try { start(); } catch (error) { process.stderr.write(`mutharness load record: ${error}\n`); }
}
