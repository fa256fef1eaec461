/**
 * Upload progress (issue 33): the remote client streams the file and counts the bytes as the
 * connection takes them, and the CLI says the file's and the batch's bytes with the time left.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { multipartFile, RemoteService } from '../../src/client/remote.js';
import { formatDuration, TransferProgress } from '../../src/cli/progress.js';
import { anyFileIsVideo, startTestServer, type TestServer } from '../helpers/server.js';

describe('byte progress', () => {
  it('says the file, the batch and, once a second has passed, the rate and the time left', () => {
    let now = 0;
    const p = new TransferProgress(300 * 2 ** 20, 3, () => now);
    p.startFile('C0001.MP4', 100 * 2 ** 20, 0);
    expect(p.text()).toBe('uploading 1/3 C0001.MP4: 0 B of 100.0 MB (0%) · all: 0 B of 300.0 MB (0%)');
    now = 500;
    p.fileBytes(10 * 2 ** 20);
    expect(p.text()).toBe('uploading 1/3 C0001.MP4: 10.0 MB of 100.0 MB (10%) · all: 10.0 MB of 300.0 MB (3%)');
    now = 2000;
    p.fileBytes(40 * 2 ** 20);
    // 40 MB in 2 s: 20 MB/s, 260 MB left: 13 s.
    expect(p.text()).toBe('uploading 1/3 C0001.MP4: 40.0 MB of 100.0 MB (40%) · all: 40.0 MB of 300.0 MB (13%) · 20.0 MB/s, 0:13 left');
    p.fileDone();
    p.startFile('C0002.MP4', 200 * 2 ** 20, 1);
    p.fileBytes(2 ** 40); // never past the file's size
    expect(p.sent).toBe(300 * 2 ** 20);
    const one = new TransferProgress(1000, 1, () => 0);
    one.startFile('a.mp4', 1000, 0);
    expect(one.text()).toBe('uploading a.mp4: 0 B of 1000 B (0%)');
    expect([formatDuration(59.6), formatDuration(3725), formatDuration(-3)]).toEqual(['1:00', '1:02:05', '0:00']);
  });
});

describe('the remote client streams an upload', () => {
  let dir: string;
  let s: TestServer;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'vidembed-progress-'));
    s = await startTestServer({ engine: { checkVideo: anyFileIsVideo } });
  });
  afterAll(async () => {
    await s?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('one part named "file" of the length it announces; progress rises to the file size as the bytes go', async () => {
    const file = path.join(dir, 'big.mp4');
    const bytes = Buffer.alloc(3 * 2 ** 20 + 17, 7);
    writeFileSync(file, bytes);
    const seen: number[] = [];
    const { headers, body } = multipartFile(file, 'a "quoted"\r\nname.mp4', bytes.length, (n) => seen.push(n));
    let received: Buffer | undefined;
    let req: IncomingMessage | undefined;
    const server = createServer((r, res) => {
      req = r;
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => {
        received = Buffer.concat(chunks);
        res.end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { request } = await import('undici');
      const res = await request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { method: 'POST', headers, body });
      await res.body.text();
    } finally {
      server.close();
    }
    expect(Number(req!.headers['content-length'])).toBe(received!.length);
    const boundary = /boundary=(.+)$/.exec(headers['content-type'])![1];
    const text = received!.toString('latin1');
    expect(text.startsWith(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a %22quoted%22%0D%0Aname.mp4"\r\n`)).toBe(true);
    expect(text.endsWith(`\r\n--${boundary}--\r\n`)).toBe(true);
    const start = received!.indexOf('\r\n\r\n') + 4;
    expect(received!.subarray(start, start + bytes.length).equals(bytes)).toBe(true);
    expect(seen[0]).toBe(0);
    expect(seen.at(-1)).toBe(bytes.length);
    expect(seen.every((n, i) => i === 0 || n > seen[i - 1])).toBe(true);
    expect(seen.length).toBeGreaterThan(3);
  });

  it('a server takes it with its name (accents and all), and the progress ends at its size', async () => {
    const file = path.join(dir, 'été 01.mp4');
    writeFileSync(file, Buffer.alloc(600_000, 3));
    const remote = new RemoteService({ baseUrl: s.url, apiKey: s.key });
    const col = (await remote.createCollection({ name: 'up' })).collection_id;
    const seen: number[] = [];
    const up = await remote.uploadVideo(col, { path: file, filename: 'été 01.mp4', onProgress: (n) => seen.push(n) });
    expect(up.status).toBe('uploaded');
    expect(seen.at(-1)).toBe(600_000);
    expect((await remote.listVideos(col)).map((v) => [v.filename, v.size_bytes])).toEqual([['été 01.mp4', 600_000]]);
  });
});
