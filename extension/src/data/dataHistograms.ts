/**
 * The data page's per-channel value histograms, from the counts the backend sends with each
 * split's images (data_checks/histograms.py: fixed bins over each channel's observed range).
 * Validated here: the page draws only histograms whose counts are whole numbers that add up.
 * Pure logic, no `vscode` import (tests/ts/unit/data/dataHistograms.test.ts).
 */
import { formatNumber } from '../webview/format';
import type { DataChannelHistogram, DataSplitSummary } from './dataProtocol';
import type { ChannelHistogramView, SplitHistogramsView } from './dataViewTypes';

/** data_checks/histograms.py sends 32 bins and at most 4 channels; anything past this is not ours. */
const MAX_BINS = 256;
const MAX_CHANNELS = 4;
/** The grid draws 3 channels as red, green, blue: their histograms take the same colours. */
const TINTS = ['red', 'green', 'blue'];

function isCounts(c: unknown): c is number[] {
  return Array.isArray(c) && c.length >= 1 && c.length <= MAX_BINS && c.every((v) => Number.isInteger(v) && v >= 0);
}

/** "[0.25, 0.5)" for bin k of n over low..high (the last bin holds its top edge: "]"). */
export function binRange(low: number, high: number, k: number, n: number): string {
  const width = (high > low ? high - low : 1) / n;
  const close = k === n - 1 ? ']' : ')';
  return `[${formatNumber(low + k * width)}, ${formatNumber(low + (k + 1) * width)}${close}`;
}

/** One channel's bars, or null when its counts are malformed or empty. */
export function channelHistogram(h: DataChannelHistogram, channel: number, channels: number): ChannelHistogramView | null {
  if (!h || !isCounts(h.counts) || typeof h.low !== 'number' || typeof h.high !== 'number' || !(h.high >= h.low)) {
    return null;
  }
  const total = h.counts.reduce((a, b) => a + b, 0);
  if (total <= 0 || (Number.isInteger(h.values) && h.values !== total)) {
    return null;
  }
  const top = Math.max(...h.counts);
  const { low, high, counts } = h;
  const nonfinite = Number.isInteger(h.nonfinite) && h.nonfinite > 0 ? `; ${formatNumber(h.nonfinite)} NaN/Inf left out` : '';
  return {
    channel: `channel ${channel}`,
    tint: channels === 3 ? TINTS[channel] : '',
    // square root: an image's background bin holds most of its pixels, and on a linear scale the
    // strokes' bins next to it would be a pixel tall; the tooltips give the counts
    heights: counts.map((c) => Math.sqrt(c / top)),
    counts,
    titles: counts.map((c, k) => `${binRange(low, high, k, counts.length)}: ${formatNumber(c)}`),
    lowText: formatNumber(low),
    highText: formatNumber(high),
    summary: `${formatNumber(total)} values${nonfinite}`,
  };
}

/** A split's histograms, or null when it has none (not images, or no gallery). */
/** One split's histograms. ``asHeld``: the values are a paused variable's (Show as Images), not
 * samples a dataset's transforms produced: the caption says so. */
export function splitHistograms(split: DataSplitSummary, asHeld = false): SplitHistogramsView | null {
  const h = split.gallery?.histograms;
  if (!h || !Array.isArray(h.channels) || !h.channels.length) {
    return null;
  }
  const shown = h.channels.slice(0, MAX_CHANNELS);
  const channels = shown.map((c, i) => channelHistogram(c, i, shown.length)).filter((c): c is ChannelHistogramView => c !== null);
  if (!channels.length) {
    return null;
  }
  const count = Number.isInteger(h.samples) ? `the first ${formatNumber(h.samples)}` : 'the';
  const samples = asHeld ? `${count} images of ${split.name}, as the variable holds them` : `${count} samples drawn, as the model gets them`;
  const bins = channels[0].counts.length;
  return {
    split: split.name,
    caption: `Values of each channel in ${samples}; ${bins} equal bins over each channel's range, bar heights by the square root of the counts.`,
    channels,
  };
}

export function splitHistogramsAll(splits: readonly DataSplitSummary[], asHeld = false): SplitHistogramsView[] {
  return splits.map((s) => splitHistograms(s, asHeld)).filter((h): h is SplitHistogramsView => h !== null);
}
