/**
 * The options the editor gives every data check it starts (the "Check data" lens and palette
 * command through the backend's worker, and Check Data / Show as Images in a paused program):
 * the images of each split the grid pages through, and the time budget of
 * torchDoctor.dataChecks.budgetSeconds (data_checks/budget.py; 0: none).
 * Pure logic, no `vscode` import (tests/ts/unit/data/dataOptions.test.ts).
 */
import type { DataCheckOptions } from './dataProtocol';

/**
 * Images of each split in the result, 32 a page (dataSections.PAGE_SIZE). Bounded for memory:
 * each is at most 64 x 64 x 3 values (data_checks/gallery.py), so 128 images are at most 1.6 M
 * numbers (about 5 MB of JSON) a split, held by the result and the page.
 */
export const GALLERY_IMAGES = 128;
export const DEFAULT_BUDGET_SECONDS = 20;
export const BUDGET_SETTING = 'dataChecks.budgetSeconds';

/** The setting's value as seconds: a finite number >= 0 (0: no budget), else the default. */
export function budgetSeconds(raw: unknown): number {
  return typeof raw === 'number' && Number.isFinite(raw) && raw >= 0 ? raw : DEFAULT_BUDGET_SECONDS;
}

/** The options of a data check started from the editor, from the budget setting's raw value. */
export function dataCheckOptions(rawBudget: unknown): DataCheckOptions {
  return { galleryImages: GALLERY_IMAGES, budgetSeconds: budgetSeconds(rawBudget) };
}
