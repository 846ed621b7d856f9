// DataCheckResult → the data-check page (extension/src/data/dataView.ts), from real results
// (tests/ts/unit/fixtures/data-*.json, written by data_fixtures.py).
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'node:test';
import type { DataCheckResult } from '../../../../extension/src/data/dataProtocol';
import {
  buildDataView,
  DATA_TITLE,
  dataAllowedFiles,
  dataErrorLabel,
  dataMessageView,
  dataRunningView,
  dataVerdict,
  findingCard,
  findingTitle,
  flaggedCsv,
  IMAGES_TITLE,
  indicesText,
  messageParts,
  parseDataPageMessage,
} from '../../../../extension/src/data/dataView';
import { readFixture } from '../support/fixtures';

function fixture(name: string): DataCheckResult {
  return readFixture<DataCheckResult>(`data-${name}.json`);
}

const ALL = ['blank-augmentation', 'healthy', 'channels-last', 'tabular-strings', 'error-no-data'];

test('every fixture builds a plain-data view with its verdict, header and headline', () => {
  for (const name of ALL) {
    const r = fixture(name);
    const v = buildDataView(r);
    assert.equal(v.kind, 'result');
    assert.equal(v.header.target, r.target, name);
    assert.equal(v.header.fileLabel, r.file.split('/').pop(), name);
    assert.ok(v.headline.map((p) => p.text).join('').length > 0, name);
    assert.equal(v.cards.length, r.findings.length, name);
    assert.ok(v.verdict.icon.length > 0, `${name}: a glyph beside the colour`);
    assert.deepEqual(JSON.parse(JSON.stringify(v)), v, name); // survives postMessage and setState
  }
});

test('the verdict: PASS, FINDINGS as a warning or (any error finding) a failure, ERROR, CANCELLED', () => {
  assert.deepEqual([dataVerdict(fixture('healthy')).label, dataVerdict(fixture('healthy')).tone], ['PASS', 'pass']);
  assert.equal(dataVerdict(fixture('blank-augmentation')).tone, 'warn');
  assert.equal(dataVerdict(fixture('channels-last')).tone, 'fail');
  assert.equal(dataVerdict(fixture('error-no-data')).label, 'ERROR');
  const cancelled = { ...fixture('error-no-data'), error: { kind: 'cancelled', message: 'x', detail: '' } };
  assert.equal(dataVerdict(cancelled).label, 'CANCELLED');
  assert.equal(buildDataView(cancelled).error, null); // the badge says it; no error block
  assert.equal(buildDataView(fixture('error-no-data')).error?.kindLabel, 'Nothing to check');
});

test('a card splits the message into what was seen, the likely cause and the next step', () => {
  const r = fixture('blank-augmentation');
  const card = findingCard(r.findings[0]);
  assert.equal(card.title, 'Augmentation blanks samples');
  assert.equal(card.tone, 'warn');
  const text = (parts: { text: string }[]) => parts.map((p) => p.text).join('');
  assert.match(text(card.seen), /of the draws of ZoomedDigits are blank/);
  assert.match(text(card.cause), /^a crop, erasing or affine transform/);
  assert.match(text(card.next), /^show the listed samples/);
  assert.deepEqual(card.source, { file: '/ws/data/blank_augmentation.py', line: 51, label: 'blank_augmentation.py:51' });
  assert.ok(card.indices.length > 0 && card.indicesText.startsWith(String(card.indices[0])));
});

test('messageParts and indicesText on their edges', () => {
  assert.deepEqual(messageParts('Only what was seen.'), { seen: 'Only what was seen.', cause: '', next: '' });
  assert.deepEqual(messageParts('Seen. Likely cause: c. Next step: n.'), { seen: 'Seen.', cause: 'c.', next: 'n.' });
  assert.deepEqual(messageParts('Seen. Next step: n.'), { seen: 'Seen.', cause: '', next: 'n.' });
  assert.equal(indicesText([], 0), '');
  assert.equal(indicesText([1, 2, 3], 3), '1, 2, 3');
  assert.equal(indicesText([1, 2, 3], 40), '1, 2, 3 … (40 in all)');
  assert.equal(indicesText([1, 2, 3, 4], 4, 2), '1, 2 … (4 in all)');
  assert.equal(findingTitle('something-new'), 'something-new');
  assert.equal(findingTitle('empty-split'), 'Empty split'); // the backend's kind for a split with no sample
  // a training DataLoader in index order over data stored class by class (shuffling.py)
  assert.equal(findingTitle('unshuffled-class-runs'), 'Unshuffled training batches of one class');
});

test('every finding kind the backend can report has a title of its own', () => {
  // The kinds are the string constants of the backend's findings module: a new check whose kind
  // is missing here would show its raw kind as the card's title.
  const source = readFileSync(resolve(__dirname, '../../../pybackend/torchdoctor/data_checks/findings.py'), 'utf8');
  const section = source.slice(source.indexOf('# kinds'), source.indexOf('\n\n\n', source.indexOf('# kinds')));
  const kinds = [...section.matchAll(/^[A-Z0-9_]+ = "([a-z0-9-]+)"/gm)].map((m) => m[1]);
  assert.ok(kinds.length >= 25, `kinds read from findings.py: ${kinds.join(', ')}`);
  for (const kind of kinds) {
    assert.notEqual(findingTitle(kind), kind, `no title for the backend's kind ${kind}`);
  }
  // A wrong option of a paused-program check (budgetSeconds: "5") is an error of its own.
  assert.equal(dataErrorLabel('bad-options'), 'Options not understood');
});

test('errors come first; the CSV lists every flagged sample; only the result\'s files open', () => {
  const r = fixture('tabular-strings');
  const mixed = { ...r, findings: [r.findings[0], { ...r.findings[1], severity: 'error' as const }] };
  assert.deepEqual(buildDataView(mixed).cards.map((c) => c.severity), ['error', 'warning']);
  const blank = fixture('blank-augmentation');
  const csv = flaggedCsv(blank)!;
  const lines = csv.trimEnd().split('\n');
  assert.equal(lines[0], 'kind,severity,split,index');
  assert.equal(lines.length - 1, blank.findings[0].indices.length);
  assert.equal(lines[1], `blank-augmentation,warning,ZoomedDigits,${blank.findings[0].indices[0]}`);
  assert.equal(flaggedCsv(fixture('healthy')), null);
  assert.equal(buildDataView(fixture('healthy')).canExportCsv, false);
  const files = dataAllowedFiles(blank, blank.file);
  assert.ok(files.has('/ws/data/blank_augmentation.py'));
  assert.ok(!files.has('/etc/passwd'));
});

test('running and message views; page messages are checked field by field', () => {
  const run = dataRunningView('ZoomedDigits', '/ws/data/blank_augmentation.py');
  assert.equal(run.verdict.tone, 'running');
  assert.match(run.message, /ZoomedDigits/);
  assert.equal(dataMessageView('X', '/ws/x.py', 'cancelled', true).verdict.label, 'CANCELLED');
  assert.deepEqual(parseDataPageMessage({ type: 'openLocation', file: '/ws/a.py', line: 3 }), { type: 'openLocation', file: '/ws/a.py', line: 3 });
  assert.equal(parseDataPageMessage({ type: 'openLocation', file: '/ws/a.py', line: 0 }), undefined);
  assert.equal(parseDataPageMessage({ type: 'openLocation', file: 3, line: 3 }), undefined);
  assert.deepEqual(parseDataPageMessage({ type: 'rerun', extra: 1 }), { type: 'rerun' });
  assert.equal(parseDataPageMessage({ type: 'eval' }), undefined);
  assert.equal(parseDataPageMessage(null), undefined);
});

test('Show as Images on a paused variable is titled Images and speaks of the held values', () => {
  const r = { ...fixture('blank-augmentation'), asHeld: true };
  const v = buildDataView(r, 'images');
  assert.equal(v.header.title, IMAGES_TITLE);
  assert.match(v.galleries[0].caption, /as the variable holds them/);
  assert.ok(v.histograms.length > 0);
  for (const h of v.histograms) {
    assert.match(h.caption, /images of .*, as the variable holds them/);
    assert.doesNotMatch(h.caption, /samples drawn|model gets/);
  }
  assert.match(buildDataView(fixture('blank-augmentation')).histograms[0].caption, /samples drawn, as the model gets them/);
  assert.equal(buildDataView(r, 'data').header.title, DATA_TITLE);
  assert.equal(buildDataView(fixture('blank-augmentation')).header.title, DATA_TITLE);
  assert.match(buildDataView(fixture('blank-augmentation')).galleries[0].caption, /after the dataset's transforms/);
  const running = dataRunningView('images', '/ws/inspect_tensors.py', 'images');
  assert.equal(running.header.title, IMAGES_TITLE);
  assert.match(running.message, /images in images/);
  assert.match(running.hint, /paused program/);
  assert.doesNotMatch(running.hint, /worker|cancel/);
  assert.equal(dataMessageView('images', '', 'not paused', false, 'images').header.title, IMAGES_TITLE);
});
