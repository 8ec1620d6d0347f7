// mutharness node test reporter (`node --test --test-reporter=<this file>`).
//
// It runs in the parent `node --test` process and writes one JSON object per line to the file
// named by MUTHARNESS_NODE_EVENTS. It yields nothing: counts are never read from text that
// tests can print. The variable is removed from process.env as soon as this module loads, which
// happens before any test file's child process is spawned, so test files do not inherit it.
//
// With MUTHARNESS_NODE_FIRST_FAILURE=1 (a mutant's run, one file at a time) it ends the run
// once the first test file with a failing test has ended (node reports the file's own entry
// complete after its process exited): a `stopped` record naming that file, then `end`, then
// exit status 1. The files after it never start.
import fs from 'node:fs';
import path from 'node:path';
import { inspect } from 'node:util';

const ENV_NAME = 'MUTHARNESS_NODE_EVENTS';
const FIRST_FAILURE = 'MUTHARNESS_NODE_FIRST_FAILURE';
const MAX_TEXT = 2000;

const eventsPath = process.env[ENV_NAME];
delete process.env[ENV_NAME];
const stopAtFirstFailure = process.env[FIRST_FAILURE] === '1';
delete process.env[FIRST_FAILURE];
if (!eventsPath) {
  throw new Error(`mutharness node reporter: ${ENV_NAME} is not set`);
}
const fd = fs.openSync(eventsPath, 'a');

function write(record) {
  fs.writeSync(fd, `${JSON.stringify(record)}\n`);
}

function short(value) {
  if (value === undefined || value === null) return null;
  let text;
  try {
    text = typeof value === 'object' ? inspect(value, { depth: 2, breakLength: Infinity }) : String(value);
  } catch {
    text = Object.prototype.toString.call(value);
  }
  return text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text;
}

// A failure's whole account for the log, as node's own reporter shows it: a test's own error
// is the cause node wrapped it in (cut at 20 000 characters).
function long(value) {
  const shown = value?.code === 'ERR_TEST_FAILURE' && value.failureType === 'testCodeFailure'
    && value.cause !== undefined ? value.cause : value;
  let text;
  try {
    text = inspect(shown, { depth: 4, breakLength: 100 });
  } catch {
    text = Object.prototype.toString.call(value);
  }
  return text.length > 20000 ? `${text.slice(0, 20000)}...` : text;
}

// An Error's message; any other thrown value as node would print it.
function messageOf(value) {
  if (value === undefined || value === null) return null;
  if (typeof value === 'object' && typeof value.message === 'string') return short(value.message);
  return short(value);
}

function flag(value) {
  if (value === undefined || value === null) return false;
  if (typeof value === 'string') return value;
  return Boolean(value);
}

function numberOrNull(value) {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function location(data) {
  return {
    name: short(data.name),
    nesting: numberOrNull(data.nesting),
    file: data.file ?? null,
    line: numberOrNull(data.line),
    column: numberOrNull(data.column),
  };
}

function result(type, data) {
  const details = data.details ?? {};
  const error = details.error;
  return {
    type,
    ...location(data),
    testNumber: numberOrNull(data.testNumber),
    kind: details.type ?? null,
    duration_ms: numberOrNull(details.duration_ms),
    skip: flag(data.skip),
    todo: flag(data.todo),
    failureType: error?.failureType ?? null,
    error: error === undefined ? null : messageOf(error),
    cause: error === undefined || error === null ? null : messageOf(error.cause),
  };
}

// A test file's own entry: at the top, named after the file (absolute on node 20, as given on
// node 22 and later).
function isFileEntry(data) {
  if (data.nesting !== 0 || typeof data.name !== 'string' || typeof data.file !== 'string') {
    return false;
  }
  return path.resolve(process.cwd(), data.name) === path.resolve(data.file);
}

export default async function* mutharnessReporter(source) {
  write({ type: 'start', node: process.version, pid: process.pid, cwd: process.cwd() });
  const accounts = new Map();  // a test file with a failing test -> [name, error] of each
  for await (const event of source) {
    const data = event.data ?? {};
    switch (event.type) {
      case 'test:pass':
        write(result('pass', data));
        break;
      case 'test:fail':
        write(result('fail', data));
        if (stopAtFirstFailure && typeof data.file === 'string') {  // kept only to stop
          if (!accounts.has(data.file)) accounts.set(data.file, []);
          accounts.get(data.file).push([data.name, data.details?.error]);
        }
        break;
      case 'test:complete':
        if (accounts.has(data.file) && isFileEntry(data)) {
          write({ type: 'stopped', file: data.file });
          write({ type: 'end' });
          fs.closeSync(fd);
          // the run's log (stdout, a file: written at once), where node's totals would be, and
          // each failure's account (node 22 and later print it only in their final summary)
          const file = JSON.stringify(path.relative(process.cwd(), data.file).split(path.sep)
            .join('/'));
          fs.writeSync(1, `\nmutharness: stopped once the first test file with a failing test ` +
                          `had ended (--first-failure; --no-first-failure runs every file): ` +
                          `${file}\nits failing tests:\n`);
          for (const [name, error] of accounts.get(data.file)) {
            fs.writeSync(1, `\u2716 ${short(name)}\n  ${long(error).replaceAll('\n', '\n  ')}\n`);
          }
          process.exit(1);
        }
        break;
      case 'test:enqueue':
        write({ type: 'enqueue', ...location(data) });
        break;
      case 'test:diagnostic':
        write({
          type: 'diagnostic',
          message: short(data.message),
          nesting: numberOrNull(data.nesting),
          file: data.file ?? null,
        });
        break;
      case 'test:summary':
        write({
          type: 'summary',
          counts: data.counts ?? null,
          success: data.success ?? null,
          file: data.file ?? null,
        });
        break;
      case 'test:interrupted':
        write({ type: 'interrupted' });
        break;
      default:
        break;
    }
  }
  write({ type: 'end' });
  fs.closeSync(fd);
}
