// The options the editor gives a data check (extension/src/data/dataOptions.ts).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { budgetSeconds, dataCheckOptions, DEFAULT_BUDGET_SECONDS, GALLERY_IMAGES } from '../../../../extension/src/data/dataOptions';
import { PAGE_SIZE } from '../../../../extension/src/data/dataSections';

test('the time budget: a finite number >= 0 as set, 0 meaning none, anything else the default', () => {
  assert.equal(budgetSeconds(5), 5);
  assert.equal(budgetSeconds(0), 0);
  assert.equal(budgetSeconds(2.5), 2.5);
  for (const bad of [undefined, null, -1, Number.NaN, Number.POSITIVE_INFINITY, '5', true]) {
    assert.equal(budgetSeconds(bad), DEFAULT_BUDGET_SECONDS, String(bad));
  }
  assert.equal(DEFAULT_BUDGET_SECONDS, 20);
});

test('every check from the editor asks for several pages of images and passes the budget', () => {
  assert.deepEqual(dataCheckOptions(7), { galleryImages: GALLERY_IMAGES, budgetSeconds: 7 });
  assert.deepEqual(dataCheckOptions(undefined), { galleryImages: GALLERY_IMAGES, budgetSeconds: 20 });
  assert.ok(GALLERY_IMAGES > PAGE_SIZE && GALLERY_IMAGES % PAGE_SIZE === 0);
  assert.ok(GALLERY_IMAGES <= 256); // dataSections draws at most 256 a split
});
