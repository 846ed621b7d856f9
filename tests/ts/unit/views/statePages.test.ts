// Pages without data, banners and subtitles (extension/src/views/statePages.ts).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import type { GradientFlowModel, GradientFlowRow } from '../../../../extension/src/protocol';
import { gradientFlowPage } from '../../../../extension/src/views/gradientFlowPage';
import { BANNERS, messagePage, snapshotFacts, stopSubtitle, withBanner } from '../../../../extension/src/views/statePages';
import type { GradientFlowPage } from '../../../../extension/src/views/viewTypes';

const FILE = '/ws/models/cnn.py';
const CTX = { subtitle: '“Train” · paused (breakpoint) at 10:00:00' };

/** A row; a statistic may be given as "nan"/"inf" too (an older payload spelled them so). */
function grow(name: string, meanAbs: number | string | null, maxAbs: number | string | null, extra: Partial<GradientFlowRow> = {}): GradientFlowRow {
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

const DEAD = { rule: 'dead-units', severity: 'warning' as const, sentence: '73% of the units after conv2 are zero.', suggestion: 'Use LeakyReLU.' };
const VANISH = (n: string) => ({ rule: 'vanishing', severity: 'error' as const, sentence: `${n} mean |g| under 1e-7.`, suggestion: 'Add normalisation.' });

function gradientModel(): GradientFlowModel {
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

test('messagePage: each state has its words; errors carry the message and the detail', () => {
  const states = ['loading', 'no-session', 'not-paused', 'no-model', 'no-runtime', 'backend'] as const;
  for (const s of states) {
    const v = messagePage('gradientFlow', s, 'sub');
    assert.equal(v.state, s);
    assert.ok(v.headline.length > 0, s);
    assert.equal(v.canRefresh, s !== 'loading');
  }
  assert.equal(messagePage('shapeTrace', 'not-paused', '').headline, 'The program is not paused.');
  assert.match(messagePage('shapeTrace', 'no-runtime', '').text, /torchdoctor launch configuration/);
  const err = messagePage('shapeTrace', 'error', 's', 'ValueError: boom', 'Traceback...\nValueError: boom');
  assert.equal(err.headline, 'ValueError: boom');
  assert.equal(err.text, '');
  assert.equal(err.detail, 'Traceback...\nValueError: boom');
  assert.equal(messagePage('shapeTrace', 'error', 's', 'same', 'same').detail, '', 'no detail that repeats the headline');
  assert.equal(messagePage('gradientFlow', 'no-model', '', '', 'runtime words').detail, 'runtime words');
});

test('withBanner puts a banner on data pages only', () => {
  const data = gradientFlowPage(gradientModel(), CTX);
  const stale = withBanner(data, BANNERS.stale) as GradientFlowPage;
  assert.deepEqual(stale.banner, { state: 'stale', text: 'The debug session ended; the last data is shown.' });
  assert.equal((data as GradientFlowPage).banner, null, 'not mutated');
  assert.equal((withBanner(stale, null) as GradientFlowPage).banner, null);
  const msg = messagePage('gradientFlow', 'not-paused', '');
  assert.equal(withBanner(msg, BANNERS.running), msg);
});

test('stopSubtitle and snapshotFacts', () => {
  const at = new Date(2025, 0, 1, 9, 5, 7);
  assert.equal(stopSubtitle('Train', 'breakpoint', at), '“Train” · paused (breakpoint) at 09:05:07');
  assert.equal(stopSubtitle('Train', null, at, 'Net, forward 3'), '“Train” · Net, forward 3 · paused at 09:05:07');
  assert.equal(snapshotFacts({ model: { type: 'Net', passNumber: 3, focus: null } }), 'Net, forward 3');
  assert.equal(snapshotFacts({ model: { type: 'Net', passNumber: 1, focus: 'fc1' } }), 'Net, forward 1, picked: fc1');
  assert.equal(snapshotFacts({ model: null }), '');
  assert.equal(snapshotFacts('junk'), '');
});
