/**
 * The `torchDoctor.summaries.budgetMs` setting, turned into the two environment variables the
 * debuggee's pydevd plugin reads (pybackend/pydevd_plugins/extensions/pydevd_plugin_torchdoctor.py):
 * the time one Variables page may spend on tensor statistics, and 1.5 times it for a hover, a
 * Watch or the Debug Console, which show one value (VS Code gives up on a hover after about half
 * a second). The page's default is 100 ms: its listing then costs at most about twice plain
 * debugpy's (bench/bench_variables.py), while a hover keeps 150 ms. 0 means no limit. A launch configuration whose `env` already sets either variable keeps its own.
 * Pure logic, no `vscode` import, unit-tested.
 */

export const BUDGET_SETTING = 'summaries.budgetMs';
export const BUDGET_VARIABLES_ENV = 'TORCHDOCTOR_BUDGET_VARIABLES_MS';
export const BUDGET_EVALUATE_ENV = 'TORCHDOCTOR_BUDGET_EVALUATE_MS';
export const DEFAULT_BUDGET_MS = 100;
export const MAX_BUDGET_MS = 60_000;

/** The env entries for a budget of `budgetMs` (undefined: the default); throws on a bad value. */
export function budgetEnv(
  budgetMs: unknown,
  configEnv?: Record<string, string | null | undefined>,
): Record<string, string> {
  const ms = budgetMs === undefined || budgetMs === null ? DEFAULT_BUDGET_MS : budgetMs;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0 || ms > MAX_BUDGET_MS) {
    throw new Error(
      `"torchDoctor.${BUDGET_SETTING}" must be a number of milliseconds from 0 (no limit) to ${MAX_BUDGET_MS}, not ${JSON.stringify(ms)}`,
    );
  }
  const env: Record<string, string> = {};
  if (configEnv?.[BUDGET_VARIABLES_ENV] === undefined) {
    env[BUDGET_VARIABLES_ENV] = String(Math.round(ms));
  }
  if (configEnv?.[BUDGET_EVALUATE_ENV] === undefined) {
    // 1.5x for one value, at least 1 ms: "0" is the plugin's word for no limit.
    env[BUDGET_EVALUATE_ENV] = ms === 0 ? '0' : String(Math.max(1, Math.round(ms * 1.5)));
  }
  return env;
}
