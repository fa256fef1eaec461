import type { KeyLimits } from './limits.js';

/**
 * Who a call acts for. Every collection, video (through its collection), task and tensor upload
 * belongs to an owner; a key acts for its owner and sees only that owner's resources, an admin key
 * sees and manages everything. The local CLI (no server) acts as LOCAL_PRINCIPAL: full rights,
 * creating what it creates for the owner "default" — the owner everything made before owners
 * existed belongs to.
 */
export interface Principal {
  owner: string;
  admin: boolean;
  /** What the key may ask of the server (src/api/limits.ts); none: no limits (the local CLI, `--no-auth`). */
  limits?: KeyLimits;
}

export const DEFAULT_OWNER = 'default';

export const LOCAL_PRINCIPAL: Principal = Object.freeze({ owner: DEFAULT_OWNER, admin: true });

/** Owner names: a letter or digit, then letters, digits, `_`, `-`, `.`; at most 64; never `..`. */
export const OWNER_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/**
 * Client-chosen ids that end up in storage keys (tensor `request_id`): 1-128 of letters, digits,
 * `_`, `.`, `-`, and never `.` or `..` alone.
 */
export const CLIENT_ID_RE = /^(?!\.{1,2}$)[A-Za-z0-9_.-]{1,128}$/;

export function isValidOwner(owner: string): boolean {
  return OWNER_RE.test(owner) && !owner.includes('..');
}

/** May `p` see a resource that belongs to `owner`? */
export function canSee(p: Principal, owner: string): boolean {
  return p.admin || p.owner === owner;
}
