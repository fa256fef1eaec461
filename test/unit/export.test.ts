/**
 * Exports editors use, read back the way their tools read them: the EDL is parsed (events,
 * timecodes at each source's frame rate, a continuous record side), the SRT's cues and the CSV's
 * cells are parsed, not compared as strings.
 */
import { describe, expect, it } from 'vitest';
import { exportMoments, framesToTimecode, selects, timecodeBase, timecodeToFrames, toCsv, toEdl, toJson, toSrt, type ExportMoment } from '../../src/cli/export.js';

const moment = (rank: number, filename: string, start: number, end: number, fps?: number): ExportMoment => ({
  rank,
  video_id: `vid_${rank}`,
  filename,
  start,
  end,
  similarity: 0.5,
  relevance: 0.6 - rank / 100,
  confidence: 0.7,
  confidence_label: 'high',
  kinds: ['seen'],
  evidence: { seen: { probability: 0.7 } },
  fps,
});

/** A minimal CMX 3600 reader: events with reel, track, transition, four timecodes, and clip names. */
function parseEdl(edl: string) {
  const lines = edl.split(/\r?\n/);
  const title = /^TITLE: (.*)$/.exec(lines[0])?.[1];
  const fcm = lines.find((l) => l.startsWith('FCM:'));
  const events: { n: number; reel: string; track: string; cut: string; tc: string[]; clip?: string }[] = [];
  for (const l of lines) {
    const e = /^(\d{3})\s+(\S+)\s+(\S+)\s+(\S+)\s+(\d\d:\d\d:\d\d:\d\d) (\d\d:\d\d:\d\d:\d\d) (\d\d:\d\d:\d\d:\d\d) (\d\d:\d\d:\d\d:\d\d)$/.exec(l);
    if (e) events.push({ n: Number(e[1]), reel: e[2], track: e[3], cut: e[4], tc: e.slice(5, 9) });
    const c = /^\* FROM CLIP NAME: (.*)$/.exec(l);
    if (c) events[events.length - 1].clip = c[1];
  }
  return { title, fcm, events };
}

describe('EDL (CMX 3600)', () => {
  const moments = [moment(1, 'interview A.mp4', 12.48, 16.0, 29.97), moment(2, 'b-roll.mov', 0, 4, 25), moment(3, 'drone.mp4', 61.5, 64.02, 29.97)];
  const edl = toEdl('vidembed search: interview', moments);
  const parsed = parseEdl(edl);

  it('has a title, a frame-code mode and one video cut event per moment, in rank order, named by file', () => {
    expect(parsed.title).toBe('vidembed search: interview');
    expect(parsed.fcm).toBe('FCM: NON-DROP FRAME');
    expect(parsed.events.map((e) => [e.n, e.reel, e.track, e.cut, e.clip])).toEqual([
      [1, 'AX', 'V', 'C', 'interview A.mp4'],
      [2, 'AX', 'V', 'C', 'b-roll.mov'],
      [3, 'AX', 'V', 'C', 'drone.mp4'],
    ]);
  });

  it("gives source in/out at each file's own frame rate, within one frame of the moment", () => {
    for (const [i, e] of parsed.events.entries()) {
      const base = timecodeBase(moments[i].fps);
      const [srcIn, srcOut] = e.tc.slice(0, 2).map((tc) => timecodeToFrames(tc, base));
      expect(Math.abs(srcIn / base - moments[i].start)).toBeLessThanOrEqual(1 / base);
      expect(Math.abs(srcOut / base - moments[i].end)).toBeLessThanOrEqual(1 / base);
      // Frame fields stay below the rate: 25 fps never shows frame 25 or more.
      for (const tc of e.tc.slice(0, 2)) expect(Number(tc.slice(-2))).toBeLessThan(base);
    }
  });

  it('lays the events end to end on a timeline from 01:00:00:00, each as long as its source', () => {
    const recordBase = 30; // two of three sources run at 29.97 → counted at 30
    let expected = 3600 * recordBase;
    for (const e of parsed.events) {
      const [srcIn, srcOut, recIn, recOut] = e.tc.map((tc, k) => timecodeToFrames(tc, k < 2 ? timecodeBase(moments[e.n - 1].fps) : recordBase));
      expect(recIn).toBe(expected);
      const srcSeconds = (srcOut - srcIn) / timecodeBase(moments[e.n - 1].fps);
      expect(Math.abs((recOut - recIn) / recordBase - srcSeconds)).toBeLessThanOrEqual(1 / recordBase);
      expected = recOut;
    }
  });

  it('converts timecodes both ways', () => {
    for (const base of [24, 25, 30, 60]) for (const f of [0, 1, base - 1, base, 3600 * base + 17, 86399 * base]) expect(timecodeToFrames(framesToTimecode(f, base), base)).toBe(f);
    expect(framesToTimecode(3600 * 25, 25)).toBe('01:00:00:00');
    expect(timecodeBase(23.976)).toBe(24);
    expect(timecodeBase(undefined)).toBe(25);
  });
});

describe('SRT and CSV', () => {
  it('SRT: numbered cues with HH:MM:SS,mmm times naming the file', () => {
    const srt = toSrt([moment(1, 'a.mp4', 3661.25, 3665.5), moment(2, 'b.mp4', 0, 2)]);
    const cues = srt.trim().split(/\n\n/).map((c) => c.split('\n'));
    expect(cues.map((c) => c[0])).toEqual(['1', '2']);
    expect(cues[0][1]).toBe('01:01:01,250 --> 01:01:05,500');
    expect(cues[0][2]).toMatch(/^#1 a\.mp4 /);
    expect(cues[1][1]).toBe('00:00:00,000 --> 00:00:02,000');
  });

  it('CSV: a header and one row per moment; commas, quotes and formula-looking names survive safely', () => {
    const csv = toCsv([moment(1, 'a, "quoted".mp4', 1, 2), moment(2, '=HYPERLINK("x").mp4', 3, 4)]);
    // A small RFC 4180 reader.
    const rows: string[][] = [];
    let cell = '';
    let row: string[] = [];
    let quoted = false;
    for (let i = 0; i < csv.length; i++) {
      const ch = csv[i];
      if (quoted) {
        if (ch === '"' && csv[i + 1] === '"') (cell += '"'), i++;
        else if (ch === '"') quoted = false;
        else cell += ch;
      } else if (ch === '"') quoted = true;
      else if (ch === ',') row.push(cell), (cell = '');
      else if (ch === '\r' && csv[i + 1] === '\n') row.push(cell), rows.push(row), (row = []), (cell = ''), i++;
      else cell += ch;
    }
    expect(rows[0].slice(0, 5)).toEqual(['rank', 'video_id', 'filename', 'start', 'end']);
    expect(rows[1].slice(0, 5)).toEqual(['1', 'vid_1', 'a, "quoted".mp4', '1', '2']);
    expect(rows[2][2]).toBe(`'=HYPERLINK("x").mp4`);
    expect(rows).toHaveLength(3);
  });
});

describe("exports name the user's own file", () => {
  it('a video in place by its path (CSV, JSON, SRT; the EDL keeps the clip name and adds the source file), others by their original name, at their real times', () => {
    const inPlace = { ...moment(1, 'C0001.MP4', 12.5, 17, 25), path: '/footage/card one/DCIM/C0001.MP4' };
    const copied = moment(2, 'holiday.mov', 61, 65.5, 25);
    expect(toCsv([inPlace, copied]).split('\r\n')[1]).toMatch(/^1,vid_1,\/footage\/card one\/DCIM\/C0001\.MP4,12\.5,17,/);
    expect(toCsv([inPlace, copied]).split('\r\n')[2]).toMatch(/^2,vid_2,holiday\.mov,61,65\.5,/);
    expect(JSON.parse(toJson('q', [inPlace, copied])).moments.map((m: { filename: string; start: number }) => [m.filename, m.start])).toEqual([
      ['/footage/card one/DCIM/C0001.MP4', 12.5],
      ['holiday.mov', 61],
    ]);
    const cues = toSrt([inPlace, copied]).trim().split(/\n\n/).map((c) => c.split('\n'));
    expect(cues.map((c) => [c[1], c[2].split(' (')[0]])).toEqual([
      ['00:00:12,500 --> 00:00:17,000', '#1 /footage/card one/DCIM/C0001.MP4'],
      ['00:01:01,000 --> 00:01:05,500', '#2 holiday.mov'],
    ]);
    const edl = toEdl('t', [inPlace, copied]).split('\r\n');
    expect(edl.filter((l) => l.startsWith('* FROM CLIP NAME') || l.startsWith('* SOURCE FILE'))).toEqual([
      '* FROM CLIP NAME: C0001.MP4',
      '* SOURCE FILE: /footage/card one/DCIM/C0001.MP4',
      '* FROM CLIP NAME: holiday.mov',
    ]);
    expect(edl.find((l) => l.startsWith('001'))).toContain('00:00:12:13 00:00:17:00');
  });
});

describe('selects: handles, minimum length, adjacent moments merged', () => {
  const at = (rank: number, video: string, start: number, end: number, duration?: number): ExportMoment => ({ ...moment(rank, `${video}.mp4`, start, end, 25), video_id: video, duration });

  it('adds a handle each side (1 s by default), never before 0 or past the file', () => {
    const [a, b] = selects([at(1, 'v1', 10, 14, 60), at(2, 'v2', 0.4, 4, 4.5)]);
    expect([a.start, a.end]).toEqual([9, 15]);
    expect(a.match).toEqual({ start: 10, end: 14 });
    expect([b.start, b.end]).toEqual([0, 4.5]);
  });

  it('makes every event at least the minimum length (2 s by default), grown about its middle', () => {
    // A 6-frame spoken hit: 45.84–46.12.
    const [e] = selects([at(1, 'v1', 45.84, 46.12, 120)], { handles: 0 });
    expect(e.end - e.start).toBeCloseTo(2, 6);
    expect((e.start + e.end) / 2).toBeCloseTo((45.84 + 46.12) / 2, 6);
    const [edge] = selects([at(1, 'v1', 0, 0.2, 10)], { handles: 0, minLength: 3 });
    expect([edge.start, edge.end]).toEqual([0, 3]);
    const [long] = selects([at(1, 'v1', 1, 2, 10)], { handles: 2, minLength: 2 });
    expect([long.start, long.end]).toEqual([0, 4]);
  });

  it('merges moments of one file that touch or overlap once widened, keeping every rank, in rank order', () => {
    const events = selects([at(1, 'v1', 10, 12, 60), at(2, 'v2', 5, 8, 60), at(3, 'v1', 13, 15, 60), at(4, 'v1', 40, 42, 60)]);
    expect(events.map((e) => [e.video_id, e.start, e.end, e.ranks])).toEqual([
      ['v1', 9, 16, [1, 3]],
      ['v2', 4, 9, [2]],
      ['v1', 39, 43, [4]],
    ]);
  });

  it('gives the EDL no event shorter than the minimum, and the flags change both', () => {
    const edl = exportMoments('edl', 'q', [at(1, 'v1', 45.84, 46.12, 120)]);
    const e = parseEdl(edl).events[0];
    const [srcIn, srcOut] = e.tc.slice(0, 2).map((tc) => timecodeToFrames(tc, 25));
    expect((srcOut - srcIn) / 25).toBeGreaterThanOrEqual(2);
    const tight = parseEdl(exportMoments('edl', 'q', [at(1, 'v1', 45.84, 46.12, 120)], { handles: 0, minLength: 0.5 })).events[0];
    const [tIn, tOut] = tight.tc.slice(0, 2).map((tc) => timecodeToFrames(tc, 25));
    expect((tOut - tIn) / 25).toBeCloseTo(0.52, 1);
  });
});
