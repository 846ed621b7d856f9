import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import {
  BUDGET_EVALUATE_ENV,
  BUDGET_VARIABLES_ENV,
  DEFAULT_BUDGET_MS,
  budgetEnv,
} from '../../../../extension/src/debug/summaryBudget';

test('the default is a 100 ms Variables page and a 150 ms hover', () => {
  assert.equal(DEFAULT_BUDGET_MS, 100);
  assert.deepEqual(budgetEnv(undefined), { [BUDGET_VARIABLES_ENV]: '100', [BUDGET_EVALUATE_ENV]: '150' });
});

test('a setting gives the page its value and a hover 1.5 times it', () => {
  assert.deepEqual(budgetEnv(1000), { [BUDGET_VARIABLES_ENV]: '1000', [BUDGET_EVALUATE_ENV]: '1500' });
  assert.deepEqual(budgetEnv(1), { [BUDGET_VARIABLES_ENV]: '1', [BUDGET_EVALUATE_ENV]: '2' });
});

test('0 is no limit for both', () => {
  assert.deepEqual(budgetEnv(0), { [BUDGET_VARIABLES_ENV]: '0', [BUDGET_EVALUATE_ENV]: '0' });
});

test("a launch configuration's own env entries win", () => {
  assert.deepEqual(budgetEnv(1000, { [BUDGET_VARIABLES_ENV]: '50' }), { [BUDGET_EVALUATE_ENV]: '1500' });
  assert.deepEqual(budgetEnv(1000, { [BUDGET_VARIABLES_ENV]: '50', [BUDGET_EVALUATE_ENV]: '20' }), {});
});

test('bad values are errors that name the setting', () => {
  for (const bad of [-1, '300', Number.NaN, Infinity, 1e9, {}]) {
    assert.throws(() => budgetEnv(bad), /"torchDoctor\.summaries\.budgetMs" must be a number of milliseconds/);
  }
});
