// Fake embedders for TextEncoderPool tests, registered inside each worker thread (the pool's
// `preload` option). Plain JavaScript on the compiled registry: a worker thread runs dist/, not
// the TypeScript sources vitest runs. No model, no weights.
import { registerEmbedder } from '../../dist/src/embedders/registry.js';
import { ModelError, ValidationError } from '../../dist/src/api/errors.js';

const DIM = 4;

function fake(id, embedText) {
  registerEmbedder({ id, dim: DIM, description: `test fake ${id}` }, () => ({
    id,
    dim: DIM,
    frameMaxSide: 64,
    async load() {},
    embedText,
    async embedSegment() {
      throw new Error('not for segments');
    },
    async dispose() {},
  }));
}

/** A vector that says which text it came from: [length, sum of char codes, the trailing number or -1, 1]. */
export function echoVector(text) {
  let sum = 0;
  for (const ch of text) sum += ch.codePointAt(0);
  const m = /(\d+)$/.exec(text);
  return new Float32Array([text.length, sum, m ? Number(m[1]) : -1, 1]);
}

// Answers after a random short delay, so calls of one batch finish out of order.
fake('fake-echo', async (text) => {
  await new Promise((r) => setTimeout(r, Math.random() * 5));
  return { vector: echoVector(text), truncated: text.length > 20 };
});
fake('fake-model-error', async (text) => {
  throw new ModelError(`cannot encode ${text}`);
});
fake('fake-validation-error', async () => {
  throw new ValidationError([{ loc: ['body', 'text'], msg: 'is not allowed here', type: 'value_error.test' }]);
});
fake('fake-plain-error', async () => {
  throw new TypeError('something broke');
});
// Kills its thread: an uncaught exception outside any promise the worker awaits.
fake('fake-crash', () => {
  setImmediate(() => {
    throw new Error('the thread crashed on purpose');
  });
  return new Promise(() => {});
});
fake('fake-hang', () => new Promise(() => {}));
// Says which thread answered ([threadId, 0, 0, 1]) once the gate file named by the text exists:
// the test holds a thread busy for exactly as long as it wants, with no clock involved.
const { threadId } = await import('node:worker_threads');
const { existsSync } = await import('node:fs');
fake('fake-gated', async (gate) => {
  while (!existsSync(gate)) await new Promise((r) => setTimeout(r, 5));
  return { vector: new Float32Array([threadId, 0, 0, 1]), truncated: false };
});
