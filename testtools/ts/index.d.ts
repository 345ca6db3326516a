// Types of @mcp-conform/testtools (plain JavaScript in index.js and store.js).
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

/** Set to "1", registers the tools (options.enabled does too). */
export declare const ENV_SWITCH: 'MCP_CONFORM_TEST_TOOLS';
/** Names the file of a FileStore when options.store is not given; without it the store is a MemoryStore. */
export declare const ENV_STORE: 'MCP_CONFORM_TEST_STORE';
/** Starts every tool's name unless options.prefix says otherwise. */
export declare const DEFAULT_PREFIX: 'conform_';
/** The tools' names without their prefix. */
export declare const NAMES: Readonly<{ slow: 'slow'; probe: 'probe'; write: 'write'; stats: 'write_stats'; lookup: 'lookup' }>;
/** How long a claim never committed holds its key before a claim with the same fingerprint may take it over. */
export declare const DEFAULT_CLAIM_LEASE_MS: number;
export declare const STATE_CLAIMED: 'claimed';
export declare const STATE_COMMITTED: 'committed';

/** What a store holds for one operation key. */
export interface StoreRecord {
  key: string;
  /** Digest of the arguments without the key (fingerprint()). */
  fingerprint: string;
  /** "claimed": an execution is under way (or its owner died before committing); "committed": done. */
  state: 'claimed' | 'committed';
  /** The current claim's token (the store's business). */
  token?: string;
  /** When the current claim was won (ISO 8601). */
  claimedAt: string;
  /** The committed result as JSON text, byte for byte as the first caller got it. */
  result?: string;
  /** Commits of the key's effect (0 or 1 when the store works). */
  executions: number;
}

/** The outcome of Store.claim. */
export interface Claim {
  key: string;
  fingerprint: string;
  /** This call owns the key now and must commit it. */
  won: boolean;
  /** Identifies a won claim to commit. */
  token?: string;
  /** The key's record when the claim was not won. */
  record?: StoreRecord;
}

/**
 * The keyed mutation's storage: implement it on the storage your server
 * really uses, so the IDEM checks test its atomicity and durability. For
 * IDEM-CONCURRENT over stdio and IDEM-RESTART it must be shared by every
 * process opened on it and durable.
 */
export interface Store {
  /**
   * Binds key to fingerprint for one execution: of any number of concurrent
   * claims of a key without a record (in this process or another) exactly one
   * wins; the others get the record as it stands. A claim never committed and
   * older than the lease may be won again with the same fingerprint.
   */
  claim(key: string, fingerprint: string): Promise<Claim>;
  /**
   * Records, in one atomic step, one execution of the claimed operation's
   * effect and its result (JSON text). Rejects with ClaimLostError, committing
   * nothing, when the claim is no longer the key's.
   */
  commit(claim: Claim, result: string): Promise<void>;
  /** The key's record, or undefined. */
  lookup(key: string): Promise<StoreRecord | undefined>;
  /** Commits of the effect for key, or for every key when key is empty or undefined. */
  executions(key?: string): Promise<number>;
}

export interface StoreOptions {
  /** The claim lease in milliseconds (DEFAULT_CLAIM_LEASE_MS). */
  leaseMs?: number;
}

/** A Store in this process's memory. NOT DURABLE: IDEM-RESTART and IDEM-CONCURRENT over stdio fail on it. */
export declare class MemoryStore implements Store {
  constructor(options?: StoreOptions);
  claim(key: string, fingerprint: string): Promise<Claim>;
  commit(claim: Claim, result: string): Promise<void>;
  lookup(key: string): Promise<StoreRecord | undefined>;
  executions(key?: string): Promise<number>;
}

/** A durable Store in one JSON file, shared by every process opened on the same path (lock file, atomic rename). */
export declare class FileStore implements Store {
  constructor(file: string, options?: StoreOptions);
  readonly file: string;
  claim(key: string, fingerprint: string): Promise<Claim>;
  commit(claim: Claim, result: string): Promise<void>;
  lookup(key: string): Promise<StoreRecord | undefined>;
  executions(key?: string): Promise<number>;
}

/** Commit's error for a claim that is no longer the key's. */
export declare class ClaimLostError extends Error {}

/** SHA-256 of canonical JSON (object keys sorted) of the arguments without the key. */
export declare function fingerprint(args: unknown): string;

export interface TestToolsOptions {
  /** Register whatever the environment says; otherwise only when MCP_CONFORM_TEST_TOOLS=1. */
  enabled?: boolean;
  /** Starts every tool's name (DEFAULT_PREFIX). */
  prefix?: string;
  /** The mutation's store; default a FileStore at $MCP_CONFORM_TEST_STORE, else a MemoryStore (not durable). */
  store?: Store;
  /** Bounds of the slow tool's arguments (10000 and 60000). */
  maxSteps?: number;
  maxStepMs?: number;
  /** Gets one line per call's start and end. */
  log?: (line: string) => void;
  /**
   * Called with the request id when a slow call stops on its cancellation:
   * over Streamable HTTP, pass (id) => transport.closeSSEStream(id) so that
   * the cancelled request's stream ends at once.
   */
  onCancelled?: (requestId: string | number) => void;
}

/** The test tools' shared state: one per process, registered on every McpServer that serves a session. */
export interface TestTools {
  readonly prefix: string;
  readonly store: Store;
  /**
   * Adds the tools to server. A server that makes one McpServer per HTTP
   * session registers one TestTools on each, so the probe sees every
   * session's work; onCancelled (default options.onCancelled) is per server,
   * e.g. (id) => transport.closeSSEStream(id) for that session's transport.
   */
  register(server: McpServer, options?: { onCancelled?: (requestId: string | number) => void }): void;
}

/**
 * The test tools' shared state when options.enabled is set or
 * MCP_CONFORM_TEST_TOOLS=1, else undefined. TEST ONLY: never ship them enabled.
 */
export declare function createTestTools(options?: TestToolsOptions): TestTools | undefined;

/** True when MCP_CONFORM_TEST_TOOLS=1. */
export declare function switched(): boolean;

/**
 * Adds the test tools to server when options.enabled is set or
 * MCP_CONFORM_TEST_TOOLS=1, and returns whether it did:
 * createTestTools(options)?.register(server), for a server with one McpServer
 * for all its sessions. TEST ONLY: never ship them enabled.
 */
export declare function registerTestTools(server: McpServer, options?: TestToolsOptions): boolean;
