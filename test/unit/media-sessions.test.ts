/**
 * Media sessions (the web page's playback cookie) are capped per key, and a key evicts only its
 * own (issue 21): another key opening many sessions never signs anybody else out; when the server
 * holds all it can, a new session is refused (503) rather than someone else's evicted.
 */
import { describe, expect, it } from 'vitest';
import { UnavailableError } from '../../src/api/errors.js';
import type { Principal } from '../../src/api/principal.js';
import { MAX_MEDIA_SESSIONS_PER_KEY, UiSessions, type MediaSource } from '../../src/server/ui.js';

const alive = () => true;
const source = (id: string): MediaSource => ({ kind: 'key', id });
const who = (owner: string): Principal => ({ owner, admin: false });

describe('media sessions per key', () => {
  it("keeps a key's sessions while another key opens many more; a key at its cap loses its own oldest", () => {
    const sessions = new UiSessions();
    const mine = sessions.openMedia(source('key_a'), who('a'));
    const flood = Array.from({ length: MAX_MEDIA_SESSIONS_PER_KEY * 50 }, () => sessions.openMedia(source('key_b'), who('b')));
    expect(sessions.mediaSession(mine, alive)?.principal.owner).toBe('a');
    // key_b kept only its newest MAX_MEDIA_SESSIONS_PER_KEY.
    const kept = flood.filter((sid) => sessions.mediaSession(sid, alive));
    expect(kept).toEqual(flood.slice(-MAX_MEDIA_SESSIONS_PER_KEY));
    // key_a at its cap: its own oldest goes, nobody else's.
    const more = Array.from({ length: MAX_MEDIA_SESSIONS_PER_KEY }, () => sessions.openMedia(source('key_a'), who('a')));
    expect(sessions.mediaSession(mine, alive)).toBeUndefined();
    expect(more.every((sid) => sessions.mediaSession(sid, alive))).toBe(true);
    expect(flood.slice(-MAX_MEDIA_SESSIONS_PER_KEY).every((sid) => sessions.mediaSession(sid, alive))).toBe(true);
  });

  it('refuses a new session (503) when the server holds all it can, evicting nobody', () => {
    let now = 1_000_000;
    const sessions = new UiSessions(() => now, 3);
    const held = ['k1', 'k2', 'k3'].map((k) => sessions.openMedia(source(k), who(k)));
    expect(() => sessions.openMedia(source('k4'), who('k4'))).toThrow(UnavailableError);
    expect(held.every((sid) => sessions.mediaSession(sid, alive))).toBe(true);
    // A key that holds one replaces its own oldest, and expired sessions make room.
    expect(sessions.mediaSession(sessions.openMedia(source('k1'), who('k1')), alive)).toBeDefined();
    expect(sessions.mediaSession(held[0], alive)).toBeUndefined();
    expect(held.slice(1).every((sid) => sessions.mediaSession(sid, alive))).toBe(true);
    now += 13 * 3600 * 1000;
    expect(sessions.mediaSession(sessions.openMedia(source('k4'), who('k4')), alive)).toBeDefined();
  });
});
