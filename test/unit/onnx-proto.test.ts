import { describe, expect, it } from 'vitest';
import { ProtoWriter } from '../../src/models/onnx/proto.js';

describe('ProtoWriter', () => {
  it('writes a nested message as tag, length and the inner bytes (chunks joined without a copy)', () => {
    const inner = (w: ProtoWriter) => w.int(1, 300).string(2, 'héllo').bytes(3, new Uint8Array([1, 2, 3])).float(4, 1.5).message(5, (d) => d.int(1, -1));
    const nested = new ProtoWriter().message(7, inner).int(8, 2).finish();
    // The same message spelled out: the inner one finished first, then written as bytes.
    const innerBytes = (() => {
      const w = new ProtoWriter();
      inner(w);
      return w.finish();
    })();
    const spelled = new ProtoWriter().bytes(7, innerBytes).int(8, 2).finish();
    expect(Buffer.from(nested).equals(Buffer.from(spelled))).toBe(true);
    // Field 7, wire type 2, then the length as a varint.
    expect(nested[0]).toBe((7 << 3) | 2);
    expect(nested[1]).toBe(innerBytes.length);
    // -1 as a 10-byte varint, 300 as two bytes: 0xac 0x02.
    expect([...innerBytes.slice(0, 3)]).toEqual([0x08, 0xac, 0x02]);
    expect(innerBytes.length).toBe(3 + 8 + 5 + 5 + 2 + 1 + 10);
  });
});
