/**
 * Which speech engine a collection listens with. A collection records a setting — `auto` (the
 * best engine installed when a video is processed), `off`, or an engine by name — and its recipe
 * records the engine version its transcripts came from, so installing a better engine (or a new
 * version) marks `auto` collections for `reindex`.
 */
import { SPEECH_SETTINGS, type SpeechSetting } from '../api/defaults.js';
import { speechEnabled } from '../env.js';
import { SpeechAnalyzer, SOUNDTRACK_VERSION } from './analyzer.js';
import { findPocketsphinx, PocketsphinxEngine } from './pocketsphinx.js';
import type { SpeechEngine } from './types.js';
import { whisperEngine } from './whisper.js';

export { SPEECH_SETTINGS, type SpeechSetting };

/** How to install each engine, said once per process when a collection wants one that is missing. */
export const INSTALL_HINT: Record<string, string> = {
  pocketsphinx: 'install pocketsphinx (Debian/Ubuntu: `sudo apt-get install pocketsphinx pocketsphinx-en-us`) or set VIDEMBED_POCKETSPHINX',
  whisper: 'pull a whisper model (`vidembed models pull whisper-base-en`; docs/models.md)',
};

/** The engines installed here, best first (whisper, where a model is pulled, hears far better). */
export function installedEngines(env: NodeJS.ProcessEnv = process.env): SpeechEngine[] {
  const out: SpeechEngine[] = [];
  const whisper = whisperEngine(env).engine;
  if (whisper) out.push(whisper);
  const ps = findPocketsphinx(env);
  if (ps) out.push(new PocketsphinxEngine(ps));
  return out;
}

/** Why an engine by name is not usable here. */
function missing(name: string, env: NodeJS.ProcessEnv): string {
  if (name === 'whisper') return `whisper is not usable: ${whisperEngine(env).reason ?? ''} — ${INSTALL_HINT.whisper}`;
  return `${name} is not installed: ${INSTALL_HINT[name] ?? ''}`.trim();
}

/** The language a collection's videos are spoken in when it says none. */
export const DEFAULT_SPEECH_LANGUAGE = 'en';

/** Whether an engine hears a language: `en` hears `en-GB` and `en`. */
const hears = (e: SpeechEngine, language: string) => language.toLowerCase().split('-')[0] === e.language.toLowerCase().split('-')[0];

/**
 * The engine a setting resolves to here for a language, or why there is none. No engine is ever
 * used on a language it does not know: that gives confident nonsense, not a transcript.
 */
export function resolveSpeech(setting: SpeechSetting, env: NodeJS.ProcessEnv = process.env, language = DEFAULT_SPEECH_LANGUAGE): { engine?: SpeechEngine; reason?: string } {
  if (setting === 'off') return { reason: 'speech off for this collection' };
  if (!speechEnabled(env)) return { reason: 'speech off (VIDEMBED_SPEECH=0)' };
  const all = installedEngines(env);
  const engines = all.filter((e) => hears(e, language));
  if (all.length && !engines.length) {
    return { reason: `no installed speech engine transcribes "${language}" (installed: ${all.map((e) => `${e.name} (${e.language})`).join(', ')})` };
  }
  if (setting === 'auto') return engines[0] ? { engine: engines[0] } : { reason: `no speech engine installed: ${INSTALL_HINT.pocketsphinx}` };
  const engine = engines.find((e) => e.name === setting);
  return engine ? { engine } : { reason: missing(setting, env) };
}

const warned = new Set<string>();

/**
 * The speech analyzer for a collection's setting. Without an engine it still measures the
 * soundtrack (the `audio` tag) and says once on stderr how to get transcripts.
 */
export function speechAnalyzerFor(setting: SpeechSetting, env: NodeJS.ProcessEnv = process.env, language = DEFAULT_SPEECH_LANGUAGE): SpeechAnalyzer {
  const { engine, reason } = resolveSpeech(setting, env, language);
  if (!engine && reason && setting !== 'off' && !warned.has(reason)) {
    warned.add(reason);
    process.stderr.write(`vidembed: videos are indexed without what is said in them: ${reason}\n`);
  }
  return new SpeechAnalyzer(engine, reason);
}

/** The version a collection with this setting would get its speech facts from now (its recipe entry). */
export function expectedSpeechVersion(setting: SpeechSetting, env: NodeJS.ProcessEnv = process.env, language = DEFAULT_SPEECH_LANGUAGE): string {
  const { engine } = resolveSpeech(setting, env, language);
  return engine ? `${engine.version}+${SOUNDTRACK_VERSION}` : SOUNDTRACK_VERSION;
}

export function isSpeechSetting(x: unknown): x is SpeechSetting {
  return typeof x === 'string' && (SPEECH_SETTINGS as readonly string[]).includes(x);
}
