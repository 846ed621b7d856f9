/**
 * Checking the backend's view-model payload (torchDoctor/diagnoseSnapshot) field by field: a
 * missing or mistyped field reads as empty and draws as "—", never throws. Pure logic.
 */
import type { DiagnosisSeverity, ModuleLocation } from '../protocol';
import { plainText, splitInlineCode } from '../webview/format';
import type { FlagView, Target, Tone } from './viewTypes';


export function str(v: unknown, fallback = ''): string {
  return typeof v === 'string' ? v : fallback;
}

export function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

export function obj(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** A statistic: a number, or "nan" / "inf" / "-inf" (JSON has no NaN), or null. */
export function statValue(v: unknown): number | null {
  if (typeof v === 'number') {
    return v;
  }
  if (typeof v === 'string') {
    const t = v.trim().toLowerCase();
    if (t === 'nan') {
      return NaN;
    }
    if (t === 'inf' || t === '+inf' || t === 'infinity' || t === '+infinity') {
      return Infinity;
    }
    if (t === '-inf' || t === '-infinity') {
      return -Infinity;
    }
    const n = Number(t);
    return t !== '' && Number.isFinite(n) ? n : null;
  }
  return null;
}

/** A location the page may open: an absolute-looking file and a positive line. */
export function targetOf(v: unknown): Target | null {
  const o = obj(v) as Partial<ModuleLocation>;
  if (typeof o.file !== 'string' || o.file === '') {
    return null;
  }
  const line = typeof o.line === 'number' && Number.isFinite(o.line) && o.line >= 1 ? Math.floor(o.line) : 1;
  return { file: o.file, line };
}

const SEVERITY: Record<DiagnosisSeverity, { icon: string; label: string }> = {
  error: { icon: '✖', label: 'Error' },
  warning: { icon: '⚠', label: 'Warning' },
  info: { icon: 'ℹ', label: 'Note' },
};

function toneOf(v: unknown): Tone {
  return v === 'error' || v === 'warning' || v === 'info' ? v : 'warning';
}

/** A flag of the backend as drawn; null when it has no sentence. */
export function flagView(v: unknown): FlagView | null {
  const o = obj(v);
  const sentence = str(o.sentence).trim();
  if (!sentence) {
    return null;
  }
  const tone = toneOf(o.severity);
  return {
    tone,
    icon: SEVERITY[tone].icon,
    label: SEVERITY[tone].label,
    rule: str(o.rule),
    sentence: splitInlineCode(sentence),
    suggestion: splitInlineCode(str(o.suggestion).trim()),
    plain: plainText(sentence),
  };
}

/** The flags of a payload row as drawn, in the backend's order (most severe first). */
export function flagViews(v: unknown): FlagView[] {
  return arr(v)
    .map(flagView)
    .filter((f): f is FlagView => f !== null);
}

/** A non-negative whole count of the backend; 0 for anything else. */
export function count(v: unknown): number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : 0;
}
