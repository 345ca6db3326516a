// Stores of the keyed mutation: the Store shape (see index.d.ts), an
// in-memory one (NOT DURABLE) and a durable one in a JSON file shared by
// every process opened on the same path.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** How long a claim never committed holds its key before a claim with the same fingerprint may take it over. */
export const DEFAULT_CLAIM_LEASE_MS = 30_000;

/** The states of a record. */
export const STATE_CLAIMED = 'claimed';
export const STATE_COMMITTED = 'committed';

/** Commit's error for a claim that is no longer the key's. */
export class ClaimLostError extends Error {
  constructor(key) {
    super(`the claim of ${key} is no longer the key's (its lease ran out and another caller claimed it)`);
    this.name = 'ClaimLostError';
  }
}

const newToken = () => randomBytes(12).toString('hex');

/**
 * fingerprint is the digest the mutation binds a key to: the SHA-256 of the
 * arguments without the key, as canonical JSON (object keys sorted).
 */
export function fingerprint(args) {
  const canon = (v) => {
    if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
    if (v && typeof v === 'object') {
      return `{${Object.keys(v)
        .sort()
        .filter((k) => v[k] !== undefined)
        .map((k) => `${JSON.stringify(k)}:${canon(v[k])}`)
        .join(',')}}`;
    }
    return JSON.stringify(v);
  };
  return createHash('sha256').update(canon(args)).digest('hex');
}

const copy = (r) => (r ? { ...r } : r);

/**
 * claimRecord applies a claim to the key's record (undefined: none): the
 * claim, and the record to store (undefined when nothing changes). Both
 * stores here follow this rule.
 */
function claimRecord(cur, key, fp, now, lease) {
  if (cur && (cur.state === STATE_COMMITTED || cur.fingerprint !== fp || now - Date.parse(cur.claimedAt) < lease)) {
    return { claim: { key, fingerprint: fp, won: false, record: copy(cur) } };
  }
  const next = {
    key,
    fingerprint: fp,
    state: STATE_CLAIMED,
    token: newToken(),
    claimedAt: new Date(now).toISOString(),
    executions: cur ? cur.executions : 0, // a stale claim taken over: its effect never committed
  };
  return { claim: { key, fingerprint: fp, won: true, token: next.token }, next };
}

/** commitRecord applies a commit: the record to store, or a ClaimLostError thrown. */
function commitRecord(cur, claim, result) {
  if (!cur || cur.state !== STATE_CLAIMED || !claim.token || cur.token !== claim.token) throw new ClaimLostError(claim.key);
  return { ...cur, state: STATE_COMMITTED, result, executions: cur.executions + 1 };
}

/**
 * MemoryStore keeps the records in this process's memory. It is NOT DURABLE:
 * a restart forgets every key and a second process has a store of its own,
 * so IDEM-RESTART and IDEM-CONCURRENT over stdio fail on it, rightly. Use it
 * to try the tools out; use FileStore or your own Store for the checks.
 */
export class MemoryStore {
  constructor({ leaseMs = DEFAULT_CLAIM_LEASE_MS } = {}) {
    this.leaseMs = leaseMs;
    this.records = new Map();
    this.total = 0;
  }

  async claim(key, fp) {
    const { claim, next } = claimRecord(this.records.get(key), key, fp, Date.now(), this.leaseMs);
    if (next) this.records.set(key, next);
    return claim;
  }

  async commit(claim, result) {
    this.records.set(claim.key, commitRecord(this.records.get(claim.key), claim, result));
    this.total++;
  }

  async lookup(key) {
    return copy(this.records.get(key));
  }

  async executions(key) {
    if (!key) return this.total;
    return this.records.get(key)?.executions ?? 0;
  }
}

const FORMAT = 'mcp-conform-testtools-store/1';
const LOCK_WAIT_MS = 10_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/**
 * FileStore keeps the records in one JSON file shared by every process opened
 * on the same path. Each change takes a cross-process lock (PATH.lock,
 * created with O_EXCL and holding the owner's pid; a lock whose owner is dead
 * is broken), reads the whole file and replaces it atomically (temporary file,
 * fsync, rename, fsync of the directory): a claim and a commit are each one
 * replacement, so a process killed after commit() resolved has committed the
 * effect and its result together, one killed before has committed neither.
 * Reads take no lock (a rename is atomic). Meant for tests: every change
 * rewrites the whole file.
 */
export class FileStore {
  constructor(file, { leaseMs = DEFAULT_CLAIM_LEASE_MS } = {}) {
    this.file = path.resolve(file);
    this.lock = `${this.file}.lock`;
    this.leaseMs = leaseMs;
    this.chain = Promise.resolve(); // this process's changes, one at a time
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    this.read(); // a corrupt or foreign file fails now
  }

  read() {
    let text;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      if (err.code === 'ENOENT') return { format: FORMAT, totalExecutions: 0, records: {} };
      throw new Error(`file store ${this.file}: ${err.message}`);
    }
    const d = JSON.parse(text);
    if (d.format !== FORMAT) throw new Error(`file store ${this.file}: format ${JSON.stringify(d.format)}, want ${FORMAT}`);
    d.records ??= {};
    return d;
  }

  write(d) {
    const tmp = `${this.file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    const fd = fs.openSync(tmp, 'w', 0o644);
    try {
      fs.writeSync(fd, JSON.stringify(d));
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, this.file);
    if (process.platform !== 'win32') {
      const dir = fs.openSync(path.dirname(this.file), 'r');
      try {
        fs.fsyncSync(dir);
      } finally {
        fs.closeSync(dir);
      }
    }
  }

  /** acquire takes the cross-process lock, waiting up to LOCK_WAIT_MS. */
  async acquire() {
    const token = `${process.pid} ${newToken()}`;
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (let delay = 1; ; delay = Math.min(delay * 2, 20)) {
      try {
        const fd = fs.openSync(this.lock, 'wx');
        fs.writeSync(fd, token);
        fs.closeSync(fd);
        return token;
      } catch (err) {
        if (err.code !== 'EEXIST') throw err;
      }
      let owner = '';
      try {
        owner = fs.readFileSync(this.lock, 'utf8');
      } catch {
        continue; // released meanwhile
      }
      const pid = Number.parseInt(owner, 10);
      if (owner !== '' && Number.isInteger(pid) && !alive(pid)) {
        // Its owner died holding it: break it, if it is still that owner's.
        const stale = `${this.lock}.stale-${newToken()}`;
        try {
          fs.renameSync(this.lock, stale);
          if (fs.readFileSync(stale, 'utf8') !== owner) fs.renameSync(stale, this.lock);
          else fs.unlinkSync(stale);
        } catch {
          /* another process broke it */
        }
        continue;
      }
      if (Date.now() > deadline) throw new Error(`file store ${this.file}: lock held by ${owner || '?'} for ${LOCK_WAIT_MS} ms`);
      await sleep(delay);
    }
  }

  release(token) {
    try {
      if (fs.readFileSync(this.lock, 'utf8') === token) fs.unlinkSync(this.lock);
    } catch {
      /* already gone */
    }
  }

  /** update runs change(d) under the lock; a true return writes d. */
  update(change) {
    const run = async () => {
      const token = await this.acquire();
      try {
        const d = this.read();
        if (change(d)) this.write(d);
      } finally {
        this.release(token);
      }
    };
    const p = this.chain.then(run, run);
    this.chain = p.catch(() => {});
    return p;
  }

  async claim(key, fp) {
    let claim;
    await this.update((d) => {
      const out = claimRecord(d.records[key], key, fp, Date.now(), this.leaseMs);
      claim = out.claim;
      if (!out.next) return false;
      d.records[key] = out.next;
      return true;
    });
    return claim;
  }

  async commit(claim, result) {
    await this.update((d) => {
      d.records[claim.key] = commitRecord(d.records[claim.key], claim, result);
      d.totalExecutions++;
      return true;
    });
  }

  async lookup(key) {
    return copy(this.read().records[key]);
  }

  async executions(key) {
    const d = this.read();
    if (!key) return d.totalExecutions;
    return d.records[key]?.executions ?? 0;
  }
}
