/** Spinners for people on stderr: apart from ./output.js so that a command that never spins (a warm `search`) does not load ora. */
import ora, { type Ora } from 'ora';
import type { OutputOptions } from './output.js';

let lastSpinner: Ora | undefined;

/** A spinner on stderr for people; silent for --json and non-terminals. */
export function spinner(text: string, opts: OutputOptions): Ora {
  const tty = Boolean(process.stderr.isTTY);
  // discardStdin off: ora's raw-mode stdin would swallow Ctrl-C (the waits handle SIGINT themselves).
  lastSpinner = ora({ text, stream: process.stderr, isEnabled: !opts.json && tty, isSilent: Boolean(opts.json) || !tty, discardStdin: false });
  return lastSpinner;
}

/** Stops the spinner made last, if it still spins (before a line that says why everything stopped). */
export function stopSpinner(): void {
  if (lastSpinner?.isSpinning) lastSpinner.stop();
}
