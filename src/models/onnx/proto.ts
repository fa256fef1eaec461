/**
 * A minimal protocol-buffers *writer*: just what is needed to serialise an ONNX ModelProto (varints,
 * length-delimited fields, fixed32 floats). No reader, no schema: the field numbers live in
 * `onnx.ts`, next to the message they belong to.
 */

const WIRE_VARINT = 0;
const WIRE_FIXED32 = 5;
const WIRE_LEN = 2;

export class ProtoWriter {
  private chunks: Uint8Array[] = [];
  private length = 0;

  private push(bytes: Uint8Array): void {
    this.chunks.push(bytes);
    this.length += bytes.length;
  }

  private varint(value: bigint | number): void {
    let v = BigInt(value);
    // Negative int64/int32 values are written as 10-byte two's complement varints, as protobuf does.
    if (v < 0n) v = BigInt.asUintN(64, v);
    const out: number[] = [];
    while (v >= 0x80n) {
      out.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    out.push(Number(v));
    this.push(Uint8Array.from(out));
  }

  private tag(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }

  /** int32 / int64 / uint64 / enum / bool. */
  int(field: number, value: number | bigint | boolean): this {
    this.tag(field, WIRE_VARINT);
    this.varint(typeof value === 'boolean' ? (value ? 1 : 0) : value);
    return this;
  }

  float(field: number, value: number): this {
    this.tag(field, WIRE_FIXED32);
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, value, true);
    this.push(b);
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    this.tag(field, WIRE_LEN);
    this.varint(value.length);
    this.push(value);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value));
  }

  /**
   * A nested message. Its chunks join this writer's as they are (no copy): a model's weights are
   * copied once, by the outermost `finish()`.
   */
  message(field: number, build: (w: ProtoWriter) => void): this {
    const inner = new ProtoWriter();
    build(inner);
    this.tag(field, WIRE_LEN);
    this.varint(inner.length);
    for (const c of inner.chunks) this.push(c);
    return this;
  }

  /** Packed repeated varints (int64 lists such as dims or ints attributes). */
  packedInts(field: number, values: readonly (number | bigint)[]): this {
    const inner = new ProtoWriter();
    for (const v of values) inner.varint(v);
    return this.bytes(field, inner.finish());
  }

  /** Packed repeated floats. */
  packedFloats(field: number, values: ArrayLike<number>): this {
    const b = new Uint8Array(values.length * 4);
    const dv = new DataView(b.buffer);
    for (let i = 0; i < values.length; i++) dv.setFloat32(i * 4, values[i], true);
    return this.bytes(field, b);
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.length);
    let off = 0;
    for (const c of this.chunks) {
      out.set(c, off);
      off += c.length;
    }
    return out;
  }
}
