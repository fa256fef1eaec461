/**
 * Closing the server while a request is in flight: the request is answered, its connection is
 * closed with it, and close() resolves. Before, such a connection stayed open for Fastify's
 * keep-alive time (72 s) after its response, and close() — `serve`'s SIGTERM/SIGINT — waited for it.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeEmbedder } from '../helpers/fake-embedder.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** A raw HTTP/1.1 client on one socket: write bytes when told, collect what comes back until the server closes. */
function rawClient(url: string) {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (received += d));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  const connected = new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, connected, closed, received: () => received };
}

describe('closing the server with a request in flight', () => {
  let s: TestServer | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('answers the request, closes its connection and finishes closing (no keep-alive wait)', async () => {
    const fake = new FakeEmbedder();
    s = await startTestServer({ engine: { embedderFor: () => fake, analyzers: [] } });
    const body = JSON.stringify({ name: 'in flight', model: fake.id });
    const client = rawClient(s.url);
    await client.connected;
    // Headers and half of the body: the server has the request, not yet all of it.
    client.socket.write(
      `POST /collections HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${s.key}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: keep-alive\r\n\r\n${body.slice(0, 10)}`,
    );
    await new Promise((r) => setTimeout(r, 100));
    const closing = s.app.close();
    client.socket.write(body.slice(10));
    // close() resolves while the client keeps its end open: the server ends the connection itself
    // (with the old code this waited out the 72 s keep-alive, past the test's timeout).
    await closing;
    await client.closed;
    const reply = client.received();
    expect(reply).toMatch(/^HTTP\/1\.1 201 /);
    expect(reply.toLowerCase()).toContain('connection: close');
    expect(reply).toContain('"collection_id"');
  }, 20_000);
});
