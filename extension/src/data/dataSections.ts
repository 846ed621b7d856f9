/**
 * The data page's sections from the splits: the image grid of each split (validated: the page
 * draws only what has the size it claims), the label bar charts, and the per-split table.
 * Pure logic, no `vscode` import (tests/ts/unit/data/dataSections.test.ts).
 */
import { baseName, formatNumber, shapeText } from '../webview/format';
import type { DataFinding, DataGallery, DataSplitSummary } from './dataProtocol';
import type { DataSourceLink, GalleryImageView, GalleryPage, GalleryView, LabelChartView, SplitTableView } from './dataViewTypes';

/** A link to a 1-based line ("blank_augmentation.py:51"), or null when the source is not one. */
export function sourceLink(source: { file: string; line: number } | null | undefined): DataSourceLink | null {
  if (!source || typeof source.file !== 'string' || !source.file || !Number.isInteger(source.line) || source.line < 1) {
    return null;
  }
  return { file: source.file, line: source.line, label: `${baseName(source.file)}:${source.line}` };
}

/** package data_checks/gallery.py keeps at most 64 a side; anything past this is not ours. */
const MAX_SIDE = 256;
const MAX_IMAGES = 256;
export const MAX_BARS = 30;
/** Images a page of the grid draws (the check sends up to GALLERY_IMAGES, dataOptions.ts). */
export const PAGE_SIZE = 32;

/** The grid's pages of `count` images, `size` a page: at least one ("1–32 of 128"). */
export function galleryPages(count: number, size = PAGE_SIZE): GalleryPage[] {
  const pages: GalleryPage[] = [];
  for (let start = 0; start < count || !pages.length; start += size) {
    const end = Math.min(count, start + size);
    pages.push({ start, end, label: count ? `${start + 1}–${end} of ${count}` : '0 of 0' });
  }
  return pages;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** `size` bytes as base64 (the gallery's `pixels`): the right length, only base64 characters. */
function isPixels(p: unknown, size: number): p is string {
  return typeof p === 'string' && p.length === 4 * Math.ceil(size / 3) && BASE64.test(p) && decodedLength(p) === size;
}

function decodedLength(b64: string): number {
  const pad = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  return (b64.length / 4) * 3 - pad;
}

function sideOk(n: unknown): n is number {
  return Number.isInteger(n) && (n as number) >= 1 && (n as number) <= MAX_SIDE;
}

function flaggedBy(findings: readonly DataFinding[], split: string): Set<string> {
  const out = new Set<string>();
  for (const f of findings) {
    if (f.split === split) {
      for (const i of f.indices ?? []) {
        out.add(String(i));
      }
    }
  }
  return out;
}

function range(values: readonly number[]): string {
  return values.map((v) => formatNumber(v)).join(', ');
}

/** How the values became grey levels or colours. */
export function scaleNote(scale: DataGallery['scale'] | undefined): string {
  if (!scale || scale.kind === 'uint8') {
    return 'Pixel values as stored (0–255).';
  }
  if (scale.kind === 'unit') {
    return 'Values 0–1 shown as black–white.';
  }
  return (
    `Denormalised for display: each channel's range over these images ([${range(scale.low)}] to ` +
    `[${range(scale.high)}]) is shown as black to white.`
  );
}

/** One split's grid, or null when it has none or its size is not one the page can draw. */
export function galleryView(split: DataSplitSummary, findings: readonly DataFinding[], asHeld = false): GalleryView | null {
  const g = split.gallery;
  if (!g || !sideOk(g.width) || !sideOk(g.height) || (g.channels !== 1 && g.channels !== 3) || !Array.isArray(g.images)) {
    return null;
  }
  const size = g.width * g.height * g.channels;
  const flagged = flaggedBy(findings, split.name);
  const images: GalleryImageView[] = [];
  let dropped = 0;
  for (const im of g.images.slice(0, MAX_IMAGES)) {
    if (!im || (typeof im.index !== 'number' && typeof im.index !== 'string') || !isPixels(im.pixels, size)) {
      dropped++;
      continue;
    }
    const label = typeof im.label === 'string' && im.label !== '' ? ` · ${im.label}` : '';
    images.push({
      index: im.index,
      caption: `#${im.index}${label}`,
      blank: im.blank === true,
      nonfinite: im.nonfinite === true,
      flagged: flagged.has(String(im.index)),
      pixels: im.pixels,
    });
  }
  if (!images.length) {
    return null;
  }
  const blank = images.filter((im) => im.blank).length;
  const drawn = Number.isInteger(g.drawn) ? g.drawn : split.sampled;
  const shape = Array.isArray(g.sourceShape) ? ` ${shapeText(g.sourceShape)}` : '';
  const blankText = blank ? `; ${blank} blank, outlined (later blank draws are kept in the grid)` : '';
  return {
    split: split.name,
    width: g.width,
    height: g.height,
    channels: g.channels,
    images,
    caption: asHeld
      ? `${images.length} of the ${drawn} images in ${split.name}${shape}, as the variable holds them${blankText}.`
      : `${images.length} of the ${drawn} samples drawn from ${split.name}${shape}, as the model gets them (after the dataset's transforms)${blankText}.`,
    scaleNote: scaleNote(g.scale),
    blank,
    dropped,
    pages: galleryPages(images.length),
  };
}

export function galleryViews(splits: readonly DataSplitSummary[], findings: readonly DataFinding[], asHeld = false): GalleryView[] {
  return splits.map((s) => galleryView(s, findings, asHeld)).filter((g): g is GalleryView => g !== null);
}

/** A bar per class (the first MAX_BARS), widths relative to the largest. */
export function labelChart(split: DataSplitSummary): LabelChartView | null {
  const h = split.labels;
  if (!h || typeof h !== 'object') {
    return null;
  }
  const entries = Object.entries(h).filter((e): e is [string, number] => Number.isFinite(e[1]) && e[1] >= 0);
  const total = entries.reduce((n, [, c]) => n + c, 0);
  if (!entries.length || total <= 0) {
    return null;
  }
  const shown = entries.slice(0, MAX_BARS);
  const top = Math.max(...shown.map(([, c]) => c));
  return {
    split: split.name,
    bars: shown.map(([label, count]) => ({ label, count, share: count / total, width: top ? count / top : 0 })),
    total,
    more: entries.length - shown.length,
  };
}

export function labelCharts(splits: readonly DataSplitSummary[]): LabelChartView[] {
  return splits.map(labelChart).filter((c): c is LabelChartView => c !== null);
}

function nums(values: readonly number[] | null | undefined): string {
  if (!values || !values.length) {
    return '—';
  }
  const head = values.slice(0, 4).map((v) => formatNumber(v));
  return head.join(', ') + (values.length > 4 ? ', …' : '');
}

const COLUMNS: [string, boolean][] = [
  ['Split', false],
  ['Kind', false],
  ['Drawn', true],
  ['Sample', false],
  ['First batch', false],
  ['Mean', false],
  ['Std', false],
  ['Min … max', false],
  ['Classes', true],
  ['Random transforms', false],
  ['Findings', true],
];

/** One row per split: what was drawn and its statistics; null without splits. */
export function splitTable(splits: readonly DataSplitSummary[], findings: readonly DataFinding[]): SplitTableView | null {
  if (!splits.length) {
    return null;
  }
  const rows = splits.map((s) => {
    const found = findings.filter((f) => f.split === s.name).length;
    const drawn = s.length ? `${s.sampled} of ${s.length}` : String(s.sampled);
    const sample = s.columns ? `${s.columns} columns` : `${shapeText(s.shape ?? [])} ${s.dtype ?? ''}`.trim();
    const minMax = typeof s.min === 'number' && typeof s.max === 'number' ? `${formatNumber(s.min)} … ${formatNumber(s.max)}` : '—';
    return {
      cells: [
        s.name,
        s.kind,
        drawn,
        sample,
        s.batchShape ? shapeText(s.batchShape) : '—',
        nums(s.channelMean),
        nums(s.channelStd),
        minMax,
        s.labels ? String(Object.keys(s.labels).length) : '—',
        s.random === true ? 'yes' : s.random === false ? 'no' : '—',
        String(found),
      ],
      source: sourceLink(s.source),
      flagged: found > 0,
    };
  });
  return { columns: COLUMNS.map(([c]) => c), numeric: COLUMNS.map(([, n]) => n), rows };
}
