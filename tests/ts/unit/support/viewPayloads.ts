// Hand-made view-model payloads (the backend's GradientFlowModel / ShapeTraceModel shapes) and
// small helpers shared by the tests of extension/src/views/.
import { strict as assert } from 'node:assert';
import type { DiagnoseSnapshotResult, GradientFlowModel, GradientFlowRow, ShapeTraceRow, TensorMeta } from '../../../../extension/src/protocol';
import type { TextPart } from '../../../../extension/src/webview/format';
import type { MessagePage } from '../../../../extension/src/views/viewTypes';
import { readFixture } from './fixtures';

// Real torchDoctor/diagnoseSnapshot answers: the runtime's snapshot.dump() of small models, run
// through pybackend/torchdoctor/diagnosis (fixtures/diagnose_fixtures.py; paths rewritten to /ws).
export function fixture(name: string): DiagnoseSnapshotResult {
  return readFixture<DiagnoseSnapshotResult>(`diagnose-${name}.json`);
}

export const FILE = '/ws/models/cnn.py';
export const CTX = { subtitle: '“Train” · paused (breakpoint) at 10:00:00' };

/** A row; a statistic may be given as "nan"/"inf" too (an older payload spelled them so). */
export function grow(name: string, meanAbs: number | string | null, maxAbs: number | string | null, extra: Partial<GradientFlowRow> = {}): GradientFlowRow {
  return {
    name,
    module: name.replace(/\.(weight|bias)$/, ''),
    type: 'Linear',
    meanAbs: meanAbs as number | null,
    maxAbs: maxAbs as number | null,
    norm: typeof maxAbs === 'number' ? maxAbs * 2 : null,
    nan: false,
    inf: false,
    flags: [],
    location: { file: FILE, line: 10 },
    ...extra,
  };
}

export const DEAD = { rule: 'dead-units', severity: 'warning' as const, sentence: '73% of the units after conv2 are zero.', suggestion: 'Use LeakyReLU.' };
export const VANISH = (n: string) => ({ rule: 'vanishing', severity: 'error' as const, sentence: `${n} mean |g| under 1e-7.`, suggestion: 'Add normalisation.' });

export function gradientModel(): GradientFlowModel {
  return {
    summary: 'Gradients flow; conv2 is dead.',
    rows: [
      grow('conv1.weight', 2e-3, 4e-2),
      grow('conv2.weight', 0, 0, { flags: [DEAD], location: { file: FILE, line: 13 } }),
      grow('fc.weight', 3e-9, 1e-8, { flags: [VANISH('fc.weight')], location: { file: '/ws/models/head.py', line: 4 } }),
      grow('fc.bias', null, null, { location: null }),
      grow('bad.weight', 'nan', 'inf', { nan: 12, inf: true }),
    ],
    verdicts: [
      { rule: 'ratio', severity: 'warning', sentence: 'First/last ratio 700×.', suggestion: 'Clip gradients.', module: 'fc' },
      { rule: 'none', severity: 'info', sentence: 'fc.bias got no gradient.', suggestion: '', module: null },
      { rule: 'x', severity: 'error', sentence: '', suggestion: 'dropped: no sentence', module: null },
    ],
    // As the backend counts them (diagnosis/presentation.py; tests/python/unit/diagnosis/test_presentation.py).
    counts: { rows: 5, flagged: 2, error: 1, warning: 1, info: 0 },
  };
}

export function text(parts: TextPart[]): string {
  return parts.map((p) => p.text).join('');
}

export function page<T>(v: T | MessagePage, kind: string): T {
  assert.equal((v as { kind: string }).kind, kind, JSON.stringify(v).slice(0, 300));
  return v as T;
}

export const t = (shape: number[] | null, dtype = 'float32', device = 'cpu'): TensorMeta => ({ shape, dtype, device });

export function srow(path: string, type: string, depth: number, inputs: TensorMeta[], outputs: TensorMeta[], params: number, extra: Partial<ShapeTraceRow> = {}): ShapeTraceRow {
  return { path, type, depth, inputs, outputs, params, dtypeChange: false, deviceChange: false, failed: false, location: { file: FILE, line: 5 + depth }, ...extra };
}
