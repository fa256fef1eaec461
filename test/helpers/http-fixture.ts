/**
 * A loopback HTTP file server for tests, with fault injection.
 *
 *   const srv = await FileServer.start({ root: dir });          // serves dir/<url path>
 *   srv.addFile('/x/model.onnx', bytes);                         // or explicit routes
 *   srv.fault('/x/model.onnx', { dropAfterBytes: 1000 });        // next request: cut after 1000 B
 *   srv.fault('/x/model.onnx', { status: 503, times: 2 });       // next two requests: 503
 *   srv.redirect('/old', '/new');                                // 302
 *   srv.requests                                                 // every request seen (method, path, range)
 *   await srv.close();
 *
 * GET and HEAD; single `Range: bytes=a-` / `bytes=a-b` requests get 206 + Content-Range, a start
 * past the end gets 416. Binds 127.0.0.1 on a random port.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export interface Fault {
  /** Send the headers (full Content-Length) and this many body bytes, then destroy the socket. */
  dropAfterBytes?: number;
  /** Answer with this status and a short text body instead of the file. */
  status?: number;
  /** Ignore the Range header (answer 200 with the whole file). */
  ignoreRange?: boolean;
  /** Flip one byte of the body (at this offset of the file). */
  corruptAt?: number;
  /** Wait this long before answering. */
  delayMs?: number;
  /** How many requests this fault applies to (default 1). */
  times?: number;
}

export interface SeenRequest {
  method: string;
  path: string;
  range?: string;
  status: number;
  headers: http.IncomingHttpHeaders;
}

export class FileServer {
  readonly requests: SeenRequest[] = [];
  private routes = new Map<string, Uint8Array | string>();
  private redirects = new Map<string, string>();
  private faults = new Map<string, Fault[]>();

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
    private readonly root?: string,
  ) {}

  static async start(opts: { root?: string; routes?: Record<string, Uint8Array | string> } = {}): Promise<FileServer> {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const fs = new FileServer(server, `http://127.0.0.1:${port}`, opts.root);
    for (const [p, d] of Object.entries(opts.routes ?? {})) fs.addFile(p, d);
    server.on('request', (req, res) => void fs.handle(req, res));
    return fs;
  }

  /** Serve `data` (bytes, or the path of a file read at request time) at `urlPath`. */
  addFile(urlPath: string, data: Uint8Array | string): void {
    this.routes.set(urlPath, data);
  }

  redirect(from: string, to: string): void {
    this.redirects.set(from, to);
  }

  fault(urlPath: string, fault: Fault): void {
    const list = this.faults.get(urlPath) ?? [];
    list.push({ times: 1, ...fault });
    this.faults.set(urlPath, list);
  }

  /** Requests seen for one path. */
  requestsFor(urlPath: string): SeenRequest[] {
    return this.requests.filter((r) => r.path === urlPath);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private takeFault(urlPath: string): Fault | undefined {
    const list = this.faults.get(urlPath);
    const f = list?.[0];
    if (!f) return undefined;
    f.times = (f.times ?? 1) - 1;
    if (f.times <= 0) list!.shift();
    return f;
  }

  private body(urlPath: string): Uint8Array | undefined {
    const r = this.routes.get(urlPath);
    if (r instanceof Uint8Array) return r;
    if (typeof r === 'string') return existsSync(r) ? readFileSync(r) : undefined;
    if (this.root) {
      const file = path.join(this.root, decodeURIComponent(urlPath));
      if (file.startsWith(path.resolve(this.root)) && existsSync(file) && statSync(file).isFile()) return readFileSync(file);
    }
    return undefined;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const urlPath = new URL(req.url ?? '/', this.url).pathname;
    const range = typeof req.headers.range === 'string' ? req.headers.range : undefined;
    const seen: SeenRequest = { method: req.method ?? 'GET', path: urlPath, range, status: 0, headers: req.headers };
    this.requests.push(seen);
    const send = (status: number, headers: http.OutgoingHttpHeaders, body?: Uint8Array | string) => {
      seen.status = status;
      res.writeHead(status, headers);
      res.end(req.method === 'HEAD' ? undefined : body);
    };

    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, { 'content-type': 'text/plain' }, 'method not allowed');
    const to = this.redirects.get(urlPath);
    if (to) return send(302, { location: to }, '');

    const fault = this.takeFault(urlPath);
    if (fault?.delayMs) await new Promise((r) => setTimeout(r, fault.delayMs));
    if (fault?.status) return send(fault.status, { 'content-type': 'text/plain' }, `injected ${fault.status}`);

    let data = this.body(urlPath);
    if (!data) return send(404, { 'content-type': 'text/plain' }, 'not found');
    if (fault?.corruptAt !== undefined) {
      data = Uint8Array.from(data);
      data[fault.corruptAt] ^= 0xff;
    }

    let start = 0;
    let end = data.length - 1;
    let status = 200;
    const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/octet-stream', 'accept-ranges': 'bytes' };
    if (range && !fault?.ignoreRange) {
      const m = /^bytes=(\d+)-(\d*)$/.exec(range);
      if (!m) return send(416, { 'content-range': `bytes */${data.length}` }, '');
      start = Number(m[1]);
      if (m[2]) end = Math.min(Number(m[2]), data.length - 1);
      if (start >= data.length || start > end) return send(416, { 'content-range': `bytes */${data.length}` }, '');
      status = 206;
      headers['content-range'] = `bytes ${start}-${end}/${data.length}`;
    }
    const slice = data.subarray(start, end + 1);
    headers['content-length'] = slice.length;
    seen.status = status;
    res.writeHead(status, headers);
    if (req.method === 'HEAD') return void res.end();
    if (fault?.dropAfterBytes !== undefined) {
      res.write(slice.subarray(0, fault.dropAfterBytes), () => {
        // Give the client time to read the bytes, then cut the connection mid-body (a reset that
        // reaches it first makes it drop what it had not read yet: 20 ms was too short under load).
        setTimeout(() => res.socket?.destroy(), 250);
      });
      return;
    }
    res.end(slice);
  }
}
