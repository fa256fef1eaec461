import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { removeDir, repoRoot, tempDir } from '../helpers/clips.js';

describe('CLI basics', () => {
  const home = tempDir('vidembed-cli-basics-');
  afterAll(() => removeDir(home));

  it('prints its version with --version and -V', async () => {
    const version = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
    for (const flag of ['--version', '-V']) {
      const r = await runCli([flag], { VIDEMBED_HOME: home });
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe(version);
    }
  });

  it('serve on a busy port exits at once with one line, leaving nothing running', async () => {
    const busy = net.createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()));
    const port = (busy.address() as net.AddressInfo).port;
    try {
      const r = await runCli(['serve', '--port', String(port)], { VIDEMBED_HOME: home }, 60_000);
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toEqual([`vidembed: error: port ${port} on 127.0.0.1 is already in use: pick another with --port`]);
    } finally {
      busy.close();
    }
  });
});
