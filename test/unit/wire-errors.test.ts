import { describe, expect, it } from 'vitest';
import { errorFromWire, errorToWire, NotFoundError, ServerBusyError, UnavailableError, VidembedError } from '../../src/api/errors.js';
import { FootageUnavailableError } from '../../src/services/footage-files.js';

describe('errors across a thread boundary (errorToWire / errorFromWire)', () => {
  it('keeps a server-busy refusal a 503 with its Retry-After', () => {
    const e = errorFromWire(errorToWire(new ServerBusyError('at the cap', 7)));
    expect(e).toBeInstanceOf(ServerBusyError);
    expect((e as ServerBusyError).retryAfterSeconds).toBe(7);
  });

  it('keeps what cannot be reached', () => {
    const e = errorFromWire(errorToWire(new UnavailableError('the database is down', 3, { dependency: 'the database' })));
    expect(e).toBeInstanceOf(UnavailableError);
    expect((e as UnavailableError).dependency).toBe('the database');
    expect((e as UnavailableError).retryAfterSeconds).toBe(3);
  });

  it('sends a subclass the other side has no constructor for as its nearest known class, message kept', () => {
    const sub = new FootageUnavailableError('clip.mp4', 'was moved');
    const e = errorFromWire(errorToWire(sub));
    expect(e).toBeInstanceOf(NotFoundError);
    expect((e as NotFoundError).status).toBe(sub.status);
    expect(e.message).toBe('clip.mp4 was moved');
    class Unknown extends VidembedError {}
    expect(errorFromWire(errorToWire(new Unknown('odd')))).toBeInstanceOf(VidembedError);
  });
});
