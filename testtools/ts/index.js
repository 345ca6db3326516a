// @mcp-conform/testtools: the test tools mcp-conform's checks need and most
// servers lack, for a server on the official TypeScript SDK
// (@modelcontextprotocol/sdk's McpServer). TEST ONLY: registered only when
// MCP_CONFORM_TEST_TOOLS=1 or { enabled: true }; never ship them enabled.
// README.md describes the tools and the manifest snippet; index.d.ts the API.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { FileStore, MemoryStore, STATE_COMMITTED, fingerprint } from './store.js';

export { ClaimLostError, DEFAULT_CLAIM_LEASE_MS, FileStore, MemoryStore, STATE_CLAIMED, STATE_COMMITTED, fingerprint } from './store.js';

/** ENV_SWITCH set to "1" registers the tools (options.enabled does too). */
export const ENV_SWITCH = 'MCP_CONFORM_TEST_TOOLS';
/** ENV_STORE, when options.store is not given, names the file of a FileStore; without it the store is a MemoryStore. */
export const ENV_STORE = 'MCP_CONFORM_TEST_STORE';
/** DEFAULT_PREFIX starts every tool's name unless options.prefix says otherwise. */
export const DEFAULT_PREFIX = 'conform_';
/** NAMES are the tools' names without their prefix. */
export const NAMES = Object.freeze({ slow: 'slow', probe: 'probe', write: 'write', stats: 'write_stats', lookup: 'lookup' });

const MAX_KEY = 200;

/** switched reports whether the environment switches the tools on. */
export const switched = () => process.env[ENV_SWITCH] === '1';

const json = (v) => ({ content: [{ type: 'text', text: JSON.stringify(v) }], structuredContent: v });
const fail = (text) => ({ isError: true, content: [{ type: 'text', text }] });

/** sleep resolves after ms, or at once when signal aborts (it never rejects). */
const sleep = (ms, signal) =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

/**
 * createTestTools returns the test tools' shared state (the store, and the
 * probe's record of tagged work) when options.enabled is set or
 * MCP_CONFORM_TEST_TOOLS=1, else undefined. Register them on every McpServer
 * that serves a session with its register(server): a server that makes one
 * McpServer per HTTP session shares one TestTools among them, so the probe
 * sees the work of every session. The store is options.store, else a
 * FileStore at $MCP_CONFORM_TEST_STORE, else a MemoryStore (not durable).
 */
export function createTestTools(options = {}) {
  if (!options.enabled && !switched()) return undefined;
  const prefix = options.prefix || DEFAULT_PREFIX;
  const maxSteps = options.maxSteps ?? 10000;
  const maxStepMs = options.maxStepMs ?? 60000;
  const log = options.log ?? (() => {});
  let store = options.store;
  if (!store) {
    if (process.env[ENV_STORE]) store = new FileStore(process.env[ENV_STORE]);
    else {
      store = new MemoryStore();
      log(`testtools: the mutation's store is in memory (not durable); set ${ENV_STORE} or options.store`);
    }
  }
  const work = new Map(); // tag -> state of the latest call with that tag
  log(`testtools: test tools ${prefix}* switched on (${ENV_SWITCH}=1 or options.enabled): never ship them enabled`);
  return {
    prefix,
    store,
    register: (server, { onCancelled = options.onCancelled } = {}) =>
      addTools(server, { prefix, maxSteps, maxStepMs, log, store, work, onCancelled }),
  };
}

/**
 * registerTestTools adds the test tools to server (an McpServer) when
 * options.enabled is set or MCP_CONFORM_TEST_TOOLS=1, and returns whether it
 * did: createTestTools(options)?.register(server), for a server with one
 * McpServer for all its sessions (stdio).
 */
export function registerTestTools(server, options = {}) {
  const tools = createTestTools(options);
  if (!tools) return false;
  tools.register(server);
  return true;
}

function addTools(server, { prefix, maxSteps, maxStepMs, log, store, work, onCancelled }) {
  if (!server || typeof server.registerTool !== 'function') throw new TypeError('testtools: server must be an McpServer');
  const name = (n) => prefix + n;
  const idle = (tag) => ({ tag, started: false, steps: 0, stepsRun: 0, progressSent: 0, finished: false, cancelled: false });

  server.registerTool(
    name(NAMES.slow),
    {
      description:
        'Test tool (mcp-conform): runs steps x stepMs milliseconds and sends a progress notification after each step ' +
        'when the request carries a progress token; stops at the next step once the request is cancelled.',
      inputSchema: {
        steps: z.number().int().min(1).max(maxSteps).default(5).describe('number of steps'),
        stepMs: z.number().int().min(1).max(maxStepMs).default(100).describe('milliseconds per step'),
        tag: z.string().max(MAX_KEY).optional().describe("a label the probe tool reports this call's work under"),
      },
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ steps, stepMs, tag }, extra) => {
      const token = extra._meta?.progressToken;
      const w = { ...idle(tag ?? ''), started: true, steps };
      if (tag) work.set(tag, w);
      log(`${name(NAMES.slow)} start id=${extra.requestId} steps=${steps} stepMs=${stepMs} token=${token ?? ''} tag=${tag ?? ''}`);
      for (let i = 1; i <= steps; i++) {
        await sleep(stepMs, extra.signal);
        // Checked at every step boundary: a cancelled call runs no further step and sends nothing more.
        if (extra.signal.aborted) {
          w.cancelled = true;
          log(`${name(NAMES.slow)} cancelled id=${extra.requestId} at step ${i - 1}/${steps} tag=${tag ?? ''}`);
          onCancelled?.(extra.requestId);
          throw new Error('cancelled');
        }
        w.stepsRun = i;
        if (token !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: i, total: steps, message: `step ${i}/${steps}` },
          });
          w.progressSent++;
        }
      }
      w.finished = true;
      log(`${name(NAMES.slow)} done id=${extra.requestId} tag=${tag ?? ''}`);
      return { content: [{ type: 'text', text: `${name(NAMES.slow)}: completed ${steps} steps of ${stepMs} ms` }] };
    },
  );

  server.registerTool(
    name(NAMES.probe),
    {
      description: `Test tool (mcp-conform): reports what the ${name(NAMES.slow)} call with this tag did: started, stepsRun, finished, cancelled (from every session).`,
      inputSchema: { tag: z.string().min(1).describe(`the tag given to ${name(NAMES.slow)}`) },
      outputSchema: {
        tag: z.string(),
        started: z.boolean(),
        steps: z.number().int(),
        stepsRun: z.number().int(),
        progressSent: z.number().int(),
        finished: z.boolean(),
        cancelled: z.boolean(),
      },
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ tag }) => json({ ...(work.get(tag) ?? idle(tag)) }),
  );

  const write = name(NAMES.write);
  const key = z.string().min(1).max(MAX_KEY);
  server.registerTool(
    write,
    {
      description:
        "Test tool (mcp-conform): records a note once per operation_key (idempotency key) in the server's store; " +
        'a retry with the same key and note returns the stored result without running again; the same key with another note is refused.',
      inputSchema: {
        operation_key: key.describe('idempotency key: one execution per key; a retry with the same key and arguments returns the stored result'),
        note: z.string().describe('what to record (the same key with another note is refused)'),
      },
      annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: false, openWorldHint: false },
    },
    async ({ operation_key, note }) => {
      const fp = fingerprint({ note });
      const c = await store.claim(operation_key, fp);
      if (!c.won) {
        const r = c.record;
        if (r.fingerprint !== fp) {
          log(`${write} refused key=${operation_key}: bound to other arguments`);
          return fail(`operation_key ${operation_key} was already used with other arguments; nothing was done`);
        }
        if (r.state === STATE_COMMITTED) {
          log(`${write} replay key=${operation_key}`);
          return json(JSON.parse(r.result));
        }
        log(`${write} refused key=${operation_key}: claimed at ${r.claimedAt}, not committed`);
        return fail(`operation_key ${operation_key} is being executed by another call (claimed ${r.claimedAt}, not yet committed); retry with the same key for its result`);
      }
      const result = JSON.stringify({
        operation_key,
        note,
        receipt: `W-${randomBytes(8).toString('hex')}`,
        executedAt: new Date().toISOString(),
      });
      await store.commit(c, result);
      log(`${write} executed key=${operation_key}`);
      return json(JSON.parse(result));
    },
  );

  server.registerTool(
    name(NAMES.stats),
    {
      description:
        `Test tool (mcp-conform): how many times ${write} executed for operation_key (0 or 1 when the store works), ` +
        'or for every key when none is given: a count of executions from the store.',
      inputSchema: { operation_key: key.optional().describe('the operation key the write was called with (omit it for the total of every key)') },
      outputSchema: { operation_key: z.string().optional(), executions: z.number().int() },
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ operation_key }) => {
      const executions = await store.executions(operation_key);
      return json(operation_key ? { operation_key, executions } : { executions });
    },
  );

  server.registerTool(
    name(NAMES.lookup),
    {
      description: `Test tool (mcp-conform): looks up what ${write} did for an operation_key (reconcile by key): found, state, result.`,
      inputSchema: { operation_key: key.describe('the operation key the write was called with') },
      outputSchema: {
        operation_key: z.string(),
        found: z.boolean(),
        state: z.string().optional(),
        executions: z.number().int(),
        result: z.record(z.string(), z.unknown()).optional(),
      },
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ operation_key }) => {
      const r = await store.lookup(operation_key);
      if (!r) return json({ operation_key, found: false, executions: 0 });
      const out = { operation_key, found: true, state: r.state, executions: r.executions };
      if (r.result) out.result = JSON.parse(r.result);
      return json(out);
    },
  );

}
