/**
 * Vectors sent to PostgreSQL in binary (src/store/pg/vector-store.ts `packVectors`): one `real[]`
 * in array_recv's layout with each vector's offset, and pgvector's `vector_send` form read back.
 * Text (pgvector's text form, as before) cost ~1 ms a 512-d vector to print and as much to parse: the whole cost of
 * the 100k bench's writes. (The SQL side runs against a real PostgreSQL in test/e2e/segments-pgvector.)
 */
import { describe, expect, it } from 'vitest';
import { packVectors, queryVectorParam, readVectorBinary } from '../../src/store/pg/vector-store.js';

/** array_recv's reading of the buffer: header, dimensions, then length-prefixed big-endian floats. */
function readArray(b: Buffer): { ndim: number; flags: number; elem: number; values: number[] } {
  const ndim = b.readInt32BE(0);
  const flags = b.readInt32BE(4);
  const elem = b.readInt32BE(8);
  if (ndim === 0) return { ndim, flags, elem, values: [] };
  const n = b.readInt32BE(12);
  expect(b.readInt32BE(16)).toBe(1); // lower bound
  const values: number[] = [];
  for (let i = 0, at = 20; i < n; i++, at += 8) {
    expect(b.readInt32BE(at)).toBe(4);
    values.push(b.readFloatBE(at + 4));
  }
  expect(b.length).toBe(20 + 8 * n);
  return { ndim, flags, elem, values };
}

describe('packVectors', () => {
  it('lays the vectors end to end as one float4 array, with each offset (null for a row without one)', () => {
    const a = Float32Array.from([0.1, -2.5, 3e-8]);
    const b = Float32Array.from([1 / 3, 7]);
    const { data, offsets } = packVectors([a, null, b]);
    expect(offsets).toEqual([0, null, 3]);
    const arr = readArray(data);
    expect(arr).toMatchObject({ ndim: 1, flags: 0, elem: 700 });
    // float32 bits exactly, not a decimal rendering of them
    expect(Float32Array.from(arr.values)).toEqual(Float32Array.from([...a, ...b]));
  });
  it('sends an empty array when no row has a vector', () => {
    const { data, offsets } = packVectors([null, null]);
    expect(offsets).toEqual([null, null]);
    expect(readArray(data)).toEqual({ ndim: 0, flags: 0, elem: 700, values: [] });
    expect(data.length).toBe(12);
  });
  it('refuses NaN and infinities (pgvector would too, with a less clear message)', () => {
    expect(() => packVectors([Float32Array.from([1, Number.NaN])])).toThrow(/NaN or an infinity/);
    expect(() => queryVectorParam(Float32Array.from([Number.POSITIVE_INFINITY]))).toThrow(/NaN or an infinity/);
  });
});

describe('readVectorBinary', () => {
  it("reads pgvector's vector_send form: dim and a reserved int16, then big-endian float32s", () => {
    const v = Float32Array.from([0.25, -1e-3, 12345.678]);
    const b = Buffer.alloc(4 + 4 * v.length);
    b.writeUInt16BE(v.length, 0);
    v.forEach((x, i) => b.writeFloatBE(x, 4 + 4 * i));
    expect(readVectorBinary(b)).toEqual(v);
  });
  it('refuses a buffer whose length does not match its dimension', () => {
    const b = Buffer.alloc(4 + 4 * 2);
    b.writeUInt16BE(3, 0);
    expect(() => readVectorBinary(b)).toThrow(/cannot hold 3 dimensions/);
  });
});
