/** API paths the engine hands out (relative to the server; the web page and clients resolve them). */
export function thumbnailUrl(videoId: string, t?: number): string {
  return `/videos/${encodeURIComponent(videoId)}/thumbnail${t === undefined ? '' : `?t=${Math.round(t * 1000) / 1000}`}`;
}
