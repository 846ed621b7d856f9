/**
 * How numbers, shapes and prose are spelled on every page (check results, gradient flow,
 * shape trace), so one value reads the same everywhere: 14,210 · 0.02686 · 6.05e-8; shapes as
 * Python tuples, (64, 1152), (10,), (). Pure logic, shared by checks/ and views/.
 */

/** A piece of prose; `code` for the parts the backend wrote between backticks. */
export interface TextPart {
  text: string;
  code: boolean;
}

export function baseName(file: string): string {
  const parts = file.split(/[\\/]/);
  return parts[parts.length - 1] || file;
}

/** Split prose at backticks: `act.beta` becomes a code part. Unbalanced backticks stay text. */
export function splitInlineCode(text: string): TextPart[] {
  const pieces = text.split('`');
  if (pieces.length < 3 || pieces.length % 2 === 0) {
    return text ? [{ text, code: false }] : [];
  }
  return pieces.map((p, i) => ({ text: p, code: i % 2 === 1 })).filter((p) => p.text !== '');
}

/** Numbers as a person reads them: 14,210 · 0.02686 · 6.05e-8 · 8.26e-1 stays 0.8262. */
export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) {
    return Number.isNaN(n) ? 'NaN' : n > 0 ? 'Inf' : '-Inf';
  }
  if (Number.isInteger(n) && Math.abs(n) < 1e15) {
    return n.toLocaleString('en-US');
  }
  const a = Math.abs(n);
  if (a < 1e-3 || a >= 1e6) {
    return expo(n, 2);
  }
  return trimZeros(n.toPrecision(4));
}

/** 6.05e-8 rather than 6.05e-08 or 6.050e-8. */
export function expo(n: number, digits: number): string {
  const [mant, exp] = n.toExponential(digits).split('e');
  return `${trimZeros(mant)}e${exp.replace('+', '')}`;
}

export function trimZeros(s: string): string {
  return s.includes('.') && !s.includes('e') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
}


/** Prose without the backticks that mark code. */
export function plainText(text: string): string {
  return splitInlineCode(text)
    .map((p) => p.text)
    .join('');
}

/** A magnitude as text: 3 significant digits, exponent form outside [1e-3, 1e3). */
export function formatMagnitude(v: number): string {
  if (Number.isNaN(v)) {
    return 'NaN';
  }
  if (!Number.isFinite(v)) {
    return v > 0 ? 'Inf' : '-Inf';
  }
  if (v === 0) {
    return '0';
  }
  const a = Math.abs(v);
  if (a < 1e-3 || a >= 1e3) {
    return expo(v, 2);
  }
  return String(Number(v.toPrecision(3)));
}

/** Python's tuple spelling of already formatted items: "(a, b)", "(a,)", "()". */
export function tupleText(items: string[]): string {
  return items.length === 1 ? `(${items[0]},)` : `(${items.join(', ')})`;
}

/** A shape as a tuple without thousands separators, "(64, 1152)"; "?" for an unknown dim or shape. */
export function shapeText(shape: readonly unknown[] | null | undefined): string {
  return Array.isArray(shape) ? tupleText(shape.map((d) => (Number.isInteger(d) ? String(d) : '?'))) : '?';
}

/** "float32" for "torch.float32"; "" for none. */
export function dtypeName(d: string | null | undefined): string {
  return (d ?? '').replace(/^torch\./, '');
}
