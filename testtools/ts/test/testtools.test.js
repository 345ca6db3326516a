// Tests of @mcp-conform/testtools against the real TypeScript SDK (a Client
// and an McpServer over the SDK's in-memory transport), and of its stores
// across real processes. Run where node finds the SDK: scripts/install-targets.sh
// copies the package into .targets/node_modules/@mcp-conform/testtools, then
//   node --test .targets/node_modules/@mcp-conform/testtools/test/
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ClaimLostError, ENV_STORE, ENV_SWITCH, FileStore, MemoryStore, createTestTools, fingerprint, registerTestTools } from '../index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const storeModule = path.join(here, '..', 'store.js');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const dirs = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'testtools-'));
  dirs.push(d);
  return d;
};
after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** connect registers the tools on a new McpServer (beside one of its own) and returns a connected Client. */
async function connect(t, options, env = {}, register = registerTestTools) {
  const saved = {};
  for (const [k, v] of Object.entries(env)) {
    saved[k] = process.env[k];
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  const server = new McpServer({ name: 'testtools-test', version: '0' });
  server.registerTool('own', { description: "the server's own tool" }, async () => ({ content: [{ type: 'text', text: 'own' }] }));
  let registered;
  try {
    registered = register(server, options);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  const [ct, st] = InMemoryTransport.createLinkedPair();
  await server.connect(st);
  const client = new Client({ name: 'c', version: '0' });
  await client.connect(ct);
  t.after(async () => {
    await client.close();
    await server.close();
  });
  return { client, registered };
}

const call = (client, name, args, opts) => client.callTool({ name, arguments: args }, undefined, opts);
const text = (r) => r.content.map((c) => c.text).join(' ');

test('off without the switch; on with MCP_CONFORM_TEST_TOOLS=1 or enabled', async (t) => {
  const all = ['conform_lookup', 'conform_probe', 'conform_slow', 'conform_write', 'conform_write_stats', 'own'];
  for (const [env, options, want] of [
    [undefined, {}, ['own']],
    ['true', {}, ['own']],
    ['1', {}, all],
    [undefined, { enabled: true }, all],
    ['1', { prefix: 't_' }, ['own', 't_lookup', 't_probe', 't_slow', 't_write', 't_write_stats']],
  ]) {
    const { client, registered } = await connect(t, options, { [ENV_SWITCH]: env, [ENV_STORE]: undefined });
    const names = (await client.listTools()).tools.map((x) => x.name).sort();
    assert.deepEqual(names, want, `env ${env} options ${JSON.stringify(options)}`);
    assert.equal(registered, want.length > 1);
  }
});

test('one createTestTools on many McpServers (one per HTTP session): the probe and the store are shared', async (t) => {
  assert.equal(createTestTools({}), undefined);
  const tools = createTestTools({ enabled: true });
  const reg = (server) => (tools.register(server), true);
  const a = await connect(t, {}, {}, reg);
  const b = await connect(t, {}, {}, reg);
  await call(a.client, 'conform_slow', { steps: 2, stepMs: 1, tag: 'shared' });
  assert.equal((await call(b.client, 'conform_probe', { tag: 'shared' })).structuredContent.finished, true);
  const first = await call(a.client, 'conform_write', { operation_key: 'shared-key', note: 'n' });
  assert.equal(text(await call(b.client, 'conform_write', { operation_key: 'shared-key', note: 'n' })), text(first));
  assert.equal(await tools.store.executions('shared-key'), 1);
});

test('annotations and schemas init reads', async (t) => {
  const { client } = await connect(t, { enabled: true });
  const tools = Object.fromEntries((await client.listTools()).tools.map((x) => [x.name, x]));
  const slow = tools.conform_slow;
  assert.equal(slow.annotations.readOnlyHint, true);
  assert.match(slow.description, /progress/);
  assert.equal(slow.inputSchema.properties.steps.type, 'integer');
  assert.equal(slow.inputSchema.properties.stepMs.type, 'integer');
  assert.equal(slow.inputSchema.properties.tag.type, 'string');
  assert.deepEqual(slow.inputSchema.required ?? [], []);
  const probe = tools.conform_probe;
  assert.equal(probe.annotations.readOnlyHint, true);
  assert.deepEqual(probe.inputSchema.required, ['tag']);
  for (const f of ['started', 'finished', 'cancelled']) assert.equal(probe.outputSchema.properties[f].type, 'boolean');
  assert.equal(probe.outputSchema.properties.stepsRun.type, 'integer');
  const w = tools.conform_write;
  assert.deepEqual(
    [w.annotations.readOnlyHint, w.annotations.idempotentHint, w.annotations.destructiveHint],
    [false, true, false],
  );
  assert.ok(w.inputSchema.required.includes('operation_key'));
  assert.equal(w.inputSchema.properties.operation_key.type, 'string');
  const st = tools.conform_write_stats;
  assert.equal(st.annotations.readOnlyHint, true);
  assert.deepEqual(st.inputSchema.required ?? [], []);
  assert.equal(st.inputSchema.properties.operation_key.type, 'string');
  assert.equal(st.outputSchema.properties.executions.type, 'integer');
  const l = tools.conform_lookup;
  assert.equal(l.annotations.readOnlyHint, true);
  assert.deepEqual(l.inputSchema.required, ['operation_key']);
  assert.equal(l.outputSchema.properties.found.type, 'boolean');
});

test('slow: one progress per step on the token, 1..n of n; the probe says finished', async (t) => {
  const { client } = await connect(t, { enabled: true });
  const got = [];
  const r = await call(client, 'conform_slow', { steps: 4, stepMs: 5, tag: 'p1' }, { onprogress: (p) => got.push(p) });
  assert.equal(r.isError, undefined);
  assert.deepEqual(
    got.map((p) => [p.progress, p.total, p.message]),
    [1, 2, 3, 4].map((i) => [i, 4, `step ${i}/4`]),
  );
  const st = (await call(client, 'conform_probe', { tag: 'p1' })).structuredContent;
  assert.deepEqual(st, { tag: 'p1', started: true, steps: 4, stepsRun: 4, progressSent: 4, finished: true, cancelled: false });
  assert.deepEqual((await call(client, 'conform_probe', { tag: 'never' })).structuredContent.started, false);
  assert.equal((await call(client, 'conform_slow', { steps: 10001 })).isError, true);
});

test('slow: cancelled after its first progress, it stops at the next step and sends nothing more', async (t) => {
  const { client } = await connect(t, { enabled: true });
  const ac = new AbortController();
  let progress = 0;
  let first;
  const firstSeen = new Promise((r) => (first = r));
  const pending = call(client, 'conform_slow', { steps: 200, stepMs: 20, tag: 'c1' }, {
    signal: ac.signal,
    onprogress: () => {
      progress++;
      first();
    },
  });
  await firstSeen;
  ac.abort('test'); // the client sends notifications/cancelled
  await assert.rejects(pending);
  let st;
  for (const deadline = Date.now() + 5000; Date.now() < deadline; await sleep(5)) {
    st = (await call(client, 'conform_probe', { tag: 'c1' })).structuredContent;
    if (st.cancelled) break;
  }
  assert.equal(st.cancelled, true, JSON.stringify(st));
  assert.equal(st.finished, false);
  assert.ok(st.stepsRun < 200);
  assert.equal(st.progressSent, st.stepsRun);
  await sleep(100); // 5 steps' time: a step still running would show
  assert.deepEqual((await call(client, 'conform_probe', { tag: 'c1' })).structuredContent, st);
  assert.ok(progress <= st.progressSent, `${progress} received, ${st.progressSent} sent`);
});

for (const [kind, open] of [
  ['memory', () => new MemoryStore()],
  ['file', () => new FileStore(path.join(tmp(), 'store.json'))],
]) {
  test(`write (${kind} store): once per key, byte-identical replays, refused reuse, stats, lookup`, async (t) => {
    const { client } = await connect(t, { enabled: true, store: open() });
    const key = 'mcpc-test-0123456789abcdef01234567';
    const first = await call(client, 'conform_write', { operation_key: key, note: 'a' });
    assert.equal(first.isError, undefined, text(first));
    for (let i = 0; i < 2; i++) {
      const again = await call(client, 'conform_write', { operation_key: key, note: 'a' });
      assert.equal(JSON.stringify(again.structuredContent), JSON.stringify(first.structuredContent));
      assert.equal(text(again), text(first));
    }
    const reuse = await call(client, 'conform_write', { operation_key: key, note: 'b' });
    assert.equal(reuse.isError, true);
    assert.match(text(reuse), /other arguments/);
    const other = await call(client, 'conform_write', { operation_key: `${key}-2`, note: 'b' });
    assert.deepEqual((await call(client, 'conform_write_stats', { operation_key: key })).structuredContent, { operation_key: key, executions: 1 });
    assert.deepEqual((await call(client, 'conform_write_stats', {})).structuredContent, { executions: 2 });
    const l = (await call(client, 'conform_lookup', { operation_key: `${key}-2` })).structuredContent;
    assert.equal(l.found, true);
    assert.equal(l.state, 'committed');
    assert.equal(JSON.stringify(l.result), JSON.stringify(other.structuredContent));
    assert.equal((await call(client, 'conform_lookup', { operation_key: 'nothing-here' })).structuredContent.found, false);
    assert.equal((await call(client, 'conform_write', { operation_key: '', note: 'x' })).isError, true);
  });
}

test('write: a key claimed and not committed is refused with "retry"; the retry after the commit gets the result', async (t) => {
  const store = new MemoryStore();
  const { client } = await connect(t, { enabled: true, store });
  const c = await store.claim('held-key-0001', fingerprint({ note: 'n' }));
  assert.equal(c.won, true);
  const refused = await call(client, 'conform_write', { operation_key: 'held-key-0001', note: 'n' });
  assert.equal(refused.isError, true);
  assert.match(text(refused), /retry/);
  await store.commit(c, '{"by":"the other call"}');
  assert.equal(text(await call(client, 'conform_write', { operation_key: 'held-key-0001', note: 'n' })), '{"by":"the other call"}');
});

test('MCP_CONFORM_TEST_STORE names a FileStore a restarted server reads', async (t) => {
  const file = path.join(tmp(), 'sub', 'store.json');
  const env = { [ENV_SWITCH]: '1', [ENV_STORE]: file };
  const a = await connect(t, {}, env);
  const first = await call(a.client, 'conform_write', { operation_key: 'env-store-key', note: 'n' });
  const b = await connect(t, {}, env);
  assert.equal(text(await call(b.client, 'conform_write', { operation_key: 'env-store-key', note: 'n' })), text(first));
  assert.equal(await new FileStore(file).executions(), 1);
});

for (const [kind, open] of [
  ['memory', (leaseMs) => new MemoryStore({ leaseMs })],
  ['file', (leaseMs) => new FileStore(path.join(tmp(), 'store.json'), { leaseMs })],
]) {
  test(`store contract (${kind})`, async () => {
    const s = open(3600_000);
    const claims = await Promise.all(Array.from({ length: 16 }, () => s.claim('k', 'fp')));
    assert.equal(claims.filter((c) => c.won).length, 1);
    for (const c of claims.filter((c) => !c.won)) assert.equal(c.record.state, 'claimed');
    const c = claims.find((c) => c.won);
    assert.equal(await s.executions('k'), 0);
    await s.commit(c, '{"r":1}');
    await assert.rejects(s.commit(c, '{"r":2}'), ClaimLostError);
    const r = await s.lookup('k');
    assert.deepEqual([r.state, r.result, r.executions], ['committed', '{"r":1}', 1]);
    assert.equal((await s.claim('k', 'fp')).won, false);
    assert.equal((await s.claim('k', 'other')).record.fingerprint, 'fp');
    await s.commit(await s.claim('k2', 'fp'), '{}');
    assert.equal(await s.executions(), 2);
    assert.equal(await s.executions('none'), 0);
    assert.equal(await s.lookup('none'), undefined);

    const stale = open(1);
    const old = await stale.claim('k', 'fp');
    await sleep(5); // past the 1 ms lease
    assert.equal((await stale.claim('k', 'other')).won, false);
    const taken = await stale.claim('k', 'fp');
    assert.equal(taken.won, true);
    await assert.rejects(stale.commit(old, '{}'), ClaimLostError);
    await stale.commit(taken, '{"new":1}');
    assert.equal(await stale.executions('k'), 1);
  });
}

/** child runs a script importing the store module by path; its first line comes back. */
function child(t, script) {
  const p = spawn(process.execPath, ['--input-type=module', '-e', `import { FileStore } from ${JSON.stringify(storeModule)};\n${script}`], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.after(() => p.kill('SIGKILL'));
  const line = new Promise((resolve, reject) => {
    let buf = '';
    p.stdout.on('data', (d) => {
      buf += d;
      if (buf.includes('\n')) resolve(buf.slice(0, buf.indexOf('\n')));
    });
    p.on('exit', (code) => reject(new Error(`child exited ${code} before a line: ${buf}`)));
  });
  const exited = new Promise((r) => p.on('exit', r));
  return { p, line, exited };
}

test('file store across processes: a race runs once; a kill after the commit keeps it; a dead holder does not block', async (t) => {
  if (process.platform === 'win32') return t.skip('the children are killed with SIGKILL');
  const dir = tmp();
  const file = path.join(dir, 'race.json');
  const racers = Array.from({ length: 6 }, () =>
    child(t, `const s = new FileStore(${JSON.stringify(file)});
      const c = await s.claim('raced-key', 'fp');
      if (c.won) await s.commit(c, JSON.stringify({ pid: process.pid }));
      console.log(c.won ? 'won' : 'lost');`),
  );
  const lines = await Promise.all(racers.map((r) => r.line));
  assert.equal(lines.filter((l) => l === 'won').length, 1, lines.join(' '));
  assert.equal(await new FileStore(file).executions('raced-key'), 1);

  const killed = path.join(dir, 'killed.json');
  const k = child(t, `const s = new FileStore(${JSON.stringify(killed)});
    await s.commit(await s.claim('killed-key', 'fp'), '{"before":"the kill"}');
    console.log('committed');
    setInterval(() => {}, 1000);`);
  assert.equal(await k.line, 'committed');
  k.p.kill('SIGKILL');
  await k.exited;
  const r = await new FileStore(killed).lookup('killed-key');
  assert.deepEqual([r.state, r.result, r.executions], ['committed', '{"before":"the kill"}', 1]);

  const locked = path.join(dir, 'locked.json');
  const h = child(t, `const s = new FileStore(${JSON.stringify(locked)});
    await s.acquire();
    console.log('locked');
    setInterval(() => {}, 1000);`);
  assert.equal(await h.line, 'locked');
  h.p.kill('SIGKILL');
  await h.exited;
  const c = await new FileStore(locked).claim('k', 'fp');
  assert.equal(c.won, true);
});
