/**
 * Deterministic pictures with corners for the keypoint and picture-check unit tests: `count`
 * rectangles of random size and place (xorshift32 from `seed`), each painted by the caller, which
 * draws its colour from the same generator (so a scene is the same on every run and machine).
 */
export function forEachRect(
  width: number,
  height: number,
  seed: number,
  count: number,
  paint: (x0: number, y0: number, w: number, h: number, rand: () => number) => void,
): void {
  let s = seed >>> 0 || 1;
  const rand = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
  for (let r = 0; r < count; r++) {
    const w = 6 + Math.floor(rand() * width * 0.15);
    const h = 6 + Math.floor(rand() * height * 0.15);
    const x0 = Math.floor(rand() * (width - w));
    const y0 = Math.floor(rand() * (height - h));
    paint(x0, y0, w, h, rand);
  }
}
