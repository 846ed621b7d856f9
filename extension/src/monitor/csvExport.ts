/**
 * Export CSV: everything the store holds, one row per (series, metric, stored row), long
 * format so every metric fits one header: `series,metric,step_first,step_last,count,last,min,
 * max,mean`. Exact recent steps have step_first = step_last and count 1; older steps come as
 * buckets (the store keeps the run in fixed memory), whose min/max/mean say what they hold.
 * Pure logic, no `vscode` import.
 */
import { RunStore } from './runStore';
import { Track } from './track';

export const CSV_HEADER = 'series,metric,step_first,step_last,count,last,min,max,mean';

/** RFC 4180: quote a field with a comma, quote or line break; double the quotes. */
export function csvField(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function n(v: number): string {
  return Number.isFinite(v) ? String(v) : '';
}

function trackLines(series: string, track: Track, out: string[]): void {
  track.columns.forEach((metric, c) => {
    for (const r of track.rows()) {
      if (!r.has(c)) {
        continue;
      }
      out.push(
        [csvField(series), csvField(metric), r.first, r.last, r.count(c), n(r.lastValue(c)), n(r.min(c)), n(r.max(c)), n(r.mean(c))].join(','),
      );
    }
  });
}

/** The file Export CSV proposes: the run's name, and the rank in a job of several. */
export function csvFileName(runName: string, rank: number | null): string {
  const safe = runName.replace(/[^\w.-]+/g, '_');
  return rank === null ? `${safe}-training.csv` : `${safe}-rank${rank}-training.csv`;
}

export function runCsv(store: RunStore): string {
  const out = [CSV_HEADER];
  for (const [name, t] of store.tracks) {
    trackLines(name, t, out);
  }
  trackLines('validation', store.evals, out);
  for (const [name, t] of store.user) {
    trackLines(`user:${name}`, t, out);
  }
  return out.join('\n') + '\n';
}
