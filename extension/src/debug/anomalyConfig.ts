/**
 * The `anomaly` attribute of a torchdoctor launch configuration, turned into the one
 * environment variable the runtime reads (TORCHDOCTOR_ANOMALY, JSON). The runtime owns
 * the defaults (pybackend/torchdoctor/runtime/anomaly_config.py); we only pass what the
 * user wrote, after checking its shape so a typo is reported instead of ignored.
 * Pure logic, no `vscode` import, unit-tested.
 */

export const ANOMALY_ENV = 'TORCHDOCTOR_ANOMALY';
export const ANOMALY_OUTPUT_PREFIX = '[torchdoctor] anomaly:';

export type AnomalyMode = 'break' | 'log' | 'off';

export interface AnomalySettings {
  mode?: AnomalyMode;
  threshold?: number;
  skipSteps?: number;
  firstOnly?: boolean;
  deadSteps?: number;
  checks?: ('forward' | 'backward' | 'loss')[];
  loss?: Record<string, unknown>;
}

const MODES = ['break', 'log', 'off'];
const CHECKS = ['forward', 'backward', 'loss'];

/** `true` / "break" / {mode...} → settings; `undefined`/`false` → watch off. Throws on a bad value. */
export function normalizeAnomaly(value: unknown): AnomalySettings | undefined {
  if (value === undefined || value === false || value === null) {
    return undefined;
  }
  if (value === true) {
    return { mode: 'break' };
  }
  if (typeof value === 'string') {
    if (!MODES.includes(value)) {
      throw new Error(`"anomaly" must be one of ${MODES.join(', ')} (or an object), not "${value}"`);
    }
    return { mode: value as AnomalyMode };
  }
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new Error('"anomaly" must be true, "break", "log", "off" or an object such as {"mode": "break"}');
  }
  return validateObject(value as Record<string, unknown>);
}

function validateObject(v: Record<string, unknown>): AnomalySettings {
  if (v.mode !== undefined && !MODES.includes(String(v.mode))) {
    throw new Error(`"anomaly.mode" must be one of ${MODES.join(', ')}, not "${String(v.mode)}"`);
  }
  for (const key of ['threshold', 'skipSteps', 'deadSteps'] as const) {
    if (v[key] !== undefined && (typeof v[key] !== 'number' || (v[key] as number) < 0)) {
      throw new Error(`"anomaly.${key}" must be a non-negative number`);
    }
  }
  if (v.checks !== undefined) {
    const bad = Array.isArray(v.checks) ? v.checks.filter((c) => !CHECKS.includes(String(c))) : ['(not a list)'];
    if (bad.length) {
      throw new Error(`"anomaly.checks" takes a list of ${CHECKS.join(', ')}; unknown: ${bad.join(', ')}`);
    }
  }
  return { mode: 'break', ...v } as AnomalySettings;
}

/** The environment entry for the debuggee, or nothing when the watch is off. */
export function anomalyEnv(value: unknown): Record<string, string> {
  const settings = normalizeAnomaly(value);
  return settings && settings.mode !== 'off' ? { [ANOMALY_ENV]: JSON.stringify(settings) } : {};
}

/** The sentence of an anomaly line the runtime printed, if this output is one. */
export function anomalySentence(output: string): string | undefined {
  const line = output.split(/\r?\n/).find((l) => l.startsWith(ANOMALY_OUTPUT_PREFIX));
  return line?.slice(ANOMALY_OUTPUT_PREFIX.length).trim() || undefined;
}
