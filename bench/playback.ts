/**
 * Playback proxy cost (issue 22): every video of ../shared/eval/videos that a browser does not
 * play as it is gets the proxy ingest makes (H.264 ≤720p, faststart, AAC); the figure is seconds
 * of proxy making (wall clock) per second of footage, over those videos and for each.
 *
 * Returned keys: playback.videos (how many), playback.proxied (how many needed a proxy),
 * playback.footage_s / proxy_s (their totals), playback.s_per_footage_s (proxy_s / footage_s),
 * playback.bytes_ratio (proxy bytes / original bytes), playback.each[] (file, why, footage_s, proxy_s).
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { playsInBrowser, withPlaybackProxy } from '../src/media/playback.js';
import { probe } from '../src/media/probe.js';
import { round } from './util.js';

export async function benchPlayback(dir = path.resolve(process.cwd(), '../shared/eval/videos')): Promise<unknown> {
  const files = readdirSync(dir).filter((f) => !f.startsWith('.') && statSync(path.join(dir, f)).isFile()).sort();
  const each: { file: string; why: string; footage_s: number; proxy_s: number; s_per_footage_s: number }[] = [];
  let origBytes = 0;
  let proxyBytes = 0;
  for (const f of files) {
    const file = path.join(dir, f);
    const media = await probe(file).catch(() => undefined);
    if (!media) continue;
    const d = playsInBrowser(media);
    if (d.plays) continue;
    const t = performance.now();
    await withPlaybackProxy(file, f, async (out) => void (proxyBytes += statSync(out).size));
    const s = (performance.now() - t) / 1000;
    origBytes += statSync(file).size;
    each.push({ file: f, why: d.why, footage_s: round(media.durationSec), proxy_s: round(s), s_per_footage_s: round(s / media.durationSec, 3) });
    process.stderr.write(`bench: playback ${f}: ${s.toFixed(2)} s for ${media.durationSec.toFixed(1)} s\n`);
  }
  const footage = each.reduce((a, e) => a + e.footage_s, 0);
  const proxy = each.reduce((a, e) => a + e.proxy_s, 0);
  return {
    videos: files.length,
    proxied: each.length,
    footage_s: round(footage),
    proxy_s: round(proxy),
    s_per_footage_s: round(proxy / footage, 3),
    bytes_ratio: round(proxyBytes / origBytes, 3),
    each,
  };
}
