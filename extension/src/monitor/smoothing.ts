/**
 * The loss chart's smoothing, as TensorBoard draws it: an exponential moving average with weight
 * `w` in [0, 1), debiased so the first points are not pulled towards zero; null points (no
 * value) stay null and do not move the average. Shared by the page bundle
 * (extension/media/monitor/page.js imports it) and the unit tests. No `vscode` import.
 */
export function smooth(values: readonly (number | null)[], w: number): (number | null)[] {
  if (!(w > 0)) {
    return values.slice();
  }
  const weight = Math.min(w, 0.999);
  let avg = 0;
  let n = 0;
  return values.map((v) => {
    if (v === null || !Number.isFinite(v)) {
      return null;
    }
    avg = avg * weight + (1 - weight) * v;
    n++;
    return avg / (1 - Math.pow(weight, n));
  });
}

/** For a log axis: values that are not positive have no place on it (null: a gap). */
export function positiveOnly(values: readonly (number | null)[]): (number | null)[] {
  return values.map((v) => (v !== null && v > 0 ? v : null));
}
