// @ts-check
// Torch Doctor training monitor: how the page writes numbers, by unit (bytes, seconds, per
// second, plain), and times of day. Bundled into dist/monitor/page.js by esbuild.

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/**
 * Three significant digits; exponent form when very small or large.
 * @param {number} v
 */
export function plain(v) {
  if (v === 0) {
    return '0';
  }
  const a = Math.abs(v);
  if (a < 1e-3 || a >= 1e6) {
    return v.toExponential(2).replace('e+', 'e');
  }
  return String(Number(v.toPrecision(3)));
}

/** @param {number} v */
export function bytes(v) {
  let i = 0;
  let x = v;
  while (Math.abs(x) >= 1024 && i < BYTE_UNITS.length - 1) {
    x /= 1024;
    i++;
  }
  return `${Number(x.toPrecision(3))} ${BYTE_UNITS[i]}`;
}

/** @param {number} v seconds */
export function seconds(v) {
  if (Math.abs(v) < 1) {
    return `${Number((v * 1000).toPrecision(3))} ms`;
  }
  return `${Number(v.toPrecision(3))} s`;
}

/**
 * A value in its unit; '–' for none.
 * @param {number | null | undefined} v
 * @param {string} unit '' | 's' | 'bytes' | 'per_s'
 */
export function formatValue(v, unit) {
  if (v === null || v === undefined || !Number.isFinite(v)) {
    return '–';
  }
  if (unit === 'bytes') {
    return bytes(v);
  }
  if (unit === 's') {
    return seconds(v);
  }
  if (unit === 'per_s') {
    return `${plain(v)}/s`;
  }
  return plain(v);
}

/** @param {number} ms unix milliseconds */
export function clock(ms) {
  const d = new Date(ms);
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

/** @param {string} p */
export function baseName(p) {
  const parts = p.split(/[\\/]/);
  return parts[parts.length - 1] || p;
}

/** Titles the generic rule below would spell wrong (acronyms). */
const KIND_TITLES = /** @type {Record<string, string>} */ ({
  cpu_batches: 'Batches copied from the CPU',
  model_on_cpu: 'Model left on the CPU',
});

/** @param {string} kind not_decreasing -> Not decreasing */
export function kindTitle(kind) {
  if (Object.prototype.hasOwnProperty.call(KIND_TITLES, kind)) {
    return KIND_TITLES[kind];
  }
  const t = kind.replace(/_/g, ' ');
  return t.charAt(0).toUpperCase() + t.slice(1);
}
