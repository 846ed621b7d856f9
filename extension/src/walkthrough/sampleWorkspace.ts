/**
 * The sample workspace the walkthrough's buttons use: which open folder is it, which file each
 * step opens, and the line a step puts its breakpoint on. No `vscode` import: unit-tested.
 *
 * The same folder ships inside the extension (`sample_workspace/`); "Open the Sample
 * Workspace" copies it somewhere writable when no open folder is the sample.
 */
import * as fs from 'fs';
import * as path from 'path';

/** The files each walkthrough step opens, relative to the sample workspace. */
export const SAMPLE_FILES = {
  readme: 'README.md',
  hoverTensor: 'inspect_tensors.py',
  pauseOnNan: 'broken/nan_in_input.py',
  overfitTest: 'models/mlp.py',
  squiggle: 'broken/lint_classifier.py',
} as const;

/** The model class the overfit step runs the check on (models/mlp.py). */
export const OVERFIT_CLASS = 'TinyMLP';

/** The comment that marks the breakpoint line in inspect_tensors.py. */
export const BREAKPOINT_MARKER = '# Set a breakpoint here';

/** A folder is the sample when it has every file the steps open. */
export function isSampleFolder(dir: string): boolean {
  return Object.values(SAMPLE_FILES).every((f) => fs.existsSync(path.join(dir, f)));
}

/** The first open folder that is the sample workspace, if any. */
export function findSampleFolder(dirs: string[]): string | undefined {
  return dirs.find(isSampleFolder);
}

/** 0-based line of the first line containing `marker` (undefined when there is none). */
export function markedLine(text: string, marker: string = BREAKPOINT_MARKER): number | undefined {
  const i = text.split(/\r?\n/).findIndex((line) => line.includes(marker));
  return i >= 0 ? i : undefined;
}

/** Copy `from` into `to` unless `to` is already a sample; returns `to`. Never overwrites a file. */
export function copySample(from: string, to: string): string {
  if (!isSampleFolder(to)) {
    fs.mkdirSync(to, { recursive: true });
    fs.cpSync(from, to, {
      recursive: true,
      force: false,
      errorOnExist: false,
      filter: (src) => !src.split(path.sep).includes('__pycache__'),
    });
  }
  return to;
}

/** A diagnostic code such as "TD003" (LSP codes come as a string, a number or {value, target}). */
export function ruleId(code: string | number | { value: string | number } | undefined): string | undefined {
  const value = typeof code === 'object' && code !== null ? code.value : code;
  return typeof value === 'string' && /^TD\d{3}$/.test(value) ? value : undefined;
}
