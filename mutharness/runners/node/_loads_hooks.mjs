// mutharness load record's module hooks (registered by _loads.mjs in each process): each file of
// the workspace node loads is appended to a log of the hooks' own, before the module runs;
// nothing is changed.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const ESCAPES = { '\t': '\\t', '\n': '\\n', '\r': '\\r', '\\': '\\\\' };
let log = null;
let prefix = '';
const written = new Set();

function write(kind, value) {
  const line = `${kind}\t${String(value).replace(/[\t\n\r\\]/g, (c) => ESCAPES[c])}\n`;
  if (log === null || written.has(line)) return;
  written.add(line);
  try { fs.writeSync(log, line); } catch { /* a full disk loses the record, never the run */ }
}

export function initialize(data) {
  prefix = data.prefix;
  log = fs.openSync(data.log, 'a');
  write('file', data.file);
}

export async function load(url, context, nextLoad) {
  if (url.startsWith('file:')) {
    try {
      const file = fileURLToPath(url);
      if (file.startsWith(prefix)) write('load', file);
    } catch { /* not a path: nothing of the workspace */ }
  }
  return nextLoad(url, context);
}
