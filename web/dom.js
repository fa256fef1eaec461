// Small DOM helpers shared by the page's modules (app.js, transcript.js).

export const $ = (id) => document.getElementById(id);

/** An element with properties (class, text, data-*, aria-*, role, for, or DOM properties) and children. */
export const el = (tag, props = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('data-') || k.startsWith('aria-') || k === 'role' || k === 'for') e.setAttribute(k, String(v));
    else e[k] = v;
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) e.append(c);
  return e;
};

export const enc = encodeURIComponent;

/** Seconds as m:ss (m:ss.s when not whole). */
export function fmtTime(t) {
  const s = Math.max(0, Number(t) || 0);
  const m = Math.floor(s / 60);
  const rest = s - m * 60;
  const secs = Number.isInteger(rest) ? String(rest).padStart(2, '0') : rest.toFixed(1).padStart(4, '0');
  return `${m}:${secs}`;
}
