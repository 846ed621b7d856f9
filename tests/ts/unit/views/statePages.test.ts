// Pages without data, banners and subtitles (extension/src/views/statePages.ts).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { gradientFlowPage } from '../../../../extension/src/views/gradientFlowPage';
import { BANNERS, messagePage, snapshotFacts, stopSubtitle, withBanner } from '../../../../extension/src/views/statePages';
import type { GradientFlowPage } from '../../../../extension/src/views/viewTypes';
import { CTX, gradientModel } from '../support/viewPayloads';

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

