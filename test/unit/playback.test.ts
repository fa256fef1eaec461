/** The "plays in a browser" decision and the proxy's size and ffmpeg arguments (no ffmpeg run). */
import { describe, expect, it } from 'vitest';
import { playsInBrowser, proxyArgs, proxySize } from '../../src/media/playback.js';
import { playbackUrl } from '../../src/services/playback.js';

const MP4 = 'mov,mp4,m4a,3gp,3g2,mj2';
const WEBM = 'matroska,webm';

describe('playsInBrowser', () => {
  it('plays H.264 8-bit 4:2:0 in MP4/MOV, with AAC, MP3 or no audio', () => {
    expect(playsInBrowser({ container: MP4, videoCodec: 'h264', pixFmt: 'yuv420p', hasAudio: true, audioCodec: 'aac' })).toEqual({ plays: true, why: '' });
    expect(playsInBrowser({ container: MP4, videoCodec: 'h264', pixFmt: 'yuvj420p', hasAudio: true, audioCodec: 'mp3' }).plays).toBe(true);
    expect(playsInBrowser({ container: MP4, videoCodec: 'h264', pixFmt: 'yuv420p', hasAudio: false }).plays).toBe(true);
  });

  it('plays VP8, VP9 and AV1 in WebM/Matroska, with Opus, Vorbis or no audio', () => {
    for (const videoCodec of ['vp8', 'vp9', 'av1']) {
      expect(playsInBrowser({ container: WEBM, videoCodec, pixFmt: 'yuv420p', hasAudio: true, audioCodec: 'opus' }).plays, videoCodec).toBe(true);
    }
    expect(playsInBrowser({ container: WEBM, videoCodec: 'vp9', pixFmt: 'yuv420p', hasAudio: true, audioCodec: 'vorbis' }).plays).toBe(true);
  });

  it('does not play other containers, whatever is inside (AVI, MPEG-PS, Ogg/Theora, FLV, ASF)', () => {
    expect(playsInBrowser({ container: 'avi', videoCodec: 'h264', pixFmt: 'yuv420p', hasAudio: false })).toEqual({ plays: false, why: 'avi container' });
    expect(playsInBrowser({ container: 'avi', videoCodec: 'vp9', pixFmt: 'yuv420p', hasAudio: true, audioCodec: 'mp3' }).plays).toBe(false);
    expect(playsInBrowser({ container: 'mpeg', videoCodec: 'mpeg2video', pixFmt: 'yuv420p', hasAudio: true, audioCodec: 'mp2' }).why).toBe('mpeg container');
    expect(playsInBrowser({ container: 'ogg', videoCodec: 'theora', pixFmt: 'yuv420p', hasAudio: false }).why).toBe('ogg container');
    expect(playsInBrowser({ container: 'flv', videoCodec: 'h264', hasAudio: false }).plays).toBe(false);
    expect(playsInBrowser({ container: 'asf', videoCodec: 'wmv2', hasAudio: false }).plays).toBe(false);
    expect(playsInBrowser({ hasAudio: false }).why).toBe('unknown container');
  });

  it('does not play codecs, pixel formats or audio browsers lack in a container they open', () => {
    expect(playsInBrowser({ container: MP4, videoCodec: 'hevc', pixFmt: 'yuv420p', hasAudio: true, audioCodec: 'aac' })).toEqual({ plays: false, why: 'hevc video in MP4/MOV' });
    expect(playsInBrowser({ container: MP4, videoCodec: 'mjpeg', pixFmt: 'yuvj422p', hasAudio: true, audioCodec: 'mp2' }).why).toBe('mjpeg video in MP4/MOV');
    expect(playsInBrowser({ container: MP4, videoCodec: 'prores', hasAudio: false }).plays).toBe(false);
    expect(playsInBrowser({ container: MP4, videoCodec: 'h264', pixFmt: 'yuv420p10le', hasAudio: false }).why).toBe('h264 yuv420p10le pixels');
    expect(playsInBrowser({ container: MP4, videoCodec: 'h264', pixFmt: 'yuv422p', hasAudio: false }).plays).toBe(false);
    expect(playsInBrowser({ container: MP4, videoCodec: 'h264', pixFmt: 'yuv420p', hasAudio: true, audioCodec: 'pcm_s16le' }).why).toBe('pcm_s16le audio in MP4/MOV');
    expect(playsInBrowser({ container: MP4, videoCodec: 'vp9', pixFmt: 'yuv420p', hasAudio: false }).plays).toBe(false);
    expect(playsInBrowser({ container: WEBM, videoCodec: 'h264', pixFmt: 'yuv420p', hasAudio: false }).why).toBe('h264 video in WebM');
    expect(playsInBrowser({ container: WEBM, videoCodec: 'vp9', pixFmt: 'yuv420p', hasAudio: true, audioCodec: 'aac' }).why).toBe('aac audio in WebM');
  });
});

describe('the playback proxy', () => {
  it('is at most 720p either way up, never larger than the source, aspect kept, sides even', () => {
    expect(proxySize({ width: 1920, height: 1080 })).toEqual({ width: 1280, height: 720 });
    expect(proxySize({ width: 1080, height: 1920 })).toEqual({ width: 720, height: 1280 });
    expect(proxySize({ width: 3840, height: 1600 })).toEqual({ width: 1280, height: 534 });
    expect(proxySize({ width: 640, height: 480 })).toEqual({ width: 640, height: 480 });
    expect(proxySize({ width: 160, height: 120 })).toEqual({ width: 160, height: 120 });
    expect(proxySize({ width: 401, height: 301 })).toEqual({ width: 402, height: 302 });
    expect(proxySize({ width: 1440, height: 1080 })).toEqual({ width: 960, height: 720 });
  });

  it('encodes H.264 yuv420p with faststart, AAC only when there is audio, resampling rates AAC lacks', () => {
    const withAudio = proxyArgs('in.avi', 'out.mp4', { width: 160, height: 120, fps: 15, videoIndex: 0, audioIndex: 1, sampleRate: 11024 });
    expect(withAudio).toEqual(expect.arrayContaining(['-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-movflags', '+faststart', '-c:a', 'aac', '-ar', '48000']));
    expect(withAudio.join(' ')).toContain('-map 0:0 -vf scale=160:120,setsar=1');
    expect(withAudio.join(' ')).toContain('-map 0:1 -c:a aac');
    expect(withAudio.join(' ')).toContain('-g 30');
    const keepRate = proxyArgs('in.avi', 'out.mp4', { width: 160, height: 120, fps: 25, videoIndex: 1, audioIndex: 0, sampleRate: 44100 });
    expect(keepRate).not.toContain('-ar');
    const silent = proxyArgs('in.avi', 'out.mp4', { width: 1920, height: 1080, fps: 187.35, videoIndex: 0 });
    expect(silent).not.toContain('-c:a');
    expect(silent.join(' ')).toContain('scale=1280:720,setsar=1,fps=60');
    expect(silent[silent.length - 1]).toBe('out.mp4');
  });

  it('is what playback_url names when one was made; the original file when that plays; nothing otherwise', () => {
    expect(playbackUrl({ id: 'vid_a', playback: 'original' })).toBe('/videos/vid_a/file');
    expect(playbackUrl({ id: 'vid_a', playback: 'proxy' })).toBe('/videos/vid_a/playback');
    expect(playbackUrl({ id: 'vid_a', playback: 'none' })).toBeUndefined();
    expect(playbackUrl({ id: 'vid_a', playback: null })).toBeUndefined();
  });
});
