/**
 * The `monitor` attribute of a torchdoctor launch configuration, turned into the environment
 * variable the recorder reads (TORCHDOCTOR_MONITOR, JSON: docs/monitor.md, "Arming"):
 * absent → the `torchDoctor.monitor.enable` setting (default on); `true` → on; `false` → off;
 * an object → on with its `every`, `tensorboard` and `thresholds`. The channel address and token
 * are added by the session's channel server. The recorder owns the defaults: we pass what the
 * user wrote, after checking its shape so a typo is reported instead of ignored.
 * Pure logic, no `vscode` import.
 */

export const MONITOR_ENV = 'TORCHDOCTOR_MONITOR';

export interface MonitorSettings {
  every?: number;
  tensorboard?: string | null;
  thresholds?: Record<string, number>;
}

export interface MonitorDefaults {
  enable: boolean;
  every: number;
  thresholds: Record<string, number>;
}

const KEYS = ['every', 'tensorboard', 'thresholds'];

/** The settings to arm the recorder with, or undefined when it is off. Throws on a bad value. */
export function normalizeMonitor(value: unknown, defaults: MonitorDefaults): MonitorSettings | undefined {
  if (value === false || value === null || (value === undefined && !defaults.enable)) {
    return undefined;
  }
  const base: MonitorSettings = { every: defaults.every };
  if (Object.keys(defaults.thresholds).length) {
    base.thresholds = { ...defaults.thresholds };
  }
  if (value === undefined || value === true) {
    return base;
  }
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new Error('"monitor" must be true, false or an object such as {"every": 10, "tensorboard": "runs/x"}');
  }
  const v = value as Record<string, unknown>;
  const unknown = Object.keys(v).filter((k) => !KEYS.includes(k));
  if (unknown.length) {
    throw new Error(`"monitor" takes ${KEYS.join(', ')}; unknown: ${unknown.join(', ')}`);
  }
  if (v.every !== undefined && (typeof v.every !== 'number' || !Number.isInteger(v.every) || v.every < 1)) {
    throw new Error('"monitor.every" must be a whole number of steps, 1 or more');
  }
  if (v.tensorboard !== undefined && v.tensorboard !== null && (typeof v.tensorboard !== 'string' || !v.tensorboard)) {
    throw new Error('"monitor.tensorboard" must be a folder for the event files, such as "runs/x", or null');
  }
  let thresholds = base.thresholds;
  if (v.thresholds !== undefined) {
    const t = v.thresholds;
    if (typeof t !== 'object' || t === null || Array.isArray(t)) {
      throw new Error('"monitor.thresholds" must be an object of numbers');
    }
    const bad = Object.entries(t).filter(([, x]) => typeof x !== 'number' || !Number.isFinite(x));
    if (bad.length) {
      throw new Error(`"monitor.thresholds" takes numbers; not a number: ${bad.map(([k]) => k).join(', ')}`);
    }
    thresholds = { ...(thresholds ?? {}), ...(t as Record<string, number>) };
  }
  return {
    ...base,
    ...(v.every !== undefined ? { every: v.every as number } : {}),
    ...(v.tensorboard !== undefined ? { tensorboard: v.tensorboard as string | null } : {}),
    ...(thresholds ? { thresholds } : {}),
  };
}

/** The environment entry for the debuggee: the settings and where to send the data. */
export function monitorEnv(
  settings: MonitorSettings,
  channel: { host: string; port: number; token: string } | null,
): Record<string, string> {
  return {
    [MONITOR_ENV]: JSON.stringify({
      every: settings.every ?? 10,
      tensorboard: settings.tensorboard ?? null,
      channel,
      ...(settings.thresholds ? { thresholds: settings.thresholds } : {}),
    }),
  };
}
