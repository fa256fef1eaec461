/**
 * Byte progress of an upload (issue 33): the file being sent and the whole batch, with the rate so
 * far and the time left at that rate. Pure: it is given the bytes and the clock, and says the line.
 */

export function formatBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

/** Seconds as m:ss, or h:mm:ss from an hour. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** A rate and a time left are only said once this much time has passed (the first moments say little). */
const SETTLE_MS = 1000;

export class TransferProgress {
  private started: number | undefined;
  private doneBefore = 0;
  private file: { name: string; size: number; index: number; bytes: number } | undefined;

  /** `total`: the bytes of every file; `count`: how many files. */
  constructor(
    readonly total: number,
    readonly count: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The next file starts (`index` from 0). */
  startFile(name: string, size: number, index: number): void {
    this.started ??= this.now();
    this.file = { name, size, index, bytes: 0 };
  }

  /** How many bytes of the current file have gone. */
  fileBytes(bytes: number): void {
    if (this.file) this.file.bytes = Math.min(bytes, this.file.size);
  }

  /** The current file is done (sent, skipped or refused): its bytes count as gone. */
  fileDone(): void {
    if (this.file) this.doneBefore += this.file.size;
    this.file = undefined;
  }

  /** Bytes gone so far, of every file. */
  get sent(): number {
    return this.doneBefore + (this.file?.bytes ?? 0);
  }

  /** Bytes per second so far, once there is something to say. */
  rate(): number | undefined {
    const ms = this.started === undefined ? 0 : this.now() - this.started;
    return ms >= SETTLE_MS && this.sent > 0 ? (this.sent / ms) * 1000 : undefined;
  }

  /** `uploading 2/5 C0002.MP4: 120.3 MB of 280.5 MB (43%) · all: 400.1 MB of 1.2 GB (33%) · 35.2 MB/s, 0:24 left` */
  text(): string {
    const f = this.file;
    const pct = (a: number, b: number) => `${b ? Math.floor((a / b) * 100) : 100}%`;
    const parts: string[] = [];
    if (f) {
      const which = this.count > 1 ? `${f.index + 1}/${this.count} ` : '';
      parts.push(`uploading ${which}${f.name}: ${formatBytes(f.bytes)} of ${formatBytes(f.size)} (${pct(f.bytes, f.size)})`);
    } else parts.push('uploading');
    if (this.count > 1) parts.push(`all: ${formatBytes(this.sent)} of ${formatBytes(this.total)} (${pct(this.sent, this.total)})`);
    const rate = this.rate();
    if (rate) parts.push(`${formatBytes(rate)}/s, ${formatDuration((this.total - this.sent) / rate)} left`);
    return parts.join(' · ');
  }
}
